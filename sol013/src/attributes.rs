//! Attribute paths (`a/b~1c/@key`) and their resolution against a resource's JSON Schema.
//!
//! Filters and selectors name attributes by path; the schema tells whether the attribute
//! exists (SOL013 clause 5.2: the producer shall support every attribute of the resource's
//! data type, so an unknown one is a client error) and what type its values have.

use std::fmt;

use serde_json::{Map, Value};

/// One segment of an attribute path.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum PathSegment {
    /// An attribute (or map key) name, escapes already decoded.
    Name(String),
    /// The segment `@key`: the keys of a map (`vimConnectionInfo/@key`).
    Key,
}

/// An attribute path as written in a filter or selector, with its decoded segments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttrPath {
    text: String,
    segments: Vec<PathSegment>,
}

impl AttrPath {
    /// Parses a `/`-separated path. Inside a segment `~1` is `/`, `~a` is `,`, `~b` is `@`
    /// and `~0` is `~`, decoded in one left-to-right pass (so `~01` is the text `~1`); other
    /// `~` sequences stay literal, as in Tacker. A segment that is exactly `@key` addresses the
    /// keys of a map; `~bkey` is a member literally named `@key`.
    ///
    /// `None` if a segment is empty (`a//b`, a leading or trailing `/`, or an empty path).
    pub fn parse(text: &str) -> Option<Self> {
        let segments = text
            .split('/')
            .map(|raw| match raw {
                "" => None,
                "@key" => Some(PathSegment::Key),
                _ => Some(PathSegment::Name(unescape(raw))),
            })
            .collect::<Option<Vec<_>>>()?;
        Some(Self { text: text.to_owned(), segments })
    }

    /// The path as written in the request.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    pub fn segments(&self) -> &[PathSegment] {
        &self.segments
    }

    /// The first segment when it is a name: the resource's top-level attribute.
    pub fn top_level(&self) -> Option<&str> {
        match self.segments.first() {
            Some(PathSegment::Name(name)) => Some(name),
            _ => None,
        }
    }
}

impl fmt::Display for AttrPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

fn unescape(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        let decoded = match (c, chars.peek()) {
            ('~', Some('0')) => '~',
            ('~', Some('1')) => '/',
            ('~', Some('a')) => ',',
            ('~', Some('b')) => '@',
            _ => {
                out.push(c);
                continue;
            }
        };
        chars.next();
        out.push(decoded);
    }
    out
}

/// What the schema says about an attribute's values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AttrKind {
    String,
    /// `type: string, format: date-time` (RFC 3339).
    DateTime,
    Integer,
    Number,
    Boolean,
    /// An object with named members.
    Object,
    /// An array of the given kind.
    Array(Box<AttrKind>),
    /// An object used as a map (`additionalProperties` only, or a free-form object such as
    /// KeyValuePairs), with the kind of its values.
    Map(Box<AttrKind>),
    /// The schema allows anything here (or several types): values are typed at run time.
    Unknown,
}

impl AttrKind {
    /// The kind a filter compares with: arrays are transparent (an array attribute matches
    /// when any element does).
    pub fn element(&self) -> &AttrKind {
        match self {
            AttrKind::Array(inner) => inner.element(),
            other => other,
        }
    }

    /// A short name for error texts.
    pub fn name(&self) -> &'static str {
        match self {
            AttrKind::String => "string",
            AttrKind::DateTime => "date-time",
            AttrKind::Integer => "integer",
            AttrKind::Number => "number",
            AttrKind::Boolean => "boolean",
            AttrKind::Object => "object",
            AttrKind::Array(_) => "array",
            AttrKind::Map(_) => "map",
            AttrKind::Unknown => "any",
        }
    }

    fn merge(self, other: AttrKind) -> AttrKind {
        use AttrKind::*;
        match (self, other) {
            (a, b) if a == b => a,
            (Integer, Number) | (Number, Integer) => Number,
            // `allOf: [{type: string}, {format: date-time}]` refines a string.
            (String, DateTime) | (DateTime, String) => DateTime,
            (Object, Map(_)) | (Map(_), Object) => Object,
            (Array(a), Array(b)) => Array(Box::new(a.merge(*b))),
            (Map(a), Map(b)) => Map(Box::new(a.merge(*b))),
            _ => Unknown,
        }
    }
}

/// Resolves `path` against `schema` and returns the attribute's kind, or `None` when the
/// schema does not define it.
///
/// Follows local `$ref`s (`#/definitions/..`, `#/$defs/..`, any `#/json/pointer`),
/// `properties`, `items` (arrays are transparent: `a/b` reaches `b` in every element of
/// array `a`), `additionalProperties` (a map: any name is a key, `@key` its keys) and the
/// union of `allOf`/`anyOf`/`oneOf` branches. An object schema with neither `properties`
/// nor `additionalProperties` (KeyValuePairs), `true`, `{}` and unresolvable references
/// allow any member, whose kind is [`AttrKind::Unknown`]. `@key` must be the last segment.
/// The empty schema `{}` therefore accepts every path: use it where no schema exists.
pub fn resolve(schema: &Value, path: &[PathSegment]) -> Option<AttrKind> {
    let resolver = Resolver { root: schema };
    let mut nodes = vec![Node::Schema(schema)];
    for segment in path {
        let mut next = Vec::new();
        for node in &nodes {
            resolver.step(*node, segment, &mut next, 0);
        }
        if next.is_empty() {
            return None;
        }
        nodes = next;
    }
    nodes
        .into_iter()
        .map(|node| match node {
            Node::Schema(schema) => resolver.kind_of(schema, 0).unwrap_or(AttrKind::Unknown),
            Node::Any => AttrKind::Unknown,
            Node::Key => AttrKind::String,
        })
        .reduce(AttrKind::merge)
}

/// `$ref` chains and nesting deeper than this are treated as "anything" (protects against
/// reference cycles).
const MAX_DEPTH: usize = 64;

static ANY_SCHEMA: Value = Value::Bool(true);

#[derive(Debug, Clone, Copy)]
enum Node<'a> {
    Schema(&'a Value),
    /// Anything may be here.
    Any,
    /// The keys of a map: strings, nothing below them.
    Key,
}

struct Resolver<'a> {
    root: &'a Value,
}

impl<'a> Resolver<'a> {
    /// The schema objects that jointly describe `node`: itself, its `$ref` target and its
    /// composition branches, recursively.
    fn atoms(&self, node: &'a Value, depth: usize, out: &mut Vec<&'a Value>) {
        if depth > MAX_DEPTH {
            out.push(&ANY_SCHEMA);
            return;
        }
        out.push(node);
        let Some(object) = node.as_object() else { return };
        if let Some(reference) = object.get("$ref").and_then(Value::as_str) {
            match self.lookup(reference) {
                Some(target) => self.atoms(target, depth + 1, out),
                None => out.push(&ANY_SCHEMA),
            }
        }
        for keyword in ["allOf", "anyOf", "oneOf"] {
            for branch in object.get(keyword).and_then(Value::as_array).into_iter().flatten() {
                self.atoms(branch, depth + 1, out);
            }
        }
    }

    fn lookup(&self, reference: &str) -> Option<&'a Value> {
        let pointer = reference.strip_prefix('#')?;
        if pointer.is_empty() { Some(self.root) } else { self.root.pointer(pointer) }
    }

    fn step(&self, node: Node<'a>, segment: &PathSegment, out: &mut Vec<Node<'a>>, depth: usize) {
        match node {
            Node::Any => out.push(map_step(segment, Node::Any)),
            Node::Key => {}
            Node::Schema(schema) => self.step_schema(schema, segment, out, depth),
        }
    }

    fn step_schema(&self, schema: &'a Value, segment: &PathSegment, out: &mut Vec<Node<'a>>, depth: usize) {
        if depth > MAX_DEPTH {
            out.push(Node::Any);
            return;
        }
        let mut atoms = Vec::new();
        self.atoms(schema, depth, &mut atoms);
        // Whether any atom says what is inside (members, items) or that it is a scalar;
        // an atom saying neither (`{type: object}`, `{}`) allows any member.
        let mut described = false;
        for atom in atoms {
            let object = match atom {
                Value::Bool(true) => {
                    described = true;
                    out.push(map_step(segment, Node::Any));
                    continue;
                }
                Value::Object(object) => object,
                _ => {
                    described = true;
                    continue;
                }
            };
            if is_scalar_type(object) {
                described = true;
            }
            match object.get("items") {
                Some(Value::Array(tuple)) => {
                    described = true;
                    for items in tuple {
                        self.step_schema(items, segment, out, depth + 1);
                    }
                }
                Some(items) => {
                    described = true;
                    self.step_schema(items, segment, out, depth + 1);
                }
                None => {}
            }
            let properties = object.get("properties").and_then(Value::as_object);
            described |= properties.is_some();
            let member = match segment {
                PathSegment::Name(name) => properties.and_then(|p| p.get(name)),
                PathSegment::Key => None,
            };
            if let Some(member) = member {
                out.push(Node::Schema(member));
                continue;
            }
            match object.get("additionalProperties") {
                Some(Value::Bool(false)) => described = true,
                Some(Value::Bool(true)) => {
                    described = true;
                    out.push(map_step(segment, Node::Any));
                }
                Some(values @ Value::Object(_)) => {
                    described = true;
                    out.push(map_step(segment, Node::Schema(values)));
                }
                _ => {}
            }
        }
        if !described {
            out.push(map_step(segment, Node::Any));
        }
    }

    /// The kind described by `schema`, `None` when it says nothing about types.
    fn kind_of(&self, schema: &'a Value, depth: usize) -> Option<AttrKind> {
        let mut atoms = Vec::new();
        self.atoms(schema, depth, &mut atoms);
        atoms.into_iter().filter_map(|atom| self.atom_kind(atom, depth)).reduce(AttrKind::merge)
    }

    fn atom_kind(&self, atom: &'a Value, depth: usize) -> Option<AttrKind> {
        let object = match atom {
            Value::Bool(true) => return Some(AttrKind::Unknown),
            Value::Object(object) => object,
            _ => return None,
        };
        if depth > MAX_DEPTH {
            return Some(AttrKind::Unknown);
        }
        let mut types = declared_types(object);
        if types.is_empty() {
            // Untyped schemas: infer from the keywords present.
            if object.contains_key("properties") || object.contains_key("additionalProperties") {
                types.push("object");
            } else if object.contains_key("items") {
                types.push("array");
            } else if is_date_time(object) {
                types.push("string");
            } else if let Some(kind) = enum_kind(object) {
                return Some(kind);
            } else {
                return None;
            }
        }
        let [single] = types.as_slice() else { return Some(AttrKind::Unknown) };
        Some(match *single {
            "string" if is_date_time(object) => AttrKind::DateTime,
            "string" => AttrKind::String,
            "integer" => AttrKind::Integer,
            "number" => AttrKind::Number,
            "boolean" => AttrKind::Boolean,
            "object" if object.contains_key("properties") => AttrKind::Object,
            "object" => match object.get("additionalProperties") {
                Some(Value::Bool(false)) => AttrKind::Object,
                Some(values @ Value::Object(_)) => {
                    AttrKind::Map(Box::new(self.kind_of(values, depth + 1).unwrap_or(AttrKind::Unknown)))
                }
                _ => AttrKind::Map(Box::new(AttrKind::Unknown)),
            },
            "array" => AttrKind::Array(Box::new(match object.get("items") {
                Some(items @ (Value::Object(_) | Value::Bool(_))) => {
                    self.kind_of(items, depth + 1).unwrap_or(AttrKind::Unknown)
                }
                _ => AttrKind::Unknown,
            })),
            _ => AttrKind::Unknown,
        })
    }
}

/// Below a map, a name is one entry's value and `@key` is the set of keys.
fn map_step<'a>(segment: &PathSegment, values: Node<'a>) -> Node<'a> {
    match segment {
        PathSegment::Name(_) => values,
        PathSegment::Key => Node::Key,
    }
}

/// The `type` keyword without `null` (nullable attributes are optional, not a second type).
fn declared_types(object: &Map<String, Value>) -> Vec<&str> {
    match object.get("type") {
        Some(Value::String(single)) => vec![single.as_str()],
        Some(Value::Array(many)) => many.iter().filter_map(Value::as_str).filter(|t| *t != "null").collect(),
        _ => Vec::new(),
    }
}

fn is_scalar_type(object: &Map<String, Value>) -> bool {
    let types = declared_types(object);
    !types.is_empty() && types.iter().all(|t| !matches!(*t, "object" | "array"))
}

fn is_date_time(object: &Map<String, Value>) -> bool {
    object.get("format").and_then(Value::as_str) == Some("date-time")
}

fn enum_kind(object: &Map<String, Value>) -> Option<AttrKind> {
    let values: Vec<&Value> = match (object.get("enum"), object.get("const")) {
        (Some(Value::Array(values)), _) => values.iter().collect(),
        (_, Some(value)) => vec![value],
        _ => return None,
    };
    values
        .into_iter()
        .map(|value| match value {
            Value::String(_) => AttrKind::String,
            Value::Bool(_) => AttrKind::Boolean,
            Value::Number(n) if n.is_f64() => AttrKind::Number,
            Value::Number(_) => AttrKind::Integer,
            _ => AttrKind::Unknown,
        })
        .reduce(AttrKind::merge)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_fixtures::{vnf_instance_schema, vnf_lcm_op_occ_schema};
    use serde_json::json;

    fn kind(schema: &Value, path: &str) -> Option<AttrKind> {
        resolve(schema, AttrPath::parse(path).unwrap().segments())
    }

    fn names(path: &AttrPath) -> Vec<&PathSegment> {
        path.segments().iter().collect()
    }

    #[test]
    fn escapes_are_decoded_in_one_pass() {
        let path = AttrPath::parse("~01/c~1~a/~be").unwrap();
        assert_eq!(
            names(&path),
            [&PathSegment::Name("~1".into()), &PathSegment::Name("c/,".into()), &PathSegment::Name("@e".into()),]
        );
        assert_eq!(path.as_str(), "~01/c~1~a/~be");
        assert_eq!(AttrPath::parse("a~0b").unwrap().segments(), [PathSegment::Name("a~b".into())]);
        // Unknown escapes and a trailing tilde stay literal, as in Tacker.
        assert_eq!(AttrPath::parse("a~xb~").unwrap().segments(), [PathSegment::Name("a~xb~".into())]);
    }

    #[test]
    fn at_key_is_a_key_segment_only_when_it_is_the_whole_segment() {
        let path = AttrPath::parse("vimConnectionInfo/@key").unwrap();
        assert_eq!(path.segments()[1], PathSegment::Key);
        assert_eq!(path.top_level(), Some("vimConnectionInfo"));
        assert_eq!(AttrPath::parse("a/~bkey").unwrap().segments()[1], PathSegment::Name("@key".into()));
        assert_eq!(AttrPath::parse("a/@keys").unwrap().segments()[1], PathSegment::Name("@keys".into()));
        assert_eq!(AttrPath::parse("@key").unwrap().top_level(), None);
    }

    #[test]
    fn empty_segments_are_rejected() {
        for text in ["", "/a", "a/", "a//b"] {
            assert_eq!(AttrPath::parse(text), None, "{text}");
        }
    }

    #[test]
    fn top_level_scalars_get_their_schema_type() {
        let schema = vnf_instance_schema();
        assert_eq!(kind(&schema, "id"), Some(AttrKind::String));
        assert_eq!(kind(&schema, "instantiationState"), Some(AttrKind::String));
        let op = vnf_lcm_op_occ_schema();
        assert_eq!(kind(&op, "startTime"), Some(AttrKind::DateTime));
        assert_eq!(kind(&op, "isAutomaticInvocation"), Some(AttrKind::Boolean));
        assert_eq!(kind(&op, "operationState"), Some(AttrKind::String));
    }

    #[test]
    fn unknown_attributes_resolve_to_none() {
        let schema = vnf_instance_schema();
        assert_eq!(kind(&schema, "vnfInstanceNam"), None);
        assert_eq!(kind(&schema, "instantiatedVnfInfo/noSuchMember"), None);
        // Nothing below a scalar.
        assert_eq!(kind(&schema, "vnfdId/x"), None);
        // `@key` on an object with fixed members, and anything after `@key`.
        assert_eq!(kind(&schema, "instantiatedVnfInfo/@key"), None);
        assert_eq!(kind(&schema, "vimConnectionInfo/@key/x"), None);
    }

    #[test]
    fn nested_paths_follow_refs_and_pass_through_arrays() {
        let schema = vnf_instance_schema();
        assert_eq!(kind(&schema, "instantiatedVnfInfo/flavourId"), Some(AttrKind::String));
        assert_eq!(kind(&schema, "instantiatedVnfInfo/scaleStatus/scaleLevel"), Some(AttrKind::Integer));
        assert_eq!(
            kind(&schema, "instantiatedVnfInfo/vnfcResourceInfo/computeResource/resourceId"),
            Some(AttrKind::String)
        );
        assert_eq!(kind(&schema, "instantiatedVnfInfo/scaleStatus"), Some(AttrKind::Array(Box::new(AttrKind::Object))));
        assert_eq!(kind(&schema, "instantiatedVnfInfo"), Some(AttrKind::Object));
    }

    #[test]
    fn maps_allow_any_key_and_at_key() {
        let schema = vnf_instance_schema();
        assert_eq!(kind(&schema, "vimConnectionInfo/@key"), Some(AttrKind::String));
        assert_eq!(kind(&schema, "vimConnectionInfo/vim1/vimType"), Some(AttrKind::String));
        assert_eq!(kind(&schema, "vimConnectionInfo/vim1/nope"), None);
        assert_eq!(kind(&schema, "vimConnectionInfo/vim1/accessInfo/region"), Some(AttrKind::Unknown));
        assert!(matches!(kind(&schema, "vimConnectionInfo"), Some(AttrKind::Map(_))));
        // KeyValuePairs (`type: object` and nothing else) is a free-form map.
        assert_eq!(kind(&schema, "metadata/tenant"), Some(AttrKind::Unknown));
        assert_eq!(kind(&schema, "metadata/a/b/c"), Some(AttrKind::Unknown));
        assert_eq!(kind(&schema, "metadata/@key"), Some(AttrKind::String));
        assert_eq!(kind(&schema, "metadata"), Some(AttrKind::Map(Box::new(AttrKind::Unknown))));
    }

    #[test]
    fn compositions_are_unions() {
        let schema = json!({
            "type": "object",
            "properties": {
                "a": {"allOf": [{"$ref": "#/$defs/A"}, {"description": "no type info"}]},
                "b": {"oneOf": [{"$ref": "#/definitions/B"}, {"$ref": "#/$defs/A"}]},
                "c": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
                "d": {"type": ["number", "null"]},
                "e": {"allOf": [{"type": "string"}, {"format": "date-time"}]},
                "f": {"enum": ["X", "Y"]},
                "g": {"$ref": "other.json#/Foo"},
                "h": {"type": "object", "additionalProperties": false}
            },
            "$defs": {"A": {"type": "object", "properties": {"x": {"type": "integer"}}}},
            "definitions": {"B": {"type": "object", "properties": {"y": {"type": "boolean"}, "x": {"type": "number"}}}}
        });
        assert_eq!(kind(&schema, "a/x"), Some(AttrKind::Integer));
        assert_eq!(kind(&schema, "a/y"), None);
        assert_eq!(kind(&schema, "b/y"), Some(AttrKind::Boolean));
        assert_eq!(kind(&schema, "b/x"), Some(AttrKind::Number));
        assert_eq!(kind(&schema, "c"), Some(AttrKind::Unknown));
        assert_eq!(kind(&schema, "d"), Some(AttrKind::Number));
        assert_eq!(kind(&schema, "e"), Some(AttrKind::DateTime));
        assert_eq!(kind(&schema, "f"), Some(AttrKind::String));
        // A reference that cannot be followed allows anything.
        assert_eq!(kind(&schema, "g/whatever"), Some(AttrKind::Unknown));
        assert_eq!(kind(&schema, "g/@key"), Some(AttrKind::String));
        assert_eq!(kind(&schema, "h/x"), None);
    }

    #[test]
    fn reference_cycles_terminate() {
        let schema = json!({
            "$defs": {"Node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/Node"}, "v": {"type": "integer"}}},
                      "Loop": {"$ref": "#/$defs/Loop"}},
            "type": "object",
            "properties": {"n": {"$ref": "#/$defs/Node"}, "l": {"$ref": "#/$defs/Loop"}}
        });
        assert_eq!(kind(&schema, "n/next/next/next/v"), Some(AttrKind::Integer));
        assert_eq!(kind(&schema, "l/x"), Some(AttrKind::Unknown));
    }

    #[test]
    fn empty_schema_accepts_everything_untyped() {
        let schema = json!({});
        assert_eq!(kind(&schema, "anything/at/all"), Some(AttrKind::Unknown));
        assert_eq!(kind(&schema, "m/@key"), Some(AttrKind::String));
    }

    #[test]
    fn element_kind_strips_arrays() {
        let nested = AttrKind::Array(Box::new(AttrKind::Array(Box::new(AttrKind::Integer))));
        assert_eq!(nested.element(), &AttrKind::Integer);
        assert_eq!(AttrKind::Boolean.element(), &AttrKind::Boolean);
    }
}

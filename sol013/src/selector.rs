//! Attribute selectors (SOL013 clause 5.3): `all_fields`, `fields`, `exclude_fields`,
//! `exclude_default`, with Tacker's outcomes:
//!
//! | Request                      | Response contains                                        |
//! |------------------------------|----------------------------------------------------------|
//! | none / `exclude_default`     | everything except the default-excluded set               |
//! | `all_fields`                 | everything                                               |
//! | `fields=X`                   | the mandatory attributes and X                           |
//! | `fields=X&exclude_default`   | everything except the default-excluded set, plus X       |
//! | `exclude_fields=X`           | everything except X                                      |
//!
//! A nested path `a/b` in `fields` keeps only `b` (and other listed members) of an `a` that
//! would otherwise be dropped; in `exclude_fields` it drops `b` inside `a`. Arrays on the
//! way are transparent (the path applies to every element). Attributes listed as
//! mandatory are never removed: SOL013 lets a selector drop only attributes with a lower
//! cardinality of 0, and naming a mandatory one in `exclude_fields` is silently ignored,
//! as Tacker's v1 selector does.

use serde_json::{Map, Value};

use crate::attributes::{AttrPath, PathSegment, resolve};
use crate::error::Sol013Error;
use crate::params::{ALL_FIELDS, EXCLUDE_DEFAULT, EXCLUDE_FIELDS, FIELDS, QueryPair, canonical_key, single_param};

/// What a resource type says about selectors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SelectorSpec<'a> {
    /// Attributes left out unless asked for (SOL003 v3.3.1 clause 5.4.2.3.2 for
    /// VnfInstance: vnfConfigurableProperties, vimConnectionInfo, instantiatedVnfInfo,
    /// metadata, extensions). `a/b` paths are allowed.
    pub default_excluded: &'a [&'a str],
    /// Attributes always returned, whatever the selector says; list `_links` here too.
    /// `a/b` paths protect a nested attribute from `exclude_fields=a/b`.
    pub mandatory: &'a [&'a str],
}

impl SelectorSpec<'_> {
    fn is_mandatory(&self, path: &[&str]) -> bool {
        self.mandatory.iter().any(|m| m.split('/').eq(path.iter().copied()))
    }
}

/// The selector parameters as found in the query string, before validation.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SelectorParams {
    pub all_fields: bool,
    pub exclude_default: bool,
    pub fields: Option<String>,
    pub exclude_fields: Option<String>,
}

impl SelectorParams {
    /// Reads the four parameters (`exclude-fields` counts as `exclude_fields`). The flags
    /// may be bare (`?all_fields`, as python-tackerclient sends them), empty or `true`; any
    /// other value is rejected rather than guessed at (`all_fields=false` would otherwise
    /// mean the opposite of what it says, as in Tacker).
    pub fn from_pairs(pairs: &[QueryPair]) -> Result<Self, Sol013Error> {
        let text = |key: &str| -> Result<Option<String>, Sol013Error> {
            Ok(single_param(pairs, key)?.map(|value| value.unwrap_or_default().to_owned()))
        };
        Ok(Self {
            all_fields: flag(pairs, ALL_FIELDS)?,
            exclude_default: flag(pairs, EXCLUDE_DEFAULT)?,
            fields: text(FIELDS)?,
            exclude_fields: text(EXCLUDE_FIELDS)?,
        })
    }
}

fn flag(pairs: &[QueryPair], key: &str) -> Result<bool, Sol013Error> {
    let mut set = false;
    for (_, value) in pairs.iter().filter(|(k, _)| canonical_key(k) == key) {
        match value.as_deref() {
            None | Some("") | Some("true") => set = true,
            Some(other) => {
                return Err(Sol013Error::InvalidSelectorValue { param: key.to_owned(), value: other.to_owned() });
            }
        }
    }
    Ok(set)
}

/// A validated attribute selector.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AttributeSelector {
    all_fields: bool,
    exclude_default: bool,
    fields: Vec<AttrPath>,
    exclude_fields: Vec<AttrPath>,
}

impl AttributeSelector {
    /// Validates the combination (400 "Attribute selector expression is invalid." for
    /// `all_fields` with anything else, `fields` with `exclude_fields`, `exclude_fields`
    /// with `exclude_default`) and every named attribute against the resource's `schema`.
    pub fn new(params: &SelectorParams, schema: &Value) -> Result<Self, Sol013Error> {
        let others = params.exclude_default || params.fields.is_some() || params.exclude_fields.is_some();
        if (params.all_fields && others)
            || (params.fields.is_some() && params.exclude_fields.is_some())
            || (params.exclude_fields.is_some() && params.exclude_default)
        {
            return Err(Sol013Error::InvalidSelector);
        }
        Ok(Self {
            all_fields: params.all_fields,
            exclude_default: params.exclude_default,
            fields: parse_list(FIELDS, params.fields.as_deref(), schema)?,
            exclude_fields: parse_list(EXCLUDE_FIELDS, params.exclude_fields.as_deref(), schema)?,
        })
    }

    /// [`SelectorParams::from_pairs`] followed by [`AttributeSelector::new`].
    pub fn from_pairs(pairs: &[QueryPair], schema: &Value) -> Result<Self, Sol013Error> {
        Self::new(&SelectorParams::from_pairs(pairs)?, schema)
    }

    pub fn all_fields(&self) -> bool {
        self.all_fields
    }

    pub fn exclude_default(&self) -> bool {
        self.exclude_default
    }

    pub fn fields(&self) -> &[AttrPath] {
        &self.fields
    }

    pub fn exclude_fields(&self) -> &[AttrPath] {
        &self.exclude_fields
    }

    /// Removes from `resource` (one list entry, `_links` already added) what the selector
    /// leaves out. Non-objects are left alone.
    pub fn apply(&self, resource: &mut Value, spec: &SelectorSpec<'_>) {
        if self.all_fields || !resource.is_object() {
            return;
        }
        if !self.exclude_fields.is_empty() {
            for path in &self.exclude_fields {
                let names = names(path);
                if !spec.is_mandatory(&names) {
                    remove(resource, &names);
                }
            }
            return;
        }
        if self.fields.is_empty() || self.exclude_default {
            let candidates = spec.default_excluded.iter().map(|path| path.split('/').collect()).collect();
            self.keep_fields(resource, candidates, spec);
        } else {
            // `fields` alone: every attribute that is not mandatory is a candidate for removal.
            let keys: Vec<String> = resource.as_object().map(|o| o.keys().cloned().collect()).unwrap_or_default();
            self.keep_fields(resource, keys.iter().map(|key| vec![key.as_str()]).collect(), spec);
        }
    }

    /// Removes each candidate path unless it is mandatory or covered by `fields`; a
    /// candidate with listed members below it is cut down to those members.
    fn keep_fields(&self, resource: &mut Value, candidates: Vec<Vec<&str>>, spec: &SelectorSpec<'_>) {
        for candidate in candidates {
            let Some((last, parent)) = candidate.split_last() else { continue };
            if spec.is_mandatory(&candidate) {
                continue;
            }
            let mut below: Vec<&[PathSegment]> = Vec::new();
            let mut covered = false;
            for field in &self.fields {
                let segments = field.segments();
                let shared = segments.len().min(candidate.len());
                if !same_names(&segments[..shared], &candidate[..shared]) {
                    continue;
                }
                if segments.len() <= candidate.len() {
                    covered = true;
                    break;
                }
                below.push(&segments[candidate.len()..]);
            }
            if covered {
                continue;
            }
            for_each_object(resource, parent, &mut |object| {
                if below.is_empty() {
                    object.shift_remove(*last);
                } else if let Some(member) = object.get_mut(*last) {
                    project(member, &below);
                }
            });
        }
    }
}

fn parse_list(param: &str, list: Option<&str>, schema: &Value) -> Result<Vec<AttrPath>, Sol013Error> {
    let Some(list) = list else { return Ok(Vec::new()) };
    let invalid = || Sol013Error::InvalidSelectorValue { param: param.to_owned(), value: list.to_owned() };
    list.split(',')
        .map(|item| {
            let path = AttrPath::parse(item).ok_or_else(invalid)?;
            if path.segments().contains(&PathSegment::Key) {
                return Err(invalid());
            }
            match resolve(schema, path.segments()) {
                Some(_) => Ok(path),
                None => Err(Sol013Error::UnknownSelectorAttr(item.to_owned())),
            }
        })
        .collect()
}

/// The names of a selector path (selector paths never hold `@key`).
fn names(path: &AttrPath) -> Vec<&str> {
    path.segments()
        .iter()
        .filter_map(|segment| match segment {
            PathSegment::Name(name) => Some(name.as_str()),
            PathSegment::Key => None,
        })
        .collect()
}

fn same_names(segments: &[PathSegment], names: &[&str]) -> bool {
    segments.iter().zip(names).all(|(segment, name)| matches!(segment, PathSegment::Name(n) if n == name))
}

/// Runs `f` on every object `path` leads to from `value`, through arrays.
fn for_each_object(value: &mut Value, path: &[&str], f: &mut dyn FnMut(&mut Map<String, Value>)) {
    match value {
        Value::Array(items) => items.iter_mut().for_each(|item| for_each_object(item, path, f)),
        Value::Object(object) => match path.split_first() {
            None => f(object),
            Some((first, rest)) => {
                if let Some(member) = object.get_mut(*first) {
                    for_each_object(member, rest, f);
                }
            }
        },
        _ => {}
    }
}

fn remove(resource: &mut Value, path: &[&str]) {
    if let Some((last, parent)) = path.split_last() {
        // shift_remove keeps the other members in their order.
        for_each_object(resource, parent, &mut |object| {
            object.shift_remove(*last);
        });
    }
}

/// Keeps only the members of `value` that the relative `paths` name (through arrays).
fn project(value: &mut Value, paths: &[&[PathSegment]]) {
    if paths.iter().any(|path| path.is_empty()) {
        return;
    }
    match value {
        Value::Array(items) => items.iter_mut().for_each(|item| project(item, paths)),
        Value::Object(object) => object.retain(|key, member| {
            let below: Vec<&[PathSegment]> = paths
                .iter()
                .filter_map(|path| match path.split_first() {
                    Some((PathSegment::Name(name), rest)) if name == key => Some(rest),
                    _ => None,
                })
                .collect();
            if below.is_empty() {
                return false;
            }
            project(member, &below);
            true
        }),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::parse_query;
    use crate::test_fixtures::{instantiated_vnf_instance, vnf_instance_schema};
    use serde_json::json;

    const SPEC: SelectorSpec<'static> = SelectorSpec {
        default_excluded: &[
            "vnfConfigurableProperties",
            "vimConnectionInfo",
            "instantiatedVnfInfo",
            "metadata",
            "extensions",
        ],
        mandatory: &[
            "id",
            "vnfInstanceName",
            "vnfInstanceDescription",
            "vnfdId",
            "vnfProvider",
            "vnfProductName",
            "vnfSoftwareVersion",
            "vnfdVersion",
            "instantiationState",
            "_links",
        ],
    };

    const SUMMARY: [&str; 10] = [
        "id",
        "vnfInstanceName",
        "vnfInstanceDescription",
        "vnfdId",
        "vnfProvider",
        "vnfProductName",
        "vnfSoftwareVersion",
        "vnfdVersion",
        "instantiationState",
        "_links",
    ];

    fn selector(query: &str) -> Result<AttributeSelector, Sol013Error> {
        AttributeSelector::from_pairs(&parse_query(query)?, &vnf_instance_schema())
    }

    fn select(query: &str) -> Value {
        let mut instance = instantiated_vnf_instance();
        selector(query).unwrap().apply(&mut instance, &SPEC);
        instance
    }

    fn keys(value: &Value) -> Vec<&str> {
        value.as_object().unwrap().keys().map(String::as_str).collect()
    }

    fn summary_plus(extra: &[&str]) -> Vec<String> {
        let full = instantiated_vnf_instance();
        keys(&full).into_iter().filter(|k| SUMMARY.contains(k) || extra.contains(k)).map(str::to_owned).collect()
    }

    #[test]
    fn no_selector_leaves_out_the_default_excluded_set() {
        let out = select("");
        assert_eq!(keys(&out), summary_plus(&[]));
        assert_eq!(out["_links"], instantiated_vnf_instance()["_links"]);
    }

    #[test]
    fn exclude_default_alone_is_the_same_as_no_selector() {
        assert_eq!(select("exclude_default"), select(""));
        assert_eq!(select("exclude_default=true"), select(""));
    }

    #[test]
    fn all_fields_returns_everything() {
        assert_eq!(select("all_fields"), instantiated_vnf_instance());
        assert_eq!(select("all_fields="), instantiated_vnf_instance());
    }

    #[test]
    fn fields_returns_mandatory_attributes_and_the_listed_ones() {
        let out = select("fields=metadata,vimConnectionInfo");
        assert_eq!(keys(&out), summary_plus(&["metadata", "vimConnectionInfo"]));
        assert_eq!(out["metadata"], instantiated_vnf_instance()["metadata"]);
    }

    #[test]
    fn fields_drops_attributes_that_are_neither_mandatory_nor_listed() {
        // An attribute outside both lists (e.g. added by a newer minor) goes with `fields`...
        let mut instance = instantiated_vnf_instance();
        instance["vnfPkgId"] = json!("pkg-1");
        selector("fields=metadata").unwrap().apply(&mut instance, &SPEC);
        assert!(instance.get("vnfPkgId").is_none());
        // ...and stays with `fields&exclude_default`, which only removes the default set.
        let mut instance = instantiated_vnf_instance();
        instance["vnfPkgId"] = json!("pkg-1");
        selector("fields=metadata&exclude_default").unwrap().apply(&mut instance, &SPEC);
        assert_eq!(instance["vnfPkgId"], "pkg-1");
        assert!(instance.get("vimConnectionInfo").is_none());
        assert_eq!(instance["metadata"]["tenant"], "team a");
    }

    #[test]
    fn fields_with_exclude_default_adds_the_listed_attributes_to_the_default_view() {
        let out = select("exclude_default&fields=extensions");
        assert_eq!(keys(&out), summary_plus(&["extensions"]));
        // For VnfInstance v2 mandatory == everything not default-excluded, so both agree.
        assert_eq!(out, select("fields=extensions"));
    }

    #[test]
    fn nested_fields_keep_only_the_listed_members() {
        let out = select("fields=instantiatedVnfInfo/flavourId,instantiatedVnfInfo/scaleStatus/scaleLevel");
        assert_eq!(
            out["instantiatedVnfInfo"],
            json!({"flavourId": "simple", "scaleStatus": [{"scaleLevel": 2}, {"scaleLevel": 0}]})
        );
        assert!(out.get("metadata").is_none());
        let out = select("exclude_default&fields=instantiatedVnfInfo/vnfcResourceInfo/computeResource/resourceId");
        assert_eq!(
            out["instantiatedVnfInfo"]["vnfcResourceInfo"],
            json!([
                {"computeResource": {"resourceId": "3e6cf1a1-0f1b-4b7c-b2e6-2c5b2f0c1a11"}},
                {"computeResource": {"resourceId": "9a1d2f3e-4b5c-4d6e-8f70-a1b2c3d4e5f6"}}
            ])
        );
    }

    #[test]
    fn a_whole_attribute_in_fields_wins_over_a_nested_one() {
        let out = select("fields=instantiatedVnfInfo/flavourId,instantiatedVnfInfo");
        assert_eq!(out["instantiatedVnfInfo"], instantiated_vnf_instance()["instantiatedVnfInfo"]);
        // A nested path under a mandatory attribute changes nothing: it is returned whole.
        let out = select("fields=_links/self");
        assert_eq!(out["_links"], instantiated_vnf_instance()["_links"]);
    }

    #[test]
    fn map_entries_can_be_selected_by_key() {
        let out = select("fields=vimConnectionInfo/vim1/vimType");
        assert_eq!(out["vimConnectionInfo"], json!({"vim1": {"vimType": "ETSINFV.OPENSTACK_KEYSTONE.V_3"}}));
    }

    #[test]
    fn exclude_fields_removes_only_the_listed_attributes() {
        let out = select("exclude_fields=metadata,instantiatedVnfInfo/vnfcResourceInfo");
        let mut expected = instantiated_vnf_instance();
        expected.as_object_mut().unwrap().shift_remove("metadata");
        expected["instantiatedVnfInfo"].as_object_mut().unwrap().shift_remove("vnfcResourceInfo");
        assert_eq!(out, expected);
        assert_eq!(keys(&out), keys(&expected));
    }

    #[test]
    fn exclude_fields_reaches_into_arrays() {
        let out = select("exclude_fields=instantiatedVnfInfo/scaleStatus/aspectId");
        assert_eq!(out["instantiatedVnfInfo"]["scaleStatus"], json!([{"scaleLevel": 2}, {"scaleLevel": 0}]));
        assert_eq!(out["vimConnectionInfo"], instantiated_vnf_instance()["vimConnectionInfo"]);
    }

    #[test]
    fn exclude_fields_never_removes_mandatory_attributes() {
        let out = select("exclude_fields=id,_links,vnfInstanceName,extensions");
        assert_eq!(out["id"], "5f9a4e1c-2b36-4c0e-9c0a-2f4f8a1d7e01");
        assert_eq!(out["vnfInstanceName"], "vnf-edge-01");
        assert!(out.get("_links").is_some());
        assert!(out.get("extensions").is_none());
        let spec = SelectorSpec { default_excluded: &[], mandatory: &["instantiatedVnfInfo/flavourId"] };
        let mut instance = instantiated_vnf_instance();
        selector("exclude_fields=instantiatedVnfInfo/flavourId,instantiatedVnfInfo/vnfState")
            .unwrap()
            .apply(&mut instance, &spec);
        assert_eq!(instance["instantiatedVnfInfo"]["flavourId"], "simple");
        assert!(instance["instantiatedVnfInfo"].get("vnfState").is_none());
    }

    #[test]
    fn a_resource_without_the_selected_attributes_is_left_as_is() {
        let mut instance = crate::test_fixtures::not_instantiated_vnf_instance();
        let before = instance.clone();
        selector("fields=instantiatedVnfInfo/flavourId,metadata").unwrap().apply(&mut instance, &SPEC);
        assert_eq!(instance, before);
        selector("exclude_fields=instantiatedVnfInfo/flavourId").unwrap().apply(&mut instance, &SPEC);
        assert_eq!(instance, before);
    }

    #[test]
    fn invalid_combinations_are_rejected() {
        for query in [
            "all_fields&fields=metadata",
            "all_fields&exclude_fields=metadata",
            "all_fields&exclude_default",
            "fields=metadata&exclude_fields=extensions",
            "exclude_fields=metadata&exclude_default",
            "exclude-fields=metadata&exclude_default",
        ] {
            let err = selector(query).unwrap_err();
            assert_eq!(err, Sol013Error::InvalidSelector, "{query}");
            assert_eq!(err.to_string(), "Attribute selector expression is invalid.");
        }
    }

    #[test]
    fn unknown_attributes_are_rejected_by_name() {
        let err = selector("fields=metadata,vnfInstanceNam").unwrap_err();
        assert_eq!(err, Sol013Error::UnknownSelectorAttr("vnfInstanceNam".into()));
        assert_eq!(
            err.to_string(),
            "Attribute selector expression is invalid. Attribute vnfInstanceNam is not defined for this resource."
        );
        assert_eq!(
            selector("exclude_fields=instantiatedVnfInfo/nope").unwrap_err(),
            Sol013Error::UnknownSelectorAttr("instantiatedVnfInfo/nope".into())
        );
    }

    #[test]
    fn malformed_lists_and_flag_values_are_rejected() {
        let err = selector("fields=metadata,,extensions").unwrap_err();
        assert_eq!(
            err,
            Sol013Error::InvalidSelectorValue { param: "fields".into(), value: "metadata,,extensions".into() }
        );
        assert_eq!(
            err.to_string(),
            "Attribute selector expression is invalid. Parameter fields does not take the value 'metadata,,extensions'."
        );
        assert!(matches!(selector("fields=").unwrap_err(), Sol013Error::InvalidSelectorValue { .. }));
        assert!(matches!(selector("exclude_fields").unwrap_err(), Sol013Error::InvalidSelectorValue { .. }));
        assert!(matches!(
            selector("fields=vimConnectionInfo/@key").unwrap_err(),
            Sol013Error::InvalidSelectorValue { .. }
        ));
        assert_eq!(
            selector("all_fields=false").unwrap_err(),
            Sol013Error::InvalidSelectorValue { param: "all_fields".into(), value: "false".into() }
        );
        assert!(matches!(selector("exclude_default=no").unwrap_err(), Sol013Error::InvalidSelectorValue { .. }));
    }

    #[test]
    fn the_hyphenated_exclude_fields_of_python_tackerclient_is_honoured() {
        let selector = selector("exclude-fields=metadata").unwrap();
        assert_eq!(selector.exclude_fields()[0].as_str(), "metadata");
        assert_eq!(select("exclude-fields=metadata"), select("exclude_fields=metadata"));
    }

    #[test]
    fn repeated_list_parameters_are_rejected() {
        let pairs = vec![
            ("fields".to_owned(), Some("metadata".to_owned())),
            ("fields".to_owned(), Some("extensions".to_owned())),
        ];
        assert_eq!(
            AttributeSelector::from_pairs(&pairs, &vnf_instance_schema()).unwrap_err(),
            Sol013Error::DuplicateParameter("fields".into())
        );
    }

    #[test]
    fn accessors_report_the_request() {
        let s = selector("exclude_default&fields=metadata,instantiatedVnfInfo/flavourId").unwrap();
        assert!(s.exclude_default());
        assert!(!s.all_fields());
        assert_eq!(
            s.fields().iter().map(AttrPath::as_str).collect::<Vec<_>>(),
            ["metadata", "instantiatedVnfInfo/flavourId"]
        );
        assert!(s.exclude_fields().is_empty());
        assert!(selector("all_fields").unwrap().all_fields());
    }
}

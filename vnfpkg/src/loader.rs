//! Loads the VNFD: the entry YAML plus every file it (transitively) imports from the package.

use std::collections::HashSet;

use serde::Deserialize;
use serde_yaml_ng::Value;

use crate::error::CsarError;
use crate::yaml::{lenient, present, read};

/// Reads a package file; `Ok(None)` when the package has no such file.
pub(crate) type ReadFile<'a> = dyn FnMut(&str) -> Result<Option<Vec<u8>>, CsarError> + 'a;

/// One VNFD YAML file.
#[derive(Debug, Clone)]
pub(crate) struct Doc {
    pub path: String,
    pub raw: Vec<u8>,
    pub value: Value,
}

/// Resolves `rel` against the directory of `base` (a package path) and normalises `.`/`..`.
/// `None` when the result would leave the package root or the path is not a plain relative one.
pub(crate) fn resolve(base: &str, rel: &str) -> Option<String> {
    if rel.starts_with('/') || rel.contains('\\') || rel.contains('\0') {
        return None;
    }
    let mut parts: Vec<&str> = match base.rsplit_once('/') {
        Some((dir, _)) => dir.split('/').filter(|s| !s.is_empty()).collect(),
        None => Vec::new(),
    };
    for seg in rel.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            s => parts.push(s),
        }
    }
    if parts.is_empty() { None } else { Some(parts.join("/")) }
}

/// `http://…` and similar: not something inside the package.
pub(crate) fn is_uri(s: &str) -> bool {
    s.split_once("://").is_some_and(|(scheme, _)| {
        !scheme.is_empty() && scheme.chars().all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
    })
}

struct Import {
    file: String,
    repository: bool,
}

/// The `imports` of a service template.
#[derive(Default, Deserialize)]
#[serde(default)]
struct Imports {
    #[serde(deserialize_with = "lenient")]
    imports: Vec<ImportDef>,
}

/// The forms TOSCA 1.2 allows in `imports`: `- file.yaml`, `- file: f.yaml`,
/// `- name: f.yaml`, `- name: {file: f.yaml, repository: r}`.
#[derive(Default)]
struct ImportDef(Option<Import>);

/// `file: f.yaml` with an optional `repository`.
#[derive(Default, Deserialize)]
#[serde(default)]
struct ImportDetail {
    #[serde(deserialize_with = "lenient")]
    file: Option<String>,
    #[serde(deserialize_with = "present")]
    repository: Option<Value>,
}

impl ImportDetail {
    fn import(mut map: serde_yaml_ng::Mapping) -> Option<Import> {
        // serde would take an integer key for a field's index.
        map.retain(|key, _| key.is_string());
        let detail: ImportDetail = read(Value::Mapping(map));
        Some(Import { file: detail.file?, repository: detail.repository.is_some() })
    }
}

impl<'de> Deserialize<'de> for ImportDef {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(ImportDef(match Value::deserialize(d)? {
            Value::String(file) => Some(Import { file, repository: false }),
            Value::Mapping(m) if m.contains_key("file") => ImportDetail::import(m),
            Value::Mapping(m) if m.len() == 1 => match m.into_iter().next().map(|(_, v)| v) {
                Some(Value::String(file)) => Some(Import { file, repository: false }),
                Some(Value::Mapping(inner)) => ImportDetail::import(inner),
                _ => None,
            },
            _ => None,
        }))
    }
}

fn imports_of(value: &Value) -> Vec<Import> {
    let Some(mut template) = value.as_mapping().cloned() else { return Vec::new() };
    template.retain(|key, _| key.is_string());
    read::<Imports>(Value::Mapping(template)).imports.into_iter().filter_map(|i| i.0).collect()
}

/// SOL001 type definition files (`etsi_nfv_sol001_common_types.yaml`, `..._vnfd_types.yaml`)
/// are imported by name in Tacker samples but need not be shipped; the summary knows the
/// normative types it needs.
fn may_be_absent(import: &Import) -> bool {
    let base = import.file.rsplit('/').next().unwrap_or(&import.file);
    import.repository || base.starts_with("etsi_nfv_sol001")
}

pub(crate) fn parse_yaml(path: &str, raw: &[u8]) -> Result<Value, CsarError> {
    let yaml_error = |e: serde_yaml_ng::Error| CsarError::Yaml {
        file: path.to_owned(),
        line: e.location().map(|l| l.line()),
        message: e.to_string(),
    };
    let mut value: Value = serde_yaml_ng::from_slice(raw).map_err(yaml_error)?;
    // `<<: *anchor` merge keys are common in hand-written TOSCA.
    value.apply_merge().map_err(yaml_error)?;
    if !value.is_mapping() {
        return Err(CsarError::Yaml {
            file: path.to_owned(),
            line: None,
            message: "the file is not a TOSCA service template (expected a YAML mapping)".into(),
        });
    }
    Ok(value)
}

/// Loads `entry` and its imports depth-first (entry first, then imports in declaration order).
/// `read` returns `Ok(None)` for a path the package does not contain.
pub(crate) fn load(entry: &str, read: &mut ReadFile<'_>) -> Result<Vec<Doc>, CsarError> {
    let mut docs = Vec::new();
    let mut seen = HashSet::new();
    let raw = read(entry)?.ok_or_else(|| CsarError::EntryDefinitionsNotFound { path: entry.to_owned() })?;
    seen.insert(entry.to_owned());
    let mut stack = vec![(entry.to_owned(), raw)];
    while let Some((path, raw)) = stack.pop() {
        let value = parse_yaml(&path, &raw)?;
        let mut children = Vec::new();
        for import in imports_of(&value) {
            if is_uri(&import.file) {
                continue;
            }
            let target = resolve(&path, &import.file)
                .ok_or_else(|| CsarError::PathOutsidePackage { file: path.clone(), path: import.file.clone() })?;
            if !seen.insert(target.clone()) {
                continue;
            }
            match read(&target)? {
                Some(raw) => children.push((target, raw)),
                None if may_be_absent(&import) => {}
                None => return Err(CsarError::ImportNotFound { file: path.clone(), import: import.file }),
            }
        }
        docs.push(Doc { path, raw, value });
        // Reverse so that the first import is processed next (depth-first, declaration order).
        stack.extend(children.into_iter().rev());
    }
    Ok(docs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn resolve_paths() {
        assert_eq!(resolve("Definitions/top.yaml", "types.yaml").as_deref(), Some("Definitions/types.yaml"));
        assert_eq!(resolve("Definitions/top.yaml", "../Files/a.img").as_deref(), Some("Files/a.img"));
        assert_eq!(resolve("top.yaml", "./Definitions/x.yaml").as_deref(), Some("Definitions/x.yaml"));
        assert_eq!(resolve("Definitions/top.yaml", "../../etc/passwd"), None);
        assert_eq!(resolve("Definitions/top.yaml", "/etc/passwd"), None);
        assert_eq!(resolve("Definitions/top.yaml", "..\\x"), None);
        assert!(is_uri("https://forge.etsi.org/x.yaml"));
        assert!(!is_uri("Definitions/x.yaml"));
    }

    fn loader_over(files: &[(&str, &str)]) -> impl FnMut(&str) -> Result<Option<Vec<u8>>, CsarError> {
        let map: HashMap<String, Vec<u8>> = files.iter().map(|(p, c)| (p.to_string(), c.as_bytes().to_vec())).collect();
        move |p: &str| Ok(map.get(p).cloned())
    }

    #[test]
    fn follows_imports_in_order_once_and_tolerates_absent_sol001_types() {
        let mut read = loader_over(&[
            (
                "Definitions/top.yaml",
                "imports:\n  - etsi_nfv_sol001_common_types.yaml\n  - types.yaml\n  - file: df.yaml\n",
            ),
            ("Definitions/types.yaml", "imports: [ etsi_nfv_sol001_vnfd_types.yaml ]\nnode_types: {}\n"),
            ("Definitions/df.yaml", "imports:\n  - types.yaml\n  - top.yaml\ntopology_template: {}\n"),
        ]);
        let docs = load("Definitions/top.yaml", &mut read).unwrap();
        let paths: Vec<_> = docs.iter().map(|d| d.path.as_str()).collect();
        assert_eq!(paths, ["Definitions/top.yaml", "Definitions/types.yaml", "Definitions/df.yaml"]);
    }

    #[test]
    fn missing_own_import_is_an_error() {
        let mut read = loader_over(&[("top.yaml", "imports: [ missing_types.yaml ]\n")]);
        let err = load("top.yaml", &mut read).unwrap_err();
        assert_eq!(err.to_string(), "VNFD file top.yaml imports missing_types.yaml, which is not in the VNF package");
    }

    #[test]
    fn import_escaping_the_package_is_an_error() {
        let mut read = loader_over(&[("Definitions/top.yaml", "imports: [ ../../outside.yaml ]\n")]);
        let err = load("Definitions/top.yaml", &mut read).unwrap_err();
        assert!(matches!(err, CsarError::PathOutsidePackage { .. }), "{err}");
    }

    #[test]
    fn yaml_error_reports_file_and_line() {
        let mut read = loader_over(&[("Definitions/top.yaml", "a: 1\nb: [1, 2\nc: 3\n")]);
        let err = load("Definitions/top.yaml", &mut read).unwrap_err();
        let CsarError::Yaml { file, line, .. } = &err else { panic!("{err}") };
        assert_eq!(file, "Definitions/top.yaml");
        assert!(line.is_some_and(|l| l >= 2), "{err}");
        assert!(err.to_string().starts_with("VNFD YAML error in file Definitions/top.yaml at line "), "{err}");
    }
}

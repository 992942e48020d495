//! TOSCA.meta (SOL004 clause 4.2) and manifest (SOL004 clause 4.3) "block" files: groups of
//! `Key: value` lines separated by blank lines.

use crate::error::CsarError;

pub(crate) const TOSCA_META: &str = "TOSCA-Metadata/TOSCA.meta";

/// One `Source`/`Algorithm`/`Hash` block, as SOL004 puts them in the manifest and Tacker also
/// accepts in TOSCA.meta (there the path key is usually `Name`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ArtifactDecl {
    pub path: String,
    pub algorithm: String,
    pub hash: String,
    pub declared_in: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ToscaMeta {
    pub entry_definitions: String,
    pub entry_manifest: Option<String>,
    pub artifacts: Vec<ArtifactDecl>,
}

struct Line<'a> {
    number: usize,
    key: &'a str,
    value: &'a str,
}

/// Splits into blocks of top-level `Key: value` lines. Indented lines (nested YAML such as a
/// manifest's `metadata:` section) and CMS signature blocks are skipped; in strict mode any
/// other line without a colon is an error with its 1-based line number.
fn blocks(text: &str, strict: bool) -> Result<Vec<Vec<Line<'_>>>, (usize, String)> {
    let mut out: Vec<Vec<Line<'_>>> = vec![Vec::new()];
    let mut in_signature = false;
    for (idx, raw) in text.lines().enumerate() {
        let number = idx + 1;
        let line = raw.trim_end_matches('\r');
        if line.trim().is_empty() {
            if out.last().is_some_and(|b| !b.is_empty()) {
                out.push(Vec::new());
            }
            continue;
        }
        if line.starts_with("-----BEGIN") {
            in_signature = true;
            continue;
        }
        if in_signature {
            in_signature = !line.starts_with("-----END");
            continue;
        }
        if line.starts_with('#') || line.starts_with(' ') || line.starts_with('\t') {
            continue;
        }
        match line.split_once(':') {
            Some((key, value)) if !key.trim().is_empty() => {
                if let Some(block) = out.last_mut() {
                    block.push(Line { number, key: key.trim(), value: unquote(value.trim()) });
                }
            }
            _ if strict => return Err((number, format!("expected 'Name: value', found {line:?}"))),
            _ => {}
        }
    }
    out.retain(|b| !b.is_empty());
    Ok(out)
}

fn unquote(v: &str) -> &str {
    for q in ['\'', '"'] {
        if let Some(inner) = v.strip_prefix(q).and_then(|s| s.strip_suffix(q)) {
            return inner;
        }
    }
    v
}

fn get<'a>(block: &'a [Line<'a>], key: &str) -> Option<&'a Line<'a>> {
    block.iter().find(|l| l.key.eq_ignore_ascii_case(key))
}

/// Collects artifact blocks. A block that mentions `Algorithm` or `Hash` must carry all of
/// path, `Algorithm` and `Hash` (Tacker rejects such half-filled blocks the same way); blocks
/// with only `Name`/`Content-Type` merely list files and are not artifacts.
fn artifacts_from(blocks: &[Vec<Line<'_>>], file: &str) -> Result<Vec<ArtifactDecl>, CsarError> {
    let mut out = Vec::new();
    for block in blocks {
        let algorithm = get(block, "Algorithm");
        let hash = get(block, "Hash");
        if algorithm.is_none() && hash.is_none() {
            continue;
        }
        let path = get(block, "Source").or_else(|| get(block, "Name"));
        let first = block.first().map(|l| l.number).unwrap_or(0);
        let missing: Vec<&str> = [("Source", path), ("Algorithm", algorithm), ("Hash", hash)]
            .into_iter()
            .filter(|(_, l)| l.is_none_or(|l| l.value.is_empty()))
            .map(|(k, _)| k)
            .collect();
        match (path, algorithm, hash) {
            (Some(p), Some(a), Some(h)) if missing.is_empty() => out.push(ArtifactDecl {
                path: p.value.to_owned(),
                algorithm: a.value.to_owned(),
                hash: h.value.to_owned(),
                declared_in: file.to_owned(),
            }),
            _ => {
                return Err(CsarError::InvalidArtifactInfo {
                    file: file.to_owned(),
                    detail: format!("the block at line {first} lacks a value for {}", missing.join(", ")),
                });
            }
        }
    }
    Ok(out)
}

pub(crate) fn parse_tosca_meta(text: &str) -> Result<ToscaMeta, CsarError> {
    let blocks = blocks(text, true).map_err(|(line, detail)| CsarError::InvalidToscaMeta { line, detail })?;
    let Some(header) = blocks.first() else {
        return Err(CsarError::MissingEntryDefinitions);
    };
    let entry_definitions = match get(header, "Entry-Definitions") {
        Some(l) if !l.value.is_empty() => l.value.to_owned(),
        _ => return Err(CsarError::MissingEntryDefinitions),
    };
    let entry_manifest = get(header, "ETSI-Entry-Manifest").map(|l| l.value.to_owned()).filter(|v| !v.is_empty());
    let artifacts = artifacts_from(blocks.get(1..).unwrap_or_default(), TOSCA_META)?;
    Ok(ToscaMeta { entry_definitions, entry_manifest, artifacts })
}

pub(crate) fn parse_manifest(text: &str, file: &str) -> Result<Vec<ArtifactDecl>, CsarError> {
    // Manifests mix block lines with nested YAML and signatures, so unknown lines are skipped.
    let blocks = blocks(text, false).map_err(|(line, detail)| CsarError::InvalidArtifactInfo {
        file: file.to_owned(),
        detail: format!("line {line}: {detail}"),
    })?;
    artifacts_from(&blocks, file)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tosca_meta_with_tacker_style_artifact_blocks() {
        let text = "TOSCA-Meta-File-Version: 1.0\r\nCreated-by: Dummy\nCSAR-Version: 1.1\n\
                    Entry-Definitions: Definitions/top.vnfd.yaml\nETSI-Entry-Manifest: 'manifest.mf'\n\n\
                    Name: Files/images/cirros.img\nContent-type: application/x-iso9066-image\n\n\
                    Name: Scripts/install.sh\nContent-Type: application/x-sh\nAlgorithm: SHA-256\nHash: abcd\n";
        let meta = parse_tosca_meta(text).unwrap();
        assert_eq!(meta.entry_definitions, "Definitions/top.vnfd.yaml");
        assert_eq!(meta.entry_manifest.as_deref(), Some("manifest.mf"));
        assert_eq!(meta.artifacts.len(), 1);
        assert_eq!(meta.artifacts[0].path, "Scripts/install.sh");
        assert_eq!(meta.artifacts[0].algorithm, "SHA-256");
        assert_eq!(meta.artifacts[0].hash, "abcd");
    }

    #[test]
    fn tosca_meta_without_entry_definitions_is_rejected() {
        let err = parse_tosca_meta("TOSCA-Meta-File-Version: 1.0\nCSAR-Version: 1.1\n").unwrap_err();
        assert!(matches!(err, CsarError::MissingEntryDefinitions), "{err}");
    }

    #[test]
    fn tosca_meta_garbage_line_names_the_line() {
        let err = parse_tosca_meta("TOSCA-Meta-File-Version: 1.0\nthis is not a pair\n").unwrap_err();
        assert!(matches!(err, CsarError::InvalidToscaMeta { line: 2, .. }), "{err}");
    }

    #[test]
    fn half_filled_artifact_block_is_rejected() {
        let text = "Entry-Definitions: a.yaml\n\nSource: Scripts/x.sh\nAlgorithm: SHA-256\n";
        let err = parse_tosca_meta(text).unwrap_err();
        assert!(err.to_string().contains("lacks a value for Hash"), "{err}");
    }

    #[test]
    fn manifest_skips_metadata_and_signatures() {
        let text = "metadata:\n  vnf_provider_id: Company\n  vnf_package_version: 1.0\n\n\
                    Source: Scripts/install.sh\nAlgorithm: SHA-256\nHash: 0011\n\n\
                    -----BEGIN CMS-----\nMIIBxx==\n-----END CMS-----\n\n\
                    Source: Files/kubernetes/deployment.yaml\nAlgorithm: SHA-512\nHash: 2233\n";
        let arts = parse_manifest(text, "manifest.mf").unwrap();
        let paths: Vec<_> = arts.iter().map(|a| a.path.as_str()).collect();
        assert_eq!(paths, ["Scripts/install.sh", "Files/kubernetes/deployment.yaml"]);
        assert_eq!(arts[1].declared_in, "manifest.mf");
    }
}

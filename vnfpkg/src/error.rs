use std::path::PathBuf;

/// Why a VNF package could not be read.
///
/// Every message is a complete sentence fragment meant for the `detail` of a SOL013
/// ProblemDetails (python-tackerclient prints `detail` verbatim). All variants except
/// [`CsarError::Io`] and [`CsarError::ZipWrite`] describe a defect of the package itself.
#[derive(Debug, thiserror::Error)]
pub enum CsarError {
    #[error("I/O error on {path}: {source}", path = .path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    #[error("the VNF package is not a valid zip archive: {0}")]
    NotAZip(String),

    #[error("the VNF package has {found} entries, more than the allowed {max}")]
    TooManyEntries { found: usize, max: usize },

    #[error("the VNF package expands to more than the allowed {max} bytes")]
    TooLarge { max: u64 },

    #[error("unsafe entry name {name:?} in the VNF package: {reason}")]
    UnsafeEntry { name: String, reason: &'static str },

    #[error("the VNF package contains more than one entry named {0:?}")]
    DuplicateEntry(String),

    #[error("entry {name:?} of the VNF package cannot be read: {reason}")]
    BadEntry { name: String, reason: String },

    #[error("the VNFD files of the VNF package exceed the allowed {max} bytes")]
    VnfdTooLarge { max: u64 },

    #[error("the VNF package has no TOSCA-Metadata/TOSCA.meta and no single YAML file at its root{}", hint_suffix(.hint))]
    MissingToscaMeta { hint: Option<String> },

    #[error("the VNF package has no TOSCA-Metadata/TOSCA.meta and {} YAML files at its root ({}); exactly one is allowed", .files.len(), .files.join(", "))]
    AmbiguousRootYaml { files: Vec<String> },

    #[error("invalid TOSCA-Metadata/TOSCA.meta at line {line}: {detail}")]
    InvalidToscaMeta { line: usize, detail: String },

    #[error("TOSCA-Metadata/TOSCA.meta does not name the Entry-Definitions file")]
    MissingEntryDefinitions,

    #[error("Entry-Definitions file {path} is not in the VNF package")]
    EntryDefinitionsNotFound { path: String },

    #[error("manifest file {path} is not in the VNF package")]
    ManifestNotFound { path: String },

    #[error("invalid artifact information in {file}: {detail}")]
    InvalidArtifactInfo { file: String, detail: String },

    #[error("VNFD YAML error in file {file}{}: {message}", line_suffix(*.line))]
    Yaml { file: String, line: Option<usize>, message: String },

    #[error("VNFD file {file} imports {import}, which is not in the VNF package")]
    ImportNotFound { file: String, import: String },

    #[error("{file} refers to {path}, which lies outside the VNF package")]
    PathOutsidePackage { file: String, path: String },

    #[error(
        "the VNFD does not define the VNF property {property} (neither in a VNF node template nor as a default of its node type)"
    )]
    MissingVnfProperty { property: &'static str },

    #[error("invalid VNFD: {0}")]
    InvalidVnfd(String),

    #[error("artifact {path} listed in {declared_in} is not in the VNF package")]
    ArtifactNotFound { path: String, declared_in: String },

    #[error(
        "artifact {path} uses the unsupported hash algorithm {algorithm:?} (supported: SHA-224, SHA-256, SHA-384, SHA-512)"
    )]
    UnsupportedHashAlgorithm { path: String, algorithm: String },

    #[error("checksum mismatch for {path}: {algorithm} declared {expected} but the content hashes to {actual}")]
    ChecksumMismatch { path: String, algorithm: String, expected: String, actual: String },

    #[error("extraction target {path} already exists and is not empty", path = .path.display())]
    DestinationExists { path: PathBuf },

    #[error("cannot write the VNFD zip: {0}")]
    ZipWrite(String),
}

impl CsarError {
    /// True when the package is at fault (onboarding fails, a client error), false for
    /// local I/O trouble (a server error).
    pub fn is_package_error(&self) -> bool {
        !matches!(self, CsarError::Io { .. } | CsarError::ZipWrite(_) | CsarError::DestinationExists { .. })
    }

    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        CsarError::Io { path: path.into(), source }
    }

    /// A VNFD that breaks a SOL001 rule the summary relies on.
    pub(crate) fn invalid(msg: impl Into<String>) -> Self {
        CsarError::InvalidVnfd(msg.into())
    }
}

fn hint_suffix(hint: &Option<String>) -> String {
    hint.as_ref().map(|h| format!(" ({h})")).unwrap_or_default()
}

fn line_suffix(line: Option<usize>) -> String {
    line.map(|l| format!(" at line {l}")).unwrap_or_default()
}

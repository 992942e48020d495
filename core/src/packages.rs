//! VNF packages as both doors see them: the onboarding states (SOL005 clause 9), the
//! layout of a package's files in the store, and where uploaded content comes from.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use solgate_db::repo::vnf_packages::PackageRecord;

pub const CREATED: &str = "CREATED";
pub const UPLOADING: &str = "UPLOADING";
pub const PROCESSING: &str = "PROCESSING";
pub const ONBOARDED: &str = "ONBOARDED";

/// The attribute SOL005 v2.7.1 added for a failed onboarding (the 1.3.0 dictionary, from
/// v2.6.1, lacks it; solgate shows it anyway, or a failure would be invisible).
pub const FAILURE_DETAILS: &str = "onboardingFailureDetails";

/// The files of one package in the store: `<store>/<id>/`.
///
/// | path | written by | holds |
/// |---|---|---|
/// | `.upload-<uuid>.zip.part` | gateway PUT, conductor fetch | an upload in progress |
/// | `upload-<uuid>.zip` | gateway PUT | a complete upload awaiting the conductor |
/// | `package.zip` | conductor | the package content (`GET .../package_content`) |
/// | `content/` | conductor | the extracted package (artifacts, LCM drivers) |
/// | `vnfd.zip`, `vnfd.yaml` | conductor | what `GET .../vnfd` returns |
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackageFiles {
    root: PathBuf,
}

impl PackageFiles {
    pub fn new(store: &Path, package_id: &str) -> Self {
        Self { root: store.join(package_id) }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn package_zip(&self) -> PathBuf {
        self.root.join("package.zip")
    }

    /// The extracted package: what [`ConductorContext::package_dir`] names for the LCM drivers.
    pub fn content_dir(&self) -> PathBuf {
        self.root.join("content")
    }

    pub fn vnfd_zip(&self) -> PathBuf {
        self.root.join("vnfd.zip")
    }

    /// Present only when the VNFD is a single YAML file.
    pub fn vnfd_yaml(&self) -> PathBuf {
        self.root.join("vnfd.yaml")
    }

    /// A fresh name for a complete upload (unique, so concurrent uploads never share a file).
    pub fn new_upload_name() -> String {
        format!("upload-{}.zip", uuid::Uuid::new_v4())
    }

    /// A complete upload; `None` for a name that is not one of ours.
    pub fn upload(&self, name: &str) -> Option<PathBuf> {
        let valid = name
            .strip_prefix("upload-")
            .and_then(|rest| rest.strip_suffix(".zip"))
            .is_some_and(|uuid| !uuid.is_empty() && uuid.chars().all(|c| c.is_ascii_hexdigit() || c == '-'));
        valid.then(|| self.root.join(name))
    }

    /// Where a file is written before it is renamed to `final_name` (same directory, so the
    /// rename is atomic and a broken transfer never looks complete).
    pub fn partial(&self, final_name: &str) -> PathBuf {
        self.root.join(format!(".{final_name}.part"))
    }

    /// Removes the package's directory with everything in it (the package was deleted).
    pub fn remove_all(&self) -> std::io::Result<()> {
        remove_dir_if_present(&self.root)
    }

    /// Removes everything processing derives from `package.zip` (extraction, VNFD files),
    /// including what a crashed attempt left half-written.
    pub fn remove_derived(&self) -> std::io::Result<()> {
        remove_dir_if_present(&self.content_dir())?;
        for name in ["vnfd.zip", "vnfd.yaml"] {
            remove_if_present(&self.root.join(name))?;
            remove_if_present(&self.partial(name))?;
        }
        // solgate_vnfpkg::extract stages into `.csar-extract-*` beside the target; a crash
        // leaves it behind.
        if let Ok(entries) = std::fs::read_dir(&self.root) {
            for entry in entries.filter_map(Result::ok) {
                if entry.file_name().to_string_lossy().starts_with(".csar-extract-") {
                    remove_dir_if_present(&entry.path())?;
                }
            }
        }
        Ok(())
    }
}

pub fn remove_if_present(path: &Path) -> std::io::Result<()> {
    match std::fs::remove_file(path) {
        Err(error) if error.kind() != std::io::ErrorKind::NotFound => Err(error),
        _ => Ok(()),
    }
}

fn remove_dir_if_present(path: &Path) -> std::io::Result<()> {
    match std::fs::remove_dir_all(path) {
        Err(error) if error.kind() != std::io::ErrorKind::NotFound => Err(error),
        _ => Ok(()),
    }
}

/// Where the content of a package in UPLOADING or PROCESSING comes from, and which conductor
/// works on it. Stored in the package row's `upload_source`, never shown to clients; it
/// holds `upload_from_uri` credentials only until the fetch is done.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UploadSource {
    #[serde(flatten)]
    pub origin: Origin,
    /// The conductor working on it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Origin {
    /// `PUT .../package_content`: a complete upload file (see [`PackageFiles::upload`]).
    Content { file: String },
    /// `upload_from_uri`.
    Uri {
        address: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        user_name: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        password: Option<String>,
    },
    /// The content is in `package.zip` (PROCESSING).
    Stored,
    /// `[nfvo] mode = "external"`: the package holding VNFD `vnfd_id` is taken from the
    /// NFVO's VNF package management interface (a VNF instance was asked for with a vnfdId
    /// not onboarded here).
    Nfvo { vnfd_id: String },
}

impl UploadSource {
    pub fn content(file: String) -> Self {
        Self { origin: Origin::Content { file }, owner: None }
    }

    pub fn uri(address: String, user_name: Option<String>, password: Option<String>) -> Self {
        Self { origin: Origin::Uri { address, user_name, password }, owner: None }
    }

    pub fn nfvo(vnfd_id: String) -> Self {
        Self { origin: Origin::Nfvo { vnfd_id }, owner: None }
    }

    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    pub fn of(record: &PackageRecord) -> Option<Self> {
        record.upload_source.clone().and_then(|value| serde_json::from_value(value).ok())
    }
}

/// Marks an onboarded package as taken from the NFVO (`_solgate.source = "nfvo"` in its
/// stored document, never shown): only such cached copies follow the NFVO's package
/// notifications.
pub fn mark_taken_from_nfvo(body: &mut Value) {
    let Value::Object(document) = body else { return };
    let private = document.entry(crate::PRIVATE_KEY).or_insert_with(|| json!({}));
    if !private.is_object() {
        *private = json!({});
    }
    private["source"] = json!("nfvo");
}

/// Whether an onboarded package was taken from the NFVO ([`mark_taken_from_nfvo`]).
pub fn is_taken_from_nfvo(body: &Value) -> bool {
    body[crate::PRIVATE_KEY]["source"] == "nfvo"
}

/// A ProblemDetails for `onboardingFailureDetails` (key order as the gateway's errors).
pub fn failure_details(status: u16, detail: &str) -> Value {
    json!({
        "status": status,
        "detail": detail,
        "title": solgate_sol013::reason_phrase(status).unwrap_or("Error"),
    })
}

/// Whether `path` names an artifact of the package that can be served (SOL005
/// `GET .../artifacts/{artifactPath}`): declared in TOSCA.meta or the manifest, inside the
/// package. `contents` is the stored [`PackageContents`] as JSON.
pub fn is_served_artifact(contents: &Value, path: &str) -> bool {
    contents["artifacts"].as_array().is_some_and(|artifacts| {
        artifacts.iter().any(|artifact| artifact["path"] == path && artifact["external"] != true)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn upload_names_are_ours_only() {
        let files = PackageFiles::new(Path::new("/store"), "p1");
        let name = PackageFiles::new_upload_name();
        assert_eq!(files.upload(&name), Some(PathBuf::from(format!("/store/p1/{name}"))));
        for bad in ["../x", "upload-.zip", "upload-../../etc.zip", "package.zip", "upload-abc/def.zip"] {
            assert_eq!(files.upload(bad), None, "{bad}");
        }
        assert_eq!(files.partial("package.zip"), PathBuf::from("/store/p1/.package.zip.part"));
    }

    #[test]
    fn upload_source_round_trips() {
        let source = UploadSource::uri("http://h/p.zip".into(), Some("u".into()), Some("p".into()));
        let value = source.to_value();
        assert_eq!(value, json!({"kind": "uri", "address": "http://h/p.zip", "user_name": "u", "password": "p"}));
        let back: UploadSource = serde_json::from_value(value).unwrap();
        assert_eq!(back, source);
        let stored = UploadSource { origin: Origin::Stored, owner: Some("c1".into()) }.to_value();
        assert_eq!(stored, json!({"kind": "stored", "owner": "c1"}));
    }

    #[test]
    fn failure_details_are_problem_details() {
        assert_eq!(
            failure_details(422, "bad"),
            json!({"status": 422, "detail": "bad", "title": "Unprocessable Entity"})
        );
    }

    #[test]
    fn served_artifacts_are_declared_in_package_ones() {
        let contents = json!({"artifacts": [
            {"path": "Scripts/install.sh", "external": false},
            {"path": "http://example.com/x", "external": true}
        ]});
        assert!(is_served_artifact(&contents, "Scripts/install.sh"));
        assert!(!is_served_artifact(&contents, "http://example.com/x"));
        assert!(!is_served_artifact(&contents, "Scripts/../Scripts/install.sh"));
        assert!(!is_served_artifact(&json!({}), "Scripts/install.sh"));
    }
}

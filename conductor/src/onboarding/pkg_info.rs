//! VnfPkgInfo once onboarded (SOL005 v2.6.1 clause 9.5.2.5).

use serde_json::{Map, Value, json};
use solgate_core::packages::{FAILURE_DETAILS, ONBOARDED};
use solgate_vnfpkg::PackageContents;

/// Attributes onboarding adds to VnfPkgInfo.
pub(super) const ONBOARDED_KEYS: &[&str] = &[
    "vnfdId",
    "vnfProvider",
    "vnfProductName",
    "vnfSoftwareVersion",
    "vnfdVersion",
    "checksum",
    "softwareImages",
    "additionalArtifacts",
];

/// VnfPkgInfo once onboarded (SOL005 v2.6.1 clause 9.5.2.5), attributes in the table's order.
pub(super) fn onboarded_body(current: &Value, contents: &PackageContents, onboarded_at: &str, enable: bool) -> Value {
    let vnfd = &contents.vnfd;
    let mut body = Map::new();
    body.insert("id".into(), current["id"].clone());
    body.insert("vnfdId".into(), json!(vnfd.descriptor_id));
    body.insert("vnfProvider".into(), json!(vnfd.provider));
    body.insert("vnfProductName".into(), json!(vnfd.product_name));
    body.insert("vnfSoftwareVersion".into(), json!(vnfd.software_version));
    body.insert("vnfdVersion".into(), json!(vnfd.descriptor_version));
    body.insert("checksum".into(), json!({"algorithm": contents.checksum.algorithm, "hash": contents.checksum.hash}));
    body.insert("softwareImages".into(), Value::Array(software_images(contents, onboarded_at)));
    body.insert("additionalArtifacts".into(), Value::Array(additional_artifacts(contents)));
    body.insert("onboardingState".into(), json!(ONBOARDED));
    let operational = if enable { json!("ENABLED") } else { current["operationalState"].clone() };
    body.insert("operationalState".into(), operational);
    body.insert("usageState".into(), current["usageState"].clone());
    body.insert("userDefinedData".into(), current.get("userDefinedData").cloned().unwrap_or_else(|| json!({})));
    // Anything else stored (a private key) is kept.
    if let Value::Object(old) = current {
        for (key, value) in old {
            if !body.contains_key(key) && key != FAILURE_DETAILS {
                body.insert(key.clone(), value.clone());
            }
        }
    }
    Value::Object(body)
}

/// SOL005 SoftwareImageInformation: minDisk in GB, minRam in MB, size in bytes; formats in
/// the enumeration's upper case (SOL001 writes them in lower case).
fn software_images(contents: &PackageContents, created_at: &str) -> Vec<Value> {
    contents
        .vnfd
        .software_images
        .iter()
        .map(|image| {
            let mut info = Map::new();
            info.insert("id".into(), json!(image.id));
            info.insert("name".into(), json!(image.name));
            info.insert("provider".into(), json!(image.provider.clone().unwrap_or_default()));
            info.insert("version".into(), json!(image.version.clone().unwrap_or_default()));
            let declared = image.checksum.as_ref().map(|c| (c.algorithm.clone(), c.hash.clone())).or_else(|| {
                let path = image.image_path.as_deref()?;
                contents
                    .artifacts
                    .iter()
                    .find(|a| a.path == path)
                    .map(|a| (a.checksum.algorithm.clone(), a.checksum.hash.clone()))
            });
            if let Some((algorithm, hash)) = declared {
                info.insert("checksum".into(), json!({"algorithm": algorithm, "hash": hash}));
            }
            if let Some(format) = &image.container_format {
                info.insert("containerFormat".into(), json!(format.to_ascii_uppercase()));
            }
            if let Some(format) = &image.disk_format {
                info.insert("diskFormat".into(), json!(format.to_ascii_uppercase()));
            }
            info.insert("createdAt".into(), json!(created_at));
            info.insert("minDisk".into(), json!(image.min_disk.map_or(0, |bytes| bytes.div_ceil(1_000_000_000))));
            info.insert("minRam".into(), json!(image.min_ram.map_or(0, |bytes| bytes.div_ceil(1_000_000))));
            let file_size = || {
                let path = image.image_path.as_deref()?;
                contents.files.iter().find(|f| f.path == path).map(|f| f.size)
            };
            info.insert("size".into(), json!(image.size.or_else(file_size).unwrap_or(0)));
            info.insert("imagePath".into(), json!(image.image_path.clone().unwrap_or_default()));
            Value::Object(info)
        })
        .collect()
}

/// Artifacts in the package other than software images (those are in `softwareImages`).
/// Artifacts outside the package (declared by URI) have no package path and are left out.
fn additional_artifacts(contents: &PackageContents) -> Vec<Value> {
    contents
        .artifacts
        .iter()
        .filter(|artifact| !artifact.software_image && !artifact.external)
        .map(|artifact| {
            json!({
                "artifactPath": artifact.path,
                "checksum": {"algorithm": artifact.checksum.algorithm, "hash": artifact.checksum.hash},
            })
        })
        .collect()
}

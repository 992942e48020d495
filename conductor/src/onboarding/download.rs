//! Taking a package's content: from `upload_from_uri` (bounded in size and time, through
//! the `[egress]` guard) or from the external NFVO (SOL003 clause 10.4), into `package.zip`.

use std::time::Duration;

use serde::Deserialize;
use solgate_core::egress::Outbound;
use solgate_core::packages::PackageFiles;
use solgate_core::settings::PackageSettings;
use solgate_vnfpkg::{HashAlgo, Hasher};
use tokio::io::AsyncWriteExt;

use super::failure::OnboardingFailure;
use crate::context::ConductorContext;
use crate::lcm::views::{lenient, view};
use crate::nfvo::GrantError;

/// The address without credentials, for messages.
pub(super) fn redacted(address: &str) -> String {
    match url::Url::parse(address) {
        Ok(mut url) => {
            let _ = url.set_password(None);
            let _ = url.set_username("");
            url.to_string()
        }
        Err(_) => address.to_owned(),
    }
}

/// Fetches `upload_from_uri` content into `package.zip` (through a partial file), bounded in
/// size and time.
pub(super) async fn fetch(
    settings: &PackageSettings,
    outbound: &Outbound,
    files: &PackageFiles,
    address: &str,
    user_name: Option<&str>,
    password: Option<&str>,
) -> Result<(), OnboardingFailure> {
    let shown = redacted(address);
    let bad =
        |reason: String| OnboardingFailure::new(400, format!("Could not fetch the VNF package from {shown}: {reason}"));
    // Checked when the request was accepted; again here, as the guard's rules may have
    // changed since (the resolver and the redirect policy check every connection too).
    let url = outbound
        .policy()
        .check_uri("addressInformation", address)
        .map_err(|refused| OnboardingFailure::new(refused.status, refused.detail.replace(address, &shown)))?;
    let client = outbound
        .client_builder(true)
        .map_err(|error| {
            tracing::error!(%error, "cannot build the HTTP client");
            OnboardingFailure::internal()
        })?
        .timeout(Duration::from_secs(settings.fetch_timeout_secs.max(1)))
        .connect_timeout(Duration::from_secs(settings.fetch_connect_timeout_secs.max(1)))
        .build()
        .map_err(|error| {
            tracing::error!(%error, "cannot build the HTTP client");
            OnboardingFailure::internal()
        })?;
    let mut request = client.get(url.clone());
    if let Some(user) = user_name {
        request = request.basic_auth(user, password);
    }
    let describe = |error: &reqwest::Error| {
        // The error's own text names the URL (credentials included); log its cause only.
        let cause = std::error::Error::source(error).map(ToString::to_string).unwrap_or_default();
        tracing::warn!(address = %shown, %cause, status = ?error.status(), "fetching a VNF package failed");
        if error.is_redirect() {
            // The SSRF guard's reason (the rule that refused the hop), or too many hops.
            format!("a redirect was not followed: {cause}")
        } else if error.is_timeout() {
            format!("no complete answer within {} seconds", settings.fetch_timeout_secs)
        } else if error.is_connect() {
            "the server could not be reached".to_owned()
        } else {
            "the transfer failed".to_owned()
        }
    };
    let mut response = request.send().await.map_err(|error| bad(describe(&error)))?;
    let status = response.status();
    if !status.is_success() {
        return Err(bad(format!("the server answered {status}")));
    }
    let max = settings.max_upload_bytes;
    let too_large =
        || OnboardingFailure::new(413, format!("The VNF package at {shown} is larger than the allowed {max} bytes."));
    download_partial(files, &mut response, max, too_large, |error| bad(describe(error)), |_| {}).await?;
    put_in_place(files).await
}

/// Streams a download into the package's partial `package.zip` (made afresh), stopping
/// past `max` bytes; every chunk is also shown to `on_chunk` (a checksum). On failure the
/// partial file is removed.
async fn download_partial(
    files: &PackageFiles,
    response: &mut reqwest::Response,
    max: u64,
    too_large: impl Fn() -> OnboardingFailure,
    read_failure: impl Fn(&reqwest::Error) -> OnboardingFailure,
    mut on_chunk: impl FnMut(&[u8]),
) -> Result<(), OnboardingFailure> {
    if response.content_length().is_some_and(|length| length > max) {
        return Err(too_large());
    }
    tokio::fs::create_dir_all(files.root()).await.map_err(|error| download_io(&error))?;
    let partial = files.partial("package.zip");
    let mut file = tokio::fs::File::create(&partial).await.map_err(|error| download_io(&error))?;
    let mut received: u64 = 0;
    let written: Result<(), OnboardingFailure> = async {
        while let Some(chunk) = response.chunk().await.map_err(|error| read_failure(&error))? {
            received += chunk.len() as u64;
            if received > max {
                return Err(too_large());
            }
            on_chunk(&chunk);
            file.write_all(&chunk).await.map_err(|error| download_io(&error))?;
        }
        file.sync_all().await.map_err(|error| download_io(&error))
    }
    .await;
    drop(file);
    if written.is_err() {
        let _ = tokio::fs::remove_file(&partial).await;
    }
    written
}

/// The complete partial download becomes `package.zip`.
async fn put_in_place(files: &PackageFiles) -> Result<(), OnboardingFailure> {
    tokio::fs::rename(files.partial("package.zip"), files.package_zip()).await.map_err(|error| download_io(&error))
}

fn download_io(error: &std::io::Error) -> OnboardingFailure {
    tracing::error!(%error, "cannot write a downloaded VNF package");
    OnboardingFailure::internal()
}

/// Takes the package holding VNFD `vnfd_id` from the NFVO (`[nfvo] mode = "external"`):
/// its VnfPkgInfo must say ENABLED and give a checksum, and the content, bounded like an
/// `upload_from_uri`, must match that checksum before it becomes `package.zip`.
pub(super) async fn fetch_from_nfvo(
    ctx: &ConductorContext,
    files: &PackageFiles,
    vnfd_id: &str,
) -> Result<(), OnboardingFailure> {
    let Some(nfvo) = ctx.nfvo.as_ref() else {
        return Err(OnboardingFailure::new(
            422,
            format!("VnfPackage of vnfdId {vnfd_id} is not onboarded, and no external NFVO is configured."),
        ));
    };
    let refused = |error: GrantError| match error {
        GrantError::Rejected(problem) => OnboardingFailure::new(
            422,
            format!("The NFVO has no usable VNF package for vnfdId {vnfd_id}: {}", problem.detail),
        ),
        GrantError::Unavailable(detail) => OnboardingFailure::new(503, detail),
    };
    let info = nfvo.onboarded_package(vnfd_id).await.map_err(refused)?;
    let checksum = usable_checksum(&info, vnfd_id)?;
    let mut response = nfvo.onboarded_package_content(vnfd_id).await.map_err(refused)?;
    let settings = &ctx.packages;
    let max = settings.max_upload_bytes;
    let mut hasher = Hasher::new(checksum.algo);
    let transfer = download_partial(
        files,
        &mut response,
        max,
        || too_large_from_nfvo(vnfd_id, max),
        |error| {
            OnboardingFailure::new(
                503,
                format!("The NFVO's VNF package content for vnfdId {vnfd_id} could not be read: {}", cause_of(error)),
            )
        },
        |chunk| hasher.update(chunk),
    );
    // The NFVO client has no overall timeout (its body is bounded here instead).
    let limit = Duration::from_secs(settings.fetch_timeout_secs.max(1));
    match tokio::time::timeout(limit, transfer).await {
        Ok(written) => written?,
        Err(_) => {
            let _ = tokio::fs::remove_file(files.partial("package.zip")).await;
            return Err(OnboardingFailure::new(
                503,
                format!(
                    "The NFVO's VNF package content for vnfdId {vnfd_id} did not arrive within {} seconds.",
                    settings.fetch_timeout_secs
                ),
            ));
        }
    }
    let got = hasher.hex();
    if !got.eq_ignore_ascii_case(&checksum.hash) {
        let _ = tokio::fs::remove_file(files.partial("package.zip")).await;
        return Err(OnboardingFailure::new(
            422,
            format!(
                "The NFVO's VNF package content for vnfdId {vnfd_id} does not match the checksum of its VnfPkgInfo \
                 ({} {}, received {got}); it was not onboarded.",
                checksum.algorithm, checksum.hash
            ),
        ));
    }
    put_in_place(files).await
}

/// The checksum of the NFVO's VnfPkgInfo for `vnfd_id`, when that package is the one asked
/// for and ENABLED.
fn usable_checksum(info: &serde_json::Value, vnfd_id: &str) -> Result<PackageChecksum, OnboardingFailure> {
    let info: NfvoPackageInfo = view(info);
    if let Some(held) = info.vnfd_id.as_deref().filter(|held| *held != vnfd_id) {
        return Err(OnboardingFailure::new(
            422,
            format!("The NFVO answered for vnfdId {vnfd_id} with the package of vnfdId {held}."),
        ));
    }
    let state = info.operational_state.as_deref().unwrap_or("absent");
    if state != "ENABLED" {
        return Err(OnboardingFailure::new(
            422,
            format!("The NFVO's VNF package for vnfdId {vnfd_id} is {state}, not ENABLED."),
        ));
    }
    PackageChecksum::of(&info.checksum)
        .map_err(|reason| OnboardingFailure::new(422, format!("The NFVO's VnfPkgInfo for vnfdId {vnfd_id}: {reason}")))
}

fn too_large_from_nfvo(vnfd_id: &str, max: u64) -> OnboardingFailure {
    OnboardingFailure::new(
        413,
        format!(
            "The NFVO's VNF package for vnfdId {vnfd_id} is larger than the allowed {max} bytes (packages.max_upload_bytes)."
        ),
    )
}

fn cause_of(error: &reqwest::Error) -> String {
    std::error::Error::source(error).map_or_else(|| error.to_string(), ToString::to_string)
}

/// The NFVO's VnfPkgInfo (SOL003 clause 10.5.2.2), the members read here; one of another
/// type reads as absent.
#[derive(Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct NfvoPackageInfo {
    #[serde(deserialize_with = "lenient")]
    vnfd_id: Option<String>,
    #[serde(deserialize_with = "lenient")]
    operational_state: Option<String>,
    #[serde(deserialize_with = "lenient")]
    checksum: Checksum,
}

/// SOL005 Checksum.
#[derive(Default, Deserialize)]
#[serde(default)]
struct Checksum {
    #[serde(deserialize_with = "lenient")]
    algorithm: Option<String>,
    #[serde(deserialize_with = "lenient")]
    hash: Option<String>,
}

/// The `checksum` of a VnfPkgInfo (SOL005 `Checksum`: `algorithm`, `hash` in hex), with the
/// algorithms package manifests accept.
struct PackageChecksum {
    algorithm: String,
    algo: HashAlgo,
    hash: String,
}

impl PackageChecksum {
    fn of(checksum: &Checksum) -> Result<Self, String> {
        let algorithm = checksum.algorithm.as_deref().ok_or("it has no checksum.algorithm")?;
        let hash = checksum.hash.as_deref().ok_or("it has no checksum.hash")?;
        let algo = HashAlgo::parse(algorithm)
            .ok_or_else(|| format!("checksum.algorithm {algorithm:?} is not supported (SHA-224/256/384/512 are)."))?;
        Ok(Self { algorithm: algorithm.to_owned(), algo, hash: hash.trim().to_owned() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_are_shown_without_credentials() {
        assert_eq!(redacted("http://user:secret@example.com/p.zip"), "http://example.com/p.zip");
        assert_eq!(redacted("not a url"), "not a url");
    }
}

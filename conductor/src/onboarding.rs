//! VNF package onboarding off the request path (SOL005 clause 9: CREATED → UPLOADING →
//! PROCESSING → ONBOARDED, or back to CREATED with `onboardingFailureDetails`).
//!
//! The gateway accepts the content (`PUT .../package_content`: a complete upload file in the
//! package's directory; `upload_from_uri`: the address) and moves the package to UPLOADING in
//! the transaction that writes the outbox row. [`process`] then runs here, reloading
//! everything from the database, so a repeated message is harmless:
//!
//! 1. claim: record this conductor as the package's owner (in `upload_source`), unless a live
//!    conductor owns it already — a restart never takes over a live peer's work (Tacker
//!    defect 21 for LCM operations, same rule here);
//! 2. UPLOADING: for an upload, move the file into place; for a URI, fetch it (bounded size
//!    and time); the credentials are dropped in the transaction that enters PROCESSING;
//! 3. PROCESSING: `solgate_vnfpkg::inspect` the zip, extract it, prepare the VNFD downloads,
//!    then set ONBOARDED with the VNFD's identity in one transaction. `vnfdId` is set only
//!    there, so the database's unique index refuses a second onboarding of a VNFD cleanly
//!    (Tacker defect 24: a failed onboarding left a VNFD row behind).
//!
//! Any failure returns the package to CREATED with a ProblemDetails in
//! `onboardingFailureDetails` and removes every file onboarding wrote. The package's outbox
//! rows are deleted in the transaction that ends onboarding, so the relay republishes work
//! that a crash interrupted.

use std::collections::HashSet;
use std::sync::{Arc, LazyLock, Mutex, PoisonError};
use std::time::Duration;

use serde_json::{Map, Value, json};
use solgate_core::notify::pkgm::{self, PkgEvent};
use solgate_db::repo::vnf_packages::{self, PackageRecord};
use solgate_db::repo::{conductors, outbox, to_text};
use solgate_db::{AnyConnection, DbError, DbResult, write_transaction};
use solgate_vnfpkg::{CsarError, HashAlgo, Hasher, Limits, PackageContents};
use tokio::io::AsyncWriteExt;

use crate::context::{ConductorContext, ConductorError};
use crate::nfvo::GrantError;
use solgate_core::egress::Outbound;
use solgate_core::now;
use solgate_core::packages::{
    CREATED, FAILURE_DETAILS, ONBOARDED, Origin, PROCESSING, PackageFiles, UPLOADING, UploadSource, failure_details,
    remove_if_present,
};
use solgate_core::settings::PackageSettings;

/// Why onboarding failed: what the client reads in `onboardingFailureDetails`.
#[derive(Debug, Clone, PartialEq)]
struct OnboardingFailure {
    status: u16,
    detail: String,
}

impl OnboardingFailure {
    fn new(status: u16, detail: impl Into<String>) -> Self {
        Self { status, detail: detail.into() }
    }

    /// A package defect is the client's (422: a zip was received but cannot be onboarded);
    /// local I/O trouble is ours (500, details in the log only).
    fn from_csar(error: &CsarError, package_id: &str) -> Self {
        if error.is_package_error() {
            OnboardingFailure::new(422, error.to_string())
        } else {
            tracing::error!(package = %package_id, %error, "onboarding failed on local I/O");
            OnboardingFailure::internal()
        }
    }

    fn internal() -> Self {
        OnboardingFailure::new(
            500,
            "The VNF package could not be processed because of an internal error; see the solgate log.",
        )
    }
}

/// Packages this process is onboarding right now, as "conductor id/package id". A message
/// repeated while its work runs (the relay republishes after a while) is then a no-op.
static RUNNING: LazyLock<Mutex<HashSet<String>>> = LazyLock::new(|| Mutex::new(HashSet::new()));

struct Running(String);

impl Running {
    fn enter(conductor: &str, package_id: &str) -> Option<Running> {
        let key = format!("{conductor}/{package_id}");
        let fresh = RUNNING.lock().unwrap_or_else(PoisonError::into_inner).insert(key.clone());
        // Made only once the lock is released: a `Running` refused while it is held would
        // lock it again on drop and hang the conductor.
        fresh.then(|| Running(key))
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        RUNNING.lock().unwrap_or_else(PoisonError::into_inner).remove(&self.0);
    }
}

/// The package as this conductor claimed it.
struct ClaimedPackage {
    id: String,
    state: String,
    origin: Origin,
    /// The owner before this claim: a conductor that died (or an earlier failed attempt of
    /// this one) while working on the package.
    previous_owner: Option<String>,
}

/// Onboards the uploaded content of a package (UPLOADING/PROCESSING → ONBOARDED, or back to
/// CREATED with `onboardingFailureDetails`). Idempotent: a package in any other state, or
/// one a live conductor is working on, is left alone.
pub async fn process(ctx: &Arc<ConductorContext>, package_id: &str) -> Result<(), ConductorError> {
    let Some(_running) = Running::enter(&ctx.id, package_id) else { return Ok(()) };
    let Some(claimed) = claim(ctx, package_id).await? else { return Ok(()) };
    tracing::info!(package = %package_id, state = %claimed.state, "onboarding");
    let files = PackageFiles::new(&ctx.package_store, package_id);
    let outcome = match (claimed.state.as_str(), &claimed.origin) {
        (PROCESSING, _) => Ok(()),
        (_, Origin::Content { file }) => take_upload(&files, file).await,
        (_, Origin::Uri { address, .. }) if claimed.previous_owner.is_some() => {
            // The fetch crashed or stopped its conductor; it is not retried blindly.
            Err(OnboardingFailure::new(
                500,
                format!(
                    "The upload of the VNF package from {} was interrupted (the conductor stopped); upload it again.",
                    redacted(address)
                ),
            ))
        }
        (_, Origin::Uri { address, user_name, password }) => {
            match password.as_deref().map(|sealed| ctx.secrets.open_text("password", sealed)).transpose() {
                Ok(password) => {
                    fetch(&ctx.packages, &ctx.outbound, &files, address, user_name.as_deref(), password.as_deref())
                        .await
                }
                Err(error) => {
                    tracing::error!(%error, package = %package_id, "the package source's password cannot be opened");
                    Err(OnboardingFailure::internal())
                }
            }
        }
        // A GET of the operator's NFVO: safe to repeat after an interrupted attempt.
        (_, Origin::Nfvo { vnfd_id }) => fetch_from_nfvo(ctx, &files, vnfd_id).await,
        (_, Origin::Stored) => {
            if files.package_zip().is_file() {
                Ok(())
            } else {
                Err(interrupted())
            }
        }
    };
    if let Err(failure) = outcome {
        return fail(ctx, &claimed, &files, failure).await;
    }
    if claimed.state != PROCESSING && !enter_processing(ctx, &claimed.id).await? {
        return Ok(());
    }
    process_stored(ctx, &claimed, &files).await
}

fn interrupted() -> OnboardingFailure {
    OnboardingFailure::new(
        500,
        "The upload of the VNF package content was interrupted before it completed; upload it again.",
    )
}

/// At start-up: packages left in UPLOADING or PROCESSING by a crash are resumed (a complete
/// upload, or the stored zip) or failed (an interrupted fetch); leftovers of broken uploads and
/// of deleted packages are removed from the store.
pub async fn resume_interrupted(ctx: &Arc<ConductorContext>) -> Result<(), ConductorError> {
    let ids: Vec<String> =
        ctx.db_run(|conn| Ok(vnf_packages::interrupted(conn)?.into_iter().map(|record| record.id).collect())).await?;
    for id in ids {
        let ctx = ctx.clone();
        tokio::spawn(async move {
            if let Err(error) = process(&ctx, &id).await {
                tracing::error!(%error, package = %id, "could not resume onboarding");
            }
        });
    }
    if let Err(error) = sweep_store(ctx).await {
        tracing::warn!(%error, "could not clean the package store");
    }
    Ok(())
}

/// Partial uploads untouched for this long belong to a dead request.
const STALE_UPLOAD: Duration = Duration::from_secs(3600);

/// Removes directories of packages that no longer exist, and stale upload files of packages
/// waiting in CREATED (a PUT that died with its process).
async fn sweep_store(ctx: &Arc<ConductorContext>) -> Result<(), ConductorError> {
    let store = ctx.package_store.clone();
    let entries: Vec<String> = match std::fs::read_dir(&store) {
        Ok(entries) => entries
            .filter_map(Result::ok)
            .filter(|entry| entry.path().is_dir())
            .filter_map(|entry| entry.file_name().into_string().ok())
            .filter(|name| uuid::Uuid::parse_str(name).is_ok())
            .collect(),
        Err(_) => return Ok(()),
    };
    for id in entries {
        let lookup = id.clone();
        let record = ctx.db_run(move |conn| vnf_packages::find(conn, &lookup)).await?;
        let files = PackageFiles::new(&store, &id);
        match record {
            None => {
                tracing::info!(package = %id, "removing the files of a deleted VNF package");
                files.remove_all().map_err(|error| ConductorError::Other(error.to_string()))?;
            }
            Some(record) if record.onboarding_state() == CREATED => remove_stale_uploads(&files),
            Some(_) => {}
        }
    }
    Ok(())
}

fn remove_stale_uploads(files: &PackageFiles) {
    let Ok(entries) = std::fs::read_dir(files.root()) else { return };
    for entry in entries.filter_map(Result::ok) {
        let name = entry.file_name().to_string_lossy().into_owned();
        let upload = name.ends_with(".part") || files.upload(&name).is_some();
        let stale = entry
            .metadata()
            .and_then(|meta| meta.modified())
            .ok()
            .and_then(|modified| modified.elapsed().ok())
            .is_some_and(|age| age > STALE_UPLOAD);
        if upload && stale {
            tracing::info!(file = %entry.path().display(), "removing a stale partial upload");
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// Liveness horizon: conductors with a heartbeat after this are alive.
fn alive_since(ctx: &ConductorContext) -> String {
    let lease = chrono::Duration::seconds(i64::try_from(ctx.settings.lease_timeout_secs).unwrap_or(30));
    to_text(chrono::Utc::now() - lease)
}

async fn claim(ctx: &Arc<ConductorContext>, package_id: &str) -> Result<Option<ClaimedPackage>, ConductorError> {
    let me = ctx.id.clone();
    let id = package_id.to_owned();
    let alive_since = alive_since(ctx);
    ctx.db_run(move |conn| {
        write_transaction(conn, |conn| {
            let Some(mut record) = vnf_packages::find(conn, &id)? else {
                outbox::complete(conn, &id)?;
                return Ok(None);
            };
            let state = record.onboarding_state().to_owned();
            if state != UPLOADING && state != PROCESSING {
                // Done already (or deleted and re-created): the message is stale.
                outbox::complete(conn, &id)?;
                return Ok(None);
            }
            let source = UploadSource::of(&record).unwrap_or(UploadSource { origin: Origin::Stored, owner: None });
            if let Some(owner) = source.owner.as_deref().filter(|owner| *owner != me)
                && conductors::live(conn, &alive_since)?.iter().any(|live| live == owner)
            {
                return Ok(None);
            }
            let previous_owner = source.owner.clone();
            let claimed = UploadSource { origin: source.origin.clone(), owner: Some(me.clone()) };
            record.upload_source = Some(claimed.to_value());
            if !vnf_packages::update(conn, &record, Some(record.row_version))? {
                return Ok(None);
            }
            Ok(Some(ClaimedPackage { id: id.clone(), state, origin: source.origin, previous_owner }))
        })
    })
    .await
}

/// Changes the package inside a write transaction if it is still this conductor's onboarding
/// (state in `states`, owned by `me`). `None` when it is not (any more).
fn modify_owned(
    conn: &mut AnyConnection,
    id: &str,
    me: &str,
    states: &[&str],
    change: &dyn Fn(&mut AnyConnection, &mut PackageRecord) -> DbResult<()>,
) -> DbResult<Option<PackageRecord>> {
    write_transaction(conn, |conn| {
        let Some(mut record) = vnf_packages::find(conn, id)? else { return Ok(None) };
        let owner = UploadSource::of(&record).and_then(|source| source.owner);
        if !states.contains(&record.onboarding_state()) || owner.as_deref() != Some(me) {
            return Ok(None);
        }
        change(conn, &mut record)?;
        // The row is locked for this transaction (SQLite: BEGIN IMMEDIATE), so the version
        // check only guards against a PostgreSQL writer between the read and the update.
        if !vnf_packages::update(conn, &record, Some(record.row_version))? {
            return Err(DbError::Conflict(format!("VNF package {id} changed during onboarding")));
        }
        Ok(Some(record))
    })
}

/// A complete PUT upload becomes `package.zip`.
async fn take_upload(files: &PackageFiles, file: &str) -> Result<(), OnboardingFailure> {
    let Some(upload) = files.upload(file).filter(|path| path.is_file()) else {
        // Moved already by an attempt that stopped before entering PROCESSING?
        return if files.package_zip().is_file() { Ok(()) } else { Err(interrupted()) };
    };
    tokio::fs::rename(&upload, files.package_zip()).await.map_err(|error| {
        tracing::error!(%error, "cannot move an upload into place");
        OnboardingFailure::internal()
    })
}

/// UPLOADING → PROCESSING; the upload source (and any credentials) is dropped.
async fn enter_processing(ctx: &Arc<ConductorContext>, id: &str) -> Result<bool, ConductorError> {
    let me = ctx.id.clone();
    let id = id.to_owned();
    let updated = ctx
        .db_run(move |conn| {
            let owner = me.clone();
            modify_owned(conn, &id, &me, &[UPLOADING], &move |_, record| {
                record.body["onboardingState"] = json!(PROCESSING);
                // An NFVO's package keeps the vnfdId it must hold (it carries no secret).
                let origin = match UploadSource::of(record).map(|source| source.origin) {
                    Some(nfvo @ Origin::Nfvo { .. }) => nfvo,
                    _ => Origin::Stored,
                };
                record.upload_source = Some(UploadSource { origin, owner: Some(owner.clone()) }.to_value());
                Ok(())
            })
        })
        .await?;
    Ok(updated.is_some())
}

/// The address without credentials, for messages.
fn redacted(address: &str) -> String {
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
async fn fetch(
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
async fn fetch_from_nfvo(ctx: &ConductorContext, files: &PackageFiles, vnfd_id: &str) -> Result<(), OnboardingFailure> {
    let Some(nfvo) = ctx.nfvo.as_ref() else {
        return Err(OnboardingFailure::new(
            422,
            format!("VnfPackage of vnfdId {vnfd_id} is not onboarded, and no external NFVO is configured."),
        ));
    };
    let refused = |error: GrantError| match error {
        GrantError::Rejected(problem) => OnboardingFailure::new(
            422,
            format!(
                "The NFVO has no usable VNF package for vnfdId {vnfd_id}: {}",
                problem["detail"].as_str().unwrap_or("refused")
            ),
        ),
        GrantError::Unavailable(detail) => OnboardingFailure::new(503, detail),
    };
    let info = nfvo.onboarded_package(vnfd_id).await.map_err(refused)?;
    let state = |key: &str| info[key].as_str().unwrap_or("absent").to_owned();
    if info["vnfdId"].as_str().is_some_and(|held| held != vnfd_id) {
        return Err(OnboardingFailure::new(
            422,
            format!("The NFVO answered for vnfdId {vnfd_id} with the package of vnfdId {}.", state("vnfdId")),
        ));
    }
    if state("operationalState") != "ENABLED" {
        return Err(OnboardingFailure::new(
            422,
            format!("The NFVO's VNF package for vnfdId {vnfd_id} is {}, not ENABLED.", state("operationalState")),
        ));
    }
    let checksum = PackageChecksum::of(&info["checksum"]).map_err(|reason| {
        OnboardingFailure::new(422, format!("The NFVO's VnfPkgInfo for vnfdId {vnfd_id}: {reason}"))
    })?;
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

/// The `checksum` of a VnfPkgInfo (SOL005 `Checksum`: `algorithm`, `hash` in hex), with the
/// algorithms package manifests accept.
struct PackageChecksum {
    algorithm: String,
    algo: HashAlgo,
    hash: String,
}

impl PackageChecksum {
    fn of(value: &Value) -> Result<Self, String> {
        let algorithm = value["algorithm"].as_str().ok_or("it has no checksum.algorithm")?;
        let hash = value["hash"].as_str().ok_or("it has no checksum.hash")?;
        let algo = HashAlgo::parse(algorithm)
            .ok_or_else(|| format!("checksum.algorithm {algorithm:?} is not supported (SHA-224/256/384/512 are)."))?;
        Ok(Self { algorithm: algorithm.to_owned(), algo, hash: hash.trim().to_owned() })
    }
}

/// PROCESSING: inspect, extract and prepare the VNFD downloads from `package.zip`, then
/// ONBOARDED in one transaction.
async fn process_stored(
    ctx: &Arc<ConductorContext>,
    claimed: &ClaimedPackage,
    files: &PackageFiles,
) -> Result<(), ConductorError> {
    let limits = Limits {
        max_uncompressed_bytes: ctx.packages.max_uncompressed_bytes,
        max_entries: ctx.packages.max_entries,
        max_vnfd_bytes: ctx.packages.max_vnfd_bytes,
    };
    let (id, work_files, work_limits) = (claimed.id.clone(), files.clone(), limits.clone());
    let inspected = tokio::task::spawn_blocking(move || inspect_stored(&work_files, &work_limits, &id)).await?;
    let contents = match inspected {
        Ok(contents) => contents,
        Err(failure) => return fail(ctx, claimed, files, failure).await,
    };
    let vnfd_id = contents.vnfd.descriptor_id.clone();
    if let Origin::Nfvo { vnfd_id: asked } = &claimed.origin
        && *asked != vnfd_id
    {
        let failure = OnboardingFailure::new(
            422,
            format!("The NFVO's VNF package for vnfdId {asked} holds the VNFD {vnfd_id}; it was not onboarded."),
        );
        return fail(ctx, claimed, files, failure).await;
    }
    // A cheap, friendly check before extracting; the unique index has the last word.
    if let Some(other) = onboarded_elsewhere(ctx, &vnfd_id, &claimed.id).await? {
        return fail(ctx, claimed, files, duplicate(&vnfd_id, Some(&other))).await;
    }
    let (id, work_files, work_contents) = (claimed.id.clone(), files.clone(), contents.clone());
    let extracted =
        tokio::task::spawn_blocking(move || extract_stored(&work_files, &limits, &work_contents, &id)).await?;
    if let Err(failure) = extracted {
        return fail(ctx, claimed, files, failure).await;
    }

    let me = ctx.id.clone();
    let id = claimed.id.clone();
    // The NFVO offers only ENABLED packages (checked when fetched).
    let from_nfvo = matches!(claimed.origin, Origin::Nfvo { .. });
    let enable = ctx.packages.enable_on_onboarding || from_nfvo;
    let links = ctx.links.clone();
    let finished = ctx
        .db_run(move |conn| {
            let onboarded_at = now();
            let result = modify_owned(conn, &id, &me, &[PROCESSING], &|conn, record| {
                record.body = onboarded_body(&record.body, &contents, &onboarded_at, enable);
                if from_nfvo {
                    // The NFVO's package notifications act on this cached copy only.
                    solgate_core::packages::mark_taken_from_nfvo(&mut record.body);
                }
                record.vnfd = Some(serde_json::to_value(contents.as_ref())?);
                record.upload_source = None;
                outbox::complete(conn, &record.id)?;
                // SOL005 v2.6.1 clause 9.5.2.8, in the transaction that onboards it (a
                // duplicate vnfdId rolls the notifications back with the rest).
                pkgm::enqueue(conn, &links, &record.project, PkgEvent::Onboarded { package: &record.body })?;
                Ok(())
            });
            match result {
                Ok(done) => Ok(Some(done.is_some())),
                Err(error) if error.is_unique_violation() => Ok(None),
                Err(error) => Err(error),
            }
        })
        .await?;
    match finished {
        Some(true) => {
            tracing::info!(package = %claimed.id, vnfd_id = %vnfd_id, "VNF package onboarded");
            Ok(())
        }
        Some(false) => Ok(()),
        None => {
            let other = onboarded_elsewhere(ctx, &vnfd_id, &claimed.id).await?;
            fail(ctx, claimed, files, duplicate(&vnfd_id, other.as_deref())).await
        }
    }
}

/// The id of another package that onboarded this VNFD.
async fn onboarded_elsewhere(
    ctx: &ConductorContext,
    vnfd_id: &str,
    package_id: &str,
) -> Result<Option<String>, ConductorError> {
    let (vnfd_id, package_id) = (vnfd_id.to_owned(), package_id.to_owned());
    ctx.db_run(move |conn| {
        Ok(vnf_packages::find_by_vnfd_id(conn, &vnfd_id)?.map(|other| other.id).filter(|other| *other != package_id))
    })
    .await
}

fn duplicate(vnfd_id: &str, other: Option<&str>) -> OnboardingFailure {
    let other = other.map(|other| format!(" (VNF package {other})")).unwrap_or_default();
    OnboardingFailure::new(
        409,
        format!(
            "A VNF package with vnfdId {vnfd_id} is already onboarded{other}; a VNFD can be onboarded only once. \
             Delete that package or give this VNFD another descriptor_id."
        ),
    )
}

/// Checks the stored zip (blocking). Leftovers of an earlier attempt are removed first.
fn inspect_stored(
    files: &PackageFiles,
    limits: &Limits,
    package_id: &str,
) -> Result<Box<PackageContents>, OnboardingFailure> {
    files.remove_derived().map_err(|error| {
        tracing::error!(package = %package_id, %error, "cannot clean up an earlier onboarding attempt");
        OnboardingFailure::internal()
    })?;
    let zip = files.package_zip();
    if !zip.is_file() {
        return Err(interrupted());
    }
    solgate_vnfpkg::inspect(&zip, limits)
        .map(Box::new)
        .map_err(|error| OnboardingFailure::from_csar(&error, package_id))
}

/// Extracts the package and writes the VNFD downloads (blocking); on failure nothing is left.
fn extract_stored(
    files: &PackageFiles,
    limits: &Limits,
    contents: &PackageContents,
    package_id: &str,
) -> Result<(), OnboardingFailure> {
    let written = solgate_vnfpkg::extract(&files.package_zip(), &files.content_dir(), limits)
        .map_err(|error| OnboardingFailure::from_csar(&error, package_id))
        .and_then(|()| write_vnfd_files(files, limits, contents, package_id));
    if written.is_err() {
        let _ = files.remove_derived();
    }
    written
}

/// `vnfd.zip` always, `vnfd.yaml` for a single-file VNFD; each through a partial file.
fn write_vnfd_files(
    files: &PackageFiles,
    limits: &Limits,
    contents: &PackageContents,
    package_id: &str,
) -> Result<(), OnboardingFailure> {
    let zip = files.package_zip();
    let io = |error: std::io::Error| {
        tracing::error!(package = %package_id, %error, "cannot write the VNFD files");
        OnboardingFailure::internal()
    };
    let partial = files.partial("vnfd.zip");
    let mut out = std::fs::File::create(&partial).map_err(io)?;
    solgate_vnfpkg::write_vnfd_zip_with_limits(&zip, limits, &mut out)
        .map_err(|error| OnboardingFailure::from_csar(&error, package_id))?;
    out.sync_all().map_err(io)?;
    std::fs::rename(&partial, files.vnfd_zip()).map_err(io)?;
    if !contents.multi_file_vnfd
        && let Some(text) = solgate_vnfpkg::single_vnfd_yaml(&zip, limits)
            .map_err(|error| OnboardingFailure::from_csar(&error, package_id))?
    {
        let partial = files.partial("vnfd.yaml");
        std::fs::write(&partial, text).map_err(io)?;
        std::fs::rename(&partial, files.vnfd_yaml()).map_err(io)?;
    }
    Ok(())
}

/// Back to CREATED with `onboardingFailureDetails`; every file onboarding wrote is removed
/// first (no PUT can write meanwhile: the package is not CREATED until this commits).
async fn fail(
    ctx: &Arc<ConductorContext>,
    claimed: &ClaimedPackage,
    files: &PackageFiles,
    failure: OnboardingFailure,
) -> Result<(), ConductorError> {
    tracing::warn!(package = %claimed.id, status = failure.status, detail = %failure.detail, "VNF package onboarding failed");
    let cleanup = files
        .remove_derived()
        .and_then(|()| remove_if_present(&files.package_zip()))
        .and_then(|()| remove_if_present(&files.partial("package.zip")));
    if let Err(error) = cleanup {
        tracing::error!(package = %claimed.id, %error, "cannot remove the files of a failed onboarding");
    }
    if let Origin::Content { file } = &claimed.origin
        && let Some(upload) = files.upload(file)
    {
        let _ = remove_if_present(&upload);
    }
    let me = ctx.id.clone();
    let id = claimed.id.clone();
    let details = failure_details(failure.status, &failure.detail);
    ctx.db_run(move |conn| {
        modify_owned(conn, &id, &me, &[UPLOADING, PROCESSING], &|conn, record| {
            if let Value::Object(body) = &mut record.body {
                for key in ONBOARDED_KEYS {
                    body.shift_remove(*key);
                }
                body.insert("onboardingState".into(), json!(CREATED));
                body.insert("operationalState".into(), json!("DISABLED"));
                body.insert(FAILURE_DETAILS.into(), details.clone());
            }
            record.vnfd = None;
            record.upload_source = None;
            outbox::complete(conn, &record.id)?;
            Ok(())
        })
    })
    .await?;
    Ok(())
}

/// Attributes onboarding adds to VnfPkgInfo.
const ONBOARDED_KEYS: &[&str] = &[
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
fn onboarded_body(current: &Value, contents: &PackageContents, onboarded_at: &str, enable: bool) -> Value {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_are_shown_without_credentials() {
        assert_eq!(redacted("http://user:secret@example.com/p.zip"), "http://example.com/p.zip");
        assert_eq!(redacted("not a url"), "not a url");
    }

    #[test]
    fn work_delivered_twice_at_once_is_refused_without_hanging() {
        let (done, finished) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let first = Running::enter("c", "p");
            let second = Running::enter("c", "p");
            let refused = first.is_some() && second.is_none();
            drop(first);
            // Released: the package can be worked on again.
            let again = Running::enter("c", "p").is_some();
            let _ = done.send(refused && again);
        });
        let outcome = finished.recv_timeout(Duration::from_secs(5));
        assert_eq!(outcome, Ok(true), "a second delivery must be refused, not deadlock");
    }
}

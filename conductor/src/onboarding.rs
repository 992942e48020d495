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

use serde_json::{Value, json};
use solgate_core::notify::pkgm::{self, PkgEvent};
use solgate_db::repo::vnf_packages::{self, PackageRecord};
use solgate_db::repo::{conductors, outbox, to_text};
use solgate_db::{AnyConnection, DbError, DbResult, write_transaction};
use solgate_vnfpkg::{Limits, PackageContents};

mod download;
mod failure;
mod pkg_info;

use download::{fetch, fetch_from_nfvo, redacted};
use failure::OnboardingFailure;
use pkg_info::{ONBOARDED_KEYS, onboarded_body};

use crate::context::{ConductorContext, ConductorError};
use solgate_core::now;
use solgate_core::packages::{
    CREATED, FAILURE_DETAILS, Origin, PROCESSING, PackageFiles, UPLOADING, UploadSource, failure_details,
    remove_if_present,
};

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

#[cfg(test)]
mod tests {
    use super::*;

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

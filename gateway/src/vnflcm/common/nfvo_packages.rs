//! `[nfvo] mode = "external"`: a VNF instance asked for with a vnfdId that is not onboarded
//! here takes its package from the NFVO (SOL003 VNF package management interface), as
//! Tacker's v2 does with `use_external_nfvo`. The package is onboarded through the
//! conductors' one onboarding path (checksum checked, limits applied, files extracted), so
//! it is then cached here like any other: later instances of the same VNFD find it.

use std::time::{Duration, Instant};

use serde_json::json;
use solgate_core::now;
use solgate_core::packages::{CREATED, FAILURE_DETAILS, ONBOARDED, UPLOADING, UploadSource};
use solgate_core::work::{RpcMessage, WorkKind, kind_name};
use solgate_db::repo::outbox;
use solgate_db::repo::vnf_packages::{self, PackageRecord};
use solgate_db::write_transaction;

use crate::common::Tenant;
use crate::error::{ApiError, ApiResult};
use crate::state::AppState;

/// How often the request looks whether the conductor has finished.
const POLL: Duration = Duration::from_millis(50);

/// Makes sure a package holding VNFD `vnfd_id` is onboarded here, taking it from the NFVO
/// when no package here holds it; waits at most `wait` for that.
pub async fn ensure_onboarded(state: &AppState, tenant: &Tenant, vnfd_id: &str, wait: Duration) -> ApiResult<()> {
    if vnfd_id.is_empty() || known(state, vnfd_id).await? {
        return Ok(());
    }
    let id = solgate_db::new_id();
    let created_at = now();
    let record = PackageRecord {
        id: id.clone(),
        body: json!({
            "id": id,
            "onboardingState": UPLOADING,
            "operationalState": "DISABLED",
            "usageState": "NOT_IN_USE",
            "userDefinedData": {},
        }),
        vnfd: None,
        upload_source: Some(UploadSource::nfvo(vnfd_id.to_owned()).to_value()),
        created_at: created_at.clone(),
        updated_at: created_at,
        row_version: 0,
        project: tenant.project().to_owned(),
    };
    let package_id = id.clone();
    let outbox_id = state
        .db(move |conn| {
            write_transaction(conn, |conn| {
                vnf_packages::insert(conn, &record)?;
                Ok(outbox::enqueue(conn, kind_name(WorkKind::VnfPackage), &package_id, 1)?)
            })
        })
        .await?;
    state.dispatch(outbox_id, RpcMessage::package(id.clone()));
    tracing::info!(package = %id, %vnfd_id, "taking a VNF package from the NFVO");
    let deadline = Instant::now() + wait;
    loop {
        tokio::time::sleep(POLL).await;
        let lookup = id.clone();
        let Some(record) = state.db(move |conn| Ok(vnf_packages::find(conn, &lookup)?)).await? else {
            // Deleted meanwhile by an administrator.
            return Err(ApiError::unprocessable(format!("VnfPackage of vnfdId {vnfd_id} is not found.")));
        };
        match record.onboarding_state() {
            ONBOARDED => return Ok(()),
            CREATED => return failed(state, record, vnfd_id).await,
            _ if Instant::now() >= deadline => {
                return Err(ApiError::unavailable(
                    format!(
                        "The VNF package of vnfdId {vnfd_id} is still being taken from the NFVO (VNF package {id}); \
                         send the request again later."
                    ),
                    5,
                ));
            }
            _ => {}
        }
    }
}

async fn known(state: &AppState, vnfd_id: &str) -> ApiResult<bool> {
    let id = vnfd_id.to_owned();
    state.db(move |conn| Ok(vnf_packages::find_by_vnfd_id(conn, &id)?.is_some())).await
}

/// The onboarding failed: the empty package is removed (nothing refers to it) and the
/// NFVO's reason given, unless a concurrent request onboarded the same VNFD meanwhile.
async fn failed(state: &AppState, record: PackageRecord, vnfd_id: &str) -> ApiResult<()> {
    let problem = record.body[FAILURE_DETAILS].clone();
    let id = record.id.clone();
    state.db(move |conn| Ok(vnf_packages::delete(conn, &id)?)).await?;
    if known(state, vnfd_id).await? {
        return Ok(());
    }
    let detail = problem["detail"].as_str().unwrap_or("the NFVO's package could not be onboarded");
    let message =
        format!("VnfPackage of vnfdId {vnfd_id} is not onboarded here and was not taken from the NFVO: {detail}");
    Err(if problem["status"].as_u64().is_some_and(|status| status >= 500) {
        ApiError::unavailable(message, 5)
    } else {
        ApiError::unprocessable(message)
    })
}

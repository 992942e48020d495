use actix_web::{HttpResponse, web};
use solgate_core::links::Links;
use solgate_core::notify::pkgm::{self, PkgEvent};
use solgate_core::packages::{ONBOARDED, PROCESSING, UPLOADING};
use solgate_db::repo::lcm::{self, LcmMajor};
use solgate_db::repo::outbox;
use solgate_db::repo::vnf_packages::{self, PackageRecord};
use solgate_db::{AnyConnection, write_transaction};

use crate::common::Tenant;
use crate::error::{ApiError, ApiResult};
use crate::state::AppState;
use crate::vnfpkgm::common;

/// DELETE /vnfpkgm/v1/vnf_packages/{id}: 204; 409 while ENABLED or IN_USE (Tacker's rule) and,
/// unlike Tacker, while onboarding runs. The row goes first, the files after the commit;
/// subscribers hear of it (PKG_DELETE) from the same transaction.
pub async fn delete(state: web::Data<AppState>, tenant: Tenant, id: web::Path<String>) -> ApiResult<HttpResponse> {
    let id = id.into_inner();
    let lookup = id.clone();
    let links = state.links.clone();
    state
        .db(move |conn| {
            write_transaction(conn, |conn| {
                let id = lookup;
                let record = common::find(conn, &tenant, &id)?;
                let onboarding = record.onboarding_state();
                if onboarding == UPLOADING || onboarding == PROCESSING {
                    return Err(ApiError::conflict(format!(
                        "VNF Package {id} is being onboarded (onboarding state {onboarding}); delete it once onboarding \
                         has finished."
                    )));
                }
                let used = in_use(conn, &id)?;
                if record.operational_state() == "ENABLED" || record.usage_state() == "IN_USE" || used {
                    let usage = if used { "IN_USE" } else { record.usage_state() };
                    return Err(ApiError::conflict(format!(
                        "VNF Package {id} cannot be deleted as its operational state is {} and usage state is {usage}.",
                        record.operational_state()
                    )));
                }
                delete_row(conn, &links, &record)
            })
        })
        .await?;
    remove_files(&state, &id).await;
    Ok(HttpResponse::NoContent().finish())
}

/// Whether VNF instances (v1 or v2) use a package. usageState is refreshed by LCM; the
/// instances are the truth.
pub(crate) fn in_use(conn: &mut AnyConnection, id: &str) -> ApiResult<bool> {
    Ok(lcm::package_has_instances(conn, LcmMajor::V2, id)? || lcm::package_has_instances(conn, LcmMajor::V1, id)?)
}

/// Removes the package's row in the caller's transaction and queues PKG_DELETE for package
/// subscribers; the files go after the commit ([`remove_files`]). DELETE and the NFVO's
/// package notifications both delete packages here.
pub(crate) fn delete_row(conn: &mut AnyConnection, links: &Links, record: &PackageRecord) -> ApiResult<()> {
    vnf_packages::delete(conn, &record.id)?;
    outbox::complete(conn, &record.id)?;
    // SOL005 v2.6.1 clause 9.5.2.9 reports changes of onboarded packages only (a package
    // without content has no vnfdId to report).
    if record.onboarding_state() == ONBOARDED {
        pkgm::enqueue(conn, links, &record.project, PkgEvent::Deleted { package: &record.body })?;
    }
    Ok(())
}

/// Removes a deleted package's files.
pub(crate) async fn remove_files(state: &AppState, id: &str) {
    let files = common::files(state, id);
    let removed = tokio::task::spawn_blocking(move || files.remove_all()).await;
    if !matches!(removed, Ok(Ok(()))) {
        // The conductor's start-up sweep removes directories of deleted packages.
        tracing::warn!(package = %id, ?removed, "could not remove the files of a deleted VNF package");
    }
}

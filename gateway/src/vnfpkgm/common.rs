//! What the VNF package handlers share: lookup, presentation (`_links`, rendering for the
//! negotiated version, selectors), texts of the common errors.

use serde_json::{Map, Value};
use solgate_core::links::{Links, href};
use solgate_core::packages::{FAILURE_DETAILS, ONBOARDED, PackageFiles};
use solgate_core::without_private;
use solgate_db::repo::vnf_packages::{self, PackageRecord};
use solgate_sol013::SelectorSpec;

use crate::common::Tenant;
use crate::error::{ApiError, ApiResult};
use crate::sol013::Negotiated;
use crate::state::AppState;

/// Tacker's text, also for ids that are not UUIDs.
pub fn not_found(id: &str) -> ApiError {
    ApiError::not_found(format!("Can not find requested vnf package: {id}"))
}

pub fn state_is_not(id: &str, state: &str) -> ApiError {
    ApiError::conflict(format!("VNF Package {id} onboarding state is not {state}"))
}

/// The package, or 404 (also for another project's).
pub async fn load(state: &AppState, tenant: &Tenant, id: &str) -> ApiResult<PackageRecord> {
    let lookup = id.to_owned();
    state
        .db(move |conn| Ok(vnf_packages::find(conn, &lookup)?))
        .await?
        .filter(|record| tenant.sees(&record.project))
        .ok_or_else(|| not_found(id))
}

/// The package in a transaction, or 404 (also for another project's).
pub fn find(conn: &mut solgate_db::AnyConnection, tenant: &Tenant, id: &str) -> ApiResult<PackageRecord> {
    vnf_packages::find(conn, id)?.filter(|record| tenant.sees(&record.project)).ok_or_else(|| not_found(id))
}

/// The package if it is ONBOARDED (content, VNFD and artifacts exist only then), else 409.
pub async fn load_onboarded(state: &AppState, tenant: &Tenant, id: &str) -> ApiResult<PackageRecord> {
    let record = load(state, tenant, id).await?;
    if record.onboarding_state() != ONBOARDED {
        return Err(state_is_not(id, ONBOARDED));
    }
    Ok(record)
}

pub fn files(state: &AppState, id: &str) -> PackageFiles {
    PackageFiles::new(&state.package_store, id)
}

pub use crate::vnflcm::common::validate;

/// VnfPkgInfo `_links` (absolute: Tacker sent relative paths); `vnfd` only once there is one.
pub fn links(links: &Links, record: &PackageRecord) -> Value {
    let base = links.package(&record.id);
    let mut map = Map::new();
    map.insert("self".into(), href(&base));
    if record.onboarding_state() == ONBOARDED {
        map.insert("vnfd".into(), href(&format!("{base}/vnfd")));
    }
    map.insert("packageContent".into(), href(&format!("{base}/package_content")));
    Value::Object(map)
}

/// The VnfPkgInfo a client sees: rendered for the negotiated version, with `_links`.
/// `onboardingFailureDetails` (SOL005 v2.7.1+) is kept although 1.3.0 does not define it:
/// without it a failed onboarding would show no reason at all.
pub fn render(state: &AppState, negotiated: &Negotiated, record: &PackageRecord) -> Value {
    let document = without_private(record.body.clone());
    let failure = document.get(FAILURE_DETAILS).cloned();
    let mut rendered = negotiated.entry.dictionary.render("VnfPkgInfo", &document);
    if let Value::Object(map) = &mut rendered {
        if let Some(failure) = failure {
            map.insert(FAILURE_DETAILS.into(), failure);
        }
        map.insert("_links".into(), links(&state.links, record));
    }
    rendered
}

/// Attribute selectors of the list (SOL005 clause 9.4.2.3.2; the same complex attributes
/// Tacker leaves out by default, plus onboardingFailureDetails as later SOL005 versions do).
pub const SELECTORS: SelectorSpec<'static> = SelectorSpec {
    default_excluded: &["checksum", "softwareImages", "additionalArtifacts", "userDefinedData", FAILURE_DETAILS],
    mandatory: &[
        "id",
        "vnfdId",
        "vnfProvider",
        "vnfProductName",
        "vnfSoftwareVersion",
        "vnfdVersion",
        "onboardingState",
        "operationalState",
        "usageState",
        "_links",
    ],
};

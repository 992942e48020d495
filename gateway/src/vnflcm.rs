//! VNF Lifecycle Management (SOL003): `/vnflcm/v1` and `/vnflcm/v2` side by side, thin
//! controllers over [`common`], and their resource tables.
//!
//! `/vnflcm/v1` (API 1.x, SOL003 v2.6.1) has the v2 handlers: each serves the major its
//! request negotiated, on that major's tables and schemas, so v1 differs only in the task
//! resources of its operations (SOL003 v2.6.1 has no change_vnfpkg,
//! `LcmOperation::in_major`) and in the shapes its schemas and
//! `solgate_core::shapes::V1Shapes` give (e.g. `vimConnectionInfo` as an array). Instances
//! created through v1 are only visible through v1, as ETSI keeps resources per major.

pub mod common;
pub mod lcm_op_occs;
pub mod subscriptions;
pub mod vnf_instances;

use solgate_core::links::paths;
use solgate_core::operation::LcmOperation;
use solgate_schemas::Api;

use crate::routes::endpoint::Body::{Array, Schema};
use crate::routes::endpoint::{ApiTables, Endpoint, RuleNaming, Table};
use crate::{api_versions, openapi};

/// The api_versions of every major, and one table per major.
pub fn tables() -> ApiTables {
    ApiTables { all: api_versions::all_majors(Api::Vnflcm, naming(1)), majors: vec![table(1), table(2)] }
}

/// Tacker's rule names: `os_nfv_orchestration_api` for v1 (and api_versions of every
/// major), `os_nfv_orchestration_api_v2` for v2.
fn naming(major: u64) -> RuleNaming {
    match major {
        2 => |resource, action| format!("os_nfv_orchestration_api_v2:{resource}:{action}"),
        _ => |resource, action| format!("os_nfv_orchestration_api:{resource}:{action}"),
    }
}

/// The resources of one major: the same handlers, the task resources its operations have.
fn table(major: u64) -> Table {
    use vnf_instances as instances;
    let mut rows = vec![
        api_versions::row(),
        openapi::row(),
        Endpoint::get(paths::VNF_INSTANCES, "index", |route| route.to(instances::list))
            .doc("Query VNF instances", 200)
            .returns(Array("VnfInstance")),
        Endpoint::post(paths::VNF_INSTANCES, "create", |route| route.to(instances::create))
            .doc("Create a VNF instance identifier", 201)
            .request("CreateVnfRequest")
            .returns(Schema("VnfInstance"))
            .headers(&["Location"]),
        Endpoint::get(paths::VNF_INSTANCE, "show", |route| route.to(instances::show))
            .doc("Read a VNF instance", 200)
            .returns(Schema("VnfInstance"))
            .headers(&["ETag"]),
        Endpoint::patch(paths::VNF_INSTANCE, "update", |route| route.to(instances::modify))
            .doc("Modify VNF information", 202)
            .merge_patch("VnfInfoModificationRequest")
            .headers(&["Location"]),
        Endpoint::delete(paths::VNF_INSTANCE, "delete", |route| route.to(instances::delete))
            .doc("Delete a VNF instance identifier", 204),
    ];
    rows.extend(task_rows(major));
    rows.extend(occurrence_rows());
    rows.extend(subscription_rows());
    Table::major(Api::Vnflcm, major, naming(major), rows)
}

/// One task resource per operation of the major that has one (`LcmOperation`'s rows); an
/// operation a later minor added (`since`) is unknown to the earlier minors.
fn task_rows(major: u64) -> impl Iterator<Item = Endpoint> {
    LcmOperation::ALL.into_iter().filter(move |operation| operation.in_major(major)).filter_map(|operation| {
        let task = operation.task_path()?;
        let path = format!("{}/{task}", paths::VNF_INSTANCE);
        let row = Endpoint::new(actix_web::http::Method::POST, path, task, move |route| {
            vnf_instances::task(route, operation)
        });
        Some(
            row.doc(format!("Request {}", operation.name()), 202)
                .request(operation.request_schema())
                .headers(&["Location"])
                .since(operation.since()),
        )
    })
}

fn occurrence_rows() -> [Endpoint; 6] {
    use lcm_op_occs as ops;
    [
        Endpoint::get(paths::VNF_LCM_OP_OCCS, "index", |route| route.to(ops::list))
            .doc("Query LCM operation occurrences", 200)
            .returns(Array("VnfLcmOpOcc")),
        Endpoint::get(paths::VNF_LCM_OP_OCC, "show", |route| route.to(ops::show))
            .doc("Read an LCM operation occurrence", 200)
            .returns(Schema("VnfLcmOpOcc")),
        Endpoint::post(paths::VNF_LCM_OP_OCC_RETRY, "retry", |route| route.to(ops::retry))
            .doc("Retry an operation", 202),
        Endpoint::post(paths::VNF_LCM_OP_OCC_ROLLBACK, "rollback", |route| route.to(ops::rollback))
            .doc("Roll an operation back", 202),
        Endpoint::post(paths::VNF_LCM_OP_OCC_FAIL, "fail", |route| route.to(ops::fail))
            .doc("Mark an operation as failed", 200)
            .returns(Schema("VnfLcmOpOcc")),
        Endpoint::post(paths::VNF_LCM_OP_OCC_CANCEL, "cancel", |route| route.to(ops::cancel))
            .doc("Cancel an operation", 202)
            .request_as("CancelMode", "application/json", false),
    ]
}

fn subscription_rows() -> [Endpoint; 4] {
    [
        Endpoint::get(paths::SUBSCRIPTIONS, "index", |route| route.to(subscriptions::list))
            .doc("Query subscriptions", 200)
            .returns(Array("LccnSubscription")),
        Endpoint::post(paths::SUBSCRIPTIONS, "create", |route| route.to(subscriptions::create))
            .doc("Subscribe (303 to an identical subscription)", 201)
            .request("LccnSubscriptionRequest")
            .returns(Schema("LccnSubscription"))
            .headers(&["Location"]),
        Endpoint::get(paths::SUBSCRIPTION, "show", |route| route.to(subscriptions::show))
            .doc("Read a subscription", 200)
            .returns(Schema("LccnSubscription"))
            .headers(&["ETag"]),
        Endpoint::delete(paths::SUBSCRIPTION, "delete", |route| route.to(subscriptions::delete))
            .doc("Terminate a subscription", 204),
    ]
}

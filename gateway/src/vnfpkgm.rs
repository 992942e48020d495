//! VNF Package Management (SOL005 v2.6.1 clause 9, API 1.x) under `/vnfpkgm/v1`: the package
//! resources, content upload (PUT or from a URI; onboarding then runs in the conductor, see
//! the conductor) and downloads streamed from the package store; subscriptions to package
//! notifications (delivered by the conductor's notifier, as LCM notifications are).

pub mod common;
pub mod download;
pub mod range;
pub mod subscriptions;
pub mod vnf_packages;

use solgate_core::links::paths;
use solgate_schemas::Api;

use crate::routes::endpoint::Body::{Array, File, Schema};
use crate::routes::endpoint::{ApiTables, Endpoint, Table};
use crate::{api_versions, openapi};

/// The api_versions of every major, and the table of `/vnfpkgm/v1`.
pub fn tables() -> ApiTables {
    ApiTables { all: api_versions::all_majors(Api::Vnfpkgm, naming), majors: vec![table()] }
}

/// Tacker's rule names. Package subscriptions would share v1 LCM subscriptions' names
/// (Tacker has no package subscriptions to follow): a name of their own, so a policy file
/// can tell them apart.
fn naming(resource: &str, action: &str) -> String {
    let resource = if resource == "subscriptions" { "vnf_package_subscriptions" } else { resource };
    format!("os_nfv_orchestration_api:{resource}:{action}")
}

fn table() -> Table {
    let mut rows = vec![api_versions::row(), openapi::row()];
    rows.extend(package_rows());
    rows.extend(content_rows());
    rows.extend(subscription_rows());
    Table::major(Api::Vnfpkgm, 1, naming, rows)
}

fn package_rows() -> [Endpoint; 5] {
    use vnf_packages as packages;
    [
        Endpoint::get(paths::VNF_PACKAGES, "index", |route| route.to(packages::list::list))
            .doc("Query VNF packages", 200)
            .returns(Array("VnfPkgInfo")),
        Endpoint::post(paths::VNF_PACKAGES, "create", |route| route.to(packages::create::create))
            .doc("Create a VNF package", 201)
            .request_as("CreateVnfPkgInfoRequest", "application/json", false)
            .returns(Schema("VnfPkgInfo"))
            .headers(&["Location"]),
        Endpoint::get(paths::VNF_PACKAGE, "show", |route| route.to(packages::show::show))
            .doc("Read a VNF package", 200)
            .returns(Schema("VnfPkgInfo"))
            .headers(&["ETag"]),
        Endpoint::patch(paths::VNF_PACKAGE, "update", |route| route.to(packages::modify::modify))
            .doc("Modify a VNF package", 200)
            .merge_patch("VnfPkgInfoModifications")
            .returns(Schema("VnfPkgInfoModifications")),
        Endpoint::delete(paths::VNF_PACKAGE, "delete", |route| route.to(packages::delete::delete))
            .doc("Delete a VNF package", 204),
    ]
}

/// The package's content, VNFD and artifacts; their rules are named after the resource
/// under the package (`package_content`, also for upload_from_uri; `vnfd`, `artifacts`).
fn content_rows() -> [Endpoint; 5] {
    use vnf_packages as packages;
    [
        Endpoint::get(paths::PACKAGE_CONTENT, "package_content", |route| {
            route.to(packages::fetch_content::fetch_content)
        })
        .doc("Fetch the package content", 200)
        .returns(File(&["application/zip"])),
        Endpoint::put(paths::PACKAGE_CONTENT, "package_content", |route| {
            route.to(packages::upload_content::upload_content)
        })
        .doc("Upload the package content", 202)
        .request_as("", "application/zip", true),
        Endpoint::post(paths::UPLOAD_FROM_URI, "package_content", |route| {
            route.to(packages::upload_from_uri::upload_from_uri)
        })
        .doc("Upload the package content from a URI", 202)
        .request("UploadVnfPackageFromUriRequest"),
        Endpoint::get(paths::VNFD, "vnfd", |route| route.to(packages::fetch_vnfd::fetch_vnfd))
            .doc("Read the VNFD", 200)
            .returns(File(&["text/plain", "application/zip"])),
        Endpoint::get(paths::ARTIFACT, "artifacts", |route| route.to(packages::fetch_artifact::fetch_artifact))
            .doc("Fetch an artifact", 200)
            .returns(File(&["application/octet-stream"])),
    ]
}

/// Package subscriptions are not in the OpenAPI document (its first version had none).
fn subscription_rows() -> [Endpoint; 4] {
    [
        Endpoint::get(paths::SUBSCRIPTIONS, "index", |route| route.to(subscriptions::list::list))
            .returns(Array("PkgmSubscription")),
        Endpoint::post(paths::SUBSCRIPTIONS, "create", |route| route.to(subscriptions::create::create))
            .success(201)
            .returns(Schema("PkgmSubscription")),
        Endpoint::get(paths::SUBSCRIPTION, "show", |route| route.to(subscriptions::show::show))
            .returns(Schema("PkgmSubscription")),
        Endpoint::delete(paths::SUBSCRIPTION, "delete", |route| route.to(subscriptions::delete::delete)),
    ]
}

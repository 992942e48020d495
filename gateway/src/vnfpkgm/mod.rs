//! VNF Package Management (SOL005 v2.6.1 clause 9, API 1.x) under `/vnfpkgm/v1`: the package
//! resources, content upload (PUT or from a URI; onboarding then runs in the conductor, see
//! the conductor) and downloads streamed from the package store; subscriptions to package
//! notifications (delivered by the conductor's notifier, as LCM notifications are).

pub mod common;
pub mod download;
pub mod range;
pub mod subscriptions;
pub mod vnf_packages;

use actix_web::web;

use crate::route::resource;

pub fn configure(cfg: &mut web::ServiceConfig) {
    use vnf_packages as packages;
    const BASE: &str = "/vnfpkgm/v1/vnf_packages";
    cfg.service(resource(BASE).get(packages::list::list).post(packages::create::create).finish())
        .service(
            resource(&format!("{BASE}/{{id}}"))
                .get(packages::show::show)
                .patch(packages::modify::modify)
                .delete(packages::delete::delete)
                .finish(),
        )
        .service(
            resource(&format!("{BASE}/{{id}}/package_content"))
                .get(packages::fetch_content::fetch_content)
                .put(packages::upload_content::upload_content)
                .finish(),
        )
        .service(
            resource(&format!("{BASE}/{{id}}/package_content/upload_from_uri"))
                .post(packages::upload_from_uri::upload_from_uri)
                .finish(),
        )
        .service(resource(&format!("{BASE}/{{id}}/vnfd")).get(packages::fetch_vnfd::fetch_vnfd).finish())
        .service(
            resource(&format!("{BASE}/{{id}}/artifacts/{{artifact_path:.+}}"))
                .get(packages::fetch_artifact::fetch_artifact)
                .finish(),
        );
    const SUBSCRIPTIONS: &str = "/vnfpkgm/v1/subscriptions";
    cfg.service(resource(SUBSCRIPTIONS).get(subscriptions::list::list).post(subscriptions::create::create).finish())
        .service(
            resource(&format!("{SUBSCRIPTIONS}/{{id}}"))
                .get(subscriptions::show::show)
                .delete(subscriptions::delete::delete)
                .finish(),
        );
}

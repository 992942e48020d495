//! The resource tables, one per API major (`vnflcm` v1 and v2, `vnfpkgm` v1, `vnffm` v1,
//! `vnfpm` v2), one per API for the api_versions of every major, the VIM registry's and the
//! operational routes' ([`tables`]). A row ([`Endpoint`]) is a method on a path template of
//! [`solgate_core::links::paths`] with its handler, Tacker's policy rule and the SOL013
//! scope action, the minors that have it, its response body and its OpenAPI description.
//! Everything else is derived from the rows: the actix routes (here: one resource per
//! path, 405 with `Allow` from its rows, a scope per major), the policy rule and scope
//! check (`crate::auth::policy`), response validation (`crate::sol013::responses`) and the
//! OpenAPI documents (`crate::openapi`). [`tables::find`] matches a request to its row.

pub mod builder;
pub mod endpoint;
pub mod matcher;
pub mod tables;

use actix_web::web;

pub use builder::{NotAcceptable, RouteBuilder, not_found, resource};
pub use endpoint::{Body, Endpoint, Table};

/// Registers every API route: per API, the api_versions of every major, the routes every
/// major shares (api_versions and openapi.json of `v{major}`), then one scope per major;
/// then the VIM registry, the token endpoint and the alert webhooks.
pub fn configure(cfg: &mut web::ServiceConfig) {
    let tables = tables::all();
    for api in &tables.apis {
        register(cfg, &api.all, &api.all.prefix, |_| true);
        if let Some(first) = api.majors.first() {
            let prefix = format!("/{}/v{{major}}", first.api.map(|api| api.as_str()).unwrap_or_default());
            register(cfg, first, &prefix, |endpoint| endpoint.shared);
        }
        for table in &api.majors {
            // Each major's routes are a scope: its static prefix is compared once, instead of
            // every route of the other majors being matched (a regular expression each)
            // first. Nothing else is served under these prefixes: a path the scope does not
            // know falls through to the application's 404.
            cfg.service(
                web::scope(&table.prefix).configure(move |cfg| register(cfg, table, "", |endpoint| !endpoint.shared)),
            );
        }
    }
    register(cfg, &tables.vims, &tables.vims.prefix, |_| true);
    register(cfg, &tables.service, "", |_| true);
}

/// Operational routes every process serves (health, readiness, metrics).
pub fn configure_operations(cfg: &mut web::ServiceConfig) {
    register(cfg, &tables::all().operations, "", |_| true);
}

/// One actix resource per path of the rows `which` keeps, in the order of their first row.
fn register(cfg: &mut web::ServiceConfig, table: &'static Table, prefix: &str, which: fn(&Endpoint) -> bool) {
    let rows: Vec<&'static Endpoint> = table.endpoints.iter().filter(|endpoint| which(endpoint)).collect();
    let mut paths: Vec<&str> = Vec::new();
    for endpoint in &rows {
        if !paths.contains(&endpoint.path.as_ref()) {
            paths.push(&endpoint.path);
        }
    }
    for path in paths {
        let builder = rows
            .iter()
            .filter(|endpoint| endpoint.path == path)
            .fold(resource(&format!("{prefix}{path}")), |builder, endpoint| builder.endpoint(endpoint));
        cfg.service(builder.finish());
    }
}

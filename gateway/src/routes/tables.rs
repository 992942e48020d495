//! Every table, built once, and the matcher over them: which row a request is.

use std::sync::LazyLock;

use actix_web::http::Method;
use solgate_core::links::paths;

use super::endpoint::{ApiTables, Endpoint, Table};
use super::matcher::Matcher;
use crate::alerts::{self, AUTO_HEALING_PATH, AUTO_SCALING_PATH, FM_PATH, PM_EVENT_PATH, PM_THRESHOLD_PATH};
use crate::{auth, health, vims, vnffm, vnflcm, vnfpkgm, vnfpm};

pub struct Tables {
    /// The SOL013 APIs, in registration order.
    pub apis: Vec<ApiTables>,
    /// Tacker's legacy NFVO API: the VIM registry.
    pub vims: Table,
    /// Served with the APIs: the token endpoint and Alertmanager's webhooks (no policy
    /// rule: they have credentials of their own).
    pub service: Table,
    /// Served by every process: liveness, readiness, metrics.
    pub operations: Table,
}

static TABLES: LazyLock<Tables> = LazyLock::new(|| Tables {
    apis: vec![vnflcm::tables(), vnfpkgm::tables(), vnffm::tables(), vnfpm::tables()],
    vims: vims_table(),
    service: service_table(),
    operations: operations_table(),
});

static MATCHER: LazyLock<Matcher> = LazyLock::new(|| {
    let tables = all();
    let apis = tables.apis.iter().flat_map(|api| std::iter::once(&api.all).chain(&api.majors));
    Matcher::new(apis.chain([&tables.vims]))
});

pub fn all() -> &'static Tables {
    &TABLES
}

/// The row of `method path` (HEAD as GET) and its table.
pub fn find(method: &Method, path: &str) -> Option<(&'static Table, &'static Endpoint)> {
    let method = if method == Method::HEAD { &Method::GET } else { method };
    MATCHER.find(method, path)
}

/// The table whose prefix `path` has (also for a path no row has).
pub fn table(path: &str) -> Option<&'static Table> {
    MATCHER.table(path)
}

/// Tacker's VIM rules: `create_vim`, `get_vim` (lists too), `update_vim`, `delete_vim`;
/// scopes `nfvo:v1:{create,index,show,update,delete}`. `{vimId}` may end in `.json`.
fn vims_table() -> Table {
    let naming = |_: &str, action: &str| {
        let verb = if matches!(action, "index" | "show") { "get" } else { action };
        format!("{verb}_vim")
    };
    let rows = vec![
        Endpoint::get(paths::VIMS, "index", |route| route.to(vims::list)),
        Endpoint::post(paths::VIMS, "create", |route| route.to(vims::create)),
        Endpoint::get(paths::VIMS_JSON, "index", |route| route.to(vims::list)),
        Endpoint::post(paths::VIMS_JSON, "create", |route| route.to(vims::create)),
        Endpoint::get(paths::VIM, "show", |route| route.to(vims::show)),
        Endpoint::put(paths::VIM, "update", |route| route.to(vims::update)),
        Endpoint::delete(paths::VIM, "delete", |route| route.to(vims::delete)),
    ];
    Table::new(paths::VIMS_PREFIX.to_owned(), None, None, naming, rows).scoped_as("nfvo", 1)
}

fn service_table() -> Table {
    let rows = vec![
        Endpoint::post(auth::endpoint::PATH, "", |route| route.to(auth::endpoint::token)),
        // Always registered: a webhook that is off answers 404 with its reason.
        Endpoint::post(FM_PATH, "", |route| route.to(alerts::fm::alert)),
        Endpoint::post(AUTO_HEALING_PATH, "", |route| route.to(alerts::auto::auto_healing)),
        Endpoint::post(AUTO_SCALING_PATH, "", |route| route.to(alerts::auto::auto_scaling)),
        Endpoint::post(PM_EVENT_PATH, "", |route| route.to(alerts::pm::pm_event)),
        Endpoint::post(PM_THRESHOLD_PATH, "", |route| route.to(alerts::pm::pm_threshold)),
    ];
    Table::new(String::new(), None, None, |_, _| String::new(), rows)
}

fn operations_table() -> Table {
    let rows = vec![
        Endpoint::get("/healthz", "", |route| route.to(health::healthz)),
        Endpoint::get("/readyz", "", |route| route.to(health::readyz)),
        Endpoint::get("/metrics", "", |route| route.to(health::metrics)),
    ];
    Table::new(String::new(), None, None, |_, _| String::new(), rows)
}

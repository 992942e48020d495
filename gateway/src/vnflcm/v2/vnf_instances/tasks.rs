//! The task resources of an instance: each is a POST with its SOL003 request body,
//! answered 202 with the `Location` of the new operation occurrence.

use std::future::Future;
use std::pin::Pin;

use actix_web::{HttpResponse, web};

use crate::error::ApiResult;
use crate::sol013::{JsonBody, Negotiated};
use crate::state::AppState;
use crate::vnflcm::common::tasks;

type TaskFuture = Pin<Box<dyn Future<Output = ApiResult<HttpResponse>>>>;
pub type TaskHandler = fn(web::Data<AppState>, Negotiated, web::Path<String>, JsonBody) -> TaskFuture;

macro_rules! task {
    ($name:ident, $operation:literal, $schema:literal) => {
        fn $name(
            state: web::Data<AppState>,
            negotiated: Negotiated,
            id: web::Path<String>,
            body: JsonBody,
        ) -> TaskFuture {
            Box::pin(
                async move { tasks::accept(&state, &negotiated, id.into_inner(), $operation, $schema, body.0).await },
            )
        }
    };
}

task!(instantiate, "INSTANTIATE", "InstantiateVnfRequest");
task!(terminate, "TERMINATE", "TerminateVnfRequest");
task!(scale, "SCALE", "ScaleVnfRequest");
task!(scale_to_level, "SCALE_TO_LEVEL", "ScaleVnfToLevelRequest");
task!(heal, "HEAL", "HealVnfRequest");
task!(change_flavour, "CHANGE_FLAVOUR", "ChangeVnfFlavourRequest");
task!(operate, "OPERATE", "OperateVnfRequest");
task!(change_ext_conn, "CHANGE_EXT_CONN", "ChangeExtVnfConnectivityRequest");
task!(change_vnfpkg, "CHANGE_VNFPKG", "ChangeCurrentVnfPkgRequest");

/// Path segment → handler.
pub const ROUTES: &[(&str, TaskHandler)] = &[
    ("instantiate", instantiate),
    ("terminate", terminate),
    ("scale", scale),
    ("scale_to_level", scale_to_level),
    ("heal", heal),
    ("change_flavour", change_flavour),
    ("operate", operate),
    ("change_ext_conn", change_ext_conn),
    ("change_vnfpkg", change_vnfpkg),
];

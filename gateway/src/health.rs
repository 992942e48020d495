//! Liveness, readiness and metrics endpoints (outside the SOL013 layer's scopes).

use actix_web::{HttpResponse, web};
use serde_json::json;

use crate::error::{ApiError, ApiResult};
use crate::state::AppState;

/// Alive: the process answers HTTP.
pub async fn healthz() -> HttpResponse {
    HttpResponse::Ok().content_type("application/json").body(r#"{"status":"ok"}"#)
}

/// Ready: every dependency (database, RPC transport) answers.
pub async fn readyz(state: web::Data<AppState>) -> ApiResult<HttpResponse> {
    let mut checks = serde_json::Map::new();
    let mut failed = Vec::new();
    for probe in &state.readiness {
        match probe.check().await {
            Ok(()) => {
                checks.insert(probe.name().to_owned(), json!("ok"));
            }
            Err(reason) => {
                failed.push(format!("{}: {}", probe.name(), reason));
                checks.insert(probe.name().to_owned(), json!(reason));
            }
        }
    }
    if failed.is_empty() {
        let body = json!({ "status": "ready", "checks": checks });
        Ok(HttpResponse::Ok().content_type("application/json").body(body.to_string()))
    } else {
        Err(ApiError::unavailable(format!("Not ready: {}", failed.join("; ")), 5))
    }
}

pub async fn metrics(state: web::Data<AppState>) -> HttpResponse {
    HttpResponse::Ok().content_type("text/plain; version=0.0.4").body(state.metrics.render())
}

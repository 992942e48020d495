//! `POST /pm_event` and `POST /pm_threshold`: alerts labelled `function_type: vnfpm` become
//! the performance reports of PM jobs, `vnfpm_threshold` ones threshold crossings, as Tacker's
//! `PrometheusPluginPm` and `PrometheusPluginThreshold` read them (labels `job_id` or
//! `threshold_id`, `object_instance_id`, `metric`, optionally `sub_object_instance_id`, and the
//! measured value in the `value` annotation). What is stored and notified, and when a message
//! is refused (400 malformed, 422 naming what no job or threshold measures; nothing stored
//! then), is [`solgate_core::pm::events`]'s. Both need `[prometheus_plugin]
//! performance_management` and the webhook credentials.

use actix_web::{FromRequest, HttpRequest, HttpResponse, web};
use solgate_core::pm::events::{self, PmAlert};
use solgate_db::write_transaction;

use super::Webhook;
use super::payload::{self, AlertStatus};
use crate::error::ApiResult;
use crate::sol013::JsonBody;
use crate::state::AppState;

/// Which alerts a path takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Reports,
    Crossings,
}

/// Reads a message (after the credentials) into the alerts of `function_type`.
async fn alerts(
    state: &AppState,
    req: &HttpRequest,
    payload: web::Payload,
    function_type: &str,
) -> ApiResult<Vec<PmAlert>> {
    state.webhooks.admit(Webhook::PerformanceManagement, req)?;
    let body = JsonBody::from_request(req, &mut payload.into_inner()).await?.0;
    Ok(payload::parse(body)?
        .into_iter()
        .enumerate()
        .filter(|(_, alert)| alert.function_type() == function_type)
        .map(|(index, alert)| PmAlert {
            index,
            firing: alert.status == AlertStatus::Firing,
            value: alert.annotation("value").map(str::to_owned),
            starts_at: Some(alert.starts_at),
            labels: alert.labels,
        })
        .collect())
}

async fn handle(
    state: web::Data<AppState>,
    req: HttpRequest,
    payload: web::Payload,
    kind: Kind,
) -> ApiResult<HttpResponse> {
    let function_type = match kind {
        Kind::Reports => events::VNFPM,
        Kind::Crossings => events::VNFPM_THRESHOLD,
    };
    let alerts = alerts(&state, &req, payload, function_type).await?;
    if alerts.is_empty() {
        return Ok(HttpResponse::NoContent().finish());
    }
    let (links, vnfpm) = (state.links.clone(), state.vnfpm.clone());
    let now = chrono::Utc::now();
    let outcome = state
        .db(move |conn| {
            write_transaction(conn, |conn| match kind {
                Kind::Reports => Ok(events::record_reports(conn, &links, vnfpm.settings(), &alerts, now)?),
                Kind::Crossings => Ok(events::record_crossings(conn, &links, &alerts, now)?),
            })
        })
        .await?;
    tracing::info!(
        kind = ?kind,
        used = outcome.used,
        stored = outcome.stored,
        notifications = outcome.notifications,
        "Alertmanager's performance alerts handled"
    );
    Ok(HttpResponse::NoContent().finish())
}

/// POST /pm_event
pub async fn pm_event(state: web::Data<AppState>, req: HttpRequest, payload: web::Payload) -> ApiResult<HttpResponse> {
    handle(state, req, payload, Kind::Reports).await
}

/// POST /pm_threshold
pub async fn pm_threshold(
    state: web::Data<AppState>,
    req: HttpRequest,
    payload: web::Payload,
) -> ApiResult<HttpResponse> {
    handle(state, req, payload, Kind::Crossings).await
}

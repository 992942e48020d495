//! `POST /alert/auto_healing` and `POST /alert/auto_scaling`: firing alerts labelled
//! `function_type: auto_heal` / `auto_scale` start a heal or a scale of the VNF instance they
//! name through the LCM path of the API ([`solgate_core::requests::accept`]: the occurrence,
//! its grant and notifications), with `isAutomaticInvocation: true`. As Tacker:
//!
//! - heal: labels `vnf_instance_id` and `vnfc_info_id` (a `vnfcInfo` id); the alerts of one
//!   request that name VNFCs of one instance make one HEAL of those VNFCs;
//! - scale: labels `vnf_instance_id`, `auto_scale_type` (SCALE_OUT / SCALE_IN) and `aspect_id`;
//!   one SCALE of one step per instance and request (the first alert's, if they disagree);
//! - only an INSTANTIATED instance whose `vnfConfigurableProperties.isAutohealEnabled`
//!   (`isAutoscaleEnabled`) is true is acted on; others are left alone.
//!
//! No storm: one LCM operation per instance is in flight at a time (the database's rule, as
//! for the API), so an alert for an instance that is busy (a burst of the same alert, or an
//! alert during another operation) starts nothing and is not queued: it is logged and
//! dropped. Alertmanager sends a still-firing alert again after its `repeat_interval`, which
//! then acts on the instance as it is by then. Tacker waits `timer_interval` (20 s) to gather
//! VNFCs before healing; solgate heals at once what one request names.
//!
//! An alert naming an unknown instance, VNFC or aspect refuses the whole request (422, each
//! named) and starts nothing; a malformed one is a 400.

use actix_web::{FromRequest, HttpRequest, HttpResponse, web};
use serde::Serialize;
use solgate_core::operation::LcmOperation;
use solgate_core::requests::{self, TaskRequest};
use solgate_core::work::RpcMessage;
use solgate_core::{CoreError, shapes};
use solgate_db::repo::lcm::LcmMajor;
use solgate_schemas::Api;

use super::instance::InstanceView;
use super::payload::{self, AUTO_HEAL, AUTO_SCALE, Alert, AlertStatus};
use super::{Webhook, find_instance};
use crate::error::{ApiError, ApiResult};
use crate::sol013::JsonBody;
use crate::state::AppState;

/// An operation one request asks for.
#[derive(Debug, Clone)]
struct Trigger {
    instance_id: String,
    operation: LcmOperation,
    request: AutoRequest,
    fingerprints: Vec<String>,
}

/// The LCM request of a trigger (SOL003 HealVnfRequest, ScaleVnfRequest).
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
enum AutoRequest {
    #[serde(rename_all = "camelCase")]
    Heal { vnfc_instance_id: Vec<String>, cause: &'static str },
    #[serde(rename_all = "camelCase")]
    Scale {
        #[serde(rename = "type")]
        scale_type: String,
        aspect_id: String,
        number_of_steps: u32,
    },
}

/// POST /alert/auto_healing
pub async fn auto_healing(
    state: web::Data<AppState>,
    req: HttpRequest,
    payload: web::Payload,
) -> ApiResult<HttpResponse> {
    state.webhooks.admit(Webhook::AutoHealing, &req)?;
    let alerts = firing(&req, payload, AUTO_HEAL).await?;
    let mut triggers: Vec<Trigger> = Vec::new();
    for (index, alert) in &alerts {
        let instance_id = required(*index, alert, "vnf_instance_id")?;
        let vnfc = required(*index, alert, "vnfc_info_id")?;
        match triggers.iter_mut().find(|trigger| trigger.instance_id == instance_id) {
            Some(trigger) => {
                if let AutoRequest::Heal { vnfc_instance_id: ids, .. } = &mut trigger.request
                    && !ids.iter().any(|id| id == vnfc)
                {
                    ids.push(vnfc.to_owned());
                }
                trigger.fingerprints.push(alert.fingerprint.clone());
            }
            None => triggers.push(Trigger {
                instance_id: instance_id.to_owned(),
                operation: LcmOperation::Heal,
                request: AutoRequest::Heal {
                    vnfc_instance_id: vec![vnfc.to_owned()],
                    cause: "Auto healing: an alert of Alertmanager",
                },
                fingerprints: vec![alert.fingerprint.clone()],
            }),
        }
    }
    act(&state, triggers, "isAutohealEnabled").await
}

/// POST /alert/auto_scaling
pub async fn auto_scaling(
    state: web::Data<AppState>,
    req: HttpRequest,
    payload: web::Payload,
) -> ApiResult<HttpResponse> {
    state.webhooks.admit(Webhook::AutoScaling, &req)?;
    let alerts = firing(&req, payload, AUTO_SCALE).await?;
    let mut triggers: Vec<Trigger> = Vec::new();
    for (index, alert) in &alerts {
        let instance_id = required(*index, alert, "vnf_instance_id")?;
        let scale_type = required(*index, alert, "auto_scale_type")?;
        let aspect_id = required(*index, alert, "aspect_id")?;
        match triggers.iter_mut().find(|trigger| trigger.instance_id == instance_id) {
            Some(trigger) => trigger.fingerprints.push(alert.fingerprint.clone()),
            None => triggers.push(Trigger {
                instance_id: instance_id.to_owned(),
                operation: LcmOperation::Scale,
                request: AutoRequest::Scale {
                    scale_type: scale_type.to_owned(),
                    aspect_id: aspect_id.to_owned(),
                    number_of_steps: 1,
                },
                fingerprints: vec![alert.fingerprint.clone()],
            }),
        }
    }
    act(&state, triggers, "isAutoscaleEnabled").await
}

/// The firing alerts of `function_type` in the request body, with their index.
async fn firing(req: &HttpRequest, payload: web::Payload, function_type: &str) -> ApiResult<Vec<(usize, Alert)>> {
    let body = JsonBody::from_request(req, &mut payload.into_inner()).await?.0;
    Ok(payload::parse(body)?
        .into_iter()
        .enumerate()
        .filter(|(_, alert)| alert.status == AlertStatus::Firing && alert.function_type() == function_type)
        .collect())
}

fn required<'a>(index: usize, alert: &'a Alert, label: &str) -> ApiResult<&'a str> {
    alert.label(label).ok_or_else(|| {
        ApiError::bad_request(format!("/alerts/{index}/labels/{label}: a {} alert needs it", alert.function_type()))
    })
}

/// Checks every trigger against the instances (422 for what they do not have, nothing
/// started), then starts each that its instance allows.
async fn act(state: &AppState, triggers: Vec<Trigger>, switch: &'static str) -> ApiResult<HttpResponse> {
    if triggers.is_empty() {
        return Ok(HttpResponse::NoContent().finish());
    }
    let checked = triggers.clone();
    let ready = state
        .db(move |conn| {
            let mut ready = Vec::new();
            let mut refused = Vec::new();
            for trigger in checked {
                let Some((major, instance)) = find_instance(conn, &trigger.instance_id)? else {
                    refused.push(format!("VNF instance {} does not exist", trigger.instance_id));
                    continue;
                };
                let view = InstanceView::of(&instance.body);
                if !view.is_instantiated() || !view.switched_on(switch) {
                    tracing::info!(instance = %trigger.instance_id, switch,
                        "auto {} alert ignored: the instance is not instantiated or has not {switch} = true",
                        trigger.operation.name());
                    continue;
                }
                match unknown_target(&trigger, &view) {
                    Some(reason) => refused.push(reason),
                    None => ready.push((major, trigger)),
                }
            }
            if refused.is_empty() {
                Ok(ready)
            } else {
                Err(ApiError::unprocessable(format!("No operation was started: {}.", refused.join("; "))))
            }
        })
        .await?;
    for (major, trigger) in ready {
        start(state, major, trigger).await?;
    }
    Ok(HttpResponse::NoContent().finish())
}

/// What a trigger names that its instance does not have.
fn unknown_target(trigger: &Trigger, instance: &InstanceView) -> Option<String> {
    let info = &instance.instantiated_vnf_info;
    match &trigger.request {
        AutoRequest::Heal { vnfc_instance_id, .. } => {
            let unknown: Vec<&str> =
                vnfc_instance_id.iter().map(String::as_str).filter(|id| !info.has_vnfc(id)).collect();
            (!unknown.is_empty())
                .then(|| format!("VNF instance {} has no VNFC {}", trigger.instance_id, unknown.join(", ")))
        }
        AutoRequest::Scale { aspect_id, .. } => (!info.has_aspect(aspect_id))
            .then(|| format!("VNF instance {} has no scaling aspect {aspect_id}", trigger.instance_id)),
    }
}

/// Starts one operation as the API would: validated against the newest minor of the
/// instance's major, accepted in one transaction, its work message published. An operation
/// already in flight (or any other refusal of the LCM rules) starts nothing and is logged.
async fn start(state: &AppState, major: LcmMajor, trigger: Trigger) -> ApiResult<()> {
    let Trigger { instance_id, operation, request, fingerprints } = trigger;
    let params = serde_json::to_value(&request).map_err(ApiError::internal)?;
    if let Some(entry) = state.registry.newest(Api::Vnflcm, major.number())
        && let Err(failures) = entry.dictionary.validate(operation.request_schema(), &params)
    {
        return Err(ApiError::bad_request(format!(
            "The alert's {} request is not valid: {failures}",
            operation.name()
        )));
    }
    let links = state.links.clone();
    let vim_types = state.vim_types.clone();
    let target = instance_id.clone();
    let accepted = state
        .db(move |conn| {
            let request = TaskRequest {
                major,
                operation,
                instance_id: &target,
                params: &params,
                shapes: shapes::for_major(major),
                vim_types: &vim_types,
                links: &links,
                // Alertmanager is no tenant: the instance is acted on in its own project.
                scope: None,
                if_match: None,
                automatic: true,
            };
            Ok(requests::accept(conn, &request))
        })
        .await?;
    match accepted {
        Ok(accepted) => {
            let op_id = accepted.op.id;
            tracing::info!(instance = %instance_id, operation = operation.name(), op = %op_id, ?fingerprints,
                "automatic LCM operation started by Alertmanager's alert");
            state.dispatch(accepted.outbox_id, RpcMessage::lcm(op_id, major.number()));
        }
        Err(CoreError::Conflict(reason)) => {
            tracing::info!(instance = %instance_id, operation = operation.name(), ?fingerprints, %reason,
                "automatic LCM operation not started; the alert is dropped");
        }
        Err(CoreError::BadRequest(reason) | CoreError::Unprocessable(reason) | CoreError::NotFound(reason)) => {
            tracing::warn!(instance = %instance_id, operation = operation.name(), ?fingerprints, %reason,
                "automatic LCM operation refused; the alert is dropped");
        }
        Err(error) => return Err(error.into()),
    }
    Ok(())
}

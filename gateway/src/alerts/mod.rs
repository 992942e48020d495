//! Alertmanager's webhooks on the paths of Tacker's Prometheus plugin (`[prometheus_plugin]`):
//! `POST /alert` raises and clears VNF FM alarms, `POST /alert/auto_healing` and
//! `POST /alert/auto_scaling` heal and scale VNF instances through the LCM path of the API,
//! `POST /pm_event` and `POST /pm_threshold` make PM jobs' reports and cross thresholds.
//!
//! Each webhook is off unless its switch is on (404, Tacker's text, as Tacker answers), and
//! one that is on is outside `[auth]` but answers only requests with the webhook credentials
//! of the settings, HTTP Basic or a bearer token (what Alertmanager's `http_config` sends);
//! Tacker's webhooks take anyone's alerts. A body that is not Alertmanager's webhook JSON is a
//! 400 and changes nothing. Tacker answers 204 to everything, errors included (its plugin
//! logs and swallows them); solgate answers a client mistake with its ProblemDetails, which
//! Alertmanager logs and does not retry (it retries only 5xx).

pub mod auto;
pub mod fm;
mod instance;
pub mod payload;
pub mod pm;
pub mod webhook;

use solgate_db::AnyConnection;
use solgate_db::repo::lcm::{self, InstanceRecord, LcmMajor};

use crate::error::ApiResult;
pub use webhook::{
    AUTO_HEALING_PATH, AUTO_SCALING_PATH, FM_PATH, PATHS, PM_EVENT_PATH, PM_THRESHOLD_PATH, Webhook, Webhooks,
};

/// The VNF instance an alert names, in whichever major's table holds it (v2 first).
pub fn find_instance(conn: &mut AnyConnection, id: &str) -> ApiResult<Option<(LcmMajor, InstanceRecord)>> {
    for major in [LcmMajor::V2, LcmMajor::V1] {
        if let Some(record) = lcm::find_instance(conn, major, id)? {
            return Ok(Some((major, record)));
        }
    }
    Ok(None)
}

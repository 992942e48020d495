//! Who may post to a webhook: the switch of each webhook, and the credentials every webhook
//! request must carry (`[prometheus_plugin] webhook_user_name`/`webhook_password`, or
//! `webhook_token`), compared as `[[auth.clients]]` secrets are (a PHC hash or plain text).

use std::sync::{Mutex, PoisonError};

use actix_web::HttpRequest;
use actix_web::http::header;
use aws_lc_rs::{constant_time, digest};
use base64::Engine;

use crate::auth::secret;
use crate::error::{ApiError, ApiResult, ErrorKind};
use crate::settings::PrometheusPluginSettings;

/// `function_type: vnffm` alerts: VNF FM alarms.
pub const FM_PATH: &str = "/alert";
/// `function_type: auto_heal` alerts: heal the VNFC named.
pub const AUTO_HEALING_PATH: &str = "/alert/auto_healing";
/// `function_type: auto_scale` alerts: scale the instance named.
pub const AUTO_SCALING_PATH: &str = "/alert/auto_scaling";

/// `function_type: vnfpm` alerts: reports of PM jobs.
pub const PM_EVENT_PATH: &str = "/pm_event";
/// `function_type: vnfpm_threshold` alerts: threshold crossings.
pub const PM_THRESHOLD_PATH: &str = "/pm_threshold";

/// Every webhook path: outside `[auth]`, checked by [`Webhooks::admit`] instead.
pub const PATHS: &[&str] = &[FM_PATH, AUTO_HEALING_PATH, AUTO_SCALING_PATH, PM_EVENT_PATH, PM_THRESHOLD_PATH];

/// One webhook of the Prometheus plugin.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Webhook {
    FaultManagement,
    AutoHealing,
    AutoScaling,
    /// `/pm_event` and `/pm_threshold`.
    PerformanceManagement,
}

impl Webhook {
    /// Its name in Tacker's "... API is not enabled." answer.
    pub fn name(self) -> &'static str {
        match self {
            Webhook::FaultManagement => "Fault management",
            Webhook::AutoHealing => "Auto healing",
            Webhook::AutoScaling => "Auto scaling",
            Webhook::PerformanceManagement => "Performance management",
        }
    }

    fn enabled(self, settings: &PrometheusPluginSettings) -> bool {
        match self {
            Webhook::FaultManagement => settings.fault_management,
            Webhook::AutoHealing => settings.auto_healing,
            Webhook::AutoScaling => settings.auto_scaling,
            Webhook::PerformanceManagement => settings.performance_management,
        }
    }
}

/// Credentials accepted once are remembered by digest, so that a PHC hash (600 000 PBKDF2
/// rounds) is computed once per credential and process, not per alert.
const REMEMBERED: usize = 8;

/// The request-time side of `[prometheus_plugin]`.
pub struct Webhooks {
    settings: PrometheusPluginSettings,
    accepted: Mutex<Vec<digest::Digest>>,
}

impl std::fmt::Debug for Webhooks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Webhooks").field("settings", &self.settings).finish_non_exhaustive()
    }
}

impl Webhooks {
    pub fn new(settings: &PrometheusPluginSettings) -> Self {
        for (key, value) in
            [("webhook_password", &settings.webhook_password), ("webhook_token", &settings.webhook_token)]
        {
            if !value.is_empty() && !secret::is_hash(value) {
                tracing::warn!("prometheus_plugin.{key} is plain text; store `solgate hash-secret`'s hash instead");
            }
        }
        Self { settings: settings.clone(), accepted: Mutex::new(Vec::new()) }
    }

    pub fn settings(&self) -> &PrometheusPluginSettings {
        &self.settings
    }

    /// Lets a request through to `webhook`: 404 when the webhook is off, 401 unless the request
    /// carries the configured credentials. Called before the body is read, so that an
    /// unauthenticated caller learns nothing of what a body should be.
    pub fn admit(&self, webhook: Webhook, req: &HttpRequest) -> ApiResult<()> {
        if !webhook.enabled(&self.settings) {
            return Err(ApiError::not_found(format!("{} API is not enabled.", webhook.name())));
        }
        let presented = req.headers().get(header::AUTHORIZATION).and_then(|value| value.to_str().ok());
        let Some(presented) = presented else {
            return Err(self.refused("The webhook credentials are required (Authorization)."));
        };
        let fingerprint = digest::digest(&digest::SHA256, presented.as_bytes());
        let remembered = self
            .accepted
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .any(|known| constant_time::verify_slices_are_equal(known.as_ref(), fingerprint.as_ref()).is_ok());
        if remembered || self.verify(presented) {
            if !remembered {
                let mut accepted = self.accepted.lock().unwrap_or_else(PoisonError::into_inner);
                if accepted.len() >= REMEMBERED {
                    accepted.clear();
                }
                accepted.push(fingerprint);
            }
            return Ok(());
        }
        Err(self.refused("The webhook credentials are wrong."))
    }

    fn verify(&self, presented: &str) -> bool {
        let settings = &self.settings;
        let Some((scheme, value)) = presented.split_once(' ') else { return false };
        let value = value.trim();
        if scheme.eq_ignore_ascii_case("bearer") {
            return !settings.webhook_token.is_empty() && secret::verify(&settings.webhook_token, value);
        }
        if !scheme.eq_ignore_ascii_case("basic") || settings.webhook_password.is_empty() {
            return false;
        }
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(value)
            .ok()
            .and_then(|bytes| String::from_utf8(bytes).ok());
        let Some((user_name, password)) = decoded.as_deref().and_then(|text| text.split_once(':')) else {
            return false;
        };
        // Both compared in full, whatever the first gives.
        let user_matches = constant_time::verify_slices_are_equal(
            digest::digest(&digest::SHA256, settings.webhook_user_name.as_bytes()).as_ref(),
            digest::digest(&digest::SHA256, user_name.as_bytes()).as_ref(),
        )
        .is_ok();
        user_matches & secret::verify(&settings.webhook_password, password)
    }

    /// 401 with the challenge of the credentials configured (Basic when there are both).
    fn refused(&self, detail: &str) -> ApiError {
        let scheme = if self.settings.webhook_password.is_empty() { "Bearer" } else { "Basic" };
        ApiError::new(ErrorKind::Unauthorized { challenge: format!("{scheme} realm=\"solgate\"") }, detail)
    }
}

#[cfg(test)]
mod tests {
    use actix_web::test::TestRequest;

    use super::*;

    fn basic(user: &str, password: &str) -> String {
        format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}")))
    }

    fn status(webhooks: &Webhooks, webhook: Webhook, authorization: Option<&str>) -> u16 {
        let mut request = TestRequest::post().uri("/alert");
        if let Some(value) = authorization {
            request = request.insert_header(("Authorization", value));
        }
        match webhooks.admit(webhook, &request.to_http_request()) {
            Ok(()) => 204,
            Err(error) => error.kind().status().as_u16(),
        }
    }

    #[test]
    fn a_webhook_is_off_until_switched_on_and_then_needs_the_credentials() {
        let off = Webhooks::new(&PrometheusPluginSettings::default());
        let right = basic("alertmanager", "s3cret");
        assert_eq!(status(&off, Webhook::FaultManagement, Some(&right)), 404);

        let hashed = secret::hash("s3cret").unwrap();
        let settings = PrometheusPluginSettings {
            fault_management: true,
            webhook_user_name: "alertmanager".into(),
            webhook_password: hashed,
            webhook_token: "plain-token".into(),
            ..PrometheusPluginSettings::default()
        };
        let on = Webhooks::new(&settings);
        assert_eq!(status(&on, Webhook::FaultManagement, Some(&right)), 204);
        assert_eq!(status(&on, Webhook::FaultManagement, Some(&right)), 204, "remembered");
        assert_eq!(status(&on, Webhook::AutoHealing, Some(&right)), 404, "each webhook has its own switch");
        assert_eq!(status(&on, Webhook::FaultManagement, None), 401);
        assert_eq!(status(&on, Webhook::FaultManagement, Some(&basic("alertmanager", "s3cret "))), 401);
        assert_eq!(status(&on, Webhook::FaultManagement, Some(&basic("other", "s3cret"))), 401);
        assert_eq!(status(&on, Webhook::FaultManagement, Some("Bearer plain-token")), 204);
        assert_eq!(status(&on, Webhook::FaultManagement, Some("bearer  plain-token ")), 204);
        assert_eq!(status(&on, Webhook::FaultManagement, Some("Bearer s3cret")), 401);
        assert_eq!(status(&on, Webhook::FaultManagement, Some("Basic !!!")), 401);
        assert_eq!(status(&on, Webhook::FaultManagement, Some("Digest x")), 401);
        let error = on.admit(Webhook::FaultManagement, &TestRequest::post().to_http_request()).unwrap_err();
        assert_eq!(error.kind(), &ErrorKind::Unauthorized { challenge: "Basic realm=\"solgate\"".into() });
    }

    #[test]
    fn settings_refuse_an_open_webhook() {
        let open = PrometheusPluginSettings { auto_healing: true, ..PrometheusPluginSettings::default() };
        assert!(open.problem().unwrap().contains("needs credentials"));
        let half = PrometheusPluginSettings { webhook_user_name: "a".into(), ..PrometheusPluginSettings::default() };
        assert!(half.problem().unwrap().contains("together"));
        let token = PrometheusPluginSettings { webhook_token: "t".into(), ..open };
        assert_eq!(token.problem(), None);
        assert_eq!(PrometheusPluginSettings::default().problem(), None);
    }
}

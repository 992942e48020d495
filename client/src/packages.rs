//! VNF package management (SOL005 clause 9, `/vnfpkgm/v1`): create, upload, onboarding,
//! downloads and artifacts.

use std::time::{Duration, Instant};

use reqwest::Method;
use serde_json::Value;

use crate::client::{Body, Client};
use crate::error::{Error, Result};
use crate::lcm::{ListQuery, id_segment};
use crate::records::{PkgInfoView, ProblemView};
use crate::versions::Api;

const MAJOR: u64 = 1;

/// What `download --vnfd --type` asks for (the `Accept` of GET …/vnfd).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VnfdFormat {
    TextPlain,
    Zip,
    Both,
}

impl VnfdFormat {
    fn accept(self) -> &'static str {
        match self {
            VnfdFormat::TextPlain => "text/plain",
            VnfdFormat::Zip => "application/zip",
            VnfdFormat::Both => "text/plain,application/zip",
        }
    }
}

/// A downloaded body and its `Content-Type`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackageContent {
    pub content_type: Option<String>,
    pub bytes: Vec<u8>,
}

fn path(rest: &str) -> String {
    format!("vnfpkgm/v{MAJOR}/{rest}")
}

impl Client {
    async fn pkg(&self, method: Method, rest: &str, body: Body, accept: &str) -> Result<crate::client::Reply> {
        self.send(Api::Vnfpkgm, MAJOR, method, self.url(&path(rest))?, body, accept).await
    }

    /// POST vnf_packages (201, the new VnfPkgInfo, CREATED).
    pub async fn create_package(&self, body: Value) -> Result<Value> {
        self.pkg(Method::POST, "vnf_packages", Body::Json(body), "application/json").await?.json()
    }

    pub async fn list_packages(&self, query: &ListQuery) -> Result<Vec<Value>> {
        let mut url = self.url(&path("vnf_packages"))?;
        query.apply(&mut url);
        self.get_list(Api::Vnfpkgm, MAJOR, url).await
    }

    pub async fn show_package(&self, id: &str) -> Result<Value> {
        self.get_json(Api::Vnfpkgm, MAJOR, &path(&format!("vnf_packages/{}", id_segment(id)))).await
    }

    /// PATCH (200, the VnfPkgInfoModifications).
    pub async fn update_package(&self, id: &str, body: Value) -> Result<Value> {
        self.pkg(Method::PATCH, &format!("vnf_packages/{}", id_segment(id)), Body::MergePatch(body), "application/json")
            .await?
            .json()
    }

    pub async fn delete_package(&self, id: &str) -> Result<()> {
        self.pkg(Method::DELETE, &format!("vnf_packages/{}", id_segment(id)), Body::None, "application/json")
            .await
            .map(drop)
    }

    /// PUT …/package_content with the zip (202; onboarding goes on in the background).
    pub async fn upload_package(&self, id: &str, zip: Vec<u8>) -> Result<()> {
        let rest = format!("vnf_packages/{}/package_content", id_segment(id));
        self.pkg(Method::PUT, &rest, Body::Zip(zip), "application/json").await.map(drop)
    }

    /// POST …/package_content/upload_from_uri (202).
    pub async fn upload_package_from_uri(&self, id: &str, body: Value) -> Result<()> {
        let rest = format!("vnf_packages/{}/package_content/upload_from_uri", id_segment(id));
        self.pkg(Method::POST, &rest, Body::Json(body), "application/json").await.map(drop)
    }

    /// GET …/package_content (the zip).
    pub async fn download_package(&self, id: &str) -> Result<PackageContent> {
        self.download(&format!("vnf_packages/{}/package_content", id_segment(id)), "application/zip").await
    }

    /// GET …/vnfd.
    pub async fn download_vnfd(&self, id: &str, format: VnfdFormat) -> Result<PackageContent> {
        self.download(&format!("vnf_packages/{}/vnfd", id_segment(id)), format.accept()).await
    }

    /// GET …/artifacts/{path}.
    pub async fn download_artifact(&self, id: &str, artifact_path: &str) -> Result<PackageContent> {
        let artifact = artifact_path.split('/').map(id_segment).collect::<Vec<_>>().join("/");
        self.download(&format!("vnf_packages/{}/artifacts/{artifact}", id_segment(id)), "*/*").await
    }

    async fn download(&self, rest: &str, accept: &str) -> Result<PackageContent> {
        let reply = self.pkg(Method::GET, rest, Body::None, accept).await?;
        let content_type =
            reply.headers.get(reqwest::header::CONTENT_TYPE).and_then(|value| value.to_str().ok()).map(str::to_owned);
        Ok(PackageContent { content_type, bytes: reply.body })
    }

    /// Polls the package until onboarding has ended: ONBOARDED, or an error
    /// (`onboardingFailureDetails`, or back to CREATED) — `on_state` sees each state.
    pub async fn wait_for_onboarding(
        &self,
        id: &str,
        timeout: Duration,
        poll: Duration,
        mut on_state: impl FnMut(&str),
    ) -> Result<Value> {
        let started = Instant::now();
        let mut seen_progress = false;
        loop {
            let info = self.show_package(id).await?;
            let view = PkgInfoView::of(&info);
            let state = view.onboarding_state.unwrap_or_default();
            on_state(&state);
            if state == "ONBOARDED" {
                return Ok(info);
            }
            if let Some(failure) = view.onboarding_failure_details.filter(|_| state == "CREATED") {
                let problem: ProblemView = serde_json::from_value(failure.clone()).unwrap_or_default();
                return Err(Error::Api(crate::error::ProblemDetails {
                    type_: None,
                    title: Some("Onboarding failed".into()),
                    status: problem.status.and_then(|status| u16::try_from(status).ok()).unwrap_or(422),
                    detail: problem.detail.unwrap_or_else(|| failure.to_string()),
                    instance: None,
                }));
            }
            seen_progress |= matches!(state.as_str(), "UPLOADING" | "PROCESSING");
            if seen_progress && state == "CREATED" {
                return Err(Error::Unexpected(format!("package {id} went back to CREATED: onboarding failed")));
            }
            if started.elapsed() >= timeout {
                return Err(Error::Timeout { what: format!("package {id}"), seconds: timeout.as_secs(), state });
            }
            tokio::time::sleep(poll).await;
        }
    }
}

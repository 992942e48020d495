//! VNF performance management (SOL003 clause 6, `/vnfpm/v2`): PM jobs, their reports, and
//! thresholds.

use reqwest::Method;
use serde_json::Value;

use crate::client::{Body, Client};
use crate::error::{Error, Result};
use crate::lcm::{ListQuery, id_segment};
use crate::versions::Api;

const MAJOR: u64 = 2;

/// The two resources of the API.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PmResource {
    Job,
    Threshold,
}

impl PmResource {
    fn collection(self) -> &'static str {
        match self {
            PmResource::Job => "pm_jobs",
            PmResource::Threshold => "thresholds",
        }
    }
}

impl Client {
    async fn pm(&self, method: Method, rest: &str, body: Body) -> Result<crate::client::Reply> {
        let url = self.url(&format!("vnfpm/v2/{rest}"))?;
        self.send(Api::Vnfpm, MAJOR, method, url, body, "application/json").await
    }

    /// POST a CreatePmJobRequest or CreateThresholdRequest; the PmJob or Threshold created.
    pub async fn create_pm(&self, resource: PmResource, body: Value) -> Result<Value> {
        let reply = self.pm(Method::POST, resource.collection(), Body::Json(body)).await?;
        if reply.body.is_empty() {
            return Err(Error::Unexpected(format!("create answered {} with no body", reply.status)));
        }
        reply.json()
    }

    pub async fn list_pm(&self, resource: PmResource, query: &ListQuery) -> Result<Vec<Value>> {
        let mut url = self.url(&format!("vnfpm/v2/{}", resource.collection()))?;
        query.apply(&mut url);
        self.get_list(Api::Vnfpm, MAJOR, url).await
    }

    pub async fn show_pm(&self, resource: PmResource, id: &str) -> Result<Value> {
        self.get_json(Api::Vnfpm, MAJOR, &format!("vnfpm/v2/{}/{}", resource.collection(), id_segment(id))).await
    }

    /// PATCH a PmJobModifications or ThresholdModifications (JSON Merge Patch); the
    /// modifications answered.
    pub async fn update_pm(&self, resource: PmResource, id: &str, body: Value) -> Result<Value> {
        let rest = format!("{}/{}", resource.collection(), id_segment(id));
        self.pm(Method::PATCH, &rest, Body::MergePatch(body)).await?.json()
    }

    pub async fn delete_pm(&self, resource: PmResource, id: &str) -> Result<()> {
        let rest = format!("{}/{}", resource.collection(), id_segment(id));
        self.pm(Method::DELETE, &rest, Body::None).await.map(drop)
    }

    /// A PM job's PerformanceReport.
    pub async fn show_pm_report(&self, job_id: &str, report_id: &str) -> Result<Value> {
        let path = format!("vnfpm/v2/pm_jobs/{}/reports/{}", id_segment(job_id), id_segment(report_id));
        self.get_json(Api::Vnfpm, MAJOR, &path).await
    }
}

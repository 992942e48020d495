//! VNF fault management (SOL003 clause 7, `/vnffm/v1`): alarms and FM subscriptions.

use reqwest::Method;
use serde_json::{Value, json};

use crate::client::{Body, Client};
use crate::error::{Error, Result};
use crate::lcm::{ListQuery, id_segment};
use crate::versions::Api;

const MAJOR: u64 = 1;

impl Client {
    async fn fm(&self, method: Method, rest: &str, body: Body) -> Result<crate::client::Reply> {
        let url = self.url(&format!("vnffm/v1/{rest}"))?;
        self.send(Api::Vnffm, MAJOR, method, url, body, "application/json").await
    }

    async fn fm_list(&self, rest: &str, query: &ListQuery) -> Result<Vec<Value>> {
        let mut url = self.url(&format!("vnffm/v1/{rest}"))?;
        query.apply(&mut url);
        self.get_list(Api::Vnffm, MAJOR, url).await
    }

    pub async fn list_alarms(&self, query: &ListQuery) -> Result<Vec<Value>> {
        self.fm_list("alarms", query).await
    }

    pub async fn show_alarm(&self, id: &str) -> Result<Value> {
        self.get_json(Api::Vnffm, MAJOR, &format!("vnffm/v1/alarms/{}", id_segment(id))).await
    }

    /// PATCH the alarm's `ackState` (JSON Merge Patch); the AlarmModifications answered.
    pub async fn update_alarm(&self, id: &str, ack_state: &str) -> Result<Value> {
        let body = Body::MergePatch(json!({ "ackState": ack_state }));
        self.fm(Method::PATCH, &format!("alarms/{}", id_segment(id)), body).await?.json()
    }

    pub async fn create_fm_subscription(&self, body: Value) -> Result<Value> {
        let reply = self.fm(Method::POST, "subscriptions", Body::Json(body)).await?;
        if reply.body.is_empty() {
            return Err(Error::Unexpected(format!("subscription create answered {} with no body", reply.status)));
        }
        reply.json()
    }

    pub async fn list_fm_subscriptions(&self, query: &ListQuery) -> Result<Vec<Value>> {
        self.fm_list("subscriptions", query).await
    }

    pub async fn show_fm_subscription(&self, id: &str) -> Result<Value> {
        self.get_json(Api::Vnffm, MAJOR, &format!("vnffm/v1/subscriptions/{}", id_segment(id))).await
    }

    pub async fn delete_fm_subscription(&self, id: &str) -> Result<()> {
        self.fm(Method::DELETE, &format!("subscriptions/{}", id_segment(id)), Body::None).await.map(drop)
    }
}

//! VNF LCM (SOL003 clause 5): instances, their tasks, operation occurrences and
//! subscriptions, in the configured major.

use reqwest::Method;
use serde_json::Value;
use url::Url;

use crate::client::{Accepted, Body, Client};
use crate::error::{Error, Result};
use crate::versions::Api;

/// SOL013 clause 5.2/5.3 query parameters of a list.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ListQuery {
    pub filter: Option<String>,
    pub all_fields: bool,
    pub fields: Option<String>,
    pub exclude_fields: Option<String>,
    pub exclude_default: bool,
}

impl ListQuery {
    pub fn filter(filter: impl Into<String>) -> ListQuery {
        ListQuery { filter: Some(filter.into()), ..ListQuery::default() }
    }

    pub(crate) fn apply(&self, url: &mut Url) {
        let mut pairs = url.query_pairs_mut();
        if let Some(filter) = &self.filter {
            pairs.append_pair("filter", filter);
        }
        if self.all_fields {
            pairs.append_key_only("all_fields");
        }
        if let Some(fields) = &self.fields {
            pairs.append_pair("fields", fields);
        }
        if let Some(exclude) = &self.exclude_fields {
            pairs.append_pair("exclude_fields", exclude);
        }
        if self.exclude_default {
            pairs.append_key_only("exclude_default");
        }
        drop(pairs);
        if url.query() == Some("") {
            url.set_query(None);
        }
    }
}

/// The tasks of an operation occurrence (SOL003 clauses 5.4.14–5.4.17).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpAction {
    Retry,
    Rollback,
    Fail,
    Cancel,
}

impl OpAction {
    fn path(self) -> &'static str {
        match self {
            OpAction::Retry => "retry",
            OpAction::Rollback => "rollback",
            OpAction::Fail => "fail",
            OpAction::Cancel => "cancel",
        }
    }
}

/// What a path segment must escape (RFC 3986 clause 3.3).
const SEGMENT: &percent_encoding::AsciiSet =
    &percent_encoding::CONTROLS.add(b' ').add(b'/').add(b'?').add(b'#').add(b'%').add(b'"').add(b'<').add(b'>');

/// An id (or artifact path segment) inside a path.
pub(crate) fn id_segment(id: &str) -> String {
    percent_encoding::utf8_percent_encode(id, SEGMENT).to_string()
}

impl Client {
    fn lcm_path(&self, rest: &str) -> String {
        format!("vnflcm/v{}/{rest}", self.lcm_major())
    }

    async fn lcm(&self, method: Method, rest: &str, body: Body) -> Result<crate::client::Reply> {
        let url = self.url(&self.lcm_path(rest))?;
        self.send(Api::Vnflcm, self.lcm_major(), method, url, body, "application/json").await
    }

    async fn lcm_list(&self, rest: &str, query: &ListQuery) -> Result<Vec<Value>> {
        let mut url = self.url(&self.lcm_path(rest))?;
        query.apply(&mut url);
        self.get_list(Api::Vnflcm, self.lcm_major(), url).await
    }

    /// POST vnf_instances (201, the new VnfInstance).
    pub async fn create_instance(&self, body: Value) -> Result<Value> {
        self.lcm(Method::POST, "vnf_instances", Body::Json(body)).await?.json()
    }

    pub async fn list_instances(&self, query: &ListQuery) -> Result<Vec<Value>> {
        self.lcm_list("vnf_instances", query).await
    }

    pub async fn show_instance(&self, id: &str) -> Result<Value> {
        self.get_json(Api::Vnflcm, self.lcm_major(), &self.lcm_path(&format!("vnf_instances/{}", id_segment(id)))).await
    }

    /// PATCH of the instance (a MODIFY_INFO operation); `if_match` an ETag from a GET.
    pub async fn modify_instance(&self, id: &str, body: Value, if_match: Option<&str>) -> Result<Accepted> {
        let url = self.url(&self.lcm_path(&format!("vnf_instances/{}", id_segment(id))))?;
        let reply = match if_match {
            None => {
                self.send(Api::Vnflcm, self.lcm_major(), Method::PATCH, url, Body::MergePatch(body), "application/json")
                    .await?
            }
            Some(etag) => self.send_if_match(url, body, etag).await?,
        };
        Ok(Client::location(&reply))
    }

    async fn send_if_match(&self, url: Url, body: Value, etag: &str) -> Result<crate::client::Reply> {
        self.send_with_header(
            Api::Vnflcm,
            self.lcm_major(),
            Method::PATCH,
            url,
            Body::MergePatch(body),
            ("If-Match", etag),
        )
        .await
    }

    pub async fn delete_instance(&self, id: &str) -> Result<()> {
        self.lcm(Method::DELETE, &format!("vnf_instances/{}", id_segment(id)), Body::None).await.map(drop)
    }

    /// POST vnf_instances/{id}/{task} (instantiate, terminate, scale, heal,
    /// change_ext_conn, change_vnfpkg, change_flavour, operate, scale_to_level).
    pub async fn instance_task(&self, id: &str, task: &str, body: Value) -> Result<Accepted> {
        let reply =
            self.lcm(Method::POST, &format!("vnf_instances/{}/{task}", id_segment(id)), Body::Json(body)).await?;
        Ok(Client::location(&reply))
    }

    pub async fn list_operations(&self, query: &ListQuery) -> Result<Vec<Value>> {
        self.lcm_list("vnf_lcm_op_occs", query).await
    }

    pub async fn show_operation(&self, id: &str) -> Result<Value> {
        self.get_json(Api::Vnflcm, self.lcm_major(), &self.lcm_path(&format!("vnf_lcm_op_occs/{}", id_segment(id))))
            .await
    }

    /// GET of an occurrence by the URL the server gave (`Location`).
    pub async fn show_operation_at(&self, href: &str) -> Result<Value> {
        let url = self.resolve(href)?;
        let major = if url.path().contains("/vnflcm/v1/") { 1 } else { self.lcm_major() };
        self.send(Api::Vnflcm, major, Method::GET, url, Body::None, "application/json").await?.json()
    }

    /// retry, rollback, cancel (202) or fail (200, the occurrence, returned).
    pub async fn operation_task(&self, id: &str, action: OpAction, body: Option<Value>) -> Result<Option<Value>> {
        let rest = format!("vnf_lcm_op_occs/{}/{}", id_segment(id), action.path());
        let reply = self.lcm(Method::POST, &rest, body.map_or(Body::None, Body::Json)).await?;
        if action == OpAction::Fail && !reply.body.is_empty() {
            return reply.json().map(Some);
        }
        Ok(None)
    }

    pub async fn create_subscription(&self, body: Value) -> Result<Value> {
        let reply = self.lcm(Method::POST, "subscriptions", Body::Json(body)).await?;
        if reply.body.is_empty() {
            return Err(Error::Unexpected(format!("subscription create answered {} with no body", reply.status)));
        }
        reply.json()
    }

    pub async fn list_subscriptions(&self, query: &ListQuery) -> Result<Vec<Value>> {
        self.lcm_list("subscriptions", query).await
    }

    pub async fn show_subscription(&self, id: &str) -> Result<Value> {
        self.get_json(Api::Vnflcm, self.lcm_major(), &self.lcm_path(&format!("subscriptions/{}", id_segment(id)))).await
    }

    pub async fn delete_subscription(&self, id: &str) -> Result<()> {
        self.lcm(Method::DELETE, &format!("subscriptions/{}", id_segment(id)), Body::None).await.map(drop)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn list_queries_as_tacker_sends_them() {
        let mut url = Url::parse("http://h/vnfpkgm/v1/vnf_packages").unwrap();
        ListQuery { filter: Some("(eq,onboardingState,ONBOARDED)".into()), all_fields: true, ..Default::default() }
            .apply(&mut url);
        assert_eq!(url.query(), Some("filter=%28eq%2ConboardingState%2CONBOARDED%29&all_fields"));
        let mut plain = Url::parse("http://h/x").unwrap();
        ListQuery::default().apply(&mut plain);
        assert_eq!(plain.as_str(), "http://h/x");
    }
}

//! One row of a resource table: everything solgate knows about one method on one path.
//! Registration, authorization, response validation and the OpenAPI documents all read
//! these rows (see [`super`]).

use std::borrow::Cow;

use actix_web::Route;
use actix_web::http::Method;
use solgate_schemas::{Api, ApiVersionId};

use crate::sol013::responses::Shape;

/// What the success answer's body is, for the OpenAPI document and response validation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Body {
    Schema(&'static str),
    Array(&'static str),
    /// A file: media types and a binary string.
    File(&'static [&'static str]),
}

/// The request body an operation takes (OpenAPI `requestBody`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Request {
    /// The schema of the negotiated version's dictionary; `""` for a binary body.
    pub schema: &'static str,
    pub media: &'static str,
    pub required: bool,
}

/// Turns `web::method(m)` into the route of the handler.
pub type Handler = Box<dyn Fn(Route) -> Route + Send + Sync>;

pub struct Endpoint {
    pub method: Method,
    /// The template relative to the table's prefix (`/vnf_instances/{vnfInstanceId}`).
    pub path: Cow<'static, str>,
    pub(super) handler: Handler,
    /// The operation's name in Tacker's rule names and in SOL013 scopes (`index`,
    /// `instantiate`, `subscription_create`, ...). `""`: no policy (outside the APIs).
    pub action: &'static str,
    /// Tacker's policy rule name, from the table's naming (`Table::new`).
    pub rule: String,
    /// The first minor of the major that has the row; before it the path is unknown (404).
    pub since: Option<ApiVersionId>,
    /// The first minor that no longer has it.
    pub until: Option<ApiVersionId>,
    /// Registered once for every major of the API as `/{api}/v{major}{path}`, before the
    /// majors' scopes (api_versions, openapi.json).
    pub shared: bool,
    /// Described in the major's OpenAPI document.
    pub documented: bool,
    pub summary: Cow<'static, str>,
    pub request: Option<Request>,
    pub success: u16,
    pub returns: Option<Body>,
    /// Response headers of the success answer (`Location`, `ETag`).
    pub headers: &'static [&'static str],
}

impl Endpoint {
    pub fn new(
        method: Method,
        path: impl Into<Cow<'static, str>>,
        action: &'static str,
        handler: impl Fn(Route) -> Route + Send + Sync + 'static,
    ) -> Self {
        Endpoint {
            method,
            path: path.into(),
            handler: Box::new(handler),
            action,
            rule: String::new(),
            since: None,
            until: None,
            shared: false,
            documented: false,
            summary: Cow::Borrowed(""),
            request: None,
            success: 200,
            returns: None,
            headers: &[],
        }
    }

    pub fn get(
        path: &'static str,
        action: &'static str,
        handler: impl Fn(Route) -> Route + Send + Sync + 'static,
    ) -> Self {
        Self::new(Method::GET, path, action, handler)
    }

    pub fn post(
        path: &'static str,
        action: &'static str,
        handler: impl Fn(Route) -> Route + Send + Sync + 'static,
    ) -> Self {
        Self::new(Method::POST, path, action, handler)
    }

    pub fn put(
        path: &'static str,
        action: &'static str,
        handler: impl Fn(Route) -> Route + Send + Sync + 'static,
    ) -> Self {
        Self::new(Method::PUT, path, action, handler)
    }

    pub fn patch(
        path: &'static str,
        action: &'static str,
        handler: impl Fn(Route) -> Route + Send + Sync + 'static,
    ) -> Self {
        Self::new(Method::PATCH, path, action, handler)
    }

    pub fn delete(
        path: &'static str,
        action: &'static str,
        handler: impl Fn(Route) -> Route + Send + Sync + 'static,
    ) -> Self {
        Self::new(Method::DELETE, path, action, handler)
    }

    /// Described in the OpenAPI document: its summary and success status.
    pub fn doc(mut self, summary: impl Into<Cow<'static, str>>, success: u16) -> Self {
        self.documented = true;
        self.summary = summary.into();
        self.success = success;
        self
    }

    /// The success status, for a row the OpenAPI document leaves out.
    pub fn success(mut self, success: u16) -> Self {
        self.success = success;
        self
    }

    /// A JSON request body of the schema.
    pub fn request(self, schema: &'static str) -> Self {
        self.request_as(schema, "application/json", true)
    }

    /// A JSON Merge Patch body (RFC 7396) of the schema.
    pub fn merge_patch(self, schema: &'static str) -> Self {
        self.request_as(schema, "application/merge-patch+json", true)
    }

    pub fn request_as(mut self, schema: &'static str, media: &'static str, required: bool) -> Self {
        self.request = Some(Request { schema, media, required });
        self
    }

    pub fn returns(mut self, body: Body) -> Self {
        self.returns = Some(body);
        self
    }

    pub fn headers(mut self, headers: &'static [&'static str]) -> Self {
        self.headers = headers;
        self
    }

    pub fn since(mut self, since: Option<ApiVersionId>) -> Self {
        self.since = since;
        self
    }

    pub fn shared(mut self) -> Self {
        self.shared = true;
        self
    }

    /// Whether the minor has the row.
    pub fn in_version(&self, version: ApiVersionId) -> bool {
        self.since.is_none_or(|since| version >= since) && self.until.is_none_or(|until| version < until)
    }

    /// A list: the SOL013 selectors and paging apply.
    pub fn is_list(&self) -> bool {
        matches!(self.returns, Some(Body::Array(_)))
    }

    /// The schema a successful body with `status` must satisfy: a GET's for every
    /// status, another method's for its success status only.
    pub fn shape(&self, status: u16) -> Option<Shape> {
        if self.method != Method::GET && status != self.success {
            return None;
        }
        match self.returns? {
            Body::Schema(schema) => Some(Shape { schema, list: false }),
            Body::Array(schema) => Some(Shape { schema, list: true }),
            Body::File(_) => None,
        }
    }
}

/// How a table names the policy rule of a row from its resource (the first segment of
/// its path) and action.
pub type RuleNaming = fn(resource: &str, action: &str) -> String;

/// One table: the rows under one prefix (`/vnflcm/v2`, `/vnflcm` for the api_versions of
/// every major, `/v1.0`, or `""` for the operational routes).
pub struct Table {
    pub prefix: String,
    /// The SOL013 API whose schemas validate the responses and describe the OpenAPI
    /// document (`None`: the VIM registry, the operational routes).
    pub api: Option<Api>,
    pub major: Option<u64>,
    /// The API and major SOL013 scopes name (`vnflcm:v2:...`, `nfvo:v1:...`); `None`
    /// outside the APIs. An API's api_versions of every major is covered by any scope of
    /// the API (major `None`).
    pub scope: Option<(&'static str, Option<u64>)>,
    pub endpoints: Vec<Endpoint>,
}

impl Table {
    /// A table whose rows' rule names `naming` computes.
    pub fn new(
        prefix: String,
        api: Option<Api>,
        major: Option<u64>,
        naming: RuleNaming,
        endpoints: Vec<Endpoint>,
    ) -> Self {
        let endpoints = endpoints
            .into_iter()
            .map(|mut endpoint| {
                if !endpoint.action.is_empty() {
                    let resource = endpoint.path.trim_start_matches('/').split('/').next().unwrap_or_default();
                    endpoint.rule = naming(resource, endpoint.action);
                }
                endpoint
            })
            .collect();
        let scope = api.map(|api| (api.as_str(), major));
        Table { prefix, api, major, scope, endpoints }
    }

    /// The table of the API's major (`/{api}/v{major}`).
    pub fn major(api: Api, major: u64, naming: RuleNaming, endpoints: Vec<Endpoint>) -> Self {
        Self::new(format!("/{api}/v{major}"), Some(api), Some(major), naming, endpoints)
    }

    /// Makes the table's scope that of `api` and `major` (the VIM registry's `nfvo:v1`).
    pub fn scoped_as(mut self, api: &'static str, major: u64) -> Self {
        self.scope = Some((api, Some(major)));
        self
    }
}

/// The tables of one API: the api_versions of every major, and one per major.
pub struct ApiTables {
    pub all: Table,
    pub majors: Vec<Table>,
}

//! The VIM registry (`/v1.0/vims`, Tacker's legacy NFVO API: no `Version` header, bodies
//! wrapped in `{"vim": …}` / `{"vims": […]}`).

use reqwest::Method;
use serde_json::{Value, json};

use crate::client::{Body, Client};
use crate::error::{Error, Result};
use crate::lcm::id_segment;

impl Client {
    async fn vims(&self, method: Method, rest: &str, body: Body) -> Result<crate::client::Reply> {
        self.exchange(method, self.url(&format!("v1.0/{rest}"))?, None, body, "application/json").await
    }

    /// POST /v1.0/vims: registers a VIM (the server checks that it answers); the VIM.
    pub async fn register_vim(&self, vim: Value) -> Result<Value> {
        unwrap(self.vims(Method::POST, "vims", Body::Json(json!({ "vim": vim }))).await?.json()?, "vim")
    }

    pub async fn list_vims(&self) -> Result<Vec<Value>> {
        let vims = unwrap(self.vims(Method::GET, "vims", Body::None).await?.json()?, "vims")?;
        vims.as_array().cloned().ok_or_else(|| Error::Unexpected(format!("`vims` is not a list: {vims}")))
    }

    pub async fn show_vim(&self, id: &str) -> Result<Value> {
        unwrap(self.vims(Method::GET, &format!("vims/{}", id_segment(id)), Body::None).await?.json()?, "vim")
    }

    /// PUT /v1.0/vims/{id} with the attributes to change; the VIM.
    pub async fn update_vim(&self, id: &str, changes: Value) -> Result<Value> {
        let rest = format!("vims/{}", id_segment(id));
        unwrap(self.vims(Method::PUT, &rest, Body::Json(json!({ "vim": changes }))).await?.json()?, "vim")
    }

    pub async fn delete_vim(&self, id: &str) -> Result<()> {
        self.vims(Method::DELETE, &format!("vims/{}", id_segment(id)), Body::None).await.map(drop)
    }
}

fn unwrap(mut body: Value, key: &str) -> Result<Value> {
    body.get_mut(key).map(Value::take).ok_or_else(|| Error::Unexpected(format!("no `{key}` in the answer: {body}")))
}

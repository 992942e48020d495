//! What every API's subscription creation shares (SOL003 clause 5.4.18.3.1, SOL005 clause
//! 9.4.8.3.1): the callback URI and its `authentication` read and checked, the callback
//! test, credentials sealed before they are stored, and the 303 See Other of a duplicate.
//! The documents, tables and dedup keys stay each API's own.

use actix_web::HttpResponse;
use actix_web::http::header;
use serde_json::Value;
use solgate_core::callbacks::CallbackAuth;

use crate::error::{ApiError, ApiResult};
use crate::state::AppState;

/// A subscription request's callback, checked as far as it can be without the network.
pub struct Callback {
    pub uri: String,
    /// `authentication` as the client sent it (in clear until [`Callback::sealed`]).
    authentication: Option<Value>,
    auth: CallbackAuth,
}

impl Callback {
    /// Reads `callbackUri` and `authentication` of a schema-valid request: the URI against
    /// the egress policy, the credentials as [`solgate_core::callbacks::Callbacks::auth_of`]
    /// reads them (400 / 422).
    pub fn read(state: &AppState, request: &Value) -> ApiResult<Callback> {
        let uri = request["callbackUri"].as_str().unwrap_or_default().to_owned();
        state.outbound.policy().check_uri("callbackUri", &uri).map_err(ApiError::from)?;
        let authentication = request.get("authentication").filter(|value| !value.is_null()).cloned();
        let auth = state.callbacks.auth_of(authentication.as_ref()).map_err(ApiError::from)?;
        Ok(Callback { uri, authentication, auth })
    }

    /// The checks that need the network: the addresses the URIs resolve to, then the
    /// callback test (GET, 204 expected) with the credentials and `Version` notifications
    /// will carry, unless `[notifications] test_callback_uri = false`. Any failure is a 422.
    pub async fn verify(&self, state: &AppState, version: &str) -> ApiResult<()> {
        state.callbacks.check_uris(&self.uri, &self.auth).await.map_err(ApiError::from)?;
        if state.callbacks.settings().test_callback_uri {
            state.callbacks.test_callback(&self.uri, &self.auth, version).await.map_err(ApiError::from)?;
        }
        Ok(())
    }

    /// The credentials to store, sealed (`[secrets]`); never part of a shown document.
    pub fn sealed(self, state: &AppState) -> Option<Value> {
        let mut authentication = self.authentication;
        if let Some(clear) = authentication.as_mut() {
            state.secrets.seal(clear);
        }
        authentication
    }
}

/// 303 See Other to an existing subscription: `Location`, no body.
pub fn see_other(location: String) -> HttpResponse {
    HttpResponse::SeeOther().insert_header((header::LOCATION, location)).finish()
}

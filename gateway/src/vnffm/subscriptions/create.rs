use actix_web::http::header;
use actix_web::{HttpResponse, web};
use serde_json::{Map, Value, json};
use solgate_core::{PRIVATE_KEY, notify, now};
use solgate_db::repo::fm_subscriptions::{self, FmSubscriptionRecord};
use solgate_db::write_transaction;

use super::rendered;
use crate::common::Tenant;
use crate::common::callback::{Callback, see_other};
use crate::error::{ApiError, ApiResult};
use crate::sol013::{JsonBody, Negotiated};
use crate::state::AppState;
use crate::vnflcm::common::validate;

/// POST /vnffm/v1/subscriptions: 201 with the FmSubscription and `Location`, or 303 to the
/// existing duplicate.
pub async fn create(
    state: web::Data<AppState>,
    negotiated: Negotiated,
    tenant: Tenant,
    body: JsonBody,
) -> ApiResult<HttpResponse> {
    let request = body.0;
    validate(&negotiated, "FmSubscriptionRequest", &request)?;
    let callback = Callback::read(&state, &request)?;
    let filter = request.get("filter").filter(|value| !value.is_null()).cloned();
    let project = tenant.subscription_project().to_owned();
    // FmSubscription has no verbosity: the callback URI and the filter make a duplicate.
    let dedup_key = notify::scoped_dedup_key(
        &project,
        notify::dedup_key_of(&callback.uri, filter.as_ref().unwrap_or(&Value::Null), &[]),
    );

    // A duplicate is answered before the callback is tested: it has passed the test.
    let key = dedup_key.clone();
    let existing = state.db(move |conn| Ok(fm_subscriptions::find_by_dedup_key(conn, &key)?)).await?;
    if let Some(existing) = existing {
        return Ok(see_other(state.links.fm_subscription(&existing.id)));
    }
    callback.verify(&state, &negotiated.version()).await?;

    let id = uuid::Uuid::new_v4().to_string();
    let mut document = Map::new();
    document.insert("id".into(), json!(id));
    if let Some(filter) = &filter {
        document.insert("filter".into(), filter.clone());
    }
    document.insert("callbackUri".into(), json!(callback.uri));
    // Notifications carry the version the subscription was made with (docs/notifications.md).
    document.insert(PRIVATE_KEY.into(), json!({ notify::VERSION_KEY: negotiated.version() }));
    let record = FmSubscriptionRecord {
        id,
        callback_uri: callback.uri.clone(),
        body: Value::Object(document),
        authentication: callback.sealed(&state),
        dedup_key,
        created_at: now(),
        project,
    };
    let stored = record.clone();
    let duplicate = state
        .db(move |conn| {
            write_transaction(conn, |conn| match fm_subscriptions::insert(conn, &stored) {
                Ok(()) => Ok(None),
                // The same request raced us; the unique index has the last word.
                Err(error) if error.is_unique_violation() => {
                    Ok(fm_subscriptions::find_by_dedup_key(conn, &stored.dedup_key)?)
                }
                Err(error) => Err(ApiError::internal(error)),
            })
        })
        .await?;
    if let Some(existing) = duplicate {
        return Ok(see_other(state.links.fm_subscription(&existing.id)));
    }
    tracing::info!(subscription = %record.id, "VNF FM subscription created");
    Ok(HttpResponse::Created()
        .insert_header((header::LOCATION, state.links.fm_subscription(&record.id)))
        .content_type("application/json")
        .body(rendered(&state, &negotiated, &record).to_string()))
}

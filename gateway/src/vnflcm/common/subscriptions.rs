//! LCM subscriptions (create, list, show, delete), shared by v1 and v2: each request works
//! on the tables of the major it negotiated, and the shapes come from that version's
//! schemas (v1's LccnSubscription has no `verbosity`).
//!
//! - A duplicate (same callback URI, filter and verbosity; see
//!   [`notify::dedup_key`]) is answered 303 See Other with the existing subscription's
//!   `Location` and no body (SOL003 clause 5.4.18.3.1 allows it; Tacker v1 does it, Tacker
//!   v2 creates duplicates: its defect 7).
//! - The callback is tested (GET, 204 expected) before the subscription exists, unless
//!   `[notifications] test_callback_uri = false`; any failure is a 422.
//! - `authentication` is kept apart from the document and never shown.

use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse};
use diesel::Connection;
use serde_json::{Map, Value, json};
use solgate_core::notify;
use solgate_core::{PRIVATE_KEY, now, without_private};
use solgate_db::repo::lcm::{self, LcmMajor, SubscriptionRecord, columns};
use solgate_db::repo::notifications;
use solgate_db::write_transaction;

use super::{db_error, major_of, present, validate};
use crate::common::callback::{self, Callback};
use crate::common::{Tenant, list};
use crate::error::{ApiError, ApiResult};
use crate::sol013::Negotiated;
use crate::state::AppState;

pub fn not_found(id: &str) -> ApiError {
    ApiError::not_found(format!("LccnSubscription {id} not found."))
}

/// Whether the negotiated version knows subscription verbosity (SOL003 v3.x; v2.6.1 sends
/// every notification in full).
fn has_verbosity(negotiated: &Negotiated) -> bool {
    negotiated
        .entry
        .dictionary
        .schema("LccnSubscriptionRequest")
        .is_some_and(|schema| schema["properties"].get("verbosity").is_some())
}

/// 303 See Other to an existing subscription: `Location`, no body.
fn see_other(state: &AppState, major: LcmMajor, id: &str) -> HttpResponse {
    callback::see_other(state.links.subscription(major.number(), id))
}

fn rendered(state: &AppState, negotiated: &Negotiated, major: LcmMajor, record: &SubscriptionRecord) -> Value {
    let links = present::subscription_links(&state.links, major.number(), &record.id);
    present::render(negotiated, "LccnSubscription", &record.body, links)
}

/// POST subscriptions: 201 with the LccnSubscription and `Location`, or 303 to the
/// existing duplicate.
pub async fn create(
    state: &AppState,
    negotiated: &Negotiated,
    tenant: &Tenant,
    body: Value,
) -> ApiResult<HttpResponse> {
    validate(negotiated, "LccnSubscriptionRequest", &body)?;
    let major = major_of(negotiated)?;
    let callback = Callback::read(state, &body)?;
    let callback_uri = callback.uri.clone();
    let verbosity = if has_verbosity(negotiated) { body["verbosity"].as_str().unwrap_or("FULL") } else { "FULL" };
    let filter = body.get("filter").filter(|value| !value.is_null()).cloned();
    let project = tenant.subscription_project().to_owned();
    let dedup_key = notify::scoped_dedup_key(
        &project,
        notify::dedup_key(&callback_uri, filter.as_ref().unwrap_or(&Value::Null), verbosity),
    );

    // A duplicate is answered before the callback is tested: it has passed the test.
    let key = dedup_key.clone();
    let existing = state.db(move |conn| Ok(lcm::find_subscription_by_dedup_key(conn, major, &key)?)).await?;
    if let Some(existing) = existing {
        return Ok(see_other(state, major, &existing.id));
    }
    callback.verify(state, &negotiated.version()).await?;

    let id = solgate_db::new_id();
    let mut document = Map::new();
    document.insert("id".into(), json!(id));
    if let Some(filter) = &filter {
        document.insert("filter".into(), filter.clone());
    }
    document.insert("callbackUri".into(), json!(callback_uri));
    if has_verbosity(negotiated) {
        document.insert("verbosity".into(), json!(verbosity));
    }
    // Notifications carry the version the subscription was made with (docs/notifications.md).
    document.insert(PRIVATE_KEY.into(), json!({ notify::VERSION_KEY: negotiated.version() }));
    let authentication = callback.sealed(state);
    let record = SubscriptionRecord {
        id,
        callback_uri,
        verbosity: verbosity.to_owned(),
        body: Value::Object(document),
        authentication,
        dedup_key,
        created_at: now(),
        project,
    };
    let stored = record.clone();
    let duplicate = state
        .db(move |conn| {
            // The insert in a savepoint: on PostgreSQL a failed statement would spoil the
            // transaction, and the duplicate must still be read.
            write_transaction(conn, |conn| {
                match conn.transaction(|conn| lcm::insert_subscription(conn, major, &stored)) {
                    Ok(()) => Ok(None),
                    // The same request raced us; the unique index has the last word.
                    Err(error) if error.is_unique_violation() => {
                        Ok(lcm::find_subscription_by_dedup_key(conn, major, &stored.dedup_key)?)
                    }
                    Err(error) => Err(db_error(error)),
                }
            })
        })
        .await?;
    if let Some(existing) = duplicate {
        return Ok(see_other(state, major, &existing.id));
    }
    tracing::info!(subscription = %record.id, major = major.number(), verbosity, "LCM subscription created");
    Ok(HttpResponse::Created()
        .insert_header((header::LOCATION, state.links.subscription(major.number(), &record.id)))
        .content_type("application/json")
        .body(rendered(state, negotiated, major, &record).to_string()))
}

/// GET subscriptions: filter and paging (SOL003 defines no attribute selectors here).
pub async fn list(state: &AppState, req: &HttpRequest, negotiated: &Negotiated) -> ApiResult<HttpResponse> {
    let major = major_of(negotiated)?;
    let query = list::parse(req, negotiated, "LccnSubscription")?;
    let page = list::run(
        state,
        req,
        &query,
        list::Source {
            columns: columns::SUBSCRIPTIONS,
            page_size: state.paging.subscription_page_size,
            fetch: move |conn: &mut solgate_db::AnyConnection, backend, spec: &_| {
                lcm::list_subscriptions(conn, backend, major, spec)
            },
            // The document holds no credentials: a filter cannot probe them.
            document: |record: &SubscriptionRecord| without_private(record.body.clone()),
            id: |record: &SubscriptionRecord| record.id.clone(),
        },
    )
    .await?;
    let entries = page.items.iter().map(|record| rendered(state, negotiated, major, record)).collect();
    Ok(list::respond(entries, page.next_link))
}

/// GET subscriptions/{id}.
pub async fn show(state: &AppState, negotiated: &Negotiated, tenant: &Tenant, id: String) -> ApiResult<HttpResponse> {
    let major = major_of(negotiated)?;
    let lookup = id.clone();
    let record = state
        .db(move |conn| Ok(lcm::find_subscription(conn, major, &lookup)?))
        .await?
        .filter(|record| tenant.sees(&record.project))
        .ok_or_else(|| not_found(&id))?;
    // A subscription never changes: its tag only tells representations apart.
    let body = rendered(state, negotiated, major, &record).to_string();
    Ok(HttpResponse::Ok()
        .insert_header((header::ETAG, crate::common::etag::digest_etag(&body)))
        .content_type("application/json")
        .body(body))
}

/// DELETE subscriptions/{id}: 204; its undelivered notifications go with it.
pub async fn delete(state: &AppState, negotiated: &Negotiated, tenant: &Tenant, id: String) -> ApiResult<HttpResponse> {
    let major = major_of(negotiated)?;
    let target = id.clone();
    let tenant = tenant.clone();
    let dropped = state
        .db(move |conn| {
            write_transaction(conn, |conn| {
                let visible =
                    lcm::find_subscription(conn, major, &target)?.is_some_and(|record| tenant.sees(&record.project));
                if !visible || !lcm::delete_subscription(conn, major, &target)? {
                    return Err(not_found(&target));
                }
                Ok(notifications::drop_for_subscription(conn, &target)?)
            })
        })
        .await?;
    tracing::info!(subscription = %id, dropped_notifications = dropped, "LCM subscription deleted");
    Ok(HttpResponse::NoContent().finish())
}

//! The subscription resources of the APIs whose subscription has no verbosity (VNF package
//! management, VNF FM), one implementation each API calls with its [`Table`] (the LCM
//! subscriptions, with verbosity and per major, have `vnflcm::common::subscriptions`):
//!
//! - a duplicate (same callback URI and filter, from the same project) is answered 303 See
//!   Other with the existing subscription's `Location`;
//! - the callback is tested (GET, 204 expected) before the subscription exists, unless
//!   `[notifications] test_callback_uri = false`; any failure is a 422;
//! - `authentication` is sealed, kept apart from the document and never shown;
//! - a subscription belongs to its creator's project and hears of that project's resources (an
//!   administrator's hears of every project's); another project's is 404.

use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse};
use diesel::Connection;
use serde_json::{Map, Value, json};
use solgate_core::links::{Links, href};
use solgate_core::{PRIVATE_KEY, notify, now, without_private};
use solgate_db::repo::notifications;
use solgate_db::repo::plain_subscriptions::PlainSubscriptionRecord;
use solgate_db::{AnyConnection, Backend, DbResult, write_transaction};
use solgate_sol013::ColumnSpec;

use crate::common::callback::{Callback, see_other};
use crate::common::{Tenant, list};
use crate::error::{ApiError, ApiResult};
use crate::sol013::Negotiated;
use crate::state::AppState;
use crate::vnflcm::common::{present, validate};

/// One API's subscriptions: its schema names, links and table.
pub struct Table {
    /// The resource's schema (`PkgmSubscription`); its 404 says `{resource} {id} not found.`
    pub resource: &'static str,
    /// The request's schema (`PkgmSubscriptionRequest`).
    pub request: &'static str,
    /// What the log calls one (`VNF package subscription`).
    pub what: &'static str,
    pub link: fn(&Links, &str) -> String,
    pub columns: &'static [ColumnSpec],
    pub insert: fn(&mut AnyConnection, &PlainSubscriptionRecord) -> DbResult<()>,
    pub find: fn(&mut AnyConnection, &str) -> DbResult<Option<PlainSubscriptionRecord>>,
    pub find_by_dedup_key: fn(&mut AnyConnection, &str) -> DbResult<Option<PlainSubscriptionRecord>>,
    pub delete: fn(&mut AnyConnection, &str) -> DbResult<bool>,
    pub list:
        fn(&mut AnyConnection, Backend, &solgate_db::repo::list::ListSpec) -> DbResult<Vec<PlainSubscriptionRecord>>,
}

impl Table {
    fn not_found(&self, id: &str) -> ApiError {
        ApiError::not_found(format!("{} {id} not found.", self.resource))
    }

    /// The subscription a client sees: rendered for the negotiated version, `_links` absolute.
    fn rendered(&self, state: &AppState, negotiated: &Negotiated, record: &PlainSubscriptionRecord) -> Value {
        let links = json!({ "self": href(&(self.link)(&state.links, &record.id)) });
        present::render(negotiated, self.resource, &record.body, links)
    }
}

/// POST subscriptions: 201 with the subscription and `Location`, or 303 to the existing duplicate.
pub async fn create(
    state: &AppState,
    negotiated: &Negotiated,
    tenant: &Tenant,
    request: Value,
    table: &'static Table,
) -> ApiResult<HttpResponse> {
    validate(negotiated, table.request, &request)?;
    let callback = Callback::read(state, &request)?;
    let filter = request.get("filter").filter(|value| !value.is_null()).cloned();
    let project = tenant.subscription_project().to_owned();
    // No verbosity: the callback URI and the filter make a duplicate.
    let dedup_key = notify::scoped_dedup_key(
        &project,
        notify::dedup_key_of(&callback.uri, filter.as_ref().unwrap_or(&Value::Null), &[]),
    );

    // A duplicate is answered before the callback is tested: it has passed the test.
    let key = dedup_key.clone();
    let existing = state.db(move |conn| Ok((table.find_by_dedup_key)(conn, &key)?)).await?;
    if let Some(existing) = existing {
        return Ok(see_other((table.link)(&state.links, &existing.id)));
    }
    callback.verify(state, &negotiated.version()).await?;

    let id = solgate_db::new_id();
    let mut document = Map::new();
    document.insert("id".into(), json!(id));
    if let Some(filter) = &filter {
        document.insert("filter".into(), filter.clone());
    }
    document.insert("callbackUri".into(), json!(callback.uri));
    // Notifications carry the version the subscription was made with (docs/notifications.md).
    document.insert(PRIVATE_KEY.into(), json!({ notify::VERSION_KEY: negotiated.version() }));
    let record = PlainSubscriptionRecord {
        id,
        callback_uri: callback.uri.clone(),
        body: Value::Object(document),
        authentication: callback.sealed(state),
        dedup_key,
        created_at: now(),
        project,
    };
    let stored = record.clone();
    let duplicate = state
        .db(move |conn| {
            // The insert in a savepoint: on PostgreSQL a failed statement would spoil the
            // transaction, and the duplicate must still be read.
            write_transaction(conn, |conn| match conn.transaction(|conn| (table.insert)(conn, &stored)) {
                Ok(()) => Ok(None),
                // The same request raced us; the unique index has the last word.
                Err(error) if error.is_unique_violation() => Ok((table.find_by_dedup_key)(conn, &stored.dedup_key)?),
                Err(error) => Err(ApiError::internal(error)),
            })
        })
        .await?;
    if let Some(existing) = duplicate {
        return Ok(see_other((table.link)(&state.links, &existing.id)));
    }
    tracing::info!(subscription = %record.id, "{} created", table.what);
    Ok(HttpResponse::Created()
        .insert_header((header::LOCATION, (table.link)(&state.links, &record.id)))
        .content_type("application/json")
        .body(table.rendered(state, negotiated, &record).to_string()))
}

/// GET subscriptions: SOL013 filter and paging (no attribute selectors: SOL003 and SOL005
/// define none here); a non-admin sees its own project's only.
pub async fn list(
    state: &AppState,
    req: &HttpRequest,
    negotiated: &Negotiated,
    table: &'static Table,
) -> ApiResult<HttpResponse> {
    let query = list::parse(req, negotiated, table.resource)?;
    let page = list::run(
        state,
        req,
        &query,
        list::Source {
            columns: table.columns,
            page_size: state.paging.subscription_page_size,
            fetch: table.list,
            // The document holds no credentials: a filter cannot probe them.
            document: |record: &PlainSubscriptionRecord| without_private(record.body.clone()),
            id: |record: &PlainSubscriptionRecord| record.id.clone(),
        },
    )
    .await?;
    let entries = page.items.iter().map(|record| table.rendered(state, negotiated, record)).collect();
    Ok(list::respond(entries, page.next_link))
}

/// GET subscriptions/{id}: 404 also for another project's.
pub async fn show(
    state: &AppState,
    negotiated: &Negotiated,
    tenant: &Tenant,
    id: String,
    table: &'static Table,
) -> ApiResult<HttpResponse> {
    let lookup = id.clone();
    let record = state
        .db(move |conn| Ok((table.find)(conn, &lookup)?))
        .await?
        .filter(|record| tenant.sees(&record.project))
        .ok_or_else(|| table.not_found(&id))?;
    // A subscription never changes: its tag only tells representations apart.
    let body = table.rendered(state, negotiated, &record).to_string();
    Ok(HttpResponse::Ok()
        .insert_header((header::ETAG, crate::common::etag::digest_etag(&body)))
        .content_type("application/json")
        .body(body))
}

/// DELETE subscriptions/{id}: 204; its undelivered notifications go with it.
pub async fn delete(state: &AppState, tenant: Tenant, id: String, table: &'static Table) -> ApiResult<HttpResponse> {
    let target = id.clone();
    let dropped = state
        .db(move |conn| {
            write_transaction(conn, |conn| {
                let visible = (table.find)(conn, &target)?.is_some_and(|record| tenant.sees(&record.project));
                if !visible || !(table.delete)(conn, &target)? {
                    return Err(table.not_found(&target));
                }
                Ok(notifications::drop_for_subscription(conn, &target)?)
            })
        })
        .await?;
    tracing::info!(subscription = %id, dropped_notifications = dropped, "{} deleted", table.what);
    Ok(HttpResponse::NoContent().finish())
}

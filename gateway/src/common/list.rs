//! List execution shared by every collection: the SOL013 query (filter, selectors,
//! paging marker) parsed against the negotiated version's schema, the filter's simple
//! parts pushed into SQL, the rest applied in memory, keyset paging ordered by id, and
//! the `Link` header to the next page.

use actix_web::HttpRequest;
use actix_web::http::header;
use serde_json::Value;
use solgate_db::repo::list::ListSpec;
use solgate_db::{AnyConnection, Backend, DbResult};
use solgate_sol013::{ColumnSpec, ListQuery, Sol013Error};

use crate::error::{ApiError, ApiResult};
use crate::sol013::Negotiated;
use crate::state::AppState;

/// A query error is the client's (400), with the SOL013 text.
pub fn query_error(error: &Sol013Error) -> ApiError {
    ApiError::bad_request(error.to_string())
}

/// Parses the query string for a list of `resource` under the negotiated version.
pub fn parse(req: &HttpRequest, negotiated: &Negotiated, resource: &str) -> ApiResult<ListQuery> {
    // Borrowed: a resource schema with its $defs is large, and this runs per request.
    static NO_SCHEMA: Value = Value::Null;
    let schema = negotiated.entry.dictionary.schema(resource).unwrap_or(&NO_SCHEMA);
    let defaults = solgate_sol013::QueryLimits::default();
    let state = req.app_data::<actix_web::web::Data<AppState>>();
    let limits = state.map_or(&defaults, |state| &state.query_limits);
    ListQuery::parse_limited(req.query_string(), schema, limits).map_err(|error| query_error(&error))
}

/// One page of stored documents (scrubbed of nothing yet) plus the next-page link.
pub struct Page<R> {
    pub items: Vec<R>,
    pub next_link: Option<String>,
}

/// Where a list's rows come from: `fetch` loads rows in id order after `after_id`;
/// `document` gives the stored document a residual filter is evaluated on; `id` the
/// row's id; `columns` the attributes SQL can filter on.
pub struct Source<F, D, I> {
    pub columns: &'static [ColumnSpec],
    pub page_size: usize,
    pub fetch: F,
    pub document: D,
    pub id: I,
}

/// Runs a list query.
pub async fn run<R, F, D, I>(
    state: &AppState,
    req: &HttpRequest,
    query: &ListQuery,
    source: Source<F, D, I>,
) -> ApiResult<Page<R>>
where
    R: Send + 'static,
    F: Fn(&mut AnyConnection, Backend, &ListSpec) -> DbResult<Vec<R>> + Send + 'static,
    D: Fn(&R) -> Value + Send + 'static,
    I: Fn(&R) -> String + Send + 'static,
{
    run_sized(state, req, query, source, Rows::Documents).await
}

/// What a source's rows hold, which decides where a page of them is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rows {
    /// Stored documents: read on the blocking pool.
    Documents,
    /// Ids and stamps only: a page without an in-memory filter is one bounded range read of
    /// the id index, awaited in place where the backend allows it.
    Small,
}

/// As [`run`], with the size of the source's rows said.
pub async fn run_sized<R, F, D, I>(
    state: &AppState,
    req: &HttpRequest,
    query: &ListQuery,
    source: Source<F, D, I>,
    rows: Rows,
) -> ApiResult<Page<R>>
where
    R: Send + 'static,
    F: Fn(&mut AnyConnection, Backend, &ListSpec) -> DbResult<Vec<R>> + Send + 'static,
    D: Fn(&R) -> Value + Send + 'static,
    I: Fn(&R) -> String + Send + 'static,
{
    let Source { columns, page_size, fetch, document, id } = source;
    let (predicates, residual) = match &query.filter {
        Some(filter) => filter.split_for_columns(columns),
        None => (Vec::new(), None),
    };
    let paged = page_size > 0 && !query.all_records;
    let wanted = if paged { page_size + 1 } else { usize::MAX };
    let backend = state.db.backend();
    let after = query.marker.as_ref().map(|marker| marker.last_id.clone());
    // A non-admin's list holds its own project's rows only, so no filter can reveal others.
    let project = super::Tenant::of(req).scope().map(str::to_owned);
    let in_place = rows == Rows::Small && paged && residual.is_none();
    let work = move |conn: &mut AnyConnection| {
        let batch = if residual.is_some() { 500 } else { wanted.min(10_000) };
        let limit = i64::try_from(batch).unwrap_or(i64::MAX);
        let mut spec = ListSpec { predicates, after_id: after, limit, project };
        let mut kept: Vec<R> = Vec::new();
        loop {
            let rows = fetch(conn, backend, &spec).map_err(ApiError::internal)?;
            let exhausted = rows.len() < batch;
            let last_id = rows.last().map(&id);
            for row in rows {
                let keep = match &residual {
                    Some(filter) => {
                        let mut shown = document(&row);
                        super::scrub::scrub(&mut shown);
                        filter.matches(&shown)
                    }
                    None => true,
                };
                if keep {
                    kept.push(row);
                    if kept.len() >= wanted {
                        break;
                    }
                }
            }
            if kept.len() >= wanted || exhausted {
                break;
            }
            spec.after_id = last_id;
        }
        let more = paged && kept.len() > page_size;
        if more {
            kept.truncate(page_size);
        }
        let ids: Option<String> = kept.last().map(&id);
        Ok((kept, if more { ids } else { None }))
    };
    let (items, more) = if in_place { state.read(work).await? } else { state.db(work).await? };
    let next_link = more.map(|last_id| query.next_link(&state.public_endpoint, req.path(), &last_id));
    Ok(Page { items, next_link })
}

/// A key part naming the attribute selectors of a list (rendered entries depend on them).
pub fn selector_key(query: &ListQuery) -> String {
    let selector = &query.selector;
    let paths =
        |paths: &[solgate_sol013::AttrPath]| paths.iter().map(|path| path.as_str()).collect::<Vec<_>>().join(",");
    format!(
        "{}{}|{}|{}",
        u8::from(selector.all_fields()),
        u8::from(selector.exclude_default()),
        paths(selector.fields()),
        paths(selector.exclude_fields())
    )
}

/// The 200 response of a list of already serialized entries.
pub fn respond_serialized(entries: &[std::sync::Arc<str>], next_link: Option<String>) -> actix_web::HttpResponse {
    let mut body = String::with_capacity(entries.iter().map(|entry| entry.len() + 1).sum::<usize>() + 2);
    body.push('[');
    for (i, entry) in entries.iter().enumerate() {
        if i > 0 {
            body.push(',');
        }
        body.push_str(entry);
    }
    body.push(']');
    let mut response = actix_web::HttpResponse::Ok();
    response.content_type("application/json");
    if let Some(link) = next_link {
        response.insert_header((header::LINK, link));
    }
    response.body(body)
}

/// The 200 response of a list: a bare JSON array, `Link` to the next page if any.
pub fn respond(entries: Vec<Value>, next_link: Option<String>) -> actix_web::HttpResponse {
    let mut response = actix_web::HttpResponse::Ok();
    response.content_type("application/json");
    if let Some(link) = next_link {
        response.insert_header((header::LINK, link));
    }
    response.body(Value::Array(entries).to_string())
}

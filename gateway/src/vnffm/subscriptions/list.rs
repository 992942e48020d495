use actix_web::{HttpRequest, HttpResponse, web};
use solgate_core::without_private;
use solgate_db::repo::fm_subscriptions::{self, FmSubscriptionRecord};

use super::rendered;
use crate::common::list;
use crate::error::ApiResult;
use crate::sol013::Negotiated;
use crate::state::AppState;

/// GET /vnffm/v1/subscriptions: SOL013 filter and paging (clause 7.4.4.3.2 defines no
/// attribute selectors here); a non-admin sees its own project's only.
pub async fn list(state: web::Data<AppState>, req: HttpRequest, negotiated: Negotiated) -> ApiResult<HttpResponse> {
    let query = list::parse(&req, &negotiated, "FmSubscription")?;
    let page = list::run(
        &state,
        &req,
        &query,
        list::Source {
            columns: fm_subscriptions::COLUMNS,
            page_size: state.paging.subscription_page_size,
            fetch: fm_subscriptions::list,
            // The document holds no credentials: a filter cannot probe them.
            document: |record: &FmSubscriptionRecord| without_private(record.body.clone()),
            id: |record: &FmSubscriptionRecord| record.id.clone(),
        },
    )
    .await?;
    let entries = page.items.iter().map(|record| rendered(&state, &negotiated, record)).collect();
    Ok(list::respond(entries, page.next_link))
}

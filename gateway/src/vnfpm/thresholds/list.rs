use actix_web::{HttpRequest, HttpResponse, web};
use solgate_core::without_private;
use solgate_db::repo::vnfpm::{self, PmRecord, columns};

use super::rendered;
use crate::common::list;
use crate::error::ApiResult;
use crate::sol013::Negotiated;
use crate::state::AppState;

/// GET /vnfpm/v2/thresholds: SOL013 filter and paging (SOL003 clause 6.4.5.3.2 defines no
/// attribute selectors here); a non-admin sees its own project's only.
pub async fn list(state: web::Data<AppState>, req: HttpRequest, negotiated: Negotiated) -> ApiResult<HttpResponse> {
    let query = list::parse(&req, &negotiated, "Threshold")?;
    let page = list::run(
        &state,
        &req,
        &query,
        list::Source {
            columns: columns::THRESHOLDS,
            page_size: state.paging.pm_threshold_page_size,
            fetch: vnfpm::list_thresholds,
            // The document holds no credentials: a filter cannot probe them.
            document: |record: &PmRecord| without_private(record.body.clone()),
            id: |record: &PmRecord| record.id.clone(),
        },
    )
    .await?;
    let entries = page.items.iter().map(|record| rendered(&state, &negotiated, record)).collect();
    Ok(list::respond(entries, page.next_link))
}

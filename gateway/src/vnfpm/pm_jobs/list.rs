use actix_web::{HttpRequest, HttpResponse, web};
use solgate_core::pm;
use solgate_db::repo::vnfpm::{self, PmRecord, columns};

use super::{SELECTORS, rendered};
use crate::common::list;
use crate::error::ApiResult;
use crate::sol013::Negotiated;
use crate::state::AppState;
use crate::vnflcm::common::present;

/// GET /vnfpm/v2/pm_jobs: SOL013 filter (on what the client sees, `reports` included),
/// attribute selectors and paging; a non-admin sees its own project's only.
pub async fn list(state: web::Data<AppState>, req: HttpRequest, negotiated: Negotiated) -> ApiResult<HttpResponse> {
    let query = list::parse(&req, &negotiated, "PmJob")?;
    let links = state.links.clone();
    let page = list::run(
        &state,
        &req,
        &query,
        list::Source {
            columns: columns::JOBS,
            page_size: state.paging.pm_job_page_size,
            fetch: vnfpm::list_jobs,
            // The document holds no credentials: a filter cannot probe them.
            document: move |record: &PmRecord| pm::job_document(&links, record),
            id: |record: &PmRecord| record.id.clone(),
        },
    )
    .await?;
    let entries = page
        .items
        .iter()
        .map(|record| present::select(&query.selector, &SELECTORS, rendered(&state, &negotiated, record)))
        .collect();
    Ok(list::respond(entries, page.next_link))
}

use actix_web::{HttpRequest, HttpResponse, web};
use solgate_core::without_private;
use solgate_db::repo::alarms::{self, AlarmRecord};

use super::rendered;
use crate::common::list;
use crate::error::ApiResult;
use crate::sol013::Negotiated;
use crate::state::AppState;

/// GET /vnffm/v1/alarms: SOL013 filter and paging (clause 7.4.2.3.2; no attribute selectors);
/// a non-admin sees its own project's alarms only.
pub async fn list(state: web::Data<AppState>, req: HttpRequest, negotiated: Negotiated) -> ApiResult<HttpResponse> {
    let query = list::parse(&req, &negotiated, "Alarm")?;
    let page = list::run(
        &state,
        &req,
        &query,
        list::Source {
            columns: alarms::COLUMNS,
            page_size: state.paging.alarm_page_size,
            fetch: alarms::list,
            document: |record: &AlarmRecord| without_private(record.body.clone()),
            id: |record: &AlarmRecord| record.id.clone(),
        },
    )
    .await?;
    let entries = page.items.iter().map(|record| rendered(&state, &negotiated, record)).collect();
    Ok(list::respond(entries, page.next_link))
}

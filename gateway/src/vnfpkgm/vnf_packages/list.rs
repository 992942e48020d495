use actix_web::{HttpRequest, HttpResponse, web};
use solgate_core::without_private;
use solgate_db::repo::vnf_packages::{self, PackageRecord};

use crate::common::list;
use crate::error::ApiResult;
use crate::sol013::Negotiated;
use crate::state::AppState;
use crate::vnfpkgm::common;

/// GET /vnfpkgm/v1/vnf_packages: filter (indexed attributes in SQL, the rest in memory),
/// selectors, paging with `Link`; a bare JSON array as python-tackerclient expects.
pub async fn list(state: web::Data<AppState>, req: HttpRequest, negotiated: Negotiated) -> ApiResult<HttpResponse> {
    let query = list::parse(&req, &negotiated, "VnfPkgInfo")?;
    let page = list::run(
        &state,
        &req,
        &query,
        list::Source {
            columns: vnf_packages::COLUMNS,
            page_size: state.paging.vnf_package_page_size,
            fetch: vnf_packages::list,
            document: |record: &PackageRecord| without_private(record.body.clone()),
            id: |record: &PackageRecord| record.id.clone(),
        },
    )
    .await?;
    let entries = page
        .items
        .iter()
        .map(|record| {
            let mut entry = common::render(&state, &negotiated, record);
            query.selector.apply(&mut entry, &common::SELECTORS);
            entry
        })
        .collect();
    Ok(list::respond(entries, page.next_link))
}

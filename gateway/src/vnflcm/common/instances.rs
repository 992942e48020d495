//! VNF instance resources (create, list, show, delete), shared by v1 and v2.

use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse};
use serde_json::{Map, Value, json};
use solgate_core::notify::{self, Event};
use solgate_core::{certificates, now, vnfd, without_private};
use solgate_db::repo::lcm::{self, InstanceRecord, LcmMajor, RawDocument, columns};
use solgate_db::repo::vnf_packages;
use solgate_db::write_transaction;
use solgate_sol013::ListQuery;

use super::{major_of, present, validate};
use crate::common::{Tenant, list};
use crate::error::{ApiError, ApiResult};
use crate::sol013::Negotiated;
use crate::state::AppState;

fn not_found(id: &str) -> ApiError {
    solgate_core::requests::instance_not_found(id).into()
}

fn in_progress(id: &str) -> ApiError {
    solgate_core::requests::in_progress(id).into()
}

/// POST vnf_instances: 201 with the VnfInstance and `Location`. The vnfdId must name an
/// onboarded, ENABLED package (with an external NFVO, one not onboarded here is taken from
/// it first); provider, product and versions come from its VNFD.
pub async fn create(
    state: &AppState,
    negotiated: &Negotiated,
    tenant: &Tenant,
    body: Value,
) -> ApiResult<HttpResponse> {
    validate(negotiated, "CreateVnfRequest", &body)?;
    let major = major_of(negotiated)?;
    if let Some(wait) = state.nfvo_package_wait {
        let vnfd_id = body["vnfdId"].as_str().unwrap_or_default();
        super::nfvo_packages::ensure_onboarded(state, tenant, vnfd_id, wait).await?;
    }
    let links = state.links.clone();
    let tenant = tenant.clone();
    let record = state
        .write(move |conn| {
            let vnfd_id = body["vnfdId"].as_str().unwrap_or_default().to_owned();
            let loaded = vnfd::load_by_vnfd_id(conn, &vnfd_id)?;
            // Another project's package is as unknown as one that does not exist.
            let usable = |package: &vnf_packages::PackageRecord| {
                package.onboarding_state() == "ONBOARDED" && tenant.sees(&package.project)
            };
            let Some((package, contents)) = loaded.filter(|(package, _)| usable(package)) else {
                return Err(ApiError::unprocessable(format!(
                    "VnfPackage of vnfdId {vnfd_id} is not found or not operational."
                )));
            };
            if package.operational_state() != "ENABLED" {
                return Err(ApiError::unprocessable(format!("VnfPackage of vnfdId {vnfd_id} is not ENABLED.")));
            }
            let id = solgate_db::new_id();
            let vnfd = &contents.vnfd;
            let mut document = Map::new();
            document.insert("id".into(), json!(id));
            // Empty name and description are dropped, as Tacker does.
            for key in ["vnfInstanceName", "vnfInstanceDescription"] {
                if let Some(text) = body[key].as_str().filter(|text| !text.is_empty()) {
                    document.insert(key.into(), json!(text));
                }
            }
            document.insert("vnfdId".into(), json!(vnfd.descriptor_id));
            document.insert("vnfProvider".into(), json!(vnfd.provider));
            document.insert("vnfProductName".into(), json!(vnfd.product_name));
            document.insert("vnfSoftwareVersion".into(), json!(vnfd.software_version));
            document.insert("vnfdVersion".into(), json!(vnfd.descriptor_version));
            if let Some(properties) = &vnfd.configurable_properties {
                document.insert("vnfConfigurableProperties".into(), properties.clone());
            }
            document.insert("instantiationState".into(), json!("NOT_INSTANTIATED"));
            if let Some(data) = body.get("certificateConfigurationData") {
                document.insert("certificateInfo".into(), certificates::certificate_info(data, None));
            }
            if let Some(metadata) = body.get("metadata").filter(|value| value.is_object()) {
                document.insert("metadata".into(), metadata.clone());
            }
            let now = now();
            let record = InstanceRecord {
                id,
                vnf_pkg_id: package.id.clone(),
                body: Value::Object(document),
                created_at: now.clone(),
                updated_at: now,
                row_version: 0,
                project: tenant.project().to_owned(),
            };
            lcm::insert_instance(conn, major, &record)?;
            vnf_packages::refresh_usage_state(conn, &package.id)?;
            notify::enqueue(conn, major, &links, &record.project, Event::Created { instance: &record.body })?;
            Ok(record)
        })
        .await?;
    let links = present::instance_links(&state.links, major.number(), &record.body);
    let body = present::render(negotiated, "VnfInstance", &record.body, links);
    Ok(HttpResponse::Created()
        .insert_header((header::LOCATION, state.links.instance(major.number(), &record.id)))
        .content_type("application/json")
        .body(body.to_string()))
}

/// GET vnf_instances: filter, selectors, paging.
pub async fn list(state: &AppState, req: &HttpRequest, negotiated: &Negotiated) -> ApiResult<HttpResponse> {
    let major = major_of(negotiated)?;
    let query = list::parse(req, negotiated, "VnfInstance")?;
    let in_memory =
        query.filter.as_ref().is_some_and(|filter| filter.split_for_columns(columns::INSTANCES).1.is_some());
    if !in_memory {
        return list_by_versions(state, req, negotiated, major, &query).await;
    }
    let page = list::run(
        state,
        req,
        &query,
        list::Source {
            columns: columns::INSTANCES,
            page_size: state.paging.vnf_instance_page_size,
            fetch: move |conn: &mut solgate_db::AnyConnection, backend, spec: &_| {
                lcm::list_instances_raw(conn, backend, major, spec)
            },
            document: |raw: &RawDocument| without_private(serde_json::from_str(&raw.body).unwrap_or(Value::Null)),
            id: |raw: &RawDocument| raw.id.clone(),
        },
    )
    .await?;
    let (version, selectors) = (negotiated.version(), list::selector_key(&query));
    let entries: Vec<_> = page
        .items
        .iter()
        .map(|raw| render_entry(state, negotiated, major, &query, &version, &selectors, raw))
        .collect();
    Ok(list::respond_serialized(&entries, page.next_link))
}

/// A list whose filter SQL decides alone: the page is chosen by ids and row versions, and
/// only documents whose rendering for this version and these selectors is not cached are
/// read (a list of 100 otherwise copies out about 60 KB of documents it does not use).
async fn list_by_versions(
    state: &AppState,
    req: &HttpRequest,
    negotiated: &Negotiated,
    major: LcmMajor,
    query: &ListQuery,
) -> ApiResult<HttpResponse> {
    let page = list::run_sized(
        state,
        req,
        query,
        list::Source {
            columns: columns::INSTANCES,
            page_size: state.paging.vnf_instance_page_size,
            fetch: move |conn: &mut solgate_db::AnyConnection, backend, spec: &_| {
                lcm::list_instance_versions(conn, backend, major, spec)
            },
            // No residual filter on this path, so no document is asked for.
            document: |_: &(String, i64)| Value::Null,
            id: |(id, _): &(String, i64)| id.clone(),
        },
        list::Rows::Small,
    )
    .await?;
    let selectors = list::selector_key(query);
    let version = negotiated.version();
    let keys: Vec<String> =
        page.items.iter().map(|(id, row_version)| entry_key(major, id, *row_version, &version, &selectors)).collect();
    let mut entries = state.render_cache.get_many(keys.iter().map(String::as_str));
    let missing: Vec<String> =
        page.items.iter().zip(&entries).filter(|(_, hit)| hit.is_none()).map(|((id, _), _)| id.clone()).collect();
    let missing_count = missing.len();
    if missing_count > 0 {
        // A page's few misses are a keyed read; a list of all records can miss thousands.
        let read = move |conn: &mut solgate_db::AnyConnection| Ok(lcm::instances_raw_by_ids(conn, major, &missing)?);
        let raws = if missing_count <= 256 { state.read(read).await? } else { state.db(read).await? };
        let mut rendered: std::collections::HashMap<String, std::sync::Arc<str>> = raws
            .iter()
            .map(|raw| (raw.id.clone(), render_entry(state, negotiated, major, query, &version, &selectors, raw)))
            .collect();
        for ((id, _), entry) in page.items.iter().zip(entries.iter_mut()) {
            if entry.is_none() {
                *entry = rendered.remove(id);
            }
        }
    }
    // An instance deleted between the two reads is left out, as if the page had been read
    // after the delete.
    let entries: Vec<_> = entries.into_iter().flatten().collect();
    Ok(list::respond_serialized(&entries, page.next_link))
}

/// The render cache's key of a list entry.
fn entry_key(major: LcmMajor, id: &str, stamp: impl std::fmt::Display, version: &str, selectors: &str) -> String {
    format!("i{}|{id}|{stamp}|{version}|{selectors}", major.number())
}

/// One list entry: the stored document rendered for the negotiated version and the query's
/// selectors, cached per row version (the key holds the version it was read at).
fn render_entry(
    state: &AppState,
    negotiated: &Negotiated,
    major: LcmMajor,
    query: &ListQuery,
    version: &str,
    selectors: &str,
    raw: &RawDocument,
) -> std::sync::Arc<str> {
    let key = entry_key(major, &raw.id, &raw.stamp, version, selectors);
    state.render_cache.get_or_render(key, || {
        let stored: Value = serde_json::from_str(&raw.body).unwrap_or(Value::Null);
        let links = present::instance_links(&state.links, major.number(), &stored);
        let rendered = present::render(negotiated, "VnfInstance", &stored, links);
        present::select(&query.selector, &present::INSTANCE_SELECTORS, rendered).to_string()
    })
}

/// GET vnf_instances/{id}: the whole instance (selectors do not apply). The rendering is
/// cached per row version and negotiated version, like the list's entries; the row is read
/// and its project checked on every request, so the cache never decides who sees what.
pub async fn show(state: &AppState, negotiated: &Negotiated, tenant: &Tenant, id: String) -> ApiResult<HttpResponse> {
    let major = major_of(negotiated)?;
    let lookup = id.clone();
    let raw = state
        .read(move |conn| Ok(lcm::find_instance_raw(conn, major, &lookup)?))
        .await?
        .filter(|raw| tenant.sees(&raw.project))
        .ok_or_else(|| not_found(&id))?;
    let version = negotiated.version();
    let key = format!("s{}|{}|{}|{version}", major.number(), raw.id, raw.row_version);
    let body = match state.render_cache.get(&key) {
        Some(hit) => hit,
        None => {
            let stored: Value = serde_json::from_str(&raw.body).map_err(ApiError::internal)?;
            let links = present::instance_links(&state.links, major.number(), &stored);
            let rendered: std::sync::Arc<str> =
                present::render(negotiated, "VnfInstance", &stored, links).to_string().into();
            state.render_cache.insert(key, rendered.clone());
            rendered
        }
    };
    Ok(HttpResponse::Ok()
        .insert_header((header::ETAG, crate::common::etag::etag(raw.row_version, &version)))
        .content_type("application/json")
        .body(body.as_bytes().to_vec()))
}

/// DELETE vnf_instances/{id}: only NOT_INSTANTIATED instances with no operation in
/// flight or in FAILED_TEMP; 204.
pub async fn delete(state: &AppState, negotiated: &Negotiated, tenant: &Tenant, id: String) -> ApiResult<HttpResponse> {
    let major = major_of(negotiated)?;
    let links = state.links.clone();
    let tenant = tenant.clone();
    state
        .db(move |conn| {
            write_transaction(conn, |conn| {
                if !lcm::lock_instance(conn, major, &id)? {
                    return Err(not_found(&id));
                }
                let record = lcm::find_instance(conn, major, &id)?
                    .filter(|record| tenant.sees(&record.project))
                    .ok_or_else(|| not_found(&id))?;
                if record.instantiation_state() == "INSTANTIATED" {
                    return Err(ApiError::conflict(format!("VnfInstance {id} is instantiated.")));
                }
                if lcm::in_flight_op(conn, major, &id)?.is_some() {
                    return Err(in_progress(&id));
                }
                lcm::delete_instance(conn, major, &id)?;
                vnf_packages::refresh_usage_state(conn, &record.vnf_pkg_id)?;
                let view = without_private(record.body);
                notify::enqueue(conn, major, &links, &record.project, Event::Deleted { instance: &view })?;
                Ok(())
            })
        })
        .await?;
    Ok(HttpResponse::NoContent().finish())
}

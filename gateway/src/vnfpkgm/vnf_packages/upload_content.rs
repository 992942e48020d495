use std::path::{Path, PathBuf};

use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse, web};
use futures_util::StreamExt;
use serde_json::Value;
use solgate_core::packages::{CREATED, FAILURE_DETAILS, PackageFiles, UPLOADING, UploadSource};
use solgate_core::work::kind_name;
use solgate_core::work::{RpcMessage, WorkKind};
use solgate_db::repo::{outbox, vnf_packages};
use solgate_db::{AnyConnection, write_transaction};
use tokio::io::AsyncWriteExt;

use crate::common::Tenant;
use crate::error::{ApiError, ApiResult, ErrorKind};
use crate::state::AppState;
use crate::vnfpkgm::common;

/// PUT /vnfpkgm/v1/vnf_packages/{id}/package_content: the zip is streamed to a partial file in
/// the package's directory (bounded, 413 beyond `packages.max_upload_bytes`), renamed when
/// complete, and the package moves to UPLOADING with an outbox row in one transaction; the
/// conductor onboards it. 202 with an empty body and no `Content-Type` (Tacker declared
/// `application/zip` on it).
pub async fn upload_content(
    state: web::Data<AppState>,
    req: HttpRequest,
    tenant: Tenant,
    id: web::Path<String>,
    mut payload: web::Payload,
) -> ApiResult<HttpResponse> {
    let id = id.into_inner();
    // The state is checked before the Content-Type, as Tacker does.
    let record = common::load(&state, &tenant, &id).await?;
    if record.onboarding_state() != CREATED {
        return Err(common::state_is_not(&id, CREATED));
    }
    check_content_type(&req)?;
    let max = state.packages.max_upload_bytes;
    let too_large = || {
        ApiError::new(ErrorKind::PayloadTooLarge, format!("The VNF package is larger than the allowed {max} bytes."))
    };
    let declared = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.parse::<u64>().ok());
    if declared.is_some_and(|length| length > max) {
        return Err(too_large());
    }

    let files = common::files(&state, &id);
    let name = PackageFiles::new_upload_name();
    let complete = files.upload(&name).ok_or_else(|| ApiError::internal(anyhow::anyhow!("bad upload name {name}")))?;
    tokio::fs::create_dir_all(files.root()).await?;
    let partial = Discard(Some(files.partial(&name)));
    let mut file = tokio::fs::File::create(partial.path()).await?;
    let mut received: u64 = 0;
    while let Some(chunk) = payload.next().await {
        let chunk =
            chunk.map_err(|error| ApiError::bad_request(format!("Could not read the request body: {error}")))?;
        received += chunk.len() as u64;
        if received > max {
            return Err(too_large());
        }
        file.write_all(&chunk).await?;
    }
    if received == 0 {
        return Err(ApiError::bad_request("The request body is empty: send the VNF package zip."));
    }
    file.sync_all().await?;
    drop(file);
    tokio::fs::rename(partial.path(), &complete).await?;
    partial.disarm();

    let lookup = id.clone();
    let source = UploadSource::content(name).to_value();
    let outbox_id = state
        .db(move |conn| {
            let accepted = accept_upload(conn, &tenant, &lookup, source);
            // Here rather than in a guard of the request: this runs to its end even when the
            // client goes away, so a committed upload never loses its file.
            if accepted.is_err() {
                let _ = std::fs::remove_file(&complete);
            }
            accepted
        })
        .await?;
    state.dispatch(outbox_id, RpcMessage::package(id));
    Ok(HttpResponse::Accepted().finish())
}

/// CREATED → UPLOADING with the content's source, and the outbox row for the conductor, in
/// one transaction; returns the outbox row. A package no longer CREATED (another upload won
/// the race) → 409. A previous failure's details go: SOL005 v2.7.1 shows them only while
/// the package is CREATED after a failure.
pub(super) fn accept_upload(conn: &mut AnyConnection, tenant: &Tenant, id: &str, source: Value) -> ApiResult<i64> {
    write_transaction(conn, |conn| {
        let mut record = common::find(conn, tenant, id)?;
        if record.onboarding_state() != CREATED {
            return Err(common::state_is_not(id, CREATED));
        }
        if let Value::Object(map) = &mut record.body {
            map.insert("onboardingState".into(), Value::String(UPLOADING.to_owned()));
            map.shift_remove(FAILURE_DETAILS);
        }
        record.upload_source = Some(source);
        if !vnf_packages::update(conn, &record, Some(record.row_version))? {
            return Err(common::state_is_not(id, CREATED));
        }
        Ok(outbox::enqueue(conn, kind_name(WorkKind::VnfPackage), id, 1)?)
    })
}

/// SOL005: `application/zip`; `application/octet-stream` is accepted too (generic clients),
/// and so is a missing header (`curl -T` sends none), since the content is checked anyway.
fn check_content_type(req: &HttpRequest) -> ApiResult<()> {
    let Some(value) = req.headers().get(header::CONTENT_TYPE) else { return Ok(()) };
    let text = value.to_str().unwrap_or("<non-ASCII>");
    let essence = text.split(';').next().unwrap_or_default().trim().to_ascii_lowercase();
    if essence == "application/zip" || essence == "application/octet-stream" {
        return Ok(());
    }
    Err(ApiError::new(
        ErrorKind::UnsupportedMediaType,
        format!(
            "Content type '{text}' specified in 'Content-Type' header is not allowed; send the VNF package as application/zip."
        ),
    ))
}

/// A file removed when dropped unless disarmed: an upload that stops half-way (client gone,
/// 413, a write error) leaves no partial file behind.
struct Discard(Option<PathBuf>);

impl Discard {
    fn path(&self) -> &Path {
        self.0.as_deref().unwrap_or(Path::new(""))
    }

    fn disarm(mut self) {
        self.0 = None;
    }
}

impl Drop for Discard {
    fn drop(&mut self) {
        if let Some(path) = self.0.take() {
            let _ = std::fs::remove_file(path);
        }
    }
}

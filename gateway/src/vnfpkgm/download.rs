//! Downloads streamed from the package store: the file is read in chunks while the response
//! is sent, never loaded whole (a package may hold VM images of several GB).

use std::io::SeekFrom;
use std::path::Path;

use actix_http::body::SizedStream;
use actix_web::http::StatusCode;
use actix_web::http::header::{self, HeaderValue};
use actix_web::{HttpRequest, HttpResponse, ResponseError};
use bytes::Bytes;
use futures_util::Stream;
use tokio::io::{AsyncReadExt, AsyncSeekExt};

use super::range::{self, Selection};
use crate::error::{ApiError, ApiResult, ErrorKind};

const CHUNK: u64 = 64 * 1024;

/// Whether the resource honours `Range` (SOL005 defines it for the package content and for
/// artifacts, not for the VNFD).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ranges {
    Supported,
    NotSupported,
}

/// 200 (or 206 / 416 with [`Ranges::Supported`]) with the file at `path` as `content_type`.
/// `Content-Type` carries no parameters: python-tackerclient compares it exactly.
pub async fn file(
    req: &HttpRequest,
    path: &Path,
    content_type: &'static str,
    ranges: Ranges,
) -> ApiResult<HttpResponse> {
    let mut file = tokio::fs::File::open(path)
        .await
        .map_err(|error| ApiError::internal(anyhow::anyhow!("cannot open {}: {error}", path.display())))?;
    let size = file.metadata().await?.len();
    let selection = match ranges {
        Ranges::NotSupported => Selection::Full,
        Ranges::Supported => {
            let requested = req.headers().get(header::RANGE).and_then(|value| value.to_str().ok());
            range::select(requested, req.headers().contains_key(header::IF_RANGE), size)
        }
    };
    let (status, start, length) = match selection {
        Selection::Full => (StatusCode::OK, 0, size),
        Selection::Partial { start, end } => (StatusCode::PARTIAL_CONTENT, start, end - start + 1),
        Selection::Unsatisfiable => {
            let shown = req.headers().get(header::RANGE).and_then(|value| value.to_str().ok()).unwrap_or_default();
            let error = ApiError::new(
                ErrorKind::RangeNotSatisfiable { complete_length: size },
                format!(
                    "The range '{shown}' cannot be served: the file has {size} bytes and only one byte range per request \
                     is supported."
                ),
            );
            let mut response = error.error_response();
            response.headers_mut().insert(header::ACCEPT_RANGES, HeaderValue::from_static("bytes"));
            return Ok(response);
        }
    };
    if start > 0 {
        file.seek(SeekFrom::Start(start)).await?;
    }
    let mut response = HttpResponse::build(status);
    response.insert_header((header::CONTENT_TYPE, content_type));
    if ranges == Ranges::Supported {
        response.insert_header((header::ACCEPT_RANGES, "bytes"));
    }
    if status == StatusCode::PARTIAL_CONTENT {
        response.insert_header((header::CONTENT_RANGE, format!("bytes {start}-{}/{size}", start + length - 1)));
    }
    Ok(response.body(SizedStream::new(length, chunks(file, length))))
}

/// `length` bytes of `file` from its current position, in chunks.
fn chunks(file: tokio::fs::File, length: u64) -> impl Stream<Item = Result<Bytes, std::io::Error>> {
    futures_util::stream::try_unfold((file, length), |(mut file, remaining)| async move {
        if remaining == 0 {
            return Ok(None);
        }
        let mut buffer = vec![0u8; usize::try_from(remaining.min(CHUNK)).unwrap_or(64 * 1024)];
        let read = file.read(&mut buffer).await?;
        if read == 0 {
            // The length was promised in Content-Length: a short file must break the response.
            return Err(std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "the file is shorter than announced"));
        }
        buffer.truncate(read);
        Ok(Some((Bytes::from(buffer), (file, remaining - read as u64))))
    })
}

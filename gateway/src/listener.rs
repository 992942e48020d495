//! The HTTP listener: actix-web's application served by actix-http over our own connection
//! type, so that the errors actix-http answers by itself are ProblemDetails too.
//!
//! actix-http answers a request it cannot parse (400), a request head over its 128 KiB buffer
//! or with more than 96 headers (431), a first request that does not arrive in time (408) and
//! an internal dispatch error (500) with an empty body, before any application code runs.
//! SOL013 wants every error to be a ProblemDetails, so [`ProblemIo`] watches what the
//! connection writes: such a response is always the last thing written on its connection (the
//! dispatcher stops reading after it), it has `content-length: 0` and it lacks the
//! `x-request-id` header that every response of the application carries. When the bytes handed
//! to one write end with exactly such a head, the head is replaced by the same status with a
//! ProblemDetails body.

use std::any::Any;
use std::io;
use std::net::TcpListener;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use actix_http::{HttpService, Protocol, Request};
use actix_server::{Server, ServerBuilder};
use actix_service::{IntoServiceFactory, ServiceFactory, ServiceFactoryExt, fn_service, map_config};
use actix_tls::accept::rustls_0_23::{Acceptor, TlsStream};
use actix_web::body::MessageBody;
use actix_web::dev::{AppConfig, Extensions, Response};
use actix_web::rt::net::TcpStream;
use solgate_sol013::ProblemDetails;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use crate::sol013::request_id;
use crate::tls::{PeerNames, ServerTls};

/// How the listener runs: what `serve` passes in from the settings.
#[derive(Debug, Clone)]
pub struct ListenerSettings {
    /// Worker threads; 0 means one per core.
    pub workers: usize,
    /// Seconds in-flight requests get when the server stops.
    pub shutdown_timeout_secs: u64,
}

/// A connection that turns actix-http's own empty error responses into ProblemDetails.
#[derive(Debug)]
pub struct ProblemIo<T> {
    inner: T,
    /// The rewritten response and how much of it has been written.
    replacement: Option<(Vec<u8>, usize)>,
}

impl<T> ProblemIo<T> {
    pub fn new(inner: T) -> Self {
        Self { inner, replacement: None }
    }

    pub fn get_ref(&self) -> &T {
        &self.inner
    }
}

impl<T: AsyncWrite + Unpin> ProblemIo<T> {
    /// Writes what is left of the replacement; ready when it is all written.
    fn poll_replacement(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while let Some((bytes, written)) = &mut self.replacement {
            if *written == bytes.len() {
                self.replacement = None;
                break;
            }
            let n = ready!(Pin::new(&mut self.inner).poll_write(cx, &bytes[*written..]))?;
            if n == 0 {
                return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
            }
            *written += n;
        }
        Poll::Ready(Ok(()))
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for ProblemIo<T> {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for ProblemIo<T> {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        ready!(this.poll_replacement(cx))?;
        match bare_error_at_end(buf) {
            // Write what precedes the error head first, so the head is never split.
            Some((start, _)) if start > 0 => Pin::new(&mut this.inner).poll_write(cx, &buf[..start]),
            Some((_, status)) => {
                this.replacement = Some((problem_response(buf, status), 0));
                // The head counts as written; the replacement goes out now or on flush.
                match this.poll_replacement(cx) {
                    Poll::Ready(Err(error)) => Poll::Ready(Err(error)),
                    _ => Poll::Ready(Ok(buf.len())),
                }
            }
            None => Pin::new(&mut this.inner).poll_write(cx, buf),
        }
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(self.poll_replacement(cx))?;
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(self.poll_replacement(cx))?;
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// Statuses actix-http sends on its own, with an empty body.
const BARE_STATUSES: [u16; 4] = [400, 408, 431, 500];

/// Where an empty-bodied error head of actix-http's own starts, when `buf` ends with one,
/// and its status.
fn bare_error_at_end(buf: &[u8]) -> Option<(usize, u16)> {
    if !buf.ends_with(b"\r\n\r\n") {
        return None;
    }
    // Heads of actix-http's errors are a few header lines; look at the last 1 KiB only.
    let window = buf.len().saturating_sub(1024);
    let start = window + find_last(&buf[window..], b"HTTP/1.1 ")?;
    let head = std::str::from_utf8(&buf[start..buf.len() - 4]).ok()?;
    let mut lines = head.split("\r\n");
    let status: u16 = lines.next()?.get(9..12)?.parse().ok()?;
    if !BARE_STATUSES.contains(&status) {
        return None;
    }
    let mut empty = false;
    for line in lines {
        let (name, value) = line.split_once(':')?;
        if name.eq_ignore_ascii_case(request_id::HEADER) {
            return None;
        }
        if name.eq_ignore_ascii_case("content-length") {
            empty = value.trim() == "0";
        }
    }
    empty.then_some((start, status))
}

fn find_last(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).rposition(|window| window == needle)
}

/// The same head with a ProblemDetails body (and a request id, as every other answer has).
fn problem_response(head: &[u8], status: u16) -> Vec<u8> {
    let id = uuid::Uuid::new_v4().to_string();
    let detail = match status {
        400 => "The request could not be parsed as HTTP/1.1 (malformed request line, header or framing).".to_owned(),
        408 => "The request head did not arrive in time.".to_owned(),
        431 => "The request head is too large: at most 128 KiB and 96 header fields are accepted.".to_owned(),
        _ => format!("An internal error occurred; quote request id {id} when reporting it."),
    };
    let mut problem = ProblemDetails::new(status, detail);
    problem.title =
        actix_web::http::StatusCode::from_u16(status).ok().and_then(|code| code.canonical_reason()).map(str::to_owned);
    let body = serde_json::to_vec(&problem).unwrap_or_default();
    let head = String::from_utf8_lossy(&head[..head.len() - 4]);
    let mut out = String::with_capacity(head.len() + 128);
    for line in head.split("\r\n") {
        if !line.to_ascii_lowercase().starts_with("content-length:") {
            out.push_str(line);
            out.push_str("\r\n");
        }
    }
    out.push_str(&format!(
        "content-type: application/problem+json\r\n{}: {id}\r\ncontent-length: {}\r\n\r\n",
        request_id::HEADER,
        body.len()
    ));
    let mut bytes = out.into_bytes();
    bytes.extend_from_slice(&body);
    bytes
}

/// The server of `[http] workers` and `shutdown_timeout_secs`.
fn server_builder(settings: &ListenerSettings) -> ServerBuilder {
    let builder = ServerBuilder::default().shutdown_timeout(settings.shutdown_timeout_secs);
    if settings.workers > 0 { builder.workers(settings.workers) } else { builder }
}

/// Serves the application made by `factory` on `listener`, over TLS when `tls` is given;
/// `on_connect` sees each connection (its `&dyn Any` is a `ProblemIo<TcpStream>` or a
/// `ProblemIo<TlsStream<TcpStream>>`).
pub fn serve<F, I, S, B>(
    factory: F,
    listener: TcpListener,
    tls: Option<Arc<ServerTls>>,
    settings: &ListenerSettings,
    on_connect: fn(&dyn Any, &mut Extensions),
) -> anyhow::Result<Server>
where
    F: Fn() -> I + Send + Clone + 'static,
    I: IntoServiceFactory<S, Request>,
    S: ServiceFactory<Request, Config = AppConfig> + 'static,
    S::Error: Into<actix_web::Error> + 'static,
    S::InitError: std::fmt::Debug,
    S::Response: Into<Response<B>> + 'static,
    <S::Service as actix_service::Service<Request>>::Future: 'static,
    S::Service: 'static,
    B: MessageBody + 'static,
{
    let address = listener.local_addr()?;
    let builder = server_builder(settings);
    let shutdown = builder.graceful_shutdown_signal();
    let secure = tls.is_some();
    // The application sees the same configuration actix-web's own server would give it.
    let app = move || {
        map_config(factory().into_factory().map_err(|error| error.into().error_response()), move |()| {
            AppConfig::__priv_test_new(secure, address.to_string(), address)
        })
    };
    // One builder per connection type (the builder's type names the connection).
    macro_rules! http {
        () => {{
            let shutdown = shutdown.clone();
            HttpService::build()
                .graceful_shutdown_signal(move || {
                    let shutdown = shutdown.clone();
                    async move { shutdown.notified().await }
                })
                .client_request_timeout(Duration::from_secs(5))
                .client_disconnect_timeout(Duration::from_secs(1))
                .local_addr(address)
        }};
    }
    let name = format!("solgate-{address}");
    let builder = match tls {
        None => builder.listen(name, listener, move || {
            fn_service(|stream: TcpStream| async move {
                let peer = stream.peer_addr().ok();
                Ok::<_, actix_http::error::DispatchError>((ProblemIo::new(stream), Protocol::Http1, peer))
            })
            .and_then(
                http!()
                    .on_connect_ext(move |io: &ProblemIo<TcpStream>, data: &mut Extensions| on_connect(io, data))
                    .finish(app()),
            )
        })?,
        Some(tls) => {
            let config = Arc::new(tls.server_config()?);
            builder.listen(name, listener, move || {
                let mut acceptor = Acceptor::new((*config).clone());
                acceptor.set_handshake_timeout(Duration::from_secs(3));
                acceptor
                    .map_err(|error| actix_http::error::DispatchError::Io(io::Error::other(format!("TLS: {error:?}"))))
                    .map(|stream: TlsStream<TcpStream>| {
                        let peer = stream.get_ref().0.peer_addr().ok();
                        (ProblemIo::new(stream), Protocol::Http1, peer)
                    })
                    .and_then(
                        http!()
                            .on_connect_ext(move |io: &ProblemIo<TlsStream<TcpStream>>, data: &mut Extensions| {
                                on_connect(io, data);
                            })
                            .finish(app()),
                    )
            })?
        }
    };
    Ok(builder.run())
}

/// The connection hook for [`serve`]: over HTTPS, records the client certificate's names
/// ([`PeerNames`]). The certificate has already been verified against `client_ca_file` by
/// the handshake.
pub fn record_peer_names(connection: &dyn Any, data: &mut Extensions) {
    let Some(stream) = connection.downcast_ref::<ProblemIo<TlsStream<TcpStream>>>() else { return };
    let (_, session) = stream.get_ref().get_ref();
    let Some(leaf) = session.peer_certificates().and_then(|chain| chain.first()) else { return };
    if let Ok(certificate) = webpki::EndEntityCert::try_from(leaf) {
        data.insert(PeerNames(certificate.valid_dns_names().map(str::to_owned).collect()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_error_head_at_the_end_is_found_and_rewritten() {
        let ok = b"HTTP/1.1 200 OK\r\nx-request-id: a\r\ncontent-length: 2\r\n\r\n{}";
        let bare = b"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-length: 0\r\nconnection: close\r\ndate: x\r\n\r\n";
        assert_eq!(bare_error_at_end(bare), Some((0, 431)));
        let both = [&ok[..], &bare[..]].concat();
        assert_eq!(bare_error_at_end(&both), Some((ok.len(), 431)));
        assert_eq!(bare_error_at_end(ok), None);
        // The application's own answers carry a request id (a HEAD answer has no body).
        let ours = b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\nx-request-id: b\r\n\r\n";
        assert_eq!(bare_error_at_end(ours), None);
        let with_body = b"HTTP/1.1 400 Bad Request\r\ncontent-length: 10\r\n\r\n";
        assert_eq!(bare_error_at_end(with_body), None);

        let rewritten = String::from_utf8(problem_response(bare, 431)).unwrap();
        let (head, body) = rewritten.split_once("\r\n\r\n").unwrap();
        assert!(head.starts_with("HTTP/1.1 431 "), "{head}");
        assert!(head.contains("content-type: application/problem+json"), "{head}");
        assert!(head.contains(&format!("content-length: {}", body.len())), "{head}");
        assert!(head.contains("connection: close"), "{head}");
        let problem: serde_json::Value = serde_json::from_str(body).unwrap();
        assert_eq!(problem["status"], 431);
        assert!(problem["detail"].as_str().unwrap().contains("too large"));
    }
}

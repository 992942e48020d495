//! HTTPS in front of a plain-http wiremock server: a test CA, a certificate for `localhost`
//! and a TLS terminator forwarding the decrypted bytes to the server. Shared by the drivers'
//! test binary and the root `integration` binary (which includes this file with `#[path]`),
//! so both test the same TLS set-up.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// HTTPS in front of a plain-http `wiremock::MockServer`: a TLS terminator on 127.0.0.1 with a
/// certificate for `localhost` and 127.0.0.1 issued by a CA made for this front alone, so
/// a client gets through only if it trusts [`TlsFront::ca_pem`] and verifies against it.
/// Every accepted handshake is counted, every failed one kept with its error, which is how
/// a test tells that its traffic really went over TLS (and that an untrusting client was
/// turned away by the certificate check, not by something else).
pub struct TlsFront {
    /// `https://localhost:<port>`.
    pub uri: String,
    /// The test CA's certificate (PEM), the only issuer of the front's certificate.
    pub ca_pem: String,
    handshakes: Arc<AtomicUsize>,
    failures: Arc<Mutex<Vec<String>>>,
    task: tokio::task::JoinHandle<()>,
}

impl TlsFront {
    /// Listens on 127.0.0.1 (a free port) and forwards each TLS connection to `upstream`.
    pub async fn start(upstream: SocketAddr) -> TlsFront {
        let (ca_pem, acceptor) = test_pki();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let handshakes = Arc::new(AtomicUsize::new(0));
        let failures = Arc::new(Mutex::new(Vec::new()));
        let (counted, failed) = (handshakes.clone(), failures.clone());
        let task = tokio::spawn(async move {
            loop {
                let Ok((tcp, _)) = listener.accept().await else { continue };
                let (acceptor, counted, failed) = (acceptor.clone(), counted.clone(), failed.clone());
                tokio::spawn(async move {
                    let mut tls = match acceptor.accept(tcp).await {
                        Ok(tls) => tls,
                        Err(e) => {
                            failed.lock().unwrap().push(e.to_string());
                            return;
                        }
                    };
                    counted.fetch_add(1, Ordering::SeqCst);
                    let Ok(mut plain) = tokio::net::TcpStream::connect(upstream).await else { return };
                    // Ends when either side closes; a reset is the client's pool going away.
                    let _ = tokio::io::copy_bidirectional(&mut tls, &mut plain).await;
                });
            }
        });
        TlsFront { uri: format!("https://localhost:{port}"), ca_pem, handshakes, failures, task }
    }

    /// TLS handshakes completed so far.
    pub fn handshakes(&self) -> usize {
        self.handshakes.load(Ordering::SeqCst)
    }

    /// Why the handshakes that failed failed, as the server side of rustls saw it.
    pub fn handshake_failures(&self) -> Vec<String> {
        self.failures.lock().unwrap().clone()
    }

    /// [`Self::handshake_failures`] once there is one (up to 5 s): a client gives up as soon
    /// as it sends its alert, a little before the front's task has read and recorded it.
    pub async fn settled_handshake_failures(&self) -> Vec<String> {
        for _ in 0..500 {
            let failures = self.handshake_failures();
            if !failures.is_empty() {
                return failures;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        Vec::new()
    }
}

impl Drop for TlsFront {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// A fresh CA (PEM) and an acceptor presenting a `localhost` / 127.0.0.1 certificate it issued.
fn test_pki() -> (String, tokio_rustls::TlsAcceptor) {
    use rcgen::{
        BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair, KeyUsagePurpose,
    };
    use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.distinguished_name.push(DnType::CommonName, "solgate drivers test CA");
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    let ca_key = KeyPair::generate().unwrap();
    let ca_cert = ca_params.self_signed(&ca_key).unwrap();
    let issuer = Issuer::new(ca_params, ca_key);

    let mut params = CertificateParams::new(vec!["localhost".to_owned(), "127.0.0.1".to_owned()]).unwrap();
    params.distinguished_name.push(DnType::CommonName, "localhost");
    params.is_ca = IsCa::ExplicitNoCa;
    params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
    params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    let key = KeyPair::generate().unwrap();
    let cert = params.signed_by(&key, &issuer).unwrap();

    let chain: Vec<CertificateDer<'static>> = vec![cert.der().clone()];
    let private = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der()));
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(rustls::crypto::aws_lc_rs::default_provider()))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(chain, private)
        .unwrap();
    (ca_cert.pem(), tokio_rustls::TlsAcceptor::from(Arc::new(config)))
}

//! The HTTPS listener (`[http.tls]`): certificate chain and key, and with `client_ca_file`
//! client certificates required and verified (mTLS). The certificate and the client CA are
//! read again on SIGHUP; connections already open keep the session they have, new ones get
//! the new files. `check-config` reports what would stop them from working.

use std::path::{Path, PathBuf};
use std::sync::{Arc, PoisonError, RwLock};

use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, UnixTime};
use rustls::server::danger::{ClientCertVerified, ClientCertVerifier};
use rustls::server::{ClientHello, ResolvesServerCert, WebPkiClientVerifier};
use rustls::sign::CertifiedKey;
use rustls::{DigitallySignedStruct, DistinguishedName, RootCertStore, SignatureScheme};
use serde::{Deserialize, Serialize};

/// The `[http.tls]` table. With `cert_file` and `key_file` the listener speaks HTTPS only.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ServerTlsSettings {
    /// PEM certificate chain, the server's certificate first.
    pub cert_file: PathBuf,
    /// PEM private key of that certificate (PKCS#8, PKCS#1 or SEC1).
    pub key_file: PathBuf,
    /// PEM CA certificates; set: every client must present a certificate signed by one.
    pub client_ca_file: PathBuf,
}

impl ServerTlsSettings {
    /// Whether any key of the table is set (then `cert_file` and `key_file` must both be).
    pub fn enabled(&self) -> bool {
        [&self.cert_file, &self.key_file, &self.client_ca_file].iter().any(|path| !path.as_os_str().is_empty())
    }
}

/// Why the TLS files cannot be used; each names the setting and the file.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    #[error("http.tls.{key} is required when http.tls is used")]
    Missing { key: &'static str },
    #[error("http.tls.{key}: cannot read {path}: {message}")]
    Unreadable { key: &'static str, path: PathBuf, message: String },
    #[error("http.tls.{key}: {path} holds no {what}")]
    Empty { key: &'static str, path: PathBuf, what: &'static str },
    #[error("http.tls.key_file: {path} does not match the certificate of http.tls.cert_file ({reason})")]
    KeyMismatch { path: PathBuf, reason: String },
    #[error("http.tls.{key}: the certificate in {path} expired at {not_after}")]
    Expired { key: &'static str, path: PathBuf, not_after: String },
    #[error("http.tls.{key}: {path}: {message}")]
    Invalid { key: &'static str, path: PathBuf, message: String },
}

fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::aws_lc_rs::default_provider())
}

fn required<'a>(path: &'a Path, key: &'static str) -> Result<&'a Path, TlsError> {
    if path.as_os_str().is_empty() { Err(TlsError::Missing { key }) } else { Ok(path) }
}

fn read(path: &Path, key: &'static str) -> Result<Vec<u8>, TlsError> {
    std::fs::read(path).map_err(|error| TlsError::Unreadable { key, path: path.to_owned(), message: error.to_string() })
}

fn certificates(path: &Path, key: &'static str) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let pem = read(path, key)?;
    let certificates = CertificateDer::pem_slice_iter(&pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|error| TlsError::Invalid { key, path: path.to_owned(), message: error.to_string() })?;
    if certificates.is_empty() {
        return Err(TlsError::Empty { key, path: path.to_owned(), what: "PEM certificate" });
    }
    Ok(certificates)
}

/// The chain and key of `[http.tls]`, checked to belong together.
fn certified_key(settings: &ServerTlsSettings) -> Result<CertifiedKey, TlsError> {
    let cert_file = required(&settings.cert_file, "cert_file")?;
    let key_file = required(&settings.key_file, "key_file")?;
    let chain = certificates(cert_file, "cert_file")?;
    let key_pem = read(key_file, "key_file")?;
    let key = PrivateKeyDer::from_pem_slice(&key_pem).map_err(|error| TlsError::Invalid {
        key: "key_file",
        path: key_file.to_owned(),
        message: format!("no usable PEM private key ({error})"),
    })?;
    let signing_key = provider().key_provider.load_private_key(key).map_err(|error| TlsError::Invalid {
        key: "key_file",
        path: key_file.to_owned(),
        message: error.to_string(),
    })?;
    let certified = CertifiedKey::new(chain, signing_key);
    certified
        .keys_match()
        .map_err(|error| TlsError::KeyMismatch { path: key_file.to_owned(), reason: error.to_string() })?;
    Ok(certified)
}

fn client_verifier(path: &Path) -> Result<Arc<dyn ClientCertVerifier>, TlsError> {
    let key = "client_ca_file";
    let mut roots = RootCertStore::empty();
    for certificate in certificates(path, key)? {
        roots.add(certificate).map_err(|error| TlsError::Invalid {
            key,
            path: path.to_owned(),
            message: error.to_string(),
        })?;
    }
    WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider())
        .build()
        .map_err(|error| TlsError::Invalid { key, path: path.to_owned(), message: error.to_string() })
}

/// What `check-config` reports about `[http.tls]`: every file that is missing or
/// unreadable, a key that does not match its certificate, and expired certificates.
pub fn problems(settings: &ServerTlsSettings, now: UnixTime) -> Vec<TlsError> {
    if !settings.enabled() {
        return Vec::new();
    }
    let mut found = Vec::new();
    match certified_key(settings) {
        Ok(_) => {}
        Err(error) => found.push(error),
    }
    if let Ok(chain) = certificates(&settings.cert_file, "cert_file") {
        found.extend(chain.first().and_then(|leaf| expired(leaf, now, "cert_file", &settings.cert_file)));
    }
    if !settings.client_ca_file.as_os_str().is_empty() {
        match certificates(&settings.client_ca_file, "client_ca_file") {
            Ok(cas) => {
                found.extend(cas.iter().filter_map(|ca| expired(ca, now, "client_ca_file", &settings.client_ca_file)));
                if let Err(error) = client_verifier(&settings.client_ca_file) {
                    found.push(error);
                }
            }
            Err(error) => found.push(error),
        }
    }
    found
}

fn expired(certificate: &CertificateDer<'_>, now: UnixTime, key: &'static str, path: &Path) -> Option<TlsError> {
    let not_after = der::not_after(certificate)?;
    (not_after.seconds < now.as_secs()).then(|| TlsError::Expired {
        key,
        path: path.to_owned(),
        not_after: not_after.text,
    })
}

/// The SAN DNS names of the verified client certificate of a connection (mutual TLS):
/// put in the connection's data at connect, read by [`crate::auth`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PeerNames(pub Vec<String>);

/// The server certificate in use, swapped on reload.
#[derive(Debug)]
struct ReloadingCertificate(RwLock<Arc<CertifiedKey>>);

impl ResolvesServerCert for ReloadingCertificate {
    fn resolve(&self, _hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        Some(self.0.read().unwrap_or_else(PoisonError::into_inner).clone())
    }
}

/// The client verifier in use, swapped on reload.
#[derive(Debug)]
struct ReloadingClientVerifier(RwLock<Arc<dyn ClientCertVerifier>>);

impl ReloadingClientVerifier {
    fn current(&self) -> Arc<dyn ClientCertVerifier> {
        self.0.read().unwrap_or_else(PoisonError::into_inner).clone()
    }
}

impl ClientCertVerifier for ReloadingClientVerifier {
    fn client_auth_mandatory(&self) -> bool {
        true
    }

    fn root_hint_subjects(&self) -> &[DistinguishedName] {
        // Hints are optional (RFC 8446 clause 4.2.4); a client then offers its certificate.
        &[]
    }

    fn verify_client_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        now: UnixTime,
    ) -> Result<ClientCertVerified, rustls::Error> {
        self.current().verify_client_cert(end_entity, intermediates, now)
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        self.current().verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        self.current().verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.current().supported_verify_schemes()
    }
}

/// The listener's TLS: built once at start, reloaded on SIGHUP.
#[derive(Debug)]
pub struct ServerTls {
    settings: ServerTlsSettings,
    certificate: Arc<ReloadingCertificate>,
    clients: Option<Arc<ReloadingClientVerifier>>,
}

impl ServerTls {
    /// Reads the files; `None` when `[http.tls]` is not used.
    pub fn load(settings: &ServerTlsSettings) -> Result<Option<Arc<Self>>, TlsError> {
        if !settings.enabled() {
            return Ok(None);
        }
        let certificate = Arc::new(ReloadingCertificate(RwLock::new(Arc::new(certified_key(settings)?))));
        let clients = if settings.client_ca_file.as_os_str().is_empty() {
            None
        } else {
            Some(Arc::new(ReloadingClientVerifier(RwLock::new(client_verifier(&settings.client_ca_file)?))))
        };
        let tls = Self { settings: settings.clone(), certificate, clients };
        tls.warn_if_expired();
        Ok(Some(Arc::new(tls)))
    }

    /// Whether clients must present a certificate.
    pub fn mutual(&self) -> bool {
        self.clients.is_some()
    }

    /// The rustls configuration of the listener (HTTP/1.1; ALPN as actix-web offers it).
    pub fn server_config(&self) -> Result<rustls::ServerConfig, TlsError> {
        let builder = rustls::ServerConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()
            .map_err(|error| TlsError::Invalid {
                key: "cert_file",
                path: self.settings.cert_file.clone(),
                message: error.to_string(),
            })?;
        let builder = match &self.clients {
            Some(clients) => builder.with_client_cert_verifier(clients.clone()),
            None => builder.with_no_client_auth(),
        };
        let mut config = builder.with_cert_resolver(self.certificate.clone());
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(config)
    }

    /// Reads the files again. On any error the files in use stay in use.
    pub fn reload(&self) -> Result<(), TlsError> {
        let certified = certified_key(&self.settings)?;
        let verifier = match &self.clients {
            Some(_) => Some(client_verifier(&self.settings.client_ca_file)?),
            None => None,
        };
        *self.certificate.0.write().unwrap_or_else(PoisonError::into_inner) = Arc::new(certified);
        if let (Some(clients), Some(verifier)) = (&self.clients, verifier) {
            *clients.0.write().unwrap_or_else(PoisonError::into_inner) = verifier;
        }
        self.warn_if_expired();
        Ok(())
    }

    fn warn_if_expired(&self) {
        for problem in problems(&self.settings, UnixTime::now()) {
            tracing::warn!(%problem, "TLS certificate problem");
        }
    }
}

/// Just enough DER to read a certificate's validity (RFC 5280 clause 4.1.2.5).
mod der {
    use rustls::pki_types::CertificateDer;

    pub(super) struct NotAfter {
        pub(super) seconds: u64,
        pub(super) text: String,
    }

    /// One tag-length-value: (tag, contents, rest).
    fn element(input: &[u8]) -> Option<(u8, &[u8], &[u8])> {
        let (&tag, rest) = input.split_first()?;
        let (&first, rest) = rest.split_first()?;
        let (length, rest) = if first < 0x80 {
            (usize::from(first), rest)
        } else {
            let count = usize::from(first & 0x7f);
            if count == 0 || count > 4 || rest.len() < count {
                return None;
            }
            let (bytes, rest) = rest.split_at(count);
            (bytes.iter().fold(0usize, |length, byte| (length << 8) | usize::from(*byte)), rest)
        };
        (rest.len() >= length).then(|| (tag, &rest[..length], &rest[length..]))
    }

    const SEQUENCE: u8 = 0x30;
    const UTC_TIME: u8 = 0x17;
    const GENERALIZED_TIME: u8 = 0x18;
    const VERSION: u8 = 0xa0;

    pub(super) fn not_after(certificate: &CertificateDer<'_>) -> Option<NotAfter> {
        let (SEQUENCE, certificate, _) = element(certificate.as_ref())? else { return None };
        let (SEQUENCE, mut tbs, _) = element(certificate)? else { return None };
        if tbs.first() == Some(&VERSION) {
            tbs = element(tbs)?.2;
        }
        // serialNumber, signature, issuer; then validity.
        for _ in 0..3 {
            tbs = element(tbs)?.2;
        }
        let (SEQUENCE, validity, _) = element(tbs)? else { return None };
        let (_, _, validity) = element(validity)?;
        let (tag, time, _) = element(validity)?;
        let text = std::str::from_utf8(time).ok().filter(|text| text.is_ascii())?;
        let digits = text.strip_suffix('Z')?;
        let (year, rest) = match tag {
            UTC_TIME if digits.len() == 12 => {
                let short: i64 = digits[..2].parse().ok()?;
                (if short >= 50 { 1900 + short } else { 2000 + short }, &digits[2..])
            }
            GENERALIZED_TIME if digits.len() == 14 => (digits[..4].parse().ok()?, &digits[4..]),
            _ => return None,
        };
        let field = |at: usize| -> Option<i64> { rest.get(at..at + 2)?.parse().ok() };
        let (month, day, hour, minute, second) = (field(0)?, field(2)?, field(4)?, field(6)?, field(8)?);
        let days = days_from_civil(year, month, day);
        let seconds = days * 86_400 + hour * 3600 + minute * 60 + second;
        Some(NotAfter {
            seconds: u64::try_from(seconds).unwrap_or(0),
            text: format!("{year:04}-{month:02}-{day:02}T{hour:02}:{minute:02}:{second:02}Z"),
        })
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
    fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
        let year = if month <= 2 { year - 1 } else { year };
        let era = year.div_euclid(400);
        let year_of_era = year - era * 400;
        let month_index = (month + 9) % 12;
        let day_of_year = (153 * month_index + 2) / 5 + day - 1;
        let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
        era * 146_097 + day_of_era - 719_468
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    struct Files {
        _dir: tempfile::TempDir,
        settings: ServerTlsSettings,
    }

    fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    fn files(not_after: Option<(i32, u8, u8)>) -> (Files, rcgen::KeyPair) {
        let dir = tempfile::tempdir().unwrap();
        let key = rcgen::KeyPair::generate().unwrap();
        let mut params = rcgen::CertificateParams::new(vec!["localhost".into()]).unwrap();
        if let Some((year, month, day)) = not_after {
            params.not_before = rcgen::date_time_ymd(year - 1, month, day);
            params.not_after = rcgen::date_time_ymd(year, month, day);
        }
        let certificate = params.self_signed(&key).unwrap();
        let settings = ServerTlsSettings {
            cert_file: write(dir.path(), "server.pem", &certificate.pem()),
            key_file: write(dir.path(), "server.key", &key.serialize_pem()),
            client_ca_file: PathBuf::new(),
        };
        (Files { _dir: dir, settings }, key)
    }

    #[test]
    fn a_matching_pair_loads_and_has_no_problems() {
        let (files, _) = files(None);
        assert!(problems(&files.settings, UnixTime::now()).is_empty());
        let tls = ServerTls::load(&files.settings).unwrap().unwrap();
        assert!(!tls.mutual());
        tls.server_config().unwrap();
        tls.reload().unwrap();
        assert!(ServerTls::load(&ServerTlsSettings::default()).unwrap().is_none());
    }

    #[test]
    fn problems_name_the_setting_and_the_file() {
        let (files, _) = files(None);
        let (other, _) = files_with_other_key(&files);
        let found = problems(&other, UnixTime::now());
        assert!(matches!(found.as_slice(), [TlsError::KeyMismatch { .. }]), "{found:?}");
        assert!(found[0].to_string().starts_with("http.tls.key_file"), "{}", found[0]);

        let missing = ServerTlsSettings { cert_file: "/nonexistent/server.pem".into(), ..files.settings.clone() };
        let found = problems(&missing, UnixTime::now());
        assert!(found.iter().any(|problem| problem.to_string().contains("/nonexistent/server.pem")), "{found:?}");

        let only_ca = ServerTlsSettings { client_ca_file: files.settings.cert_file.clone(), ..Default::default() };
        let found = problems(&only_ca, UnixTime::now());
        assert!(
            found.iter().any(|problem| problem.to_string() == "http.tls.cert_file is required when http.tls is used")
        );

        let not_pem = ServerTlsSettings { cert_file: files.settings.key_file.clone(), ..files.settings.clone() };
        assert!(!problems(&not_pem, UnixTime::now()).is_empty());
    }

    fn files_with_other_key(files: &Files) -> (ServerTlsSettings, rcgen::KeyPair) {
        let other = rcgen::KeyPair::generate().unwrap();
        let path = files.settings.key_file.with_file_name("other.key");
        std::fs::write(&path, other.serialize_pem()).unwrap();
        (ServerTlsSettings { key_file: path, ..files.settings.clone() }, other)
    }

    #[test]
    fn expiry_is_read_from_the_certificate() {
        let (expired_files, _) = files(Some((2020, 3, 1)));
        let found = problems(&expired_files.settings, UnixTime::now());
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].to_string().contains("expired at 2020-03-01T00:00:00Z"), "{}", found[0]);

        let (future, _) = files(Some((2049, 12, 31)));
        assert!(problems(&future.settings, UnixTime::now()).is_empty());
        // Past 2050 a certificate carries GeneralizedTime (RFC 5280 clause 4.1.2.5).
        let (far, _) = files(Some((2051, 1, 2)));
        let chain = certificates(&far.settings.cert_file, "cert_file").unwrap();
        let not_after = der::not_after(&chain[0]).unwrap();
        assert_eq!(not_after.text, "2051-01-02T00:00:00Z");
        let later = UnixTime::since_unix_epoch(Duration::from_secs(not_after.seconds + 1));
        assert!(!problems(&far.settings, later).is_empty());
    }
}

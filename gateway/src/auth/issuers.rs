//! External OAuth 2.0 authorization servers (`[[auth.issuers]]`): access tokens that another
//! server issued, accepted beside solgate's own with `mode = "oauth2"`.
//!
//! - A JWT whose (unverified) `iss` names an issuer is checked against that issuer's keys
//!   (RFC 7517 JWK Set at `jwks_uri`; RS256/384/512, PS256/384/512, ES256, ES384): the
//!   signature, `iss`, `aud` (a string or an array, RFC 7519 clause 4.1.3), `exp` (required,
//!   RFC 9068 clause 2.2) and `nbf`, with a small leeway. `alg = "none"` and HS* are never
//!   accepted from an issuer: a shared secret would let the issuer's other clients forge
//!   tokens. The key set is cached, fetched again when a token names an unknown `kid` (at
//!   most once per 30 s, so a stream of made-up `kid`s cannot hammer the server) and when it
//!   is older than `jwks_refresh_secs`.
//! - A token that is not a JWT (opaque), or a JWT of an issuer without `jwks_uri`, is asked
//!   about at the issuer's RFC 7662 introspection endpoint (client authentication: HTTP
//!   Basic). `active = false` is a 401. The caller caches the answer for
//!   `introspection_cache_secs`, never beyond the token's `exp`: a revocation takes effect
//!   within that time.
//! - Tokens bound to a key or certificate (`cnf`, RFC 7800 / RFC 8705) or of another type
//!   than Bearer (DPoP) are refused: solgate cannot check the binding.
//!
//! Roles come from `roles_claim` (admin, member, reader; other values ignored), the project
//! from `project_claim`; a token without the roles claim gets `default_roles` (by default
//! none, so policy refuses it with 403). Scopes: `scope` (space-separated) or `scp`.

use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use aws_lc_rs::signature::{self, RsaParameters, RsaPublicKeyComponents, UnparsedPublicKey, VerificationAlgorithm};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use solgate_core::callbacks::cause_of;
use url::Url;

use super::{Principal, Role};

/// One `[[auth.issuers]]` entry.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IssuerSettings {
    /// The issuer identifier, compared exactly with a token's `iss`.
    pub issuer: String,
    /// The issuer's JWK Set (RFC 7517); empty: its tokens are introspected.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub jwks_uri: String,
    /// The `aud` a token must carry (one of its values when an array).
    pub audience: String,
    /// The RFC 7662 endpoint for opaque tokens (and for JWTs when there is no `jwks_uri`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub introspection_endpoint: String,
    /// solgate's client at the introspection endpoint (HTTP Basic).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub client_id: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub client_secret: String,
    /// The claim holding the roles (an array of strings, or one space-separated string).
    #[serde(default = "default_roles_claim")]
    pub roles_claim: String,
    /// The claim holding the project (a string).
    #[serde(default = "default_project_claim")]
    pub project_claim: String,
    /// The roles of a token without the roles claim; none by default (policy answers 403).
    #[serde(default)]
    pub default_roles: Vec<Role>,
    /// How long an introspection answer is reused (never beyond the token's `exp`); 0: never.
    #[serde(default = "default_introspection_cache_secs")]
    pub introspection_cache_secs: u64,
    /// The key set is fetched again when it is older than this.
    #[serde(default = "default_jwks_refresh_secs")]
    pub jwks_refresh_secs: u64,
    /// Clock skew allowed on `exp` and `nbf`.
    #[serde(default = "default_leeway_secs")]
    pub leeway_secs: u64,
}

fn default_roles_claim() -> String {
    "roles".into()
}

fn default_project_claim() -> String {
    "project".into()
}

fn default_introspection_cache_secs() -> u64 {
    30
}

fn default_jwks_refresh_secs() -> u64 {
    600
}

fn default_leeway_secs() -> u64 {
    5
}

impl IssuerSettings {
    /// An entry with the defaults of the optional fields.
    pub fn new(issuer: impl Into<String>, audience: impl Into<String>) -> Self {
        Self {
            issuer: issuer.into(),
            jwks_uri: String::new(),
            audience: audience.into(),
            introspection_endpoint: String::new(),
            client_id: String::new(),
            client_secret: String::new(),
            roles_claim: default_roles_claim(),
            project_claim: default_project_claim(),
            default_roles: Vec::new(),
            introspection_cache_secs: default_introspection_cache_secs(),
            jwks_refresh_secs: default_jwks_refresh_secs(),
            leeway_secs: default_leeway_secs(),
        }
    }
}

impl std::fmt::Debug for IssuerSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IssuerSettings")
            .field("issuer", &self.issuer)
            .field("jwks_uri", &self.jwks_uri)
            .field("audience", &self.audience)
            .field("introspection_endpoint", &self.introspection_endpoint)
            .field("client_id", &self.client_id)
            .field("roles_claim", &self.roles_claim)
            .field("project_claim", &self.project_claim)
            .field("default_roles", &self.default_roles)
            .finish_non_exhaustive()
    }
}

/// Why an issuer's token is refused: the first six are 401 `invalid_token`, `Unavailable`
/// is 503 (the token may be fine; the issuer could not be asked).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum IssuerError {
    #[error("the access token is malformed")]
    Malformed,
    #[error("the access token is signed with an algorithm solgate does not accept from an authorization server")]
    Algorithm,
    #[error("the access token was signed with an unknown key")]
    UnknownKey,
    #[error("the access token's signature is invalid")]
    BadSignature,
    #[error("the access token has expired")]
    Expired,
    #[error("the access token is not valid yet")]
    NotYetValid,
    #[error("the access token was not issued for this audience")]
    WrongAudience,
    #[error("the access token is bound to a key or certificate, or is not a Bearer token")]
    Bound,
    #[error("the access token is not active")]
    Inactive,
    #[error("the authorization server could not be asked about the access token")]
    Unavailable,
}

/// A token an issuer vouches for: who, and until when the answer may be reused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verified {
    pub principal: Principal,
    /// Unix seconds; at or before now: do not reuse.
    pub cache_until: i64,
}

/// The key set is fetched again for an unknown `kid` at most this often.
const UNKNOWN_KID_REFETCH: Duration = Duration::from_secs(30);
/// Larger answers from an authorization server are refused.
const JWKS_LIMIT: usize = 1 << 20;
const INTROSPECTION_LIMIT: usize = 64 << 10;
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

/// The issuers of `[[auth.issuers]]`, with their cached keys and one HTTP client.
pub struct Issuers {
    issuers: Vec<Issuer>,
    http: reqwest::Client,
}

impl std::fmt::Debug for Issuers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.issuers.iter().map(|issuer| &issuer.settings.issuer)).finish()
    }
}

struct Issuer {
    settings: IssuerSettings,
    jwks: Option<KeyCache>,
    introspection: Option<Url>,
}

impl Issuers {
    /// Checks the entries; the client goes through `[tls]` and `[egress]`.
    pub fn new(settings: &[IssuerSettings], outbound: &solgate_core::egress::Outbound) -> Result<Self, String> {
        let http = outbound
            .client_builder(false)
            .map_err(|error| format!("auth.issuers: {error}"))?
            .timeout(REQUEST_TIMEOUT)
            .connect_timeout(REQUEST_TIMEOUT)
            .build()
            .map_err(|error| format!("auth.issuers: cannot build the HTTP client: {error}"))?;
        Self::with_client(settings, http, UNKNOWN_KID_REFETCH)
    }

    fn with_client(settings: &[IssuerSettings], http: reqwest::Client, refetch: Duration) -> Result<Self, String> {
        let mut seen = std::collections::HashSet::new();
        let mut issuers = Vec::new();
        for entry in settings {
            let name = &entry.issuer;
            let fail = |what: &str| Err(format!("auth.issuers: issuer `{name}`: {what}"));
            if name.is_empty() || !seen.insert(name.as_str()) {
                return fail("the issuer is empty or listed twice");
            }
            if name == super::token::ISSUER {
                return fail("`solgate` names solgate's own tokens");
            }
            if entry.audience.is_empty() {
                return fail("audience is required");
            }
            if entry.roles_claim.is_empty() || entry.project_claim.is_empty() {
                return fail("roles_claim and project_claim may not be empty");
            }
            if entry.jwks_uri.is_empty() && entry.introspection_endpoint.is_empty() {
                return fail("give jwks_uri, introspection_endpoint or both");
            }
            let parse = |key: &str, text: &str| -> Result<Option<Url>, String> {
                if text.is_empty() {
                    return Ok(None);
                }
                let url = Url::parse(text)
                    .ok()
                    .filter(|url| matches!(url.scheme(), "http" | "https") && url.host().is_some())
                    .ok_or_else(|| format!("auth.issuers: issuer `{name}`: {key} `{text}` is not an http(s) URI"))?;
                let loopback = match url.host() {
                    Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
                    Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
                    Some(url::Host::Domain(host)) => host == "localhost",
                    None => false,
                };
                if url.scheme() == "http" && !loopback {
                    tracing::warn!(issuer = %name, "auth.issuers: {key} is plain http: use https beyond this host");
                }
                Ok(Some(url))
            };
            let jwks = parse("jwks_uri", &entry.jwks_uri)?;
            let introspection = parse("introspection_endpoint", &entry.introspection_endpoint)?;
            if introspection.is_some() && (entry.client_id.is_empty() || entry.client_secret.is_empty()) {
                return fail("introspection_endpoint needs client_id and client_secret");
            }
            issuers.push(Issuer {
                settings: entry.clone(),
                jwks: jwks.map(|uri| KeyCache::new(uri, Duration::from_secs(entry.jwks_refresh_secs), refetch)),
                introspection,
            });
        }
        Ok(Self { issuers, http })
    }

    pub fn is_empty(&self) -> bool {
        self.issuers.is_empty()
    }

    /// The verdict of the issuer a token belongs to; `None` when it belongs to none (a JWT
    /// of another `iss`, or an opaque token and no introspection endpoint): solgate's own
    /// check applies then.
    pub async fn verify(&self, token: &str, now: i64) -> Option<Result<Verified, IssuerError>> {
        if self.issuers.is_empty() {
            return None;
        }
        match Jwt::parse(token) {
            Some(jwt) => {
                let issuer = self.issuers.iter().find(|issuer| Some(issuer.settings.issuer.as_str()) == jwt.iss())?;
                Some(match (&issuer.jwks, &issuer.introspection) {
                    (Some(keys), _) => issuer.verify_jwt(&self.http, keys, &jwt, now).await,
                    (None, Some(endpoint)) => issuer.introspect(&self.http, endpoint, token, now).await,
                    (None, None) => Err(IssuerError::UnknownKey),
                })
            }
            None => {
                let mut verdict = None;
                for issuer in &self.issuers {
                    let Some(endpoint) = &issuer.introspection else { continue };
                    match issuer.introspect(&self.http, endpoint, token, now).await {
                        Ok(verified) => return Some(Ok(verified)),
                        // An outage says less than a refusal by another issuer.
                        Err(IssuerError::Unavailable) => {
                            verdict.get_or_insert(Err(IssuerError::Unavailable));
                        }
                        Err(error) => verdict = Some(Err(error)),
                    }
                }
                verdict
            }
        }
    }
}

/// A compact JWS, decoded but not yet verified.
struct Jwt<'a> {
    header: Map<String, Value>,
    claims: Map<String, Value>,
    signing_input: &'a str,
    signature: Vec<u8>,
}

impl<'a> Jwt<'a> {
    fn parse(token: &'a str) -> Option<Self> {
        let (signing_input, signature) = token.rsplit_once('.')?;
        let (header, payload) = signing_input.split_once('.')?;
        if payload.contains('.') {
            return None;
        }
        let object = |part: &str| -> Option<Map<String, Value>> {
            serde_json::from_slice(&URL_SAFE_NO_PAD.decode(part).ok()?).ok()
        };
        Some(Self {
            header: object(header)?,
            claims: object(payload)?,
            signing_input,
            signature: URL_SAFE_NO_PAD.decode(signature).ok()?,
        })
    }

    fn iss(&self) -> Option<&str> {
        self.claims.get("iss").and_then(Value::as_str)
    }
}

/// The JWS algorithms accepted from issuers (RFC 7518 clause 3.1): asymmetric only.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Alg {
    Rs256,
    Rs384,
    Rs512,
    Ps256,
    Ps384,
    Ps512,
    Es256,
    Es384,
}

impl Alg {
    fn from_name(name: &str) -> Option<Self> {
        Some(match name {
            "RS256" => Alg::Rs256,
            "RS384" => Alg::Rs384,
            "RS512" => Alg::Rs512,
            "PS256" => Alg::Ps256,
            "PS384" => Alg::Ps384,
            "PS512" => Alg::Ps512,
            "ES256" => Alg::Es256,
            "ES384" => Alg::Es384,
            _ => return None,
        })
    }

    fn name(self) -> &'static str {
        match self {
            Alg::Rs256 => "RS256",
            Alg::Rs384 => "RS384",
            Alg::Rs512 => "RS512",
            Alg::Ps256 => "PS256",
            Alg::Ps384 => "PS384",
            Alg::Ps512 => "PS512",
            Alg::Es256 => "ES256",
            Alg::Es384 => "ES384",
        }
    }

    fn rsa(self) -> Option<&'static RsaParameters> {
        Some(match self {
            Alg::Rs256 => &signature::RSA_PKCS1_2048_8192_SHA256,
            Alg::Rs384 => &signature::RSA_PKCS1_2048_8192_SHA384,
            Alg::Rs512 => &signature::RSA_PKCS1_2048_8192_SHA512,
            Alg::Ps256 => &signature::RSA_PSS_2048_8192_SHA256,
            Alg::Ps384 => &signature::RSA_PSS_2048_8192_SHA384,
            Alg::Ps512 => &signature::RSA_PSS_2048_8192_SHA512,
            Alg::Es256 | Alg::Es384 => return None,
        })
    }
}

/// The public part of a JWK solgate can verify with.
#[derive(Debug, Clone, PartialEq, Eq)]
enum KeyMaterial {
    Rsa {
        n: Vec<u8>,
        e: Vec<u8>,
    },
    /// An uncompressed point (0x04 || x || y) on P-256 or P-384.
    Ec {
        curve: Alg,
        point: Vec<u8>,
    },
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct PublicKey {
    kid: Option<String>,
    /// The JWK's `alg`, when it names one: the only algorithm it verifies then.
    alg: Option<String>,
    material: KeyMaterial,
}

impl PublicKey {
    /// A JWK (RFC 7517 clause 4, RFC 7518 clause 6); `None` for keys solgate cannot use
    /// (symmetric, other curves, encryption keys).
    fn from_jwk(jwk: &Map<String, Value>) -> Option<Self> {
        let text = |name: &str| jwk.get(name).and_then(Value::as_str);
        if text("use").is_some_and(|usage| usage != "sig") {
            return None;
        }
        if let Some(ops) = jwk.get("key_ops").and_then(Value::as_array)
            && !ops.iter().any(|op| op.as_str() == Some("verify"))
        {
            return None;
        }
        let bytes = |name: &str| text(name).and_then(|value| URL_SAFE_NO_PAD.decode(value).ok());
        let material = match text("kty")? {
            "RSA" => {
                // Big-endian without leading zeros, as aws-lc-rs expects them.
                let strip = |mut value: Vec<u8>| {
                    let zeros = value.iter().take_while(|byte| **byte == 0).count();
                    value.drain(..zeros);
                    Some(value).filter(|value| !value.is_empty())
                };
                KeyMaterial::Rsa { n: strip(bytes("n")?)?, e: strip(bytes("e")?)? }
            }
            "EC" => {
                let (curve, width) = match text("crv")? {
                    "P-256" => (Alg::Es256, 32),
                    "P-384" => (Alg::Es384, 48),
                    _ => return None,
                };
                let (x, y) = (bytes("x")?, bytes("y")?);
                if x.len() != width || y.len() != width {
                    return None;
                }
                let mut point = Vec::with_capacity(1 + 2 * width);
                point.push(4);
                point.extend_from_slice(&x);
                point.extend_from_slice(&y);
                KeyMaterial::Ec { curve, point }
            }
            _ => return None,
        };
        Some(Self { kid: text("kid").map(str::to_owned), alg: text("alg").map(str::to_owned), material })
    }

    /// Whether this key may verify `alg` (its type and curve fit, and its own `alg` agrees).
    fn fits(&self, alg: Alg) -> bool {
        if self.alg.as_deref().is_some_and(|own| own != alg.name()) {
            return false;
        }
        match &self.material {
            KeyMaterial::Rsa { .. } => alg.rsa().is_some(),
            KeyMaterial::Ec { curve, .. } => *curve == alg,
        }
    }

    fn verify(&self, alg: Alg, message: &[u8], signature: &[u8]) -> bool {
        match (&self.material, alg.rsa()) {
            (KeyMaterial::Rsa { n, e }, Some(parameters)) => {
                RsaPublicKeyComponents { n, e }.verify(parameters, message, signature).is_ok()
            }
            (KeyMaterial::Ec { curve, point }, None) if *curve == alg => {
                let algorithm: &'static dyn VerificationAlgorithm = match alg {
                    Alg::Es384 => &signature::ECDSA_P384_SHA384_FIXED,
                    _ => &signature::ECDSA_P256_SHA256_FIXED,
                };
                UnparsedPublicKey::new(algorithm, point).verify(message, signature).is_ok()
            }
            _ => false,
        }
    }
}

/// A JWK Set (RFC 7517 clause 5): the keys solgate can use, the others skipped.
fn parse_key_set(body: &[u8]) -> Result<Vec<PublicKey>, String> {
    let set: Value = serde_json::from_slice(body).map_err(|error| format!("the key set is not JSON: {error}"))?;
    let keys = set.get("keys").and_then(Value::as_array).ok_or("the key set has no `keys` array")?;
    Ok(keys.iter().filter_map(Value::as_object).filter_map(PublicKey::from_jwk).collect())
}

/// An issuer's keys, fetched on first use, again when older than `refresh`, and for an
/// unknown `kid` at most once per `refetch`.
struct KeyCache {
    uri: Url,
    refresh: Duration,
    refetch: Duration,
    keys: RwLock<Arc<KeySet>>,
    /// When a fetch last started; held while fetching, so concurrent requests fetch once.
    last_attempt: tokio::sync::Mutex<Option<Instant>>,
}

#[derive(Default)]
struct KeySet {
    keys: Vec<PublicKey>,
    /// When these keys were fetched; `None`: never (successfully).
    fetched: Option<Instant>,
}

impl KeyCache {
    fn new(uri: Url, refresh: Duration, refetch: Duration) -> Self {
        Self {
            uri,
            refresh,
            refetch,
            keys: RwLock::new(Arc::new(KeySet::default())),
            last_attempt: tokio::sync::Mutex::new(None),
        }
    }

    fn current(&self) -> Arc<KeySet> {
        self.keys.read().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }

    /// The key for a token's `kid` and `alg`.
    async fn key(&self, http: &reqwest::Client, kid: Option<&str>, alg: Alg) -> Result<PublicKey, IssuerError> {
        let find = |set: &KeySet| {
            set.keys.iter().filter(|key| key.fits(alg)).find(|key| kid.is_none() || key.kid.as_deref() == kid).cloned()
        };
        let mut set = self.current();
        let stale = set.fetched.is_none_or(|fetched| fetched.elapsed() >= self.refresh);
        if stale {
            self.fetch(http, self.refetch).await;
            set = self.current();
        }
        if let Some(key) = find(&set) {
            return Ok(key);
        }
        // A rotation: the issuer may have published the key since.
        self.fetch(http, self.refetch).await;
        set = self.current();
        match find(&set) {
            Some(key) => Ok(key),
            None if set.fetched.is_none() => Err(IssuerError::Unavailable),
            None => Err(IssuerError::UnknownKey),
        }
    }

    /// Fetches the key set unless a fetch started less than `interval` ago.
    async fn fetch(&self, http: &reqwest::Client, interval: Duration) {
        let mut last = self.last_attempt.lock().await;
        if last.is_some_and(|at| at.elapsed() < interval) {
            return;
        }
        *last = Some(Instant::now());
        let result = async {
            let response = http
                .get(self.uri.clone())
                .header(reqwest::header::ACCEPT, "application/jwk-set+json, application/json")
                .send()
                .await
                .map_err(|error| cause_of(&error))?;
            if !response.status().is_success() {
                return Err(format!("HTTP status {}", response.status().as_u16()));
            }
            parse_key_set(&read_limited(response, JWKS_LIMIT).await?)
        }
        .await;
        match result {
            Ok(keys) => {
                if keys.is_empty() {
                    tracing::warn!(uri = %self.uri, "auth.issuers: the key set holds no key solgate can verify with");
                }
                let fresh = Arc::new(KeySet { keys, fetched: Some(Instant::now()) });
                *self.keys.write().unwrap_or_else(std::sync::PoisonError::into_inner) = fresh;
            }
            Err(error) => tracing::warn!(uri = %self.uri, %error, "auth.issuers: cannot fetch the key set"),
        }
    }
}

async fn read_limited(mut response: reqwest::Response, limit: usize) -> Result<Vec<u8>, String> {
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|error| cause_of(&error))? {
        if body.len().saturating_add(chunk.len()) > limit {
            return Err(format!("the answer is larger than {limit} bytes"));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

fn seconds(value: Option<&Value>) -> Option<i64> {
    // NumericDate may carry a fraction (RFC 7519 clause 2).
    value.and_then(|value| value.as_i64().or_else(|| value.as_f64().map(|float| float as i64)))
}

impl Issuer {
    fn leeway(&self) -> i64 {
        i64::try_from(self.settings.leeway_secs).unwrap_or(i64::MAX)
    }

    async fn verify_jwt(
        &self,
        http: &reqwest::Client,
        keys: &KeyCache,
        jwt: &Jwt<'_>,
        now: i64,
    ) -> Result<Verified, IssuerError> {
        if jwt.header.contains_key("crit") {
            return Err(IssuerError::Malformed);
        }
        let alg =
            jwt.header.get("alg").and_then(Value::as_str).and_then(Alg::from_name).ok_or(IssuerError::Algorithm)?;
        let kid = match jwt.header.get("kid") {
            None => None,
            Some(Value::String(kid)) => Some(kid.as_str()),
            Some(_) => return Err(IssuerError::Malformed),
        };
        let key = keys.key(http, kid, alg).await?;
        if !key.verify(alg, jwt.signing_input.as_bytes(), &jwt.signature) {
            return Err(IssuerError::BadSignature);
        }
        let claims = &jwt.claims;
        if jwt.iss() != Some(self.settings.issuer.as_str()) {
            return Err(IssuerError::WrongAudience);
        }
        let exp = seconds(claims.get("exp")).ok_or(IssuerError::Malformed)?;
        self.check_times(claims, exp, now)?;
        if !self.audience_matches(claims.get("aud")) {
            return Err(IssuerError::WrongAudience);
        }
        if claims.contains_key("cnf") {
            return Err(IssuerError::Bound);
        }
        Ok(Verified { principal: self.principal(claims)?, cache_until: exp })
    }

    fn check_times(&self, claims: &Map<String, Value>, exp: i64, now: i64) -> Result<(), IssuerError> {
        if exp.saturating_add(self.leeway()) <= now {
            return Err(IssuerError::Expired);
        }
        if seconds(claims.get("nbf")).is_some_and(|nbf| nbf > now.saturating_add(self.leeway())) {
            return Err(IssuerError::NotYetValid);
        }
        Ok(())
    }

    fn audience_matches(&self, aud: Option<&Value>) -> bool {
        let audience = self.settings.audience.as_str();
        match aud {
            Some(Value::String(aud)) => aud == audience,
            Some(Value::Array(list)) => list.iter().any(|aud| aud.as_str() == Some(audience)),
            _ => false,
        }
    }

    /// RFC 7662: `token` POSTed with the client authenticated by HTTP Basic (the id and
    /// secret form-urlencoded first, RFC 6749 clause 2.3.1).
    async fn introspect(
        &self,
        http: &reqwest::Client,
        endpoint: &Url,
        token: &str,
        now: i64,
    ) -> Result<Verified, IssuerError> {
        let encode = |text: &str| url::form_urlencoded::byte_serialize(text.as_bytes()).collect::<String>();
        let body = url::form_urlencoded::Serializer::new(String::new())
            .append_pair("token", token)
            .append_pair("token_type_hint", "access_token")
            .finish();
        let unavailable = |error: String| {
            tracing::warn!(issuer = %self.settings.issuer, %error, "auth.issuers: introspection failed");
            IssuerError::Unavailable
        };
        let response = http
            .post(endpoint.clone())
            .basic_auth(encode(&self.settings.client_id), Some(encode(&self.settings.client_secret)))
            .header(reqwest::header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .header(reqwest::header::ACCEPT, "application/json")
            .body(body)
            .send()
            .await
            .map_err(|error| unavailable(cause_of(&error)))?;
        if !response.status().is_success() {
            return Err(unavailable(format!("HTTP status {}", response.status().as_u16())));
        }
        let answer = read_limited(response, INTROSPECTION_LIMIT).await.map_err(unavailable)?;
        let claims: Map<String, Value> = serde_json::from_slice(&answer)
            .map_err(|error| unavailable(format!("the answer is not a JSON object: {error}")))?;
        if claims.get("active") != Some(&Value::Bool(true)) {
            return Err(IssuerError::Inactive);
        }
        if claims.get("iss").is_some_and(|iss| iss.as_str() != Some(self.settings.issuer.as_str())) {
            return Err(IssuerError::Inactive);
        }
        let exp = seconds(claims.get("exp"));
        self.check_times(&claims, exp.unwrap_or(i64::MAX), now)?;
        // RFC 7662 makes `aud` optional: when given it must name solgate's audience.
        if claims.contains_key("aud") && !self.audience_matches(claims.get("aud")) {
            return Err(IssuerError::WrongAudience);
        }
        let bearer = claims
            .get("token_type")
            .is_none_or(|kind| kind.as_str().is_some_and(|kind| kind.eq_ignore_ascii_case("bearer")));
        if !bearer || claims.contains_key("cnf") {
            return Err(IssuerError::Bound);
        }
        let cache = i64::try_from(self.settings.introspection_cache_secs).unwrap_or(i64::MAX);
        let cache_until = now.saturating_add(cache).min(exp.unwrap_or(i64::MAX));
        Ok(Verified { principal: self.principal(&claims)?, cache_until })
    }

    fn principal(&self, claims: &Map<String, Value>) -> Result<Principal, IssuerError> {
        let text = |name: &str| claims.get(name).and_then(Value::as_str).filter(|text| !text.is_empty());
        let client_id = text("client_id").or_else(|| text("sub")).ok_or(IssuerError::Malformed)?.to_owned();
        let roles = match claims.get(&self.settings.roles_claim) {
            None | Some(Value::Null) => self.settings.default_roles.clone(),
            Some(value) => {
                let names: Vec<&str> = match value {
                    Value::String(names) => names.split_whitespace().collect(),
                    Value::Array(names) => names.iter().filter_map(Value::as_str).collect(),
                    _ => Vec::new(),
                };
                let mut roles: Vec<Role> = names
                    .into_iter()
                    .filter_map(|name| match name {
                        "admin" => Some(Role::Admin),
                        "member" => Some(Role::Member),
                        "reader" => Some(Role::Reader),
                        _ => None,
                    })
                    .collect();
                roles.sort();
                roles.dedup();
                roles
            }
        };
        let project = text(&self.settings.project_claim).unwrap_or_default().to_owned();
        let scopes = match (claims.get("scope"), claims.get("scp")) {
            (Some(Value::String(scope)), _) => Some(scope.split_whitespace().map(str::to_owned).collect()),
            (_, Some(Value::Array(scopes))) => {
                Some(scopes.iter().filter_map(Value::as_str).map(str::to_owned).collect())
            }
            (_, Some(Value::String(scope))) => Some(scope.split_whitespace().map(str::to_owned).collect()),
            _ => None,
        };
        Ok(Principal { client_id, roles, project, scopes })
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use aws_lc_rs::rand::SystemRandom;
    use aws_lc_rs::signature::{EcdsaKeyPair, KeyPair, RsaKeyPair};
    use serde_json::json;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::*;

    const ISS: &str = "https://as.example";
    const NOW: i64 = 1_800_000_000;

    fn b64(bytes: &[u8]) -> String {
        URL_SAFE_NO_PAD.encode(bytes)
    }

    /// n and e of a DER RSAPublicKey (SEQUENCE { INTEGER n, INTEGER e }).
    fn rsa_components(der: &[u8]) -> (Vec<u8>, Vec<u8>) {
        fn item(input: &[u8]) -> (&[u8], &[u8]) {
            let (length, header) = match input[1] {
                short if short < 0x80 => (usize::from(short), 2),
                long => {
                    let count = usize::from(long & 0x7f);
                    (input[2..2 + count].iter().fold(0, |sum, byte| sum << 8 | usize::from(*byte)), 2 + count)
                }
            };
            (&input[header..header + length], &input[header + length..])
        }
        let (sequence, _) = item(der);
        let (n, rest) = item(sequence);
        let (e, _) = item(rest);
        (n.to_vec(), e.to_vec())
    }

    /// A signing key of the test issuer and its JWK.
    enum Signer {
        Rsa(RsaKeyPair),
        Ec(EcdsaKeyPair),
    }

    impl Signer {
        fn rsa() -> Self {
            Signer::Rsa(RsaKeyPair::generate(aws_lc_rs::rsa::KeySize::Rsa2048).unwrap())
        }

        fn ec() -> Self {
            Signer::Ec(EcdsaKeyPair::generate(&signature::ECDSA_P256_SHA256_FIXED_SIGNING).unwrap())
        }

        fn jwk(&self, kid: &str) -> Value {
            match self {
                Signer::Rsa(pair) => {
                    let (n, e) = rsa_components(pair.public_key().as_ref());
                    json!({"kty": "RSA", "kid": kid, "use": "sig", "alg": "RS256", "n": b64(&n), "e": b64(&e)})
                }
                Signer::Ec(pair) => {
                    let point = pair.public_key().as_ref();
                    json!({"kty": "EC", "kid": kid, "crv": "P-256", "x": b64(&point[1..33]), "y": b64(&point[33..])})
                }
            }
        }

        fn token(&self, header: &Value, claims: &Value) -> String {
            let input = format!("{}.{}", b64(header.to_string().as_bytes()), b64(claims.to_string().as_bytes()));
            let signature = match self {
                Signer::Rsa(pair) => {
                    let mut signature = vec![0; pair.public_modulus_len()];
                    pair.sign(&signature::RSA_PKCS1_SHA256, &SystemRandom::new(), input.as_bytes(), &mut signature)
                        .unwrap();
                    signature
                }
                Signer::Ec(pair) => pair.sign(&SystemRandom::new(), input.as_bytes()).unwrap().as_ref().to_vec(),
            };
            format!("{input}.{}", b64(&signature))
        }
    }

    fn claims() -> Value {
        json!({"iss": ISS, "aud": "solgate", "sub": "nfvo-7", "client_id": "nfvo-7", "exp": NOW + 600,
               "iat": NOW, "roles": ["member"], "project": "p1", "scope": "vnflcm vnfpkgm"})
    }

    /// A one-route HTTP server on a free port: each request gets `answer(request)`; the
    /// counter counts requests.
    async fn server(answer: impl Fn(&str) -> (u16, String) + Send + Sync + 'static) -> (String, Arc<AtomicUsize>) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let hits = Arc::new(AtomicUsize::new(0));
        let (answer, counter) = (Arc::new(answer), hits.clone());
        tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                let (answer, counter) = (answer.clone(), counter.clone());
                tokio::spawn(async move {
                    let mut request = Vec::new();
                    let mut buffer = [0; 4096];
                    loop {
                        let read = stream.read(&mut buffer).await.unwrap_or(0);
                        request.extend_from_slice(&buffer[..read]);
                        let text = String::from_utf8_lossy(&request).into_owned();
                        if let Some((head, body)) = text.split_once("\r\n\r\n") {
                            let length = head
                                .lines()
                                .find_map(|line| {
                                    line.to_ascii_lowercase().strip_prefix("content-length:").map(str::to_owned)
                                })
                                .and_then(|value| value.trim().parse::<usize>().ok())
                                .unwrap_or(0);
                            if body.len() >= length {
                                break;
                            }
                        }
                        if read == 0 {
                            break;
                        }
                    }
                    counter.fetch_add(1, Ordering::SeqCst);
                    let (status, body) = answer(&String::from_utf8_lossy(&request));
                    let response = format!(
                        "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                        body.len()
                    );
                    let _ = stream.write_all(response.as_bytes()).await;
                });
            }
        });
        (url, hits)
    }

    fn issuers(settings: IssuerSettings, refetch: Duration) -> Issuers {
        Issuers::with_client(&[settings], reqwest::Client::new(), refetch).unwrap()
    }

    fn jwks_issuer(uri: &str) -> IssuerSettings {
        IssuerSettings { jwks_uri: format!("{uri}/jwks"), ..IssuerSettings::new(ISS, "solgate") }
    }

    async fn verdict(issuers: &Issuers, token: &str) -> Result<Verified, IssuerError> {
        issuers.verify(token, NOW).await.expect("the token belongs to the issuer")
    }

    #[tokio::test]
    async fn rs256_and_es256_tokens_verify_and_every_check_refuses_its_case() {
        let (rsa, ec) = (Signer::rsa(), Signer::ec());
        let set = json!({"keys": [rsa.jwk("r1"), ec.jwk("e1"), {"kty": "oct", "k": "c2VjcmV0"}]}).to_string();
        let (uri, hits) = server(move |_| (200, set.clone())).await;
        let issuers = issuers(jwks_issuer(&uri), Duration::from_secs(30));

        let rs = rsa.token(&json!({"alg": "RS256", "typ": "at+jwt", "kid": "r1"}), &claims());
        let verified = verdict(&issuers, &rs).await.unwrap();
        assert_eq!(
            verified.principal,
            Principal {
                client_id: "nfvo-7".into(),
                roles: vec![Role::Member],
                project: "p1".into(),
                scopes: Some(vec!["vnflcm".into(), "vnfpkgm".into()]),
            }
        );
        assert_eq!(verified.cache_until, NOW + 600);
        let es = ec.token(&json!({"alg": "ES256", "kid": "e1"}), &claims());
        assert_eq!(verdict(&issuers, &es).await.unwrap().principal.client_id, "nfvo-7");
        // No kid: any key that fits the algorithm.
        let no_kid = ec.token(&json!({"alg": "ES256"}), &claims());
        assert!(verdict(&issuers, &no_kid).await.is_ok());
        assert_eq!(hits.load(Ordering::SeqCst), 1, "the key set is cached");

        let with = |change: &dyn Fn(&mut Value)| {
            let mut claims = claims();
            change(&mut claims);
            rsa.token(&json!({"alg": "RS256", "kid": "r1"}), &claims)
        };
        let remove = |name: &'static str| {
            move |claims: &mut Value| {
                claims.as_object_mut().unwrap().remove(name);
            }
        };
        let cases: Vec<(String, IssuerError)> = vec![
            (with(&|c| c["exp"] = json!(NOW - 6)), IssuerError::Expired),
            (with(&|c| c["nbf"] = json!(NOW + 60)), IssuerError::NotYetValid),
            (with(&|c| c["aud"] = json!("other")), IssuerError::WrongAudience),
            (with(&|c| c["aud"] = json!(["other", "another"])), IssuerError::WrongAudience),
            (with(&remove("aud")), IssuerError::WrongAudience),
            (with(&remove("exp")), IssuerError::Malformed),
            (with(&|c| c["cnf"] = json!({"jkt": "x"})), IssuerError::Bound),
            (rsa.token(&json!({"alg": "RS256", "kid": "r1", "crit": ["x"]}), &claims()), IssuerError::Malformed),
            (rsa.token(&json!({"alg": "RS256", "kid": "e1"}), &claims()), IssuerError::UnknownKey),
        ];
        for (token, expected) in cases {
            assert_eq!(verdict(&issuers, &token).await, Err(expected), "{expected:?}");
        }
        // Within the leeway, an array audience, a fractional exp: accepted.
        assert!(verdict(&issuers, &with(&|c| c["exp"] = json!(NOW - 4))).await.is_ok());
        assert!(verdict(&issuers, &with(&|c| c["aud"] = json!(["x", "solgate"]))).await.is_ok());
        assert!(verdict(&issuers, &with(&|c| c["exp"] = json!(NOW as f64 + 10.5))).await.is_ok());

        // Tampered claims keep the old signature: refused.
        let (input, signature) = rs.rsplit_once('.').unwrap();
        let header = input.split('.').next().unwrap();
        let mut admin = claims();
        admin["roles"] = json!(["admin"]);
        let forged = format!("{header}.{}.{signature}", b64(admin.to_string().as_bytes()));
        assert_eq!(verdict(&issuers, &forged).await, Err(IssuerError::BadSignature));
        // Another key under a known kid: refused.
        let impostor = Signer::rsa().token(&json!({"alg": "RS256", "kid": "r1"}), &claims());
        assert_eq!(verdict(&issuers, &impostor).await, Err(IssuerError::BadSignature));
    }

    #[tokio::test]
    async fn none_and_hmac_are_never_accepted_from_an_issuer() {
        let (uri, _) =
            server(|_| (200, json!({"keys": [{"kty": "oct", "k": "c2VjcmV0", "alg": "HS256"}]}).to_string())).await;
        let issuers = issuers(jwks_issuer(&uri), Duration::from_secs(30));
        let payload = b64(claims().to_string().as_bytes());
        for alg in ["none", "HS256", "HS512", "RS1", ""] {
            let header = b64(json!({"alg": alg}).to_string().as_bytes());
            let signature = if alg == "none" { String::new() } else { b64(b"x") };
            assert_eq!(
                verdict(&issuers, &format!("{header}.{payload}.{signature}")).await,
                Err(IssuerError::Algorithm)
            );
        }
        // A JWT of another issuer, or solgate's own: not this module's.
        let other = format!("{}.{}.x", b64(br#"{"alg":"HS256"}"#), b64(br#"{"iss":"solgate"}"#));
        assert!(issuers.verify(&other, NOW).await.is_none());
        // An opaque token and no introspection endpoint: not this module's either.
        assert!(issuers.verify("opaque-token", NOW).await.is_none());
    }

    #[tokio::test]
    async fn an_unknown_kid_fetches_the_keys_again_at_most_once_per_interval() {
        let (old, new) = (Signer::ec(), Signer::ec());
        let rotated = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (old_jwk, new_jwk, flag) = (old.jwk("old"), new.jwk("new"), rotated.clone());
        let (uri, hits) = server(move |_| {
            let keys = if flag.load(Ordering::SeqCst) { json!([old_jwk, new_jwk]) } else { json!([old_jwk]) };
            (200, json!({"keys": keys}).to_string())
        })
        .await;
        let issuers = issuers(jwks_issuer(&uri), Duration::from_millis(1500));
        assert!(verdict(&issuers, &old.token(&json!({"alg": "ES256", "kid": "old"}), &claims())).await.is_ok());
        assert_eq!(hits.load(Ordering::SeqCst), 1);

        // Made-up kids: one fetch, then none until the interval has passed.
        for _ in 0..5 {
            let token = old.token(&json!({"alg": "ES256", "kid": "made-up"}), &claims());
            assert_eq!(verdict(&issuers, &token).await, Err(IssuerError::UnknownKey));
        }
        assert_eq!(hits.load(Ordering::SeqCst), 1, "the first fetch was less than the interval ago");
        tokio::time::sleep(Duration::from_millis(1600)).await;
        rotated.store(true, Ordering::SeqCst);
        let token = new.token(&json!({"alg": "ES256", "kid": "new"}), &claims());
        assert!(verdict(&issuers, &token).await.is_ok(), "the rotated key is fetched");
        assert_eq!(hits.load(Ordering::SeqCst), 2);
        assert!(verdict(&issuers, &token).await.is_ok());
        assert_eq!(hits.load(Ordering::SeqCst), 2);
    }

    #[tokio::test]
    async fn an_unreachable_key_set_is_unavailable_not_a_bad_token() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let uri = format!("http://{}", listener.local_addr().unwrap());
        drop(listener);
        let issuers = issuers(jwks_issuer(&uri), Duration::from_secs(30));
        let token = Signer::ec().token(&json!({"alg": "ES256", "kid": "k"}), &claims());
        assert_eq!(verdict(&issuers, &token).await, Err(IssuerError::Unavailable));
    }

    #[tokio::test]
    async fn introspection_asks_with_basic_auth_and_reads_the_answer() {
        let active = Arc::new(std::sync::Mutex::new(json!({"active": false})));
        let answer = active.clone();
        let (uri, hits) = server(move |request| {
            // solgate-vnfm:s3cret, each part form-urlencoded first (`:` → %3A in the secret).
            let expected = format!(
                "authorization: basic {}",
                base64::engine::general_purpose::STANDARD.encode("solgate-vnfm:s3%3Acret")
            );
            let authorized = request.to_ascii_lowercase().contains(&expected.to_ascii_lowercase());
            let asked = request.contains("token=opaque-1") && request.contains("token_type_hint=access_token");
            if !(authorized && asked) {
                return (401, json!({"error": "invalid_client"}).to_string());
            }
            (200, answer.lock().unwrap().to_string())
        })
        .await;
        let settings = IssuerSettings {
            introspection_endpoint: format!("{uri}/introspect"),
            client_id: "solgate-vnfm".into(),
            client_secret: "s3:cret".into(),
            default_roles: vec![Role::Reader],
            ..IssuerSettings::new(ISS, "solgate")
        };
        let issuers = issuers(settings, Duration::from_secs(30));
        assert_eq!(verdict(&issuers, "opaque-1").await, Err(IssuerError::Inactive));
        assert_eq!(hits.load(Ordering::SeqCst), 1);

        *active.lock().unwrap() = json!({"active": true, "iss": ISS, "aud": "solgate", "client_id": "nfvo-9", "exp": NOW + 10, "scp": ["a", "b"]});
        let verified = verdict(&issuers, "opaque-1").await.unwrap();
        assert_eq!(
            verified.principal,
            Principal {
                client_id: "nfvo-9".into(),
                roles: vec![Role::Reader],
                project: String::new(),
                scopes: Some(vec!["a".into(), "b".into()])
            }
        );
        assert_eq!(verified.cache_until, NOW + 10, "never beyond exp");
        *active.lock().unwrap() = json!({"active": true, "sub": "nfvo-9", "exp": NOW + 3600});
        assert_eq!(verdict(&issuers, "opaque-1").await.unwrap().cache_until, NOW + 30);

        for (answer, expected) in [
            (json!({"active": true, "sub": "x", "aud": ["other"]}), IssuerError::WrongAudience),
            (json!({"active": true, "sub": "x", "iss": "https://elsewhere"}), IssuerError::Inactive),
            (json!({"active": true, "sub": "x", "exp": NOW - 100}), IssuerError::Expired),
            (json!({"active": true, "sub": "x", "token_type": "DPoP"}), IssuerError::Bound),
            (json!({"active": true, "sub": "x", "cnf": {"x5t#S256": "t"}}), IssuerError::Bound),
            (json!({"active": true}), IssuerError::Malformed),
            (json!({"active": "true", "sub": "x"}), IssuerError::Inactive),
        ] {
            *active.lock().unwrap() = answer;
            assert_eq!(verdict(&issuers, "opaque-1").await, Err(expected), "{expected:?}");
        }
        // The server refusing solgate's credentials is an outage, not the client's fault.
        assert_eq!(verdict(&issuers, "opaque-2").await, Err(IssuerError::Unavailable));
    }

    #[test]
    fn roles_come_from_the_configured_claim_and_unknown_ones_are_ignored() {
        let issuer = Issuer {
            settings: IssuerSettings {
                roles_claim: "groups".into(),
                project_claim: "tenant".into(),
                ..IssuerSettings::new(ISS, "solgate")
            },
            jwks: None,
            introspection: None,
        };
        let principal = |claims: Value| issuer.principal(claims.as_object().unwrap());
        let from_list =
            principal(json!({"sub": "s", "groups": ["superuser", "reader", "admin"], "tenant": "t1"})).unwrap();
        assert_eq!((from_list.roles, from_list.project.as_str()), (vec![Role::Reader, Role::Admin], "t1"));
        assert_eq!(principal(json!({"sub": "s", "groups": "member  other"})).unwrap().roles, vec![Role::Member]);
        assert_eq!(principal(json!({"sub": "s", "groups": ["root"]})).unwrap().roles, vec![]);
        // Absent: the default roles, which are none by default.
        let bare = principal(json!({"client_id": "c", "roles": ["admin"]})).unwrap();
        assert_eq!((bare.client_id.as_str(), bare.roles, bare.scopes), ("c", vec![], None));
        assert_eq!(principal(json!({"scp": "x y"})), Err(IssuerError::Malformed), "no client_id or sub");
    }

    #[test]
    fn entries_are_checked_and_the_secret_is_never_printed() {
        let outbound = solgate_core::egress::Outbound::new(&Default::default(), &Default::default()).unwrap();
        let good = IssuerSettings { jwks_uri: "https://as.example/jwks".into(), ..IssuerSettings::new(ISS, "solgate") };
        assert!(Issuers::new(std::slice::from_ref(&good), &outbound).is_ok());
        let error = |entries: &[IssuerSettings]| Issuers::new(entries, &outbound).unwrap_err();
        assert!(error(&[good.clone(), good.clone()]).contains("listed twice"));
        assert!(error(&[IssuerSettings::new(ISS, "solgate")]).contains("jwks_uri, introspection_endpoint"));
        assert!(error(&[IssuerSettings { audience: String::new(), ..good.clone() }]).contains("audience"));
        assert!(error(&[IssuerSettings { issuer: "solgate".into(), ..good.clone() }]).contains("own tokens"));
        assert!(error(&[IssuerSettings { jwks_uri: "file:///etc/jwks".into(), ..good.clone() }]).contains("http(s)"));
        let introspect = IssuerSettings {
            introspection_endpoint: "https://as.example/introspect".into(),
            client_id: "solgate".into(),
            ..IssuerSettings::new(ISS, "solgate")
        };
        assert!(error(std::slice::from_ref(&introspect)).contains("client_secret"));
        let with_secret = IssuerSettings { client_secret: "very-secret-value".into(), ..introspect };
        assert!(Issuers::new(std::slice::from_ref(&with_secret), &outbound).is_ok());
        assert!(!format!("{with_secret:?}").contains("very-secret-value"));

        let parsed: IssuerSettings = toml::from_str(
            "issuer = \"https://as.example\"\naudience = \"solgate\"\njwks_uri = \"https://as.example/jwks\"",
        )
        .unwrap();
        assert_eq!(parsed, good);
        assert!(toml::from_str::<IssuerSettings>("issuer = \"i\"\naudience = \"a\"\naudiences = []").is_err());
    }
}

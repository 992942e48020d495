//! Outgoing HTTP that a client's input steers (callback URIs, OAuth 2.0 token endpoints,
//! `upload_from_uri` package addresses): the trust anchors of `[tls]` and the SSRF guard
//! of `[egress]`, applied by one client builder.
//!
//! The guard works at three points, so that no request reaches a denied address:
//! at request time (scheme, literal address, and the addresses a host name resolves to,
//! so the client hears a clear 400/422), at connect time (a DNS resolver that drops
//! denied addresses, so a name that changes its answer later still cannot reach one), and
//! on every redirect (literal addresses checked, hops counted).

use std::fmt;
use std::net::{IpAddr, SocketAddr};
use std::path::Path;
use std::str::FromStr;
use std::sync::Arc;

use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use url::Url;

use crate::CoreError;
use crate::settings::{EgressSettings, TlsSettings};

/// Why a request cannot be accepted as it stands (a callback URI, a token endpoint, a
/// package address, a subscription's authentication): the status the API answers and a
/// detail for the client (causes go to the log, never to the client). Here, below
/// [`crate::callbacks`], because the egress checks refuse with it too.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    pub status: u16,
    pub detail: String,
}

impl Refused {
    pub fn new(status: u16, detail: impl Into<String>) -> Self {
        Self { status, detail: detail.into() }
    }
}

/// One network of `[egress] allow_networks` / `deny_networks`: `ADDRESS/PREFIX` or an address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Network {
    address: IpAddr,
    prefix: u8,
}

impl FromStr for Network {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let (address, prefix) = match text.split_once('/') {
            Some((address, prefix)) => (address, Some(prefix)),
            None => (text, None),
        };
        let address: IpAddr = address.trim().parse().map_err(|_| format!("`{text}` is not an IP network"))?;
        let width = if address.is_ipv4() { 32 } else { 128 };
        let prefix = match prefix {
            None => width,
            Some(prefix) => prefix
                .trim()
                .parse::<u8>()
                .ok()
                .filter(|prefix| *prefix <= width)
                .ok_or_else(|| format!("`{text}` has a prefix length outside 0..={width}"))?,
        };
        Ok(Self { address, prefix })
    }
}

impl fmt::Display for Network {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.address, self.prefix)
    }
}

impl Network {
    pub fn contains(&self, ip: IpAddr) -> bool {
        // An IPv4-mapped IPv6 address (::ffff:169.254.169.254) is the IPv4 address.
        match (self.address, ip.to_canonical()) {
            (IpAddr::V4(network), IpAddr::V4(ip)) => {
                let mask = u32::MAX.checked_shl(32 - u32::from(self.prefix)).unwrap_or(0);
                u32::from(network) & mask == u32::from(ip) & mask
            }
            (IpAddr::V6(network), IpAddr::V6(ip)) => {
                let mask = u128::MAX.checked_shl(128 - u32::from(self.prefix)).unwrap_or(0);
                u128::from(network) & mask == u128::from(ip) & mask
            }
            _ => false,
        }
    }
}

/// Which addresses outgoing requests steered by clients may reach. A denied network wins
/// over an allowed one; an empty allow list allows every address not denied.
#[derive(Debug, Clone)]
pub struct EgressPolicy {
    allow: Vec<Network>,
    deny: Vec<Network>,
    max_redirects: usize,
}

/// The schemes a client may hand in.
const SCHEMES: &[&str] = &["http", "https"];

impl EgressPolicy {
    pub fn new(settings: &EgressSettings) -> Result<Self, String> {
        let parse = |key: &str, list: &[String]| -> Result<Vec<Network>, String> {
            list.iter().map(|text| text.parse().map_err(|error| format!("egress.{key}: {error}"))).collect()
        };
        Ok(Self {
            allow: parse("allow_networks", &settings.allow_networks)?,
            deny: parse("deny_networks", &settings.deny_networks)?,
            max_redirects: settings.max_redirects,
        })
    }

    /// Why `ip` may not be reached, naming the rule; `None` when it may.
    pub fn denial(&self, ip: IpAddr) -> Option<String> {
        if let Some(network) = self.deny.iter().find(|network| network.contains(ip)) {
            return Some(format!("{ip} is in the denied network {network} (egress.deny_networks)"));
        }
        if !self.allow.is_empty() && !self.allow.iter().any(|network| network.contains(ip)) {
            return Some(format!("{ip} is in none of the allowed networks (egress.allow_networks)"));
        }
        None
    }

    pub fn max_redirects(&self) -> usize {
        self.max_redirects
    }

    /// The checks that need no DNS: an absolute http(s) URI with a host, and a literal
    /// address that is not denied. `field` names the request member in the answer.
    pub fn check_uri(&self, field: &str, uri: &str) -> Result<Url, Refused> {
        let url = Url::parse(uri).map_err(|_| Refused::new(400, format!("{field} {uri} is not an absolute URI.")))?;
        if !SCHEMES.contains(&url.scheme()) {
            return Err(Refused::new(
                400,
                format!("{field} {uri} uses the scheme `{}`; only http and https are allowed.", url.scheme()),
            ));
        }
        let Some(host) = url.host() else {
            return Err(Refused::new(400, format!("{field} {uri} has no host.")));
        };
        let literal = match host {
            url::Host::Ipv4(ip) => Some(IpAddr::V4(ip)),
            url::Host::Ipv6(ip) => Some(IpAddr::V6(ip)),
            url::Host::Domain(_) => None,
        };
        if let Some(reason) = literal.and_then(|ip| self.denial(ip)) {
            return Err(Refused::new(422, format!("{field} {uri} is refused: {reason}.")));
        }
        Ok(url)
    }

    /// [`Self::check_uri`], then the addresses a host name resolves to: any denied one
    /// refuses the URI (a name that cannot be resolved now is left to the request).
    pub async fn check_uri_resolved(&self, field: &str, uri: &str) -> Result<Url, Refused> {
        let url = self.check_uri(field, uri)?;
        if let Some(url::Host::Domain(name)) = url.host() {
            let port = url.port_or_known_default().unwrap_or(80);
            if let Ok(addresses) = tokio::net::lookup_host((name, port)).await {
                for address in addresses {
                    if let Some(reason) = self.denial(address.ip()) {
                        return Err(Refused::new(
                            422,
                            format!("{field} {uri} is refused: {name} resolves to {reason}."),
                        ));
                    }
                }
            }
        }
        Ok(url)
    }
}

/// The resolver of guarded clients: denied addresses are dropped, and a name left with
/// none fails to connect.
struct GuardedResolver(Arc<EgressPolicy>);

impl Resolve for GuardedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let policy = self.0.clone();
        Box::pin(async move {
            let host = name.as_str().to_owned();
            let found: Vec<SocketAddr> = tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            let permitted: Vec<SocketAddr> =
                found.iter().copied().filter(|address| policy.denial(address.ip()).is_none()).collect();
            if permitted.is_empty() && !found.is_empty() {
                let reason = found.first().and_then(|address| policy.denial(address.ip())).unwrap_or_default();
                return Err(format!("{host}: {reason}").into());
            }
            let addresses: Addrs = Box::new(permitted.into_iter());
            Ok(addresses)
        })
    }
}

/// Reads PEM trust anchors (for `[tls] ca_file`).
pub fn read_trust_anchors(path: &Path) -> Result<String, String> {
    let text = std::fs::read_to_string(path).map_err(|error| format!("cannot read {}: {error}", path.display()))?;
    let certificates = reqwest::Certificate::from_pem_bundle(text.as_bytes())
        .map_err(|error| format!("{} is not PEM: {error}", path.display()))?;
    if certificates.is_empty() {
        return Err(format!("{} holds no certificate", path.display()));
    }
    Ok(text)
}

/// Outgoing HTTPS trust and the SSRF guard, built once per process from `[tls]` and
/// `[egress]`; every client that reaches a URI a client handed in is built here.
#[derive(Debug, Clone)]
pub struct Outbound {
    policy: Arc<EgressPolicy>,
    /// `[tls] ca_file`, added to the platform's trust anchors.
    extra_ca_pem: Option<Arc<str>>,
}

impl Outbound {
    pub fn new(tls: &TlsSettings, egress: &EgressSettings) -> Result<Self, CoreError> {
        let policy = EgressPolicy::new(egress).map_err(CoreError::Setup)?;
        let extra_ca_pem = if tls.ca_file.as_os_str().is_empty() {
            None
        } else {
            Some(Arc::from(
                read_trust_anchors(&tls.ca_file).map_err(|error| CoreError::Setup(format!("tls.ca_file: {error}")))?,
            ))
        };
        Ok(Self { policy: Arc::new(policy), extra_ca_pem })
    }

    pub fn policy(&self) -> &EgressPolicy {
        &self.policy
    }

    /// The extra trust anchors (PEM), for the VIM drivers.
    pub fn extra_ca_pem(&self) -> Option<Arc<str>> {
        self.extra_ca_pem.clone()
    }

    /// A client builder with the trust anchors and the guard. `follow_redirects`: up to
    /// `[egress] max_redirects` hops, each to an http(s) URI whose address is permitted;
    /// otherwise a redirect is answered to the caller as it is.
    pub fn client_builder(&self, follow_redirects: bool) -> Result<reqwest::ClientBuilder, CoreError> {
        let mut builder = reqwest::Client::builder().dns_resolver(GuardedResolver(self.policy.clone()));
        if let Some(pem) = &self.extra_ca_pem {
            let certificates = reqwest::Certificate::from_pem_bundle(pem.as_bytes())
                .map_err(|error| CoreError::Setup(format!("tls.ca_file: {error}")))?;
            builder = builder.tls_certs_merge(certificates);
        }
        let redirects = if follow_redirects {
            let policy = self.policy.clone();
            reqwest::redirect::Policy::custom(move |attempt| {
                if attempt.previous().len() > policy.max_redirects {
                    let error = format!("more than {} redirects (egress.max_redirects)", policy.max_redirects);
                    return attempt.error(error);
                }
                match policy.check_uri("redirect", attempt.url().as_str()) {
                    Ok(_) => attempt.follow(),
                    Err(refused) => attempt.error(refused.detail),
                }
            })
        } else {
            reqwest::redirect::Policy::none()
        };
        Ok(builder.redirect(redirects))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(allow: &[&str], deny: &[&str]) -> EgressPolicy {
        EgressPolicy::new(&EgressSettings {
            allow_networks: allow.iter().map(|text| (*text).to_owned()).collect(),
            deny_networks: deny.iter().map(|text| (*text).to_owned()).collect(),
            max_redirects: 3,
        })
        .unwrap()
    }

    #[test]
    fn networks_parse_and_match() {
        let link_local: Network = "169.254.0.0/16".parse().unwrap();
        assert!(link_local.contains("169.254.169.254".parse().unwrap()));
        assert!(link_local.contains("::ffff:169.254.1.1".parse().unwrap()), "IPv4-mapped IPv6 is the IPv4 address");
        assert!(!link_local.contains("169.255.0.1".parse().unwrap()));
        let metadata: Network = "fd00:ec2::254".parse().unwrap();
        assert_eq!(metadata.to_string(), "fd00:ec2::254/128");
        assert!(metadata.contains("fd00:ec2::254".parse().unwrap()));
        assert!(!metadata.contains("fd00:ec2::253".parse().unwrap()));
        let everything: Network = "0.0.0.0/0".parse().unwrap();
        assert!(everything.contains("203.0.113.9".parse().unwrap()));
        for bad in ["10.0.0.0/33", "fe80::/129", "example.com/8", "10.0.0.0/x", ""] {
            assert!(bad.parse::<Network>().is_err(), "{bad}");
        }
    }

    #[test]
    fn the_default_policy_denies_link_local_and_metadata_addresses() {
        let policy = EgressPolicy::new(&EgressSettings::default()).unwrap();
        let refused = policy.check_uri("callbackUri", "http://169.254.169.254/latest/meta-data").unwrap_err();
        assert_eq!(refused.status, 422);
        assert!(
            refused.detail.contains("callbackUri") && refused.detail.contains("egress.deny_networks"),
            "{refused:?}"
        );
        assert_eq!(policy.check_uri("callbackUri", "http://[fd00:ec2::254]/").unwrap_err().status, 422);
        assert_eq!(policy.check_uri("callbackUri", "http://[::ffff:169.254.169.254]/").unwrap_err().status, 422);
        // Other spellings of the metadata address are the same address (WHATWG URL parsing).
        for spelled in
            ["http://2852039166/", "http://0xA9FEA9FE/", "http://169.254.43518/", "http://0251.0376.0251.0376/"]
        {
            assert_eq!(policy.check_uri("callbackUri", spelled).unwrap_err().status, 422, "{spelled}");
        }
        assert!(policy.check_uri("callbackUri", "https://127.0.0.1:8443/cb").is_ok());
        assert!(policy.check_uri("callbackUri", "http://nfvo.example.com/cb").is_ok());
    }

    #[test]
    fn only_http_and_https_are_accepted() {
        let policy = EgressPolicy::new(&EgressSettings::default()).unwrap();
        for uri in ["file:///etc/passwd", "ftp://nfvo/x", "gopher://h/", "data:text/plain,x"] {
            let refused = policy.check_uri("addressInformation", uri).unwrap_err();
            assert_eq!(refused.status, 400, "{uri}");
            assert!(
                refused.detail.starts_with("addressInformation") && refused.detail.contains("scheme"),
                "{refused:?}"
            );
        }
        assert_eq!(policy.check_uri("callbackUri", "/relative").unwrap_err().status, 400);
    }

    #[test]
    fn an_allow_list_confines_and_deny_wins() {
        let policy = policy(&["10.0.0.0/8"], &["10.1.0.0/16"]);
        assert!(policy.denial("10.2.3.4".parse().unwrap()).is_none());
        assert!(policy.denial("10.1.3.4".parse().unwrap()).unwrap().contains("deny_networks"));
        assert!(policy.denial("192.0.2.1".parse().unwrap()).unwrap().contains("allow_networks"));
    }

    #[tokio::test]
    async fn host_names_are_checked_by_what_they_resolve_to() {
        let policy = policy(&[], &["127.0.0.0/8", "::1/128"]);
        let refused = policy.check_uri_resolved("callbackUri", "http://localhost:9/cb").await.unwrap_err();
        assert_eq!(refused.status, 422);
        assert!(refused.detail.contains("localhost resolves to"), "{refused:?}");
    }
}

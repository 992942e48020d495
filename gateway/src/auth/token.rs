//! solgate's own access tokens: compact JWTs (RFC 7519) signed with HMAC-SHA256, `kid`
//! naming the key. The keys derive from the secret key (`solgate_core::secrets`), so every
//! gateway of a deployment validates every other's tokens, and a key rotation rotates them
//! (tokens signed with a previous key stay valid until they expire).

use aws_lc_rs::hmac;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::{Deserialize, Serialize};

use super::Role;

/// `iss` and `aud` of solgate's tokens.
pub const ISSUER: &str = "solgate";

/// The claims of an access token.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Claims {
    pub iss: String,
    pub aud: String,
    /// The client id.
    pub sub: String,
    pub iat: i64,
    pub exp: i64,
    pub jti: String,
    pub roles: Vec<Role>,
    pub project: String,
    /// Space-separated, as granted (RFC 6749 clause 3.3); absent when none was asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
}

#[derive(Debug, Serialize, Deserialize)]
struct Header {
    alg: String,
    typ: String,
    kid: String,
}

/// Why a token is refused (the `error_description` of the 401).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TokenError {
    #[error("the access token is malformed")]
    Malformed,
    #[error("the access token was signed with an unknown key")]
    UnknownKey,
    #[error("the access token's signature is invalid")]
    BadSignature,
    #[error("the access token has expired")]
    Expired,
    #[error("the access token was not issued for solgate")]
    WrongAudience,
}

/// Signs and verifies tokens with the derived keys (current first).
pub struct TokenKeys {
    keys: Vec<(String, hmac::Key)>,
}

impl std::fmt::Debug for TokenKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenKeys").field("kids", &self.keys.iter().map(|(kid, _)| kid).collect::<Vec<_>>()).finish()
    }
}

impl TokenKeys {
    pub fn new(derived: Vec<(String, Vec<u8>)>) -> Self {
        Self {
            keys: derived.into_iter().map(|(kid, bytes)| (kid, hmac::Key::new(hmac::HMAC_SHA256, &bytes))).collect(),
        }
    }

    pub fn sign(&self, claims: &Claims) -> Option<String> {
        let (kid, key) = self.keys.first()?;
        let header = Header { alg: "HS256".into(), typ: "at+jwt".into(), kid: kid.clone() };
        let header = serde_json::to_vec(&header).ok()?;
        let payload = serde_json::to_vec(claims).ok()?;
        let signing_input = format!("{}.{}", URL_SAFE_NO_PAD.encode(header), URL_SAFE_NO_PAD.encode(payload));
        let signature = hmac::sign(key, signing_input.as_bytes());
        Some(format!("{signing_input}.{}", URL_SAFE_NO_PAD.encode(signature.as_ref())))
    }

    /// The claims of a valid token at `now` (Unix seconds).
    pub fn verify(&self, token: &str, now: i64) -> Result<Claims, TokenError> {
        let mut parts = token.split('.');
        let (Some(header), Some(payload), Some(signature), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(TokenError::Malformed);
        };
        let decode = |part: &str| URL_SAFE_NO_PAD.decode(part).map_err(|_| TokenError::Malformed);
        let header: Header = serde_json::from_slice(&decode(header)?).map_err(|_| TokenError::Malformed)?;
        if header.alg != "HS256" {
            return Err(TokenError::BadSignature);
        }
        let key =
            self.keys.iter().find(|(kid, _)| *kid == header.kid).map(|(_, key)| key).ok_or(TokenError::UnknownKey)?;
        let (signing_input, _) = token.rsplit_once('.').ok_or(TokenError::Malformed)?;
        hmac::verify(key, signing_input.as_bytes(), &decode(signature)?).map_err(|_| TokenError::BadSignature)?;
        let claims: Claims = serde_json::from_slice(&decode(payload)?).map_err(|_| TokenError::Malformed)?;
        if claims.iss != ISSUER || claims.aud != ISSUER {
            return Err(TokenError::WrongAudience);
        }
        if claims.exp <= now {
            return Err(TokenError::Expired);
        }
        Ok(claims)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claims(exp: i64) -> Claims {
        Claims {
            iss: ISSUER.into(),
            aud: ISSUER.into(),
            sub: "nfvo-1".into(),
            iat: 1000,
            exp,
            jti: "j".into(),
            roles: vec![Role::Member],
            project: "p1".into(),
            scope: None,
        }
    }

    #[test]
    fn tokens_round_trip_and_every_tampering_is_refused() {
        let keys = TokenKeys::new(vec![("k1".into(), vec![7; 32])]);
        let token = keys.sign(&claims(2000)).unwrap();
        assert_eq!(keys.verify(&token, 1500).unwrap(), claims(2000));
        assert_eq!(keys.verify(&token, 2000), Err(TokenError::Expired));

        let (input, signature) = token.rsplit_once('.').unwrap();
        let mut forged = claims(9999);
        forged.roles = vec![Role::Admin];
        let forged_payload = URL_SAFE_NO_PAD.encode(serde_json::to_vec(&forged).unwrap());
        let header = input.split('.').next().unwrap();
        assert_eq!(keys.verify(&format!("{header}.{forged_payload}.{signature}"), 1500), Err(TokenError::BadSignature));
        assert_eq!(keys.verify("garbage", 1500), Err(TokenError::Malformed));
        assert_eq!(keys.verify("a.b.c", 1500), Err(TokenError::Malformed));

        let other = TokenKeys::new(vec![("k2".into(), vec![8; 32])]);
        assert_eq!(other.verify(&token, 1500), Err(TokenError::UnknownKey));
        let same_kid = TokenKeys::new(vec![("k1".into(), vec![8; 32])]);
        assert_eq!(same_kid.verify(&token, 1500), Err(TokenError::BadSignature));
        // After a rotation the previous key still verifies its tokens.
        let rotated = TokenKeys::new(vec![("k2".into(), vec![8; 32]), ("k1".into(), vec![7; 32])]);
        assert!(rotated.verify(&token, 1500).is_ok());

        // alg "none" is never accepted.
        let none_header = URL_SAFE_NO_PAD.encode(br#"{"alg":"none","typ":"at+jwt","kid":"k1"}"#);
        let payload = input.split('.').nth(1).unwrap();
        assert_eq!(keys.verify(&format!("{none_header}.{payload}."), 1500), Err(TokenError::BadSignature));
    }
}

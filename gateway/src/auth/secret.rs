//! Client secrets in settings: a PHC string (`$pbkdf2-sha256$i=600000$<salt>$<hash>`,
//! PBKDF2-HMAC-SHA256 as OWASP recommends it, printed by `solgate hash-secret`) or, with a
//! warning at start, the plain secret.

use std::num::NonZeroU32;

use aws_lc_rs::{constant_time, pbkdf2, rand};
use base64::Engine;
use base64::engine::general_purpose::STANDARD_NO_PAD;

const ITERATIONS: u32 = 600_000;
const PREFIX: &str = "$pbkdf2-sha256$";

/// Whether a configured secret is a hash (else it is plain text).
pub fn is_hash(configured: &str) -> bool {
    configured.starts_with(PREFIX)
}

/// The PHC string of `secret`, with a fresh salt.
pub fn hash(secret: &str) -> Option<String> {
    let mut salt = [0u8; 16];
    rand::fill(&mut salt).ok()?;
    let mut derived = [0u8; 32];
    pbkdf2::derive(pbkdf2::PBKDF2_HMAC_SHA256, NonZeroU32::new(ITERATIONS)?, &salt, secret.as_bytes(), &mut derived);
    Some(format!("{PREFIX}i={ITERATIONS}${}${}", STANDARD_NO_PAD.encode(salt), STANDARD_NO_PAD.encode(derived)))
}

/// Whether `given` is the configured secret (hash or plain), in constant time.
pub fn verify(configured: &str, given: &str) -> bool {
    let Some(rest) = configured.strip_prefix(PREFIX) else {
        return constant_time::verify_slices_are_equal(configured.as_bytes(), given.as_bytes()).is_ok();
    };
    let mut fields = rest.split('$');
    let (Some(params), Some(salt), Some(expected), None) = (fields.next(), fields.next(), fields.next(), fields.next())
    else {
        return false;
    };
    let iterations = params.strip_prefix("i=").and_then(|count| count.split(',').next()?.parse::<u32>().ok());
    let (Some(iterations), Ok(salt), Ok(expected)) =
        (iterations.and_then(NonZeroU32::new), STANDARD_NO_PAD.decode(salt), STANDARD_NO_PAD.decode(expected))
    else {
        return false;
    };
    pbkdf2::verify(pbkdf2::PBKDF2_HMAC_SHA256, iterations, &salt, given.as_bytes(), &expected).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_verify_their_secret_only() {
        let hashed = hash("s3cret").unwrap();
        assert!(is_hash(&hashed) && hashed.starts_with("$pbkdf2-sha256$i=600000$"), "{hashed}");
        assert!(verify(&hashed, "s3cret"));
        assert!(!verify(&hashed, "s3cret "));
        assert_ne!(hash("s3cret").unwrap(), hashed, "salted");
        assert!(verify("plain", "plain") && !verify("plain", "Plain"));
        for broken in
            ["$pbkdf2-sha256$", "$pbkdf2-sha256$i=0$AA$AA", "$pbkdf2-sha256$i=x$AA$AA", "$pbkdf2-sha256$i=1$!!$AA"]
        {
            assert!(!verify(broken, "s3cret"), "{broken}");
        }
    }
}

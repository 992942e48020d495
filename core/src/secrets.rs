//! Secrets at rest: VIM credentials (`vimConnectionInfo[].accessInfo`), subscription
//! credentials (`authentication`) and package source passwords are stored sealed with
//! AES-256-GCM. A sealed value stays where it was, under its key, as
//! `sealed:v1:<key id>:<base64 nonce and ciphertext>`, so documents keep their shape and
//! the gateway's scrubbing of secret keys still removes them from every answer. They are
//! opened only where they are used: by a driver, a notification, a package fetch.
//!
//! The key is 32 random bytes, base64, from `SOLGATE_SECRET_KEY` or `[secrets] key_file`
//! (by default `<data dir>/secret.key`, created on first start, mode 0600). Rotation:
//! name the new key, list the old one in `previous_key_files` (values sealed with it stay
//! readable), and `solgate reseal` seals every stored secret with the new key; then the old
//! key can go (docs/security.md).

use std::path::{Path, PathBuf};

use aws_lc_rs::aead::{AES_256_GCM, Aad, LessSafeKey, NONCE_LEN, Nonce, UnboundKey};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::Digest;

use crate::CoreError;

/// Keys whose values are secrets wherever they appear in a stored document (Tacker scrubs
/// these in vimConnectionInfo, operation parameters and changedInfo; SOL013
/// SubscriptionAuthentication and package sources likewise).
pub const SECRET_KEYS: &[&str] =
    &["password", "bearer_token", "bearerToken", "client_secret", "clientSecret", "clientPassword"];

const PREFIX: &str = "sealed:v1:";

/// Removes every secret key, at any depth: credentials never leave the server, sealed or
/// not (responses, notifications).
pub fn scrub(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.retain(|key, _| !SECRET_KEYS.contains(&key.as_str()));
            map.values_mut().for_each(scrub);
        }
        Value::Array(items) => items.iter_mut().for_each(scrub),
        _ => {}
    }
}

/// The `[secrets]` table.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SecretSettings {
    /// The key (32 bytes, base64) that seals secrets; empty: `<data dir>/secret.key`,
    /// created when missing. `SOLGATE_SECRET_KEY` (the key itself) wins over both.
    pub key_file: PathBuf,
    /// Keys that only open (after a rotation, until `solgate reseal` has run).
    pub previous_key_files: Vec<PathBuf>,
}

struct SealingKey {
    id: String,
    key: LessSafeKey,
    /// For keys derived for other purposes (token signing).
    raw: Vec<u8>,
}

impl SealingKey {
    fn from_text(text: &str, source: &str) -> Result<Self, CoreError> {
        let bytes = STANDARD
            .decode(text.trim())
            .map_err(|_| CoreError::Setup(format!("{source}: the secret key is not base64")))?;
        if bytes.len() != 32 {
            return Err(CoreError::Setup(format!("{source}: the secret key must be 32 bytes, not {}", bytes.len())));
        }
        let id = hex::encode(&sha2::Sha256::digest(&bytes)[..4]);
        let key = UnboundKey::new(&AES_256_GCM, &bytes)
            .map_err(|_| CoreError::Setup(format!("{source}: the secret key is not usable")))?;
        Ok(Self { id, key: LessSafeKey::new(key), raw: bytes })
    }

    fn from_file(path: &Path) -> Result<Self, CoreError> {
        let text = std::fs::read_to_string(path)
            .map_err(|error| CoreError::Setup(format!("cannot read the secret key {}: {error}", path.display())))?;
        Self::from_text(&text, &path.display().to_string())
    }
}

/// Why a stored secret cannot be opened.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    #[error("a secret was sealed with key {0}, which is neither secrets.key_file nor in secrets.previous_key_files")]
    UnknownKey(String),
    #[error("a sealed secret is damaged or was sealed with another key of the same id")]
    Damaged,
}

/// Seals and opens secrets with the current key and any previous ones.
pub struct SecretBox {
    current: SealingKey,
    previous: Vec<SealingKey>,
}

impl std::fmt::Debug for SecretBox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SecretBox").field("key_id", &self.current.id).finish_non_exhaustive()
    }
}

/// A new random key, base64 (for `secret.key` and `solgate reseal --new-key`).
pub fn generate_key() -> Result<String, CoreError> {
    let mut bytes = [0u8; 32];
    aws_lc_rs::rand::fill(&mut bytes).map_err(|_| CoreError::Setup("no random bytes for a secret key".into()))?;
    Ok(STANDARD.encode(bytes))
}

impl SecretBox {
    /// The key from `from_env` (the value of `SOLGATE_SECRET_KEY`), else the key file;
    /// the default file is created when missing.
    pub fn load(settings: &SecretSettings, data_dir: &Path, from_env: Option<&str>) -> Result<Self, CoreError> {
        let current = match from_env.filter(|text| !text.trim().is_empty()) {
            Some(text) => SealingKey::from_text(text, "SOLGATE_SECRET_KEY")?,
            None if settings.key_file.as_os_str().is_empty() => {
                let path = data_dir.join("secret.key");
                if !path.exists() {
                    create_key_file(&path)?;
                }
                SealingKey::from_file(&path)?
            }
            None => SealingKey::from_file(&settings.key_file)?,
        };
        let previous =
            settings.previous_key_files.iter().map(|path| SealingKey::from_file(path)).collect::<Result<_, _>>()?;
        Ok(Self { current, previous })
    }

    /// A box with a fresh random key (tests).
    pub fn ephemeral() -> Result<Self, CoreError> {
        Ok(Self { current: SealingKey::from_text(&generate_key()?, "random")?, previous: Vec::new() })
    }

    pub fn key_id(&self) -> &str {
        &self.current.id
    }

    /// Keys for another purpose derived from the current and previous keys (HMAC-SHA256 of
    /// the purpose), current first, each with its key id: every process that shares the
    /// secret key shares them, and a rotation rotates them.
    pub fn derived_keys(&self, purpose: &str) -> Vec<(String, Vec<u8>)> {
        std::iter::once(&self.current)
            .chain(&self.previous)
            .map(|key| {
                let mac = aws_lc_rs::hmac::Key::new(aws_lc_rs::hmac::HMAC_SHA256, &key.raw);
                (key.id.clone(), aws_lc_rs::hmac::sign(&mac, purpose.as_bytes()).as_ref().to_vec())
            })
            .collect()
    }

    /// Seals one value stored under `name` (the name is bound to it: a sealed password
    /// cannot be moved under another key). A sealed value is left as it is.
    pub fn seal_text(&self, name: &str, text: &str) -> String {
        if text.starts_with(PREFIX) {
            return text.to_owned();
        }
        let mut nonce = [0u8; NONCE_LEN];
        if aws_lc_rs::rand::fill(&mut nonce).is_err() {
            // Unreachable on a working system; never store the clear text instead.
            return format!("{PREFIX}unsealable");
        }
        let mut sealed = text.as_bytes().to_vec();
        let result = self.current.key.seal_in_place_append_tag(
            Nonce::assume_unique_for_key(nonce),
            Aad::from(name.as_bytes()),
            &mut sealed,
        );
        if result.is_err() {
            return format!("{PREFIX}unsealable");
        }
        let mut payload = nonce.to_vec();
        payload.extend_from_slice(&sealed);
        format!("{PREFIX}{}:{}", self.current.id, STANDARD.encode(payload))
    }

    /// Opens a value sealed under `name`; a value that is not sealed is returned as it is
    /// (rows written before encryption at rest).
    pub fn open_text(&self, name: &str, text: &str) -> Result<String, OpenError> {
        let Some(rest) = text.strip_prefix(PREFIX) else { return Ok(text.to_owned()) };
        let (id, payload) = rest.split_once(':').ok_or(OpenError::Damaged)?;
        let key = std::iter::once(&self.current)
            .chain(&self.previous)
            .find(|key| key.id == id)
            .ok_or_else(|| OpenError::UnknownKey(id.to_owned()))?;
        let mut payload = STANDARD.decode(payload).map_err(|_| OpenError::Damaged)?;
        if payload.len() < NONCE_LEN {
            return Err(OpenError::Damaged);
        }
        let mut ciphertext = payload.split_off(NONCE_LEN);
        let nonce = Nonce::try_assume_unique_for_key(&payload).map_err(|_| OpenError::Damaged)?;
        let clear = key
            .key
            .open_in_place(nonce, Aad::from(name.as_bytes()), &mut ciphertext)
            .map_err(|_| OpenError::Damaged)?;
        String::from_utf8(clear.to_vec()).map_err(|_| OpenError::Damaged)
    }

    /// Seals every string under a secret key, at any depth.
    pub fn seal(&self, value: &mut Value) {
        walk(value, &mut |name, text| {
            *text = self.seal_text(name, text);
            Ok(())
        })
        .unwrap_or_default();
    }

    /// Opens every sealed string under a secret key, at any depth.
    pub fn open(&self, value: &mut Value) -> Result<(), OpenError> {
        walk(value, &mut |name, text| {
            *text = self.open_text(name, text)?;
            Ok(())
        })
    }

    /// Re-seals every secret with the current key (`solgate reseal`); whether anything changed.
    pub fn reseal(&self, value: &mut Value) -> Result<bool, OpenError> {
        let mut changed = false;
        walk(value, &mut |name, text| {
            let current = format!("{PREFIX}{}:", self.current.id);
            if !text.starts_with(&current) {
                *text = self.seal_text(name, &self.open_text(name, text)?);
                changed = true;
            }
            Ok(())
        })?;
        Ok(changed)
    }
}

/// Calls `visit` with (key, string) for every string stored under a secret key.
fn walk(value: &mut Value, visit: &mut dyn FnMut(&str, &mut String) -> Result<(), OpenError>) -> Result<(), OpenError> {
    match value {
        Value::Object(map) => {
            for (name, inner) in map.iter_mut() {
                match inner {
                    Value::String(text) if SECRET_KEYS.contains(&name.as_str()) => visit(name, text)?,
                    _ => walk(inner, visit)?,
                }
            }
            Ok(())
        }
        Value::Array(items) => items.iter_mut().try_for_each(|item| walk(item, visit)),
        _ => Ok(()),
    }
}

fn create_key_file(path: &Path) -> Result<(), CoreError> {
    use std::io::Write;
    let key = generate_key()?;
    let failed =
        |error: std::io::Error| CoreError::Setup(format!("cannot create the secret key {}: {error}", path.display()));
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(failed)?;
    }
    // Written whole beside it, then linked into place: a process starting at the same time
    // sees no file or a complete one, and the first link wins.
    let partial = path.with_extension(format!("{}.partial", uuid::Uuid::new_v4()));
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let written = options.open(&partial).and_then(|mut file| {
        file.write_all(format!("{key}\n").as_bytes())?;
        file.sync_all()
    });
    let linked = written.and_then(|()| match std::fs::hard_link(&partial, path) {
        Err(error) if error.kind() != std::io::ErrorKind::AlreadyExists => Err(error),
        _ => Ok(()),
    });
    let _ = std::fs::remove_file(&partial);
    linked.map_err(failed)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn secrets_are_sealed_in_place_and_open_again() {
        let secrets = SecretBox::ephemeral().unwrap();
        let original = json!({"vimConnectionInfo": {"vim1": {"vimType": "ETSINFV.OPENSTACK_KEYSTONE.V_3",
            "accessInfo": {"username": "admin", "password": "hunter2"}}},
            "authentication": {"paramsBasic": {"userName": "u", "password": "p"},
                "paramsOauth2ClientCredentials": {"clientId": "c", "clientPassword": "s"}},
            "list": [{"bearer_token": "tok"}], "password": 7});
        let mut sealed = original.clone();
        secrets.seal(&mut sealed);
        let text = sealed.to_string();
        for clear in ["hunter2", "\"p\"", "\"s\"", "\"tok\""] {
            assert!(!text.contains(clear), "{clear} in {text}");
        }
        assert_eq!(sealed["vimConnectionInfo"]["vim1"]["accessInfo"]["username"], "admin");
        assert_eq!(sealed["password"], 7, "only strings are secrets");
        let once = sealed.clone();
        secrets.seal(&mut sealed);
        assert_eq!(sealed, once, "sealing is idempotent");
        secrets.open(&mut sealed).unwrap();
        assert_eq!(sealed, original);
    }

    #[test]
    fn a_sealed_value_is_bound_to_its_key_name_and_key() {
        let secrets = SecretBox::ephemeral().unwrap();
        let sealed = secrets.seal_text("password", "hunter2");
        assert!(matches!(secrets.open_text("clientPassword", &sealed), Err(OpenError::Damaged)));
        let other = SecretBox::ephemeral().unwrap();
        assert!(matches!(other.open_text("password", &sealed), Err(OpenError::UnknownKey(_))));
        assert_eq!(secrets.open_text("password", "not sealed").unwrap(), "not sealed");
    }

    #[test]
    fn rotation_opens_old_values_and_reseals_them() {
        let dir = tempfile::tempdir().unwrap();
        let old_file = dir.path().join("old.key");
        let new_file = dir.path().join("new.key");
        std::fs::write(&old_file, generate_key().unwrap()).unwrap();
        std::fs::write(&new_file, generate_key().unwrap()).unwrap();
        let old =
            SecretBox::load(&SecretSettings { key_file: old_file.clone(), ..Default::default() }, dir.path(), None)
                .unwrap();
        let mut document = json!({"accessInfo": {"password": "hunter2"}});
        old.seal(&mut document);
        let rotated = SecretBox::load(
            &SecretSettings { key_file: new_file, previous_key_files: vec![old_file] },
            dir.path(),
            None,
        )
        .unwrap();
        assert!(rotated.reseal(&mut document).unwrap());
        assert!(!rotated.reseal(&mut document).unwrap(), "already sealed with the new key");
        assert!(document["accessInfo"]["password"].as_str().unwrap().contains(rotated.key_id()));
        assert!(matches!(old.open(&mut document.clone()), Err(OpenError::UnknownKey(_))));
        rotated.open(&mut document).unwrap();
        assert_eq!(document["accessInfo"]["password"], "hunter2");
    }

    #[test]
    fn the_default_key_file_is_created_once_and_private() {
        let dir = tempfile::tempdir().unwrap();
        let first = SecretBox::load(&SecretSettings::default(), dir.path(), None).unwrap();
        let again = SecretBox::load(&SecretSettings::default(), dir.path(), None).unwrap();
        assert_eq!(first.key_id(), again.key_id());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(dir.path().join("secret.key")).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        let from_env = SecretBox::load(&SecretSettings::default(), dir.path(), Some(&generate_key().unwrap())).unwrap();
        assert_ne!(from_env.key_id(), first.key_id());
        assert!(SecretBox::load(&SecretSettings::default(), dir.path(), Some("c2hvcnQ=")).is_err());
    }
}

//! Reading a [`VimConnection`] for the remote drivers' credentials: straight from its typed
//! fields, `interfaceInfo` and `accessInfo` key by key, with messages that name the key
//! (`accessInfo.password is missing`). Each driver wraps a message in its own
//! `InvalidVimConnectionInfo` error.

use serde_json::Value;

use crate::infra::VimConnection;

/// `interfaceInfo` and `accessInfo` of a connection to a VIM of type `vim_type`: refuses a
/// connection of another type, or one without `accessInfo`.
pub(crate) fn interface_and_access<'v>(
    vim: &'v VimConnection,
    vim_type: &str,
) -> Result<(VimInfo<'v>, VimInfo<'v>), String> {
    check_vim_type(vim, vim_type)?;
    Ok((VimInfo::interface(vim), VimInfo::access(vim)?))
}

/// Refuses a connection of another `vimType` (legacy spellings such as `kubernetes` count
/// as the type they stand for; a connection without a type is taken as it is).
fn check_vim_type(vim: &VimConnection, expected: &str) -> Result<(), String> {
    if vim.vim_type.is_empty() || vim.normalized_vim_type() == expected {
        Ok(())
    } else {
        Err(format!("vimType is '{}', expected '{expected}'", vim.vim_type))
    }
}

/// One object of a VIM connection (`interfaceInfo` or `accessInfo`), read key by key.
#[derive(Debug, Clone, Copy)]
pub(crate) struct VimInfo<'v> {
    /// `interfaceInfo` / `accessInfo`, for the messages.
    name: &'static str,
    value: &'v Value,
}

impl<'v> VimInfo<'v> {
    /// `interfaceInfo`; when absent every key reads as missing.
    fn interface(vim: &'v VimConnection) -> Self {
        Self { name: "interfaceInfo", value: &vim.interface_info }
    }

    /// `accessInfo`, which must be an object.
    fn access(vim: &'v VimConnection) -> Result<Self, String> {
        if vim.access_info.is_object() {
            Ok(Self { name: "accessInfo", value: &vim.access_info })
        } else {
            Err("accessInfo is missing".to_owned())
        }
    }

    pub(crate) fn get(&self, key: &str) -> Option<&'v Value> {
        self.value.get(key)
    }

    /// The first of `keys` (spellings of one setting) holding a non-empty string; a number
    /// is taken too (some VIM registrations carry numeric project names).
    pub(crate) fn string(&self, keys: &[&str]) -> Option<String> {
        keys.iter().find_map(|key| match self.get(key) {
            Some(Value::String(s)) if !s.is_empty() => Some(s.clone()),
            Some(Value::Number(n)) => Some(n.to_string()),
            _ => None,
        })
    }

    /// As [`VimInfo::string`], else `<object>.<first key> is missing`.
    pub(crate) fn required(&self, keys: &[&str]) -> Result<String, String> {
        self.string(keys).ok_or_else(|| format!("{}.{} is missing", self.name, keys.first().copied().unwrap_or("")))
    }

    /// A flag such as `skipCertificateVerification`: `true` or `"true"` (any case); false
    /// when absent.
    pub(crate) fn flag(&self, key: &str) -> bool {
        match self.get(key) {
            Some(Value::Bool(b)) => *b,
            Some(Value::String(s)) => s.eq_ignore_ascii_case("true"),
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const OPENSTACK: &str = crate::infra::VIM_TYPE_OPENSTACK;

    fn vim(vim_type: &str, access_info: Value) -> VimConnection {
        VimConnection {
            vim_type: vim_type.into(),
            interface_info: json!({"endpoint": "http://192.0.2.10/identity/v3", "skipCertificateVerification": "True"}),
            access_info,
            ..VimConnection::default()
        }
    }

    #[test]
    fn keys_are_read_from_the_typed_connection() {
        let vim = vim("openstack", json!({"username": "", "user_name": "nfv_user", "project": 42}));
        let (interface, access) = interface_and_access(&vim, OPENSTACK).unwrap();
        assert_eq!(access.string(&["username", "user_name"]).as_deref(), Some("nfv_user"));
        assert_eq!(access.required(&["project"]).as_deref(), Ok("42"));
        assert_eq!(access.required(&["password", "pass"]), Err("accessInfo.password is missing".to_owned()));
        assert_eq!(interface.required(&["endpoint"]).as_deref(), Ok("http://192.0.2.10/identity/v3"));
        assert_eq!(interface.required(&["region"]), Err("interfaceInfo.region is missing".to_owned()));
        assert!(interface.flag("skipCertificateVerification"));
        assert!(!interface.flag("skipCertificateHostnameCheck"));
    }

    #[test]
    fn the_type_must_match_and_access_info_must_be_an_object() {
        let refused = |vim: VimConnection| interface_and_access(&vim, OPENSTACK).err();
        assert_eq!(refused(vim("", json!({}))), None, "a connection without a type is taken");
        assert_eq!(
            refused(vim("kubernetes", json!({}))).as_deref(),
            Some("vimType is 'kubernetes', expected 'ETSINFV.OPENSTACK_KEYSTONE.V_3'")
        );
        assert_eq!(refused(vim("openstack", Value::Null)).as_deref(), Some("accessInfo is missing"));
    }
}

//! Authorization: every API request maps to a rule named as Tacker names its policies
//! (`os_nfv_orchestration_api_v2:vnf_instances:create`, `os_nfv_orchestration_api:vnf_packages:show`),
//! the rule of its row in the resource tables (`crate::routes`), and each rule needs a least role: `reader` for reads, `member` for changes by default.
//! An optional policy file (TOML, `"rule name" = "admin"`) changes a rule's role.
//!
//! A token that carries OAuth 2.0 scopes (SOL013 clause 8) is further limited to what
//! its scopes cover, named `{apiName}:v{apiMajorVersion}:{permission}`:
//! `vnflcm:v2:all` (every operation of the API), `vnflcm:v2:readonly` (its reads), or one
//! operation by the last part of its rule name (`vnflcm:v2:instantiate`,
//! `vnfpkgm:v1:package_content`, `vnflcm:v1:index`). Scopes of other services are ignored.
//! The VIM registry (`/v1.0/vims`) has Tacker's rules `create_vim`, `get_vim`, `update_vim`
//! and `delete_vim`, and the scopes `nfvo:v1:{all,readonly,create,index,show,update,delete}`.

use std::collections::BTreeMap;
use std::path::Path;

use actix_web::http::Method;

use super::Role;
use crate::routes::tables;

/// The rule of a request and the least role it needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    pub name: &'static str,
    pub role: Role,
}

/// Per-rule roles from the policy file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Policy {
    overrides: BTreeMap<String, Role>,
}

impl Policy {
    /// Reads a policy file: one `"rule" = "role"` per line (TOML).
    pub fn load(path: &Path) -> Result<Self, String> {
        let text = std::fs::read_to_string(path).map_err(|error| format!("cannot read {}: {error}", path.display()))?;
        let overrides: BTreeMap<String, Role> =
            toml::from_str(&text).map_err(|error| format!("{}: {error}", path.display()))?;
        Ok(Self { overrides })
    }

    /// The rule of `method path`: its row's (`crate::routes`); `None` for a request of no
    /// row with a rule (outside the APIs, or no resource of ours).
    pub fn rule(&self, method: &Method, path: &str) -> Option<Rule> {
        let (_, endpoint) = tables::find(method, path).filter(|(_, endpoint)| !endpoint.rule.is_empty())?;
        let name = endpoint.rule.as_str();
        let default = if matches!(*method, Method::GET | Method::HEAD) { Role::Reader } else { Role::Member };
        let role = self.overrides.get(name).copied().unwrap_or(default);
        Some(Rule { name, role })
    }
}

/// The APIs scopes are named after (`nfvo`: the VIM registry, `/v1.0/vims`, as `nfvo:v1:...`).
const SCOPED_APIS: &[&str] = &["vnflcm", "vnfpkgm", "vnffm", "vnfpm", "nfvo"];

/// Whether `scope` is one of solgate's (`{api}:v{N}:{permission}`), which the token
/// endpoint may grant.
pub fn is_known_scope(scope: &str) -> bool {
    let mut parts = scope.split(':');
    let (Some(api), Some(major), Some(permission), None) = (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return false;
    };
    SCOPED_APIS.contains(&api)
        && major.strip_prefix('v').is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        && !permission.is_empty()
        && permission.bytes().all(|b| b.is_ascii_lowercase() || b == b'_')
}

/// Whether a token's scopes cover `method path`: `{api}:v{major}:all`, `:readonly` for a
/// read, or the row's action. api_versions of every major is covered by any scope of the
/// API; requests of no row by every token.
pub fn scopes_allow(scopes: &[String], method: &Method, path: &str) -> bool {
    let Some((table, endpoint)) = tables::find(method, path) else { return true };
    let Some((api, major)) = table.scope else { return true };
    let read = matches!(*method, Method::GET | Method::HEAD);
    scopes.iter().any(|scope| {
        let mut parts = scope.splitn(3, ':');
        let (Some(name), Some(version), Some(permission)) = (parts.next(), parts.next(), parts.next()) else {
            return false;
        };
        if name != api {
            return false;
        }
        match major {
            None => true,
            Some(wanted) => {
                version
                    .strip_prefix('v')
                    .is_some_and(|digits| !digits.starts_with('0') && digits.parse::<u64>() == Ok(wanted))
                    && (permission == "all" || (permission == "readonly" && read) || permission == endpoint.action)
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_are_named_as_tacker_names_them() {
        let policy = Policy::default();
        let rule =
            |method: Method, path: &str| policy.rule(&method, path).map(|rule| (rule.name.to_owned(), rule.role));
        assert_eq!(
            rule(Method::POST, "/vnflcm/v2/vnf_instances"),
            Some(("os_nfv_orchestration_api_v2:vnf_instances:create".into(), Role::Member))
        );
        assert_eq!(
            rule(Method::GET, "/vnflcm/v2/vnf_instances/abc"),
            Some(("os_nfv_orchestration_api_v2:vnf_instances:show".into(), Role::Reader))
        );
        assert_eq!(
            rule(Method::POST, "/vnflcm/v1/vnf_instances/abc/instantiate").unwrap().0,
            "os_nfv_orchestration_api:vnf_instances:instantiate"
        );
        assert_eq!(
            rule(Method::POST, "/vnflcm/v2/vnf_lcm_op_occs/o/rollback").unwrap().0,
            "os_nfv_orchestration_api_v2:vnf_lcm_op_occs:rollback"
        );
        assert_eq!(
            rule(Method::PUT, "/vnfpkgm/v1/vnf_packages/p/package_content"),
            Some(("os_nfv_orchestration_api:vnf_packages:package_content".into(), Role::Member))
        );
        assert_eq!(
            rule(Method::PATCH, "/vnfpkgm/v1/vnf_packages/p").unwrap().0,
            "os_nfv_orchestration_api:vnf_packages:update"
        );
        assert_eq!(
            rule(Method::DELETE, "/vnflcm/v2/subscriptions/s").unwrap().0,
            "os_nfv_orchestration_api_v2:subscriptions:delete"
        );
        assert_eq!(
            rule(Method::POST, "/vnfpkgm/v1/subscriptions").unwrap().0,
            "os_nfv_orchestration_api:vnf_package_subscriptions:create"
        );
        assert_eq!(
            rule(Method::POST, "/vnflcm/v1/subscriptions").unwrap().0,
            "os_nfv_orchestration_api:subscriptions:create"
        );
        assert_eq!(rule(Method::GET, "/vnflcm/api_versions").unwrap().1, Role::Reader);
        assert_eq!(
            rule(Method::GET, "/vnffm/v1/alarms"),
            Some(("os_nfv_orchestration_api_v2:vnf_fault_monitor:index".into(), Role::Reader))
        );
        assert_eq!(
            rule(Method::PATCH, "/vnffm/v1/alarms/a"),
            Some(("os_nfv_orchestration_api_v2:vnf_fault_monitor:update".into(), Role::Member))
        );
        assert_eq!(
            rule(Method::GET, "/vnffm/v1/subscriptions").unwrap().0,
            "os_nfv_orchestration_api_v2:vnf_fault_monitor:subscription_list"
        );
        assert_eq!(
            rule(Method::DELETE, "/vnffm/v1/subscriptions/s").unwrap().0,
            "os_nfv_orchestration_api_v2:vnf_fault_monitor:subscription_delete"
        );
        assert_eq!(rule(Method::POST, "/alert"), None, "Alertmanager's webhooks have credentials of their own");
        assert_eq!(rule(Method::POST, "/v1.0/vims.json"), Some(("create_vim".into(), Role::Member)));
        assert_eq!(rule(Method::GET, "/v1.0/vims"), Some(("get_vim".into(), Role::Reader)));
        assert_eq!(rule(Method::GET, "/v1.0/vims/v.json").unwrap().0, "get_vim");
        assert_eq!(rule(Method::PUT, "/v1.0/vims/v.json").unwrap().0, "update_vim");
        assert_eq!(rule(Method::DELETE, "/v1.0/vims/v").unwrap().0, "delete_vim");
        assert_eq!(
            rule(Method::POST, "/vnfpm/v2/pm_jobs"),
            Some(("os_nfv_orchestration_api_v2:vnf_performance_management:create".into(), Role::Member))
        );
        assert_eq!(
            rule(Method::GET, "/vnfpm/v2/pm_jobs/j/reports/r"),
            Some(("os_nfv_orchestration_api_v2:vnf_performance_management:report_get".into(), Role::Reader))
        );
        assert_eq!(
            rule(Method::PATCH, "/vnfpm/v2/thresholds/t").unwrap().0,
            "os_nfv_orchestration_api_v2:vnf_performance_management:update_threshold"
        );
        assert_eq!(
            rule(Method::GET, "/vnfpm/v2/thresholds").unwrap().0,
            "os_nfv_orchestration_api_v2:vnf_performance_management:index_threshold"
        );
        assert_eq!(rule(Method::GET, "/healthz"), None);
        assert_eq!(rule(Method::POST, "/oauth2/token"), None);
    }

    #[test]
    fn scopes_cover_an_api_its_reads_or_one_operation() {
        let allows = |scopes: &[&str], method: Method, path: &str| {
            let scopes: Vec<String> = scopes.iter().map(|scope| (*scope).to_owned()).collect();
            scopes_allow(&scopes, &method, path)
        };
        let instantiate = "/vnflcm/v2/vnf_instances/i/instantiate";
        assert!(allows(&["vnflcm:v2:all"], Method::POST, instantiate));
        assert!(!allows(&["vnflcm:v1:all"], Method::POST, instantiate), "another major");
        assert!(!allows(&["vnfpkgm:v1:all"], Method::POST, instantiate), "another API");
        assert!(allows(&["vnflcm:v2:readonly"], Method::GET, "/vnflcm/v2/vnf_instances"));
        assert!(!allows(&["vnflcm:v2:readonly"], Method::POST, "/vnflcm/v2/vnf_instances"));
        assert!(allows(&["openid", "vnflcm:v2:instantiate"], Method::POST, instantiate));
        assert!(!allows(&["vnflcm:v2:instantiate"], Method::POST, "/vnflcm/v2/vnf_instances/i/terminate"));
        assert!(allows(&["vnfpkgm:v1:package_content"], Method::PUT, "/vnfpkgm/v1/vnf_packages/p/package_content"));
        assert!(allows(&["vnflcm:v2:readonly"], Method::GET, "/vnflcm/api_versions"), "api_versions of the API");
        assert!(!allows(&["vnfpkgm:v1:all"], Method::GET, "/vnflcm/api_versions"));
        assert!(!allows(&[], Method::GET, "/vnflcm/v2/vnf_instances"));
        assert!(allows(&[], Method::GET, "/healthz"), "outside the APIs");
        assert!(!allows(&["vnflcm:v2:all"], Method::POST, "/v1.0/vims.json"), "the VIM registry has its own scopes");
        assert!(allows(&["nfvo:v1:readonly"], Method::GET, "/v1.0/vims/v.json"));
        assert!(allows(&["vnfpm:v2:readonly"], Method::GET, "/vnfpm/v2/pm_jobs/j/reports/r"));
        assert!(!allows(&["vnfpm:v2:readonly"], Method::POST, "/vnfpm/v2/thresholds"));
        assert!(allows(&["vnfpm:v2:report_get"], Method::GET, "/vnfpm/v2/pm_jobs/j/reports/r"));
        assert!(allows(&["nfvo:v1:create"], Method::POST, "/v1.0/vims"));
        assert!(!allows(&["nfvo:v1:readonly"], Method::DELETE, "/v1.0/vims/v"));
        assert!(allows(&["vnffm:v1:update"], Method::PATCH, "/vnffm/v1/alarms/a"));
        assert!(!allows(&["vnffm:v1:update"], Method::POST, "/vnffm/v1/subscriptions"));
        assert!(allows(&["vnffm:v1:subscription_create"], Method::POST, "/vnffm/v1/subscriptions"));
        assert!(allows(&["vnffm:v1:readonly"], Method::GET, "/vnffm/v1/subscriptions/s"));

        assert!(is_known_scope("vnflcm:v2:all") && is_known_scope("vnfpkgm:v1:package_content"));
        for unknown in ["vnflcm", "vnflcm:2:all", "vnflcm:v2:", "nova:v2:all", "vnflcm:v2:all:x", "vnflcm:vx:all"] {
            assert!(!is_known_scope(unknown), "{unknown}");
        }
    }

    #[test]
    fn a_policy_file_changes_a_rules_role() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("policy.toml");
        std::fs::write(&path, "\"os_nfv_orchestration_api_v2:vnf_instances:delete\" = \"admin\"\n").unwrap();
        let policy = Policy::load(&path).unwrap();
        assert_eq!(policy.rule(&Method::DELETE, "/vnflcm/v2/vnf_instances/x").unwrap().role, Role::Admin);
        assert_eq!(policy.rule(&Method::POST, "/vnflcm/v2/vnf_instances").unwrap().role, Role::Member);
        std::fs::write(&path, "\"x\" = \"superuser\"\n").unwrap();
        assert!(Policy::load(&path).unwrap_err().contains("superuser"));
    }
}

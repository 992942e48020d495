//! Timeouts of the OpenStack and Kubernetes drivers (the `[drivers]` settings table), named
//! after the Tacker options operators already tune.

use serde::{Deserialize, Serialize};

/// How often a running wait checks whether its operation was cancelled.
#[cfg(any(feature = "openstack", feature = "kubernetes"))]
const CANCEL_POLL: std::time::Duration = std::time::Duration::from_millis(500);

/// How a VIM's HTTPS is trusted, from the `[tls]` settings table (not a `[drivers]` key).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VimTrust {
    /// Extra trust anchors (PEM) added to the platform's (`[tls] ca_file`).
    pub extra_ca_pem: Option<std::sync::Arc<str>>,
    /// Whether a VIM registration may turn certificate checks off
    /// (`interfaceInfo.skipCertificateVerification` and the like). Off unless the operator
    /// turns it on (`[tls] allow_vim_skip_verification`).
    pub allow_skip_verification: bool,
}

/// Why a VIM that asks to skip certificate checks is refused.
#[cfg(any(feature = "openstack", feature = "kubernetes"))]
pub(crate) const SKIP_REFUSED: &str = "interfaceInfo asks to skip TLS certificate verification, which this \
     solgate does not allow (an operator can allow it with [tls] allow_vim_skip_verification = true)";

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DriverSettings {
    /// `timeout_mins` Heat gets for a stack create or update (Tacker:
    /// `openstack_vim_stack_create_timeout`).
    pub openstack_stack_timeout_mins: u32,
    /// Seconds between two polls of a Heat stack (Tacker: `CHECK_INTERVAL`).
    pub openstack_poll_interval_secs: u64,
    /// Seconds solgate waits for a stack operation before failing the LCM operation.
    pub openstack_wait_timeout_secs: u64,
    /// Seconds solgate waits for Kubernetes resources to be ready or gone (Tacker:
    /// `kubernetes_vim_rsc_wait_timeout`).
    pub kubernetes_wait_timeout_secs: u64,
    /// Seconds between two polls of Kubernetes resources.
    pub kubernetes_poll_interval_secs: u64,
    /// The `helm` executable of the Helm driver (`ETSINFV.HELM.V_3`): a path, or a name
    /// looked up in `PATH`.
    pub helm_command: String,
    /// Seconds one helm command may take (passed to helm as `--timeout`; Tacker's
    /// `HELM_INSTALL_TIMEOUT`), after which it is killed.
    pub helm_timeout_secs: u64,
    /// The Python 3 interpreter that runs a VNF package's scripts (LCM operation user data,
    /// management scripts of the VNFD's `Vnflcm` interface): a path, or a name looked up in
    /// `PATH`. The scripts' own imports (PyYAML for Tacker's samples) must be installed for it.
    pub python_command: String,
    /// Seconds one package script may take, after which it is killed with whatever it
    /// started and the operation fails (FAILED_TEMP).
    pub script_timeout_secs: u64,
}

impl Default for DriverSettings {
    fn default() -> Self {
        Self {
            openstack_stack_timeout_mins: 20,
            openstack_poll_interval_secs: 5,
            openstack_wait_timeout_secs: 3600,
            kubernetes_wait_timeout_secs: 500,
            kubernetes_poll_interval_secs: 10,
            helm_command: "helm".to_owned(),
            helm_timeout_secs: 120,
            python_command: "python3".to_owned(),
            script_timeout_secs: 300,
        }
    }
}

impl DriverSettings {
    /// The key of the first setting that cannot work (zero).
    pub fn zero_key(&self) -> Option<&'static str> {
        [
            ("drivers.openstack_stack_timeout_mins", u64::from(self.openstack_stack_timeout_mins)),
            ("drivers.openstack_poll_interval_secs", self.openstack_poll_interval_secs),
            ("drivers.openstack_wait_timeout_secs", self.openstack_wait_timeout_secs),
            ("drivers.kubernetes_wait_timeout_secs", self.kubernetes_wait_timeout_secs),
            ("drivers.kubernetes_poll_interval_secs", self.kubernetes_poll_interval_secs),
            ("drivers.helm_timeout_secs", self.helm_timeout_secs),
            ("drivers.script_timeout_secs", self.script_timeout_secs),
        ]
        .into_iter()
        .find(|(_, value)| *value == 0)
        .map(|(key, _)| key)
    }

    /// How package scripts run.
    pub fn scripts(&self) -> crate::script::ScriptSettings {
        crate::script::ScriptSettings {
            python: self.python_command.clone().into(),
            timeout: std::time::Duration::from_secs(self.script_timeout_secs),
        }
    }

    #[cfg(feature = "openstack")]
    pub fn openstack(&self, trust: &VimTrust) -> crate::openstack::OpenStackDriver {
        crate::openstack::OpenStackDriver {
            wait: crate::openstack::WaitOptions {
                poll_interval: std::time::Duration::from_secs(self.openstack_poll_interval_secs),
                timeout: std::time::Duration::from_secs(self.openstack_wait_timeout_secs),
            },
            cancel_poll: CANCEL_POLL,
            stack_timeout_mins: self.openstack_stack_timeout_mins,
            trust: trust.clone(),
            scripts: self.scripts(),
        }
    }

    #[cfg(feature = "kubernetes")]
    pub fn kubernetes(&self, trust: &VimTrust) -> crate::kubernetes::KubernetesDriver {
        crate::kubernetes::KubernetesDriver {
            wait: crate::kubernetes::WaitOptions {
                timeout: std::time::Duration::from_secs(self.kubernetes_wait_timeout_secs),
                poll_interval: std::time::Duration::from_secs(self.kubernetes_poll_interval_secs),
            },
            cancel_poll: CANCEL_POLL,
            trust: trust.clone(),
        }
    }

    #[cfg(feature = "kubernetes")]
    pub fn helm(&self, trust: &VimTrust) -> crate::kubernetes::HelmDriver {
        crate::kubernetes::HelmDriver {
            kubernetes: self.kubernetes(trust),
            helm: crate::kubernetes::HelmSettings {
                command: self.helm_command.clone().into(),
                timeout: std::time::Duration::from_secs(self.helm_timeout_secs),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_tackers_and_zero_is_refused() {
        let settings = DriverSettings::default();
        assert_eq!(settings.zero_key(), None);
        assert_eq!(settings.openstack_stack_timeout_mins, 20);
        assert_eq!(settings.kubernetes_wait_timeout_secs, 500);
        let zero = DriverSettings { kubernetes_poll_interval_secs: 0, ..DriverSettings::default() };
        assert_eq!(zero.zero_key(), Some("drivers.kubernetes_poll_interval_secs"));
    }

    #[cfg(all(feature = "openstack", feature = "kubernetes"))]
    #[test]
    fn settings_reach_the_drivers() {
        use std::time::Duration;
        let settings = DriverSettings {
            openstack_stack_timeout_mins: 45,
            openstack_poll_interval_secs: 2,
            openstack_wait_timeout_secs: 900,
            kubernetes_wait_timeout_secs: 120,
            kubernetes_poll_interval_secs: 3,
            helm_command: "/opt/helm/bin/helm".to_owned(),
            helm_timeout_secs: 300,
            python_command: "/opt/python/bin/python3".to_owned(),
            script_timeout_secs: 30,
        };
        let openstack = settings.openstack(&VimTrust::default());
        assert_eq!(openstack.stack_timeout_mins, 45);
        assert_eq!(openstack.wait.poll_interval, Duration::from_secs(2));
        assert_eq!(openstack.wait.timeout, Duration::from_secs(900));
        let kubernetes = settings.kubernetes(&VimTrust::default());
        assert_eq!(kubernetes.wait.timeout, Duration::from_secs(120));
        assert_eq!(kubernetes.wait.poll_interval, Duration::from_secs(3));
        let helm = settings.helm(&VimTrust::default());
        assert_eq!(helm.helm.command, std::path::Path::new("/opt/helm/bin/helm"));
        assert_eq!(helm.helm.timeout, Duration::from_secs(300));
        assert_eq!(helm.kubernetes.wait.timeout, Duration::from_secs(120));
        assert_eq!(openstack.scripts.python, std::path::Path::new("/opt/python/bin/python3"));
        assert_eq!(settings.scripts().timeout, Duration::from_secs(30));
    }
}

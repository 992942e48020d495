//! What every driver's run of one infra action shares: why a run stops early ([`Halt`]),
//! the cancellation checks before and during its steps ([`check_cancelled`],
//! [`CancelGuard`]), and the [`DriverError`] a halted run reports ([`Halt::into_error`]),
//! which carries the inventory as far as the run got, so that a retry or a rollback knows
//! what the VIM holds. [`run_action`] does that bookkeeping around the steps of every
//! driver ([`ActionRun`]).
//!
//! The state of a run (clients, `vim_state`, the inventory so far) stays in each driver:
//! `HeatRun` (OpenStack), `KubernetesRun`, `SimulatedRun` (local VIM).

use solgate_vnfpkg::{Flavour, Vnfd};

use crate::infra::{DeploymentPlan, DriverError, InfraAction, Inventory};

/// Why a run stopped early.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Halt {
    /// The operation was cancelled, before or during a step.
    Cancelled(String),
    /// A step failed.
    Failed(String),
    /// A step failed in a way that may pass (the VIM unreachable, a 5xx, a timeout).
    Transient(String),
    /// The VNF package's LCM operation user data failed.
    #[cfg_attr(not(feature = "openstack"), allow(dead_code))]
    UserData(String),
}

/// [`Halt::Failed`] with `message`.
pub(crate) fn failed(message: impl Into<String>) -> Halt {
    Halt::Failed(message.into())
}

/// [`Halt::Transient`] with `message`.
pub(crate) fn transient(message: impl Into<String>) -> Halt {
    Halt::Transient(message.into())
}

/// An error of a VIM call that knows whether asking again may succeed: the VIM unreachable,
/// a connection reset, a timeout, HTTP 429 or a 5xx are transient; a refused request (4xx),
/// a certificate or credential failure, or a failure the VIM decided on itself (a Heat stack
/// in `CREATE_FAILED`) are not. [`CancelGuard::guard`] turns the first kind into
/// [`Halt::Transient`], which the conductor retries with backoff.
#[cfg(any(feature = "openstack", feature = "kubernetes"))]
pub(crate) trait VimFailure: std::fmt::Display {
    fn is_transient(&self) -> bool;
}

#[cfg(any(feature = "openstack", feature = "kubernetes"))]
impl VimFailure for std::convert::Infallible {
    fn is_transient(&self) -> bool {
        match *self {}
    }
}

/// `Halt` for a failed VIM call: `"<what>: <error>"`, transient when the error is.
#[cfg(any(feature = "openstack", feature = "kubernetes"))]
pub(crate) fn vim_failure(what: &str, error: &impl VimFailure) -> Halt {
    let message = format!("{what}: {error}");
    if error.is_transient() { transient(message) } else { failed(message) }
}

/// Whether a VIM API's HTTP status says "ask again later": 429 Too Many Requests, and the
/// 5xx a VIM or the proxy before it answers while it is overloaded, restarting or briefly
/// unreachable (500, 502, 503, 504). Other 4xx and 5xx (501) will not change on a retry.
#[cfg(any(feature = "openstack", feature = "kubernetes"))]
pub(crate) fn transient_status(status: u16) -> bool {
    matches!(status, 429 | 500 | 502 | 503 | 504)
}

impl Halt {
    /// A failure, as opposed to a cancellation.
    pub(crate) fn is_failure(&self) -> bool {
        matches!(self, Halt::Failed(_) | Halt::Transient(_) | Halt::UserData(_))
    }

    /// The error a halted run reports: its message, `partial` as what the VIM holds now,
    /// and [`DriverError::cancelled`] set when the operation was cancelled.
    pub(crate) fn into_error(self, partial: Inventory) -> DriverError {
        let (message, cancelled, transient) = match self {
            Halt::Cancelled(message) => (message, true, false),
            Halt::Failed(message) => (message, false, false),
            Halt::Transient(message) => (message, false, true),
            Halt::UserData(message) => {
                return DriverError::by_package("Userdata execution failed", message).with_partial(partial);
            }
        };
        let mut error = DriverError::new(message).with_partial(partial);
        error.cancelled = cancelled;
        error.transient = transient;
        error
    }
}

/// `Err(Halt::Cancelled("cancelled before <before>"))` once the operation is cancelled
/// (`InfraContext::cancelled` answers true).
pub(crate) fn check_cancelled(cancelled: &(dyn Fn() -> bool + Send + Sync), before: &str) -> Result<(), Halt> {
    if cancelled() { Err(Halt::Cancelled(format!("cancelled before {before}"))) } else { Ok(()) }
}

/// The deployment flavour `flavour_id` of the VNFD; a failure when it has none such.
pub(crate) fn vnfd_flavour<'v>(vnfd: &'v Vnfd, flavour_id: &str) -> Result<&'v Flavour, Halt> {
    vnfd.flavour(flavour_id).ok_or_else(|| failed(format!("flavour {flavour_id} is not in the VNFD")))
}

/// One run of an infra action: the driver's steps for each action, which stop with a
/// [`Halt`], and what [`run_action`] needs around them.
pub(crate) trait ActionRun {
    async fn realize(&mut self, plan: &DeploymentPlan) -> Result<(), Halt>;
    async fn heal(&mut self, plan: &DeploymentPlan, vnfc_ids: &[String]) -> Result<(), Halt>;
    async fn operate(&mut self, change_state_to: &str) -> Result<(), Halt>;
    async fn teardown(&mut self) -> Result<(), Halt>;
    /// Writes what the driver remembers into the inventory's `vim_state` (a driver that
    /// keeps nothing there has nothing to do).
    fn sync_vim_state(&mut self) {}
    /// After a failure: looks at the VIM once more, so that the partial inventory holds
    /// what is there (a failed create may still hold servers). Best effort; a VIM whose
    /// inventory is the run's own (the local one) has nothing to read.
    async fn reread_after_failure(&mut self) {}
    /// The inventory so far.
    fn into_inventory(self) -> Inventory;
}

/// Runs `action` with the driver's steps. A halted run reports a [`DriverError`] with
/// the inventory as far as known: `vim_state` synced, the VIM read once more after a
/// failure (not after a cancellation, which must not wait for the VIM).
pub(crate) async fn run_action<R: ActionRun>(mut run: R, action: InfraAction<'_>) -> Result<Inventory, DriverError> {
    let result = match action {
        InfraAction::Realize { plan } => run.realize(plan).await,
        InfraAction::Heal { plan, vnfc_ids } => run.heal(plan, vnfc_ids).await,
        InfraAction::Operate { change_state_to } => run.operate(change_state_to).await,
        InfraAction::Teardown => run.teardown().await,
    };
    let Err(halt) = result else { return Ok(run.into_inventory()) };
    run.sync_vim_state();
    if halt.is_failure() {
        run.reread_after_failure().await;
    }
    Err(halt.into_error(run.into_inventory()))
}

#[cfg(any(feature = "openstack", feature = "kubernetes"))]
pub(crate) use remote::CancelGuard;

/// What only the remote drivers (OpenStack, Kubernetes) use.
#[cfg(any(feature = "openstack", feature = "kubernetes"))]
mod remote {
    use std::convert::Infallible;
    use std::future::Future;
    use std::time::Duration;

    use super::{Halt, VimFailure, check_cancelled, vim_failure};

    /// The cancellation checks of one run against a remote VIM: `cancelled` is asked before
    /// each step and every `poll` while a call or a wait is under way.
    #[derive(Clone, Copy)]
    pub(crate) struct CancelGuard<'a> {
        cancelled: &'a (dyn Fn() -> bool + Send + Sync),
        poll: Duration,
    }

    impl<'a> CancelGuard<'a> {
        pub(crate) fn new(cancelled: &'a (dyn Fn() -> bool + Send + Sync), poll: Duration) -> Self {
            Self { cancelled, poll }
        }

        /// [`check_cancelled`] for this run.
        pub(crate) fn check(&self, before: &str) -> Result<(), Halt> {
            check_cancelled(self.cancelled, before)
        }

        /// Resolves when the operation is cancelled (asked every `poll`).
        async fn cancellation(&self) {
            while !(self.cancelled)() {
                tokio::time::sleep(self.poll).await;
            }
        }

        /// Runs one API call or wait, abandoning it when the operation is cancelled:
        /// `Halt::Cancelled("cancelled before <what>")` if it already is,
        /// `Halt::Cancelled("cancelled while <what>")` if it is while the call runs, and
        /// `"<what>: <error>"` if the call fails: `Halt::Transient` when the error is
        /// ([`VimFailure::is_transient`]), else `Halt::Failed`.
        pub(crate) async fn guard<T, E: VimFailure>(
            &self,
            what: &str,
            call: impl Future<Output = Result<T, E>>,
        ) -> Result<T, Halt> {
            self.check(what)?;
            tokio::select! {
                biased;
                result = call => result.map_err(|error| vim_failure(what, &error)),
                () = self.cancellation() => Err(Halt::Cancelled(format!("cancelled while {what}"))),
            }
        }

        /// Sleeps `duration` (between two polls of a wait), cut short by a cancellation.
        pub(crate) async fn pause(&self, what: &str, duration: Duration) -> Result<(), Halt> {
            let sleep = async {
                tokio::time::sleep(duration).await;
                Ok::<(), Infallible>(())
            };
            self.guard(what, sleep).await
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inventory() -> Inventory {
        Inventory { vim_state: serde_json::json!({"stackName": "vnf-1"}), ..Inventory::default() }
    }

    #[test]
    fn a_halt_becomes_a_driver_error_with_the_partial_inventory() {
        let error = Halt::Cancelled("cancelled before step create_vnfc".into()).into_error(inventory());
        assert_eq!(error.message, "cancelled before step create_vnfc");
        assert!(error.cancelled);
        assert_eq!(error.partial.as_deref(), Some(&inventory()));

        let error = failed("creating Heat stack vnf-1: HTTP 500").into_error(inventory());
        assert_eq!(error.to_string(), "creating Heat stack vnf-1: HTTP 500");
        assert!(!error.cancelled);
        assert_eq!(error.partial.as_deref(), Some(&inventory()));
    }

    #[test]
    fn check_cancelled_names_the_step_not_taken() {
        assert_eq!(check_cancelled(&|| false, "healing"), Ok(()));
        assert_eq!(check_cancelled(&|| true, "healing"), Err(Halt::Cancelled("cancelled before healing".into())));
    }

    #[cfg(any(feature = "openstack", feature = "kubernetes"))]
    mod remote {
        use std::sync::Arc;
        use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
        use std::time::Duration;

        use serde_json::json;

        use super::*;
        use crate::infra::{DeploymentPlan, InfraAction, ResourceHandle, VnfcResource};

        const POLL: Duration = Duration::from_millis(5);

        /// Test errors: "HTTP 503 ..." is transient, anything else is not.
        impl VimFailure for &str {
            fn is_transient(&self) -> bool {
                self.starts_with("HTTP 503")
            }
        }

        impl VimFailure for String {
            fn is_transient(&self) -> bool {
                self.as_str().is_transient()
            }
        }

        /// A driver whose realize creates one VNFC, then waits for it (an hour) or fails.
        struct FakeRun<'a> {
            cancel: CancelGuard<'a>,
            fail_wait: bool,
            vnfcs: u32,
            inventory: Inventory,
        }

        impl ActionRun for FakeRun<'_> {
            async fn realize(&mut self, _plan: &DeploymentPlan) -> Result<(), Halt> {
                self.cancel.check("creating VNFC 1")?;
                self.vnfcs += 1;
                self.inventory.vnfc_resources.push(VnfcResource {
                    id: "vnfc-1".into(),
                    vdu_id: "VDU1".into(),
                    compute_resource: ResourceHandle {
                        vim_connection_id: None,
                        resource_id: "server-1".into(),
                        vim_level_resource_type: None,
                    },
                    storage_resource_ids: Vec::new(),
                    vnfc_cp_info: Vec::new(),
                    zone_id: None,
                    metadata: None,
                });
                if self.fail_wait {
                    return Err(failed("waiting for VNFC 1: it went to ERROR"));
                }
                self.cancel.pause("waiting for VNFC 1", Duration::from_secs(3600)).await
            }
            async fn heal(&mut self, _plan: &DeploymentPlan, _vnfc_ids: &[String]) -> Result<(), Halt> {
                Ok(())
            }
            async fn operate(&mut self, _change_state_to: &str) -> Result<(), Halt> {
                Ok(())
            }
            async fn teardown(&mut self) -> Result<(), Halt> {
                Ok(())
            }
            fn sync_vim_state(&mut self) {
                self.inventory.vim_state = json!({"vnfcs": self.vnfcs});
            }
            async fn reread_after_failure(&mut self) {
                self.inventory.vnf_state = "REREAD".into();
            }
            fn into_inventory(self) -> Inventory {
                self.inventory
            }
        }

        impl<'a> FakeRun<'a> {
            fn new(cancelled: &'a (dyn Fn() -> bool + Send + Sync), fail_wait: bool) -> Self {
                Self { cancel: CancelGuard::new(cancelled, POLL), fail_wait, vnfcs: 0, inventory: Inventory::default() }
            }
        }

        async fn realize(run: FakeRun<'_>) -> Result<Inventory, DriverError> {
            let plan = DeploymentPlan {
                flavour_id: "simple".into(),
                vdus: Vec::new(),
                virtual_links: Vec::new(),
                ext_virtual_links: json!([]),
                ext_managed_virtual_links: json!([]),
                scale_levels: Default::default(),
                granted: Default::default(),
            };
            run_action(run, InfraAction::Realize { plan: &plan }).await
        }

        #[tokio::test]
        async fn a_cancel_mid_step_reports_what_the_run_created_without_rereading_the_vim() {
            let flag = Arc::new(AtomicBool::new(false));
            let setter = Arc::clone(&flag);
            tokio::spawn(async move {
                tokio::time::sleep(Duration::from_millis(30)).await;
                setter.store(true, Ordering::Relaxed);
            });
            let cancelled = move || flag.load(Ordering::Relaxed);
            let error = realize(FakeRun::new(&cancelled, false)).await.unwrap_err();
            assert!(error.cancelled);
            assert_eq!(error.message, "cancelled while waiting for VNFC 1");
            let partial = error.partial.unwrap();
            assert_eq!(partial.vnfc_resources.len(), 1, "the VNFC created before the cancel");
            assert_eq!(partial.vim_state, json!({"vnfcs": 1}));
            assert_eq!(partial.vnf_state, "", "a cancelled run does not wait for the VIM again");
        }

        #[tokio::test]
        async fn a_failed_step_reports_the_vim_as_read_once_more() {
            let never = || false;
            let error = realize(FakeRun::new(&never, true)).await.unwrap_err();
            assert!(!error.cancelled);
            assert_eq!(error.message, "waiting for VNFC 1: it went to ERROR");
            let partial = error.partial.unwrap();
            assert_eq!(partial.vnfc_resources.len(), 1);
            assert_eq!(partial.vim_state, json!({"vnfcs": 1}));
            assert_eq!(partial.vnf_state, "REREAD");
        }

        #[tokio::test]
        async fn a_finished_run_returns_its_inventory() {
            let never = || false;
            let run = FakeRun::new(&never, false);
            assert_eq!(run_action(run, InfraAction::Teardown).await.unwrap(), Inventory::default());
        }

        #[tokio::test]
        async fn a_call_runs_to_its_result_or_its_error() {
            let never = || false;
            let guard = CancelGuard::new(&never, POLL);
            assert_eq!(guard.guard("reading x", async { Ok::<_, String>(7) }).await, Ok(7));
            let error = guard.guard("reading x", async { Err::<u8, _>("HTTP 404") }).await;
            assert_eq!(error, Err(failed("reading x: HTTP 404")));
        }

        #[tokio::test]
        async fn a_transient_vim_error_halts_the_run_as_transient() {
            let never = || false;
            let guard = CancelGuard::new(&never, POLL);
            let halt = guard.guard("reading x", async { Err::<u8, _>("HTTP 503 Service Unavailable") }).await;
            assert_eq!(halt, Err(transient("reading x: HTTP 503 Service Unavailable")));
            let error = halt.unwrap_err().into_error(inventory());
            assert!(error.transient && !error.cancelled);
            assert!(transient_status(503) && transient_status(429) && transient_status(504));
            assert!(!transient_status(400) && !transient_status(404) && !transient_status(501));
        }

        #[tokio::test]
        async fn a_cancelled_run_starts_no_call() {
            let always = || true;
            let started = AtomicBool::new(false);
            let call = async {
                started.store(true, Ordering::Relaxed);
                Ok::<_, String>(())
            };
            let halt = CancelGuard::new(&always, POLL).guard("deleting x", call).await;
            assert_eq!(halt, Err(Halt::Cancelled("cancelled before deleting x".into())));
            assert!(!started.load(Ordering::Relaxed));
        }

        #[tokio::test]
        async fn a_cancel_mid_wait_abandons_the_wait_and_keeps_the_inventory_so_far() {
            // The cancel arrives on the third poll; the wait itself would take an hour.
            let polls = Arc::new(AtomicU32::new(0));
            let counter = Arc::clone(&polls);
            let cancelled = move || counter.fetch_add(1, Ordering::Relaxed) >= 3;
            let guard = CancelGuard::new(&cancelled, POLL);
            let started = tokio::time::Instant::now();
            let halt = guard.pause("waiting for stack vnf-1", Duration::from_secs(3600)).await.unwrap_err();
            assert!(started.elapsed() < Duration::from_secs(60));
            assert_eq!(halt, Halt::Cancelled("cancelled while waiting for stack vnf-1".into()));

            let error = halt.into_error(inventory());
            assert!(error.cancelled);
            assert_eq!(error.message, "cancelled while waiting for stack vnf-1");
            assert_eq!(error.partial.as_deref(), Some(&inventory()));
        }
    }
}

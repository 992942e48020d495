//! Waiting for a VNF LCM operation occurrence (SOL003 clause 5.6.2.2 states) to settle.

use std::time::{Duration, Instant};

use serde_json::Value;

use crate::client::Client;
use crate::error::{Error, Result};
use crate::records::OpOccView;

/// `LcmOperationStateType`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpState {
    Starting,
    Processing,
    Completed,
    FailedTemp,
    Failed,
    RollingBack,
    RolledBack,
    Unknown,
}

impl OpState {
    pub fn of(op: &Value) -> OpState {
        OpState::parse(OpOccView::of(op).operation_state.as_deref().unwrap_or_default())
    }

    /// A `LcmOperationStateType` value; `Unknown` for anything else.
    pub fn parse(state: &str) -> OpState {
        match state {
            "STARTING" => OpState::Starting,
            "PROCESSING" => OpState::Processing,
            "COMPLETED" => OpState::Completed,
            "FAILED_TEMP" => OpState::FailedTemp,
            "FAILED" => OpState::Failed,
            "ROLLING_BACK" => OpState::RollingBack,
            "ROLLED_BACK" => OpState::RolledBack,
            _ => OpState::Unknown,
        }
    }

    /// Where an operation stops and waits for someone: a final state, or FAILED_TEMP
    /// (which waits for retry, rollback or fail).
    pub fn is_settled(self) -> bool {
        matches!(self, OpState::Completed | OpState::FailedTemp | OpState::Failed | OpState::RolledBack)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WaitOptions {
    pub timeout: Duration,
    pub poll: Duration,
}

impl Default for WaitOptions {
    fn default() -> Self {
        WaitOptions { timeout: Duration::from_secs(600), poll: Duration::from_millis(500) }
    }
}

impl Client {
    /// Polls the occurrence at `href` (a `Location`, or an id) until it settles in a state
    /// entered after `since` (the `stateEnteredTime` before a retry or rollback: until the
    /// conductor picks the request up, the occurrence still shows its old state). Returns
    /// the settled occurrence, whatever its state; `on_state` sees every poll.
    pub async fn wait_for_operation(
        &self,
        href: &str,
        since: Option<&str>,
        options: WaitOptions,
        mut on_state: impl FnMut(&Value),
    ) -> Result<Value> {
        let started = Instant::now();
        loop {
            let op = if href.contains('/') {
                self.show_operation_at(href).await?
            } else {
                self.show_operation(href).await?
            };
            on_state(&op);
            let view = OpOccView::of(&op);
            let entered = view.state_entered_time.as_deref().unwrap_or_default();
            let state = view.operation_state.as_deref();
            if OpState::parse(state.unwrap_or_default()).is_settled() && since.is_none_or(|since| entered > since) {
                return Ok(op);
            }
            if started.elapsed() >= options.timeout {
                return Err(Error::Timeout {
                    what: format!("operation occurrence {}", view.id.as_deref().unwrap_or(href)),
                    seconds: options.timeout.as_secs(),
                    state: state.unwrap_or("unknown").to_owned(),
                });
            }
            tokio::time::sleep(options.poll).await;
        }
    }
}

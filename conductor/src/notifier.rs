//! Notification delivery: POSTs the rows of the notification outbox to their
//! subscriptions' callbacks, and the callback test a new subscription must pass.
//!
//! - At least once: a row is marked delivered only after its callback answered 2xx; a
//!   failure is retried with exponential backoff (with jitter, up to a ceiling) until
//!   `max_attempts` or `max_age`, then it is GIVEN_UP with a warning in the log. The
//!   notification's `id` is fixed when it is queued, so every attempt carries the same id.
//! - In order per subscription: only the oldest pending row of a subscription (its head)
//!   is ever attempted; the next one waits until the head is delivered or given up.
//! - Independent subscriptions: each head is delivered by its own task (bounded by
//!   `max_concurrent_deliveries`), with a per-request timeout, so a slow or dead callback
//!   only delays its own subscription.
//! - Several conductors: a worker claims a head with a lease (`claimed_by`,
//!   `claim_expires_at`) before sending it; a dead worker's claims expire and another
//!   worker takes over. This works the same on SQLite and PostgreSQL.
//! - Tacker sends each notification once from a daemon thread and only logs failures
//!   (its defect 8); nothing here is lost on a restart.

use std::collections::HashSet;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use reqwest::{Method, StatusCode};
use solgate_db::repo::notifications::{self, NotificationRow};
use solgate_db::repo::{now_text, parse_text, to_text};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use crate::context::{ConductorContext, ConductorError};
use solgate_core::callbacks::notification_version_of;
use solgate_core::notify::{self, Target};
use solgate_core::settings::NotificationSettings;

/// Delay before attempt `failures + 1`: `initial * 2^(failures - 1)` up to the ceiling,
/// then "equal jitter" (half fixed, half random), so that subscriptions failing together
/// do not retry in lockstep.
pub fn backoff(settings: &NotificationSettings, failures: u32) -> Duration {
    let ceiling = settings.max_backoff_secs.saturating_mul(1000).max(1);
    let exponent = failures.saturating_sub(1).min(40);
    let base = settings.initial_backoff_ms.max(1).saturating_mul(1u64 << exponent).min(ceiling);
    let half = base / 2;
    let random = uuid::Uuid::new_v4().as_u128() % u128::from(half + 1);
    Duration::from_millis(base - half + u64::try_from(random).unwrap_or(0))
}

/// `time` moved `by` into the future (or the past), as stored. Stored times compare as
/// text, so results stay within years 1970..=9999 (settings too large for the calendar
/// saturate instead of panicking or sorting wrongly).
fn shifted(time: chrono::DateTime<chrono::Utc>, by: Duration, forward: bool) -> String {
    let latest = chrono::DateTime::from_timestamp(253_402_300_799, 0).unwrap_or(time);
    let earliest = chrono::DateTime::UNIX_EPOCH;
    let by = chrono::Duration::from_std(by).unwrap_or(chrono::Duration::MAX);
    let moved = if forward { time.checked_add_signed(by) } else { time.checked_sub_signed(by) };
    to_text(moved.unwrap_or(if forward { latest } else { earliest }).clamp(earliest, latest))
}

/// Notifications one task delivers in a row for its subscription before it gives its
/// permit back (so a long queue cannot keep other subscriptions waiting for a permit).
const MAX_IN_A_ROW: usize = 32;

struct Worker {
    ctx: Arc<ConductorContext>,
    /// Subscriptions whose queue a task of this worker is delivering.
    in_flight: Mutex<HashSet<String>>,
    permits: Arc<Semaphore>,
    stop: CancellationToken,
}

/// Delivers until `stop` is cancelled.
pub async fn run(ctx: Arc<ConductorContext>, stop: CancellationToken) {
    let settings = ctx.callbacks.settings().clone();
    let worker = Arc::new(Worker {
        ctx,
        in_flight: Mutex::new(HashSet::new()),
        permits: Arc::new(Semaphore::new(settings.max_concurrent_deliveries.max(1))),
        stop: stop.clone(),
    });
    let mut wake = notify::wake_signal();
    let poll = Duration::from_millis(settings.poll_interval_ms.max(10));
    let mut tasks = JoinSet::new();
    let mut housekeeping_due = Instant::now();
    let mut db_trouble = false;
    loop {
        while tasks.try_join_next().is_some() {}
        match worker.dispatch_due(&mut tasks).await {
            Ok(()) => db_trouble = false,
            Err(error) => {
                // Once per outage, not once per poll.
                if !db_trouble {
                    tracing::warn!(%error, "notification delivery cannot read the outbox; retrying");
                }
                db_trouble = true;
            }
        }
        if Instant::now() >= housekeeping_due {
            housekeeping_due = Instant::now() + Duration::from_secs(10);
            worker.housekeeping(&settings).await;
        }
        tokio::select! {
            () = stop.cancelled() => break,
            () = tokio::time::sleep(poll) => {}
            changed = wake.changed() => {
                if changed.is_ok() {
                    // The rows were written inside a transaction that may not have
                    // committed yet; give it a moment.
                    tokio::time::sleep(Duration::from_millis(10)).await;
                } else {
                    tokio::time::sleep(poll).await;
                }
            }
        }
    }
    // Attempts under way get a moment; what is cut off is retried when its claim expires
    // (it may then arrive twice, with the same id).
    let grace = tokio::time::timeout(Duration::from_secs(2), async { while tasks.join_next().await.is_some() {} });
    if grace.await.is_err() {
        tasks.abort_all();
    }
}

impl Worker {
    /// Claims due heads of subscriptions nobody is delivering and starts a task for each,
    /// as far as permits allow.
    async fn dispatch_due(self: &Arc<Self>, tasks: &mut JoinSet<()>) -> Result<(), ConductorError> {
        let free = self.permits.available_permits();
        if free == 0 {
            return Ok(());
        }
        let busy = self.in_flight.lock().unwrap_or_else(PoisonError::into_inner).len();
        let limit = i64::try_from(free + busy).unwrap_or(i64::MAX);
        let heads = self.ctx.db_run(move |conn| notifications::due_heads(conn, &now_text(), limit)).await?;
        for head in heads {
            if self.in_flight.lock().unwrap_or_else(PoisonError::into_inner).contains(&head.subscription_id) {
                continue;
            }
            let Ok(permit) = self.permits.clone().try_acquire_owned() else { break };
            if !self.claim(head.id).await? {
                continue;
            }
            self.in_flight.lock().unwrap_or_else(PoisonError::into_inner).insert(head.subscription_id.clone());
            let worker = self.clone();
            tasks.spawn(async move { worker.deliver_queue(head, permit).await });
        }
        Ok(())
    }

    async fn claim(&self, id: i64) -> Result<bool, ConductorError> {
        let me = self.ctx.id.clone();
        let lease = Duration::from_secs(self.ctx.callbacks.settings().claim_timeout_secs);
        self.ctx
            .db_run(move |conn| {
                let now = chrono::Utc::now();
                notifications::claim(conn, id, &me, &to_text(now), &shifted(now, lease, true))
            })
            .await
    }

    /// Delivers a claimed head, then (while that succeeds) the subscription's next ones.
    async fn deliver_queue(self: Arc<Self>, head: NotificationRow, permit: OwnedSemaphorePermit) {
        let subscription_id = head.subscription_id.clone();
        let mut row = head;
        for _ in 0..MAX_IN_A_ROW {
            let delivered = match self.attempt(&row).await {
                Ok(delivered) => delivered,
                Err(error) => {
                    // The claim expires and the row is tried again.
                    tracing::warn!(%error, notification = %row.notification_id, "could not record a delivery attempt");
                    false
                }
            };
            if !delivered || self.stop.is_cancelled() {
                break;
            }
            let subscription = subscription_id.clone();
            let next = self.ctx.db_run(move |conn| notifications::due_head_of(conn, &subscription, &now_text())).await;
            let Ok(Some(next)) = next else { break };
            if !matches!(self.claim(next.id).await, Ok(true)) {
                break;
            }
            row = next;
        }
        self.in_flight.lock().unwrap_or_else(PoisonError::into_inner).remove(&subscription_id);
        drop(permit);
    }

    /// One attempt at one claimed row; true if it was delivered.
    async fn attempt(&self, row: &NotificationRow) -> Result<bool, ConductorError> {
        let ctx = &self.ctx;
        let settings = ctx.callbacks.settings();
        let lookup = row.clone();
        let subscription = match ctx.db_run(move |conn| notify::callback_target(conn, &lookup)).await? {
            Target::Found(subscription) => subscription,
            Target::Unknown(reason) => return self.failed(row, reason, true).await,
            Target::Gone => {
                // Deleted meanwhile: its queue goes with it.
                let subscription_id = row.subscription_id.clone();
                ctx.db_run(move |conn| notifications::drop_for_subscription(conn, &subscription_id)).await?;
                return Ok(false);
            }
        };
        let mut authentication = subscription.authentication.clone();
        if let Some(sealed) = authentication.as_mut()
            && let Err(error) = ctx.secrets.open(sealed)
        {
            return self.failed(row, &format!("the subscription's credentials cannot be opened: {error}"), true).await;
        }
        let auth = match ctx.callbacks.auth_of(authentication.as_ref()) {
            Ok(auth) => auth,
            Err(refused) => return self.failed(row, &refused.detail, true).await,
        };
        let Some(entry) =
            notification_version_of(&ctx.registry, subscription.api, subscription.major, &subscription.body)
        else {
            return self.failed(row, "no version of the subscription's major is served", true).await;
        };
        // A subscriber gets the shape of its version: fields it does not define are left out.
        let body = entry.dictionary.render(&row.notification_type, &row.body);
        let version = entry.version_string();
        // Leaving out members is not always enough: a value a later minor added (the
        // SELECT_DEPL_MODS operation type of 2.12.0, say) cannot be shown to an earlier
        // minor's subscriber at all. Such a notification is not sent; the row says why.
        let older = ctx
            .registry
            .stored_shape(subscription.api, subscription.major)
            .is_some_and(|newest| newest.version != entry.version);
        if older
            && entry.dictionary.has(&row.notification_type)
            && let Err(failures) = entry.dictionary.validate(&row.notification_type, &body)
        {
            let reason = format!("not sent: version {version} of the subscription cannot represent it ({failures})");
            return self.failed(row, &reason, true).await;
        }
        let timeout = Duration::from_secs(settings.request_timeout_secs.max(1));
        match ctx
            .callbacks
            .exchange(Method::POST, &subscription.callback_uri, &auth, &version, Some(&body), timeout)
            .await
        {
            Ok(status) if status.is_success() => {
                if status != StatusCode::NO_CONTENT {
                    // SOL003 expects 204; any 2xx means the notification arrived.
                    tracing::debug!(%status, subscription = %row.subscription_id, "callback answered 2xx other than 204");
                }
                let (id, me) = (row.id, ctx.id.clone());
                if ctx.db_run(move |conn| notifications::mark_delivered(conn, id, &me)).await? {
                    ctx.metrics.notifications.with_label_values(&["delivered"]).inc();
                }
                Ok(true)
            }
            Ok(status) => self.failed(row, &format!("the callback answered HTTP {}", status.as_u16()), false).await,
            Err(failure) => self.failed(row, &failure.cause, false).await,
        }
    }

    /// Records a failed attempt: a retry after the backoff, or GIVEN_UP once the attempts
    /// or the age are used up (or `permanent`). Returns false (not delivered).
    async fn failed(&self, row: &NotificationRow, error: &str, permanent: bool) -> Result<bool, ConductorError> {
        let ctx = &self.ctx;
        let settings = ctx.callbacks.settings();
        let attempts = u32::try_from(row.attempts).unwrap_or(0).saturating_add(1);
        let now = chrono::Utc::now();
        let age = parse_text(&row.created_at).map(|created| now - created).unwrap_or_default();
        let too_old = age.num_seconds() >= i64::try_from(settings.max_age_secs).unwrap_or(i64::MAX);
        let give_up = permanent || attempts >= settings.max_attempts.max(1) || too_old;
        let delay = backoff(settings, attempts);
        let next = shifted(now, delay, true);
        let (id, me, text) = (row.id, ctx.id.clone(), error.to_owned());
        let recorded = ctx.db_run(move |conn| notifications::mark_failed(conn, id, &me, &text, &next, give_up)).await?;
        if !recorded {
            return Ok(false);
        }
        if give_up {
            ctx.metrics.notifications.with_label_values(&["given_up"]).inc();
            tracing::warn!(
                subscription = %row.subscription_id,
                notification = %row.notification_id,
                notification_type = %row.notification_type,
                attempts,
                last_error = %error,
                "notification given up; the subscription's next notification proceeds"
            );
        } else {
            ctx.metrics.notifications.with_label_values(&["retried"]).inc();
            tracing::debug!(
                subscription = %row.subscription_id,
                notification = %row.notification_id,
                attempts,
                retry_in_ms = delay.as_millis(),
                error,
                "notification delivery failed; will retry"
            );
        }
        Ok(false)
    }

    /// The pending gauge, and removal of finished rows past their retention.
    async fn housekeeping(&self, settings: &NotificationSettings) {
        let keep = Duration::from_secs(settings.keep_finished_secs);
        let result = self
            .ctx
            .db_run(move |conn| {
                let pending = notifications::count_by_state(conn, notifications::PENDING)?;
                let purged = notifications::purge_finished(conn, &shifted(chrono::Utc::now(), keep, false))?;
                Ok((pending, purged))
            })
            .await;
        match result {
            Ok((pending, purged)) => {
                self.ctx.metrics.notifications_pending.set(pending);
                if purged > 0 {
                    tracing::debug!(purged, "finished notifications removed");
                }
            }
            Err(error) => tracing::debug!(%error, "notification housekeeping skipped"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn huge_settings_saturate() {
        let now = chrono::Utc::now();
        assert!(shifted(now, Duration::from_secs(u64::MAX), true) > to_text(now));
        assert!(shifted(now, Duration::from_secs(u64::MAX), false) < to_text(now));
        assert_eq!(shifted(now, Duration::ZERO, true), to_text(now));
        let settings =
            NotificationSettings { initial_backoff_ms: u64::MAX, max_backoff_secs: u64::MAX, ..Default::default() };
        assert!(backoff(&settings, 100) >= Duration::from_millis(u64::MAX / 2));
    }

    #[test]
    fn backoff_grows_to_the_ceiling_with_jitter() {
        let settings = NotificationSettings { initial_backoff_ms: 1000, max_backoff_secs: 10, ..Default::default() };
        for (failures, base) in
            [(1, 1000), (2, 2000), (3, 4000), (4, 8000), (5, 10_000), (30, 10_000), (u32::MAX, 10_000)]
        {
            let delay = backoff(&settings, failures).as_millis();
            assert!(
                delay >= base / 2 && delay <= base,
                "failures {failures}: {delay} ms not in [{}, {base}]",
                base / 2
            );
        }
    }
}

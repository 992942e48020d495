//! Where a notification row is delivered: the callback of the subscription (or of the
//! resource with a `callbackUri` of its own) that the row names, looked up in the table of
//! the row's API.

use serde_json::Value;
use solgate_db::repo::lcm::{self, LcmMajor};
use solgate_db::repo::notifications::{self, NotificationRow};
use solgate_db::repo::{fm_subscriptions, pkgm_subscriptions, vnfpm};
use solgate_db::{AnyConnection, DbResult};
use solgate_schemas::Api;

use super::{fm, pkgm};

/// Where a notification row goes: the callback of the subscription (or of any other
/// resource that carries its own `callbackUri`) that the row's `api` and id name, with
/// what delivery needs of it.
#[derive(Debug, Clone)]
pub struct CallbackTarget {
    /// The API whose dictionary renders the notification and whose version `Version` names.
    pub api: Api,
    pub major: u64,
    pub callback_uri: String,
    /// The callback's credentials, sealed as stored.
    pub authentication: Option<Value>,
    /// The stored document; its private part names the version it was created with.
    pub body: Value,
}

impl CallbackTarget {
    fn new(api: Api, major: u64, callback_uri: String, authentication: Option<Value>, body: Value) -> Self {
        Self { api, major, callback_uri, authentication, body }
    }
}

/// What [`callback_target`] found for a row.
#[derive(Debug, Clone)]
pub enum Target {
    Found(CallbackTarget),
    /// Deleted meanwhile: its queue goes with it.
    Gone,
    /// The row names an API or major solgate does not know: why.
    Unknown(&'static str),
}

/// The callback target of an outbox row, from the table its `api` names. One place per kind:
/// an API that adds notifications (an API's subscriptions, or resources with a callback of
/// their own) adds its arm here, and the delivery worker sends its rows like every other.
pub fn callback_target(conn: &mut AnyConnection, row: &NotificationRow) -> DbResult<Target> {
    let Ok(major) = u64::try_from(row.major) else {
        return Ok(Target::Unknown("the notification names an unknown API major version"));
    };
    let id = row.subscription_id.as_str();
    let found = match row.api.as_str() {
        notifications::VNFLCM => {
            let Some(lcm_major) = LcmMajor::from_major(major) else {
                return Ok(Target::Unknown("the notification names an unknown API major version"));
            };
            lcm::find_subscription(conn, lcm_major, id)?.map(|record| {
                CallbackTarget::new(Api::Vnflcm, major, record.callback_uri, record.authentication, record.body)
            })
        }
        pkgm_subscriptions::API if major == pkgm::MAJOR => pkgm_subscriptions::find(conn, id)?.map(|record| {
            CallbackTarget::new(Api::Vnfpkgm, major, record.callback_uri, record.authentication, record.body)
        }),
        fm_subscriptions::API if major == fm::MAJOR => fm_subscriptions::find(conn, id)?.map(|record| {
            CallbackTarget::new(Api::Vnffm, major, record.callback_uri, record.authentication, record.body)
        }),
        // A PM job or threshold is the "subscription" of its own notifications.
        vnfpm::API if major == crate::pm::MAJOR => {
            let record = match vnfpm::find_job(conn, id)? {
                Some(job) => Some(job),
                None => vnfpm::find_threshold(conn, id)?,
            };
            record.map(|record| {
                let callback_uri = record.callback_uri().to_owned();
                CallbackTarget::new(Api::Vnfpm, major, callback_uri, record.authentication, record.body)
            })
        }
        _ => return Ok(Target::Unknown("the notification names an unknown API or major version")),
    };
    Ok(found.map_or(Target::Gone, Target::Found))
}

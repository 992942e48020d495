//! What the VNF LCM repositories store and return, and the members of the SOL documents
//! their rows copy into indexed columns.

use serde::Deserialize;
use serde_json::Value;
use solgate_model::LcmOperation;

use crate::repo::document::{index_of, lenient_bool, lenient_text};

/// A major version of the VNF LCM API with its own tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LcmMajor {
    V1,
    V2,
}

impl LcmMajor {
    pub fn from_major(major: u64) -> Option<Self> {
        match major {
            1 => Some(LcmMajor::V1),
            2 => Some(LcmMajor::V2),
            _ => None,
        }
    }

    /// The major as the `major` column of `lccn_subscription_generations` holds it.
    pub(crate) fn column(self) -> i32 {
        match self {
            LcmMajor::V1 => 1,
            LcmMajor::V2 => 2,
        }
    }

    pub fn number(self) -> u64 {
        match self {
            LcmMajor::V1 => 1,
            LcmMajor::V2 => 2,
        }
    }
}

/// A VNF instance: its SOL document (without `_links`) plus the indexed columns,
/// which are derived from the document on every write.
#[derive(Debug, Clone, PartialEq)]
pub struct InstanceRecord {
    pub id: String,
    /// The VNF package backing `vnfdId` (for usageState).
    pub vnf_pkg_id: String,
    pub body: Value,
    pub created_at: String,
    pub updated_at: String,
    pub row_version: i64,
    /// The project that owns it (empty: created without authentication).
    pub project: String,
}

impl InstanceRecord {
    pub fn instantiation_state(&self) -> &str {
        InstanceIndex::of(&self.body).instantiation_state.unwrap_or("NOT_INSTANTIATED")
    }
}

/// An LCM operation occurrence and the conductor's bookkeeping of it.
#[derive(Debug, Clone, PartialEq)]
pub struct OpOccRecord {
    pub id: String,
    pub body: Value,
    /// Work the conductor has yet to take up: `start`, `retry` or `rollback`.
    pub pending_action: Option<String>,
    /// The conductor running it, while it runs.
    pub owner: Option<String>,
    pub lease_expires_at: Option<String>,
    /// How many times the operation has been run (first run and retries).
    pub attempt: i32,
    pub created_at: String,
    pub updated_at: String,
    /// The project of its VNF instance.
    pub project: String,
}

impl OpOccRecord {
    pub fn state(&self) -> &str {
        OpOccIndex::of(&self.body).operation_state.unwrap_or_default()
    }

    pub fn vnf_instance_id(&self) -> &str {
        OpOccIndex::of(&self.body).vnf_instance_id.unwrap_or_default()
    }

    /// The operation as the document names it (for messages about an unknown one).
    pub fn operation_name(&self) -> &str {
        OpOccIndex::of(&self.body).operation.unwrap_or_default()
    }

    /// The operation, `None` if the document names none this build knows.
    pub fn operation(&self) -> Option<LcmOperation> {
        OpOccIndex::of(&self.body).operation.and_then(LcmOperation::from_name)
    }
}

/// A stored document as text, with a stamp that changes whenever the document does (for
/// caching what is rendered from it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawDocument {
    pub id: String,
    pub stamp: String,
    pub body: String,
}

/// A VNF instance as a read shows it, its document unparsed: a reader that has already
/// rendered this row version need not parse it again.
#[derive(Debug, Clone, PartialEq)]
pub struct RawInstance {
    pub id: String,
    pub body: String,
    pub row_version: i64,
    pub project: String,
}

/// A subscription to LCM notifications; `authentication` keeps the callback's credentials
/// apart from the document, which is what responses show.
#[derive(Debug, Clone, PartialEq)]
pub struct SubscriptionRecord {
    pub id: String,
    pub callback_uri: String,
    pub verbosity: String,
    pub body: Value,
    pub authentication: Option<Value>,
    pub dedup_key: String,
    pub created_at: String,
    /// The project whose notifications it receives; empty: every project's (made by an
    /// administrator, or without authentication).
    pub project: String,
}

/// What a statement of a transition saw besides its row: on PostgreSQL, the generation of
/// the major's subscriptions (`lccn_subscription_generations`), so that the transition can
/// reuse the subscriptions read at that generation (`lcm::subscriptions_seen`) instead of
/// reading them again: one round trip fewer per transition. `None` on SQLite, where reading
/// them costs no round trip.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Seen {
    pub subscription_generation: Option<i64>,
}

/// Operation states in which an operation holds its instance (SOL003: another LCM
/// operation is refused while one is in progress or in FAILED_TEMP).
pub const IN_FLIGHT_STATES: [&str; 4] = ["STARTING", "PROCESSING", "ROLLING_BACK", "FAILED_TEMP"];

/// The members of a VnfInstance (SOL003 clause 5.5.2.2) an instance row copies. A member
/// that is absent or not of its type reads as absent, as the columns always took it.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct InstanceIndex<'a> {
    #[serde(borrow, deserialize_with = "lenient_text")]
    pub vnf_instance_name: Option<&'a str>,
    #[serde(borrow, deserialize_with = "lenient_text")]
    pub vnfd_id: Option<&'a str>,
    #[serde(borrow, deserialize_with = "lenient_text")]
    pub vnf_provider: Option<&'a str>,
    #[serde(borrow, deserialize_with = "lenient_text")]
    pub vnf_product_name: Option<&'a str>,
    #[serde(borrow, deserialize_with = "lenient_text")]
    pub vnf_software_version: Option<&'a str>,
    #[serde(borrow, deserialize_with = "lenient_text")]
    pub vnfd_version: Option<&'a str>,
    #[serde(borrow, deserialize_with = "lenient_text")]
    pub instantiation_state: Option<&'a str>,
}

impl<'a> InstanceIndex<'a> {
    pub fn of(body: &'a Value) -> Self {
        index_of(body)
    }
}

/// The members of a VnfLcmOpOcc (SOL003 clause 5.5.2.13) an occurrence row copies, read
/// as [`InstanceIndex`] reads its.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct OpOccIndex<'a> {
    #[serde(borrow, deserialize_with = "lenient_text")]
    pub vnf_instance_id: Option<&'a str>,
    #[serde(borrow, deserialize_with = "lenient_text")]
    pub operation: Option<&'a str>,
    #[serde(borrow, deserialize_with = "lenient_text")]
    pub operation_state: Option<&'a str>,
    #[serde(borrow, deserialize_with = "lenient_text")]
    pub state_entered_time: Option<&'a str>,
    #[serde(borrow, deserialize_with = "lenient_text")]
    pub start_time: Option<&'a str>,
    #[serde(deserialize_with = "lenient_bool")]
    pub is_automatic_invocation: Option<bool>,
    #[serde(deserialize_with = "lenient_bool")]
    pub is_cancel_pending: Option<bool>,
}

impl<'a> OpOccIndex<'a> {
    pub fn of(body: &'a Value) -> Self {
        index_of(body)
    }
}

/// The `id` of a Grant (SOL003 clause 9.5.2.3).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct GrantIndex<'a> {
    #[serde(borrow, deserialize_with = "lenient_text")]
    pub id: Option<&'a str>,
}

impl<'a> GrantIndex<'a> {
    pub fn of(body: &'a Value) -> Self {
        index_of(body)
    }
}

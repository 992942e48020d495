//! The VNF LCM tables, one set per major API version (`*_v1`, `*_v2`). The columns are
//! the same in both sets; the JSON documents differ in shape (SOL003 v2.6.1 vs v3.3.1).
//! One implementation (`lcm_tables.rs`) is compiled for each set.

use serde_json::Value;

use crate::connection::{AnyConnection, Backend};
use crate::error::DbResult;
use crate::repo::list::ListSpec;

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
        self.body["instantiationState"].as_str().unwrap_or("NOT_INSTANTIATED")
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
        self.body["operationState"].as_str().unwrap_or_default()
    }

    pub fn vnf_instance_id(&self) -> &str {
        self.body["vnfInstanceId"].as_str().unwrap_or_default()
    }

    pub fn operation(&self) -> &str {
        self.body["operation"].as_str().unwrap_or_default()
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

/// Operation states in which an operation holds its instance (SOL003: another LCM
/// operation is refused while one is in progress or in FAILED_TEMP).
pub const IN_FLIGHT_STATES: [&str; 4] = ["STARTING", "PROCESSING", "ROLLING_BACK", "FAILED_TEMP"];

macro_rules! dispatch {
    ($major:expr, $function:ident ( $($arg:expr),* )) => {
        match $major {
            LcmMajor::V1 => v1::$function($($arg),*),
            LcmMajor::V2 => v2::$function($($arg),*),
        }
    };
}

pub fn insert_instance(conn: &mut AnyConnection, major: LcmMajor, record: &InstanceRecord) -> DbResult<()> {
    dispatch!(major, insert_instance(conn, record))
}

pub fn find_instance(conn: &mut AnyConnection, major: LcmMajor, id: &str) -> DbResult<Option<InstanceRecord>> {
    dispatch!(major, find_instance(conn, id))
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

pub fn find_instance_raw(conn: &mut AnyConnection, major: LcmMajor, id: &str) -> DbResult<Option<RawInstance>> {
    dispatch!(major, find_instance_raw(conn, id))
}

/// Stores a changed document; `false` if the row is gone.
pub fn update_instance(conn: &mut AnyConnection, major: LcmMajor, record: &InstanceRecord) -> DbResult<bool> {
    dispatch!(major, update_instance(conn, record))
}

/// Takes the instance's row lock for the rest of the transaction (PostgreSQL; SQLite's
/// write transactions are serial anyway). `false` if there is no such instance.
pub fn lock_instance(conn: &mut AnyConnection, major: LcmMajor, id: &str) -> DbResult<bool> {
    dispatch!(major, lock_instance(conn, id))
}

/// [`lock_instance`] and the instance as it is then (its row version moved on by one), on
/// PostgreSQL in one statement (`UPDATE … RETURNING`). `None` if there is no such instance.
pub fn lock_and_find_instance(conn: &mut AnyConnection, major: LcmMajor, id: &str) -> DbResult<Option<InstanceRecord>> {
    dispatch!(major, lock_and_find_instance(conn, id))
}

pub fn delete_instance(conn: &mut AnyConnection, major: LcmMajor, id: &str) -> DbResult<bool> {
    dispatch!(major, delete_instance(conn, id))
}

/// As [`list_instances`], the documents unparsed (stamp: the row version).
pub fn list_instances_raw(
    conn: &mut AnyConnection,
    backend: Backend,
    major: LcmMajor,
    spec: &ListSpec,
) -> DbResult<Vec<RawDocument>> {
    dispatch!(major, list_instances_raw(conn, backend, spec))
}

/// The ids and row versions of the instances [`list_instances_raw`] would return: what a
/// reader holding renderings per row version needs to know which documents to read.
pub fn list_instance_versions(
    conn: &mut AnyConnection,
    backend: Backend,
    major: LcmMajor,
    spec: &ListSpec,
) -> DbResult<Vec<(String, i64)>> {
    dispatch!(major, list_instance_versions(conn, backend, spec))
}

/// The documents of these instances, unparsed (stamp: the row version), in no given order;
/// ids that no longer exist are left out.
pub fn instances_raw_by_ids(conn: &mut AnyConnection, major: LcmMajor, ids: &[String]) -> DbResult<Vec<RawDocument>> {
    dispatch!(major, instances_raw_by_ids(conn, ids))
}

/// As [`list_ops`], the documents unparsed (stamp: the last update time).
pub fn list_ops_raw(
    conn: &mut AnyConnection,
    backend: Backend,
    major: LcmMajor,
    spec: &ListSpec,
) -> DbResult<Vec<RawDocument>> {
    dispatch!(major, list_ops_raw(conn, backend, spec))
}

/// Instances of this major created from the package.
/// Whether any instance of `major` uses the package. An EXISTS, not a count: the answer
/// comes from the first index entry, however many instances a package has (every LCM
/// operation that changes an instance asks it).
pub fn package_has_instances(conn: &mut AnyConnection, major: LcmMajor, pkg_id: &str) -> DbResult<bool> {
    dispatch!(major, package_has_instances(conn, pkg_id))
}

/// All instances (for the v1 → v2 migration and the usageState sweep).
pub fn all_instances(conn: &mut AnyConnection, major: LcmMajor) -> DbResult<Vec<InstanceRecord>> {
    dispatch!(major, all_instances(conn))
}

/// Inserts an operation occurrence. A second in-flight operation of the same instance
/// violates `vnf_lcm_op_occs_v*_in_flight`: check [`crate::DbError::is_unique_violation`].
pub fn insert_op(conn: &mut AnyConnection, major: LcmMajor, record: &OpOccRecord) -> DbResult<()> {
    dispatch!(major, insert_op(conn, record))
}

pub fn find_op(conn: &mut AnyConnection, major: LcmMajor, id: &str) -> DbResult<Option<OpOccRecord>> {
    dispatch!(major, find_op(conn, id))
}

/// Stores the record only if the row is still in `expected_state` and owned by
/// `expected_owner` (`None` = unowned): a conductor that lost an operation to recovery
/// cannot overwrite what the recoverer wrote, and two recoverers cannot both act.
pub fn update_op_guarded(
    conn: &mut AnyConnection,
    major: LcmMajor,
    record: &OpOccRecord,
    expected_owner: Option<&str>,
    expected_state: &str,
) -> DbResult<bool> {
    dispatch!(major, update_op_guarded(conn, record, expected_owner, expected_state))
}

pub fn list_ops(
    conn: &mut AnyConnection,
    backend: Backend,
    major: LcmMajor,
    spec: &ListSpec,
) -> DbResult<Vec<OpOccRecord>> {
    dispatch!(major, list_ops(conn, backend, spec))
}

/// The instance's operation in STARTING, PROCESSING, ROLLING_BACK or FAILED_TEMP.
pub fn in_flight_op(conn: &mut AnyConnection, major: LcmMajor, instance_id: &str) -> DbResult<Option<OpOccRecord>> {
    dispatch!(major, in_flight_op(conn, instance_id))
}

/// Takes up pending work: sets the owner and clears `pending_action`, only if work is
/// pending (so a repeated RPC message cannot run an operation twice). Returns the record
/// as it was claimed, `pending_action` still naming the work taken up. Call it inside a
/// write transaction.
pub fn claim_op(
    conn: &mut AnyConnection,
    major: LcmMajor,
    id: &str,
    owner: &str,
    lease_expires_at: &str,
) -> DbResult<Option<OpOccRecord>> {
    dispatch!(major, claim_op(conn, id, owner, lease_expires_at))
}

/// Operations in STARTING / PROCESSING / ROLLING_BACK owned by a conductor other than
/// `live` members, i.e. left behind by a conductor that died.
pub fn ops_owned_by_others(
    conn: &mut AnyConnection,
    major: LcmMajor,
    live_owners: &[String],
) -> DbResult<Vec<OpOccRecord>> {
    dispatch!(major, ops_owned_by_others(conn, live_owners))
}

pub fn insert_grant(conn: &mut AnyConnection, major: LcmMajor, op_id: &str, grant: &Value) -> DbResult<()> {
    dispatch!(major, insert_grant(conn, op_id, grant))
}

pub fn find_grant(conn: &mut AnyConnection, major: LcmMajor, op_id: &str) -> DbResult<Option<Value>> {
    dispatch!(major, find_grant(conn, op_id))
}

pub fn delete_grant(conn: &mut AnyConnection, major: LcmMajor, op_id: &str) -> DbResult<()> {
    dispatch!(major, delete_grant(conn, op_id))
}

pub fn insert_subscription(conn: &mut AnyConnection, major: LcmMajor, record: &SubscriptionRecord) -> DbResult<()> {
    dispatch!(major, insert_subscription(conn, record))
}

pub fn find_subscription(conn: &mut AnyConnection, major: LcmMajor, id: &str) -> DbResult<Option<SubscriptionRecord>> {
    dispatch!(major, find_subscription(conn, id))
}

pub fn find_subscription_by_dedup_key(
    conn: &mut AnyConnection,
    major: LcmMajor,
    key: &str,
) -> DbResult<Option<SubscriptionRecord>> {
    dispatch!(major, find_subscription_by_dedup_key(conn, key))
}

pub fn delete_subscription(conn: &mut AnyConnection, major: LcmMajor, id: &str) -> DbResult<bool> {
    dispatch!(major, delete_subscription(conn, id))
}

pub fn list_subscriptions(
    conn: &mut AnyConnection,
    backend: Backend,
    major: LcmMajor,
    spec: &ListSpec,
) -> DbResult<Vec<SubscriptionRecord>> {
    dispatch!(major, list_subscriptions(conn, backend, spec))
}

pub fn update_subscription_authentication(
    conn: &mut AnyConnection,
    major: LcmMajor,
    id: &str,
    authentication: Option<&Value>,
) -> DbResult<bool> {
    dispatch!(major, update_subscription_authentication(conn, id, authentication))
}

pub fn all_subscriptions(conn: &mut AnyConnection, major: LcmMajor) -> DbResult<Vec<SubscriptionRecord>> {
    dispatch!(major, all_subscriptions(conn))
}

/// Indexed columns the list filters of each resource may push into SQL.
pub mod columns {
    use solgate_sol013::{ColumnKind, ColumnSpec};

    pub const INSTANCES: &[ColumnSpec] = &[
        ColumnSpec { attr: "id", column: "id", kind: ColumnKind::Text },
        ColumnSpec { attr: "vnfInstanceName", column: "vnf_instance_name", kind: ColumnKind::Text },
        ColumnSpec { attr: "vnfdId", column: "vnfd_id", kind: ColumnKind::Text },
        ColumnSpec { attr: "vnfProvider", column: "vnf_provider", kind: ColumnKind::Text },
        ColumnSpec { attr: "vnfProductName", column: "vnf_product_name", kind: ColumnKind::Text },
        ColumnSpec { attr: "vnfSoftwareVersion", column: "vnf_software_version", kind: ColumnKind::Text },
        ColumnSpec { attr: "vnfdVersion", column: "vnfd_version", kind: ColumnKind::Text },
        ColumnSpec { attr: "instantiationState", column: "instantiation_state", kind: ColumnKind::Text },
    ];

    pub const OP_OCCS: &[ColumnSpec] = &[
        ColumnSpec { attr: "id", column: "id", kind: ColumnKind::Text },
        ColumnSpec { attr: "vnfInstanceId", column: "vnf_instance_id", kind: ColumnKind::Text },
        ColumnSpec { attr: "operation", column: "operation", kind: ColumnKind::Text },
        ColumnSpec { attr: "operationState", column: "operation_state", kind: ColumnKind::Text },
        ColumnSpec { attr: "stateEnteredTime", column: "state_entered_time", kind: ColumnKind::DateTime },
        ColumnSpec { attr: "startTime", column: "start_time", kind: ColumnKind::DateTime },
        ColumnSpec { attr: "isAutomaticInvocation", column: "is_automatic_invocation", kind: ColumnKind::Bool },
        ColumnSpec { attr: "isCancelPending", column: "is_cancel_pending", kind: ColumnKind::Bool },
    ];

    pub const SUBSCRIPTIONS: &[ColumnSpec] = &[
        ColumnSpec { attr: "id", column: "id", kind: ColumnKind::Text },
        ColumnSpec { attr: "callbackUri", column: "callback_uri", kind: ColumnKind::Text },
        ColumnSpec { attr: "verbosity", column: "verbosity", kind: ColumnKind::Text },
    ];
}

mod v1 {
    use crate::schema::grants_v1 as grants;
    use crate::schema::lccn_subscriptions_v1 as subscriptions;
    use crate::schema::vnf_instances_v1 as instances;
    use crate::schema::vnf_lcm_op_occs_v1 as op_occs;

    include!("lcm_tables.rs");
}

mod v2 {
    use crate::schema::grants_v2 as grants;
    use crate::schema::lccn_subscriptions_v2 as subscriptions;
    use crate::schema::vnf_instances_v2 as instances;
    use crate::schema::vnf_lcm_op_occs_v2 as op_occs;

    include!("lcm_tables.rs");
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{InstanceRecord, LcmMajor};
    use crate::repo::{lcm, now_text};

    /// Documents by id come back for the ids that exist, however many are asked for (SQLite
    /// allows 32,766 variables per statement; a list of all records can miss more).
    #[test]
    fn instances_are_read_back_by_many_ids() {
        let (database, _dir) = crate::test_database(1);
        let mut conn = database.conn().unwrap();
        let major = LcmMajor::V2;
        let mut ids: Vec<String> = (0..40_000).map(|n| format!("absent-{n}")).collect();
        for n in [0, 499, 500, 39_999] {
            let now = now_text();
            let record = InstanceRecord {
                id: format!("instance-{n}"),
                vnf_pkg_id: "package".into(),
                body: json!({"id": format!("instance-{n}"), "instantiationState": "NOT_INSTANTIATED", "vnfdId": "d"}),
                created_at: now.clone(),
                updated_at: now,
                row_version: 0,
                project: String::new(),
            };
            lcm::insert_instance(&mut conn, major, &record).unwrap();
            ids[n] = record.id;
        }
        let mut found: Vec<String> =
            lcm::instances_raw_by_ids(&mut conn, major, &ids).unwrap().into_iter().map(|raw| raw.id).collect();
        found.sort();
        assert_eq!(found, ["instance-0", "instance-39999", "instance-499", "instance-500"]);
    }

    /// Locking an instance reads it back as it is then, and tells whether a package is in
    /// use from its instances, in either major.
    #[test]
    fn an_instance_is_locked_and_read_in_one_statement() {
        let (database, _dir) = crate::test_database(1);
        let mut conn = database.conn().unwrap();
        let now = now_text();
        let record = InstanceRecord {
            id: "instance".into(),
            vnf_pkg_id: "package".into(),
            body: json!({"id": "instance", "instantiationState": "NOT_INSTANTIATED", "vnfdId": "d"}),
            created_at: now.clone(),
            updated_at: now,
            row_version: 3,
            project: "tenant".into(),
        };
        assert!(!lcm::package_has_instances(&mut conn, LcmMajor::V1, "package").unwrap());
        lcm::insert_instance(&mut conn, LcmMajor::V1, &record).unwrap();
        let locked = lcm::lock_and_find_instance(&mut conn, LcmMajor::V1, "instance").unwrap().unwrap();
        assert_eq!((locked.row_version, locked.body, locked.project), (4, record.body, record.project));
        assert_eq!(lcm::find_instance(&mut conn, LcmMajor::V1, "instance").unwrap().unwrap().row_version, 4);
        assert!(lcm::lock_and_find_instance(&mut conn, LcmMajor::V1, "other").unwrap().is_none());
        assert!(lcm::lock_and_find_instance(&mut conn, LcmMajor::V2, "instance").unwrap().is_none());
        assert!(lcm::package_has_instances(&mut conn, LcmMajor::V1, "package").unwrap());
        assert!(!lcm::package_has_instances(&mut conn, LcmMajor::V2, "package").unwrap());
        assert!(!lcm::package_has_instances(&mut conn, LcmMajor::V1, "other").unwrap());
    }
}

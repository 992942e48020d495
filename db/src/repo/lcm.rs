//! The VNF LCM tables, one set per major API version (`*_v1`, `*_v2`). The columns are
//! the same in both sets; the JSON documents differ in shape (SOL003 v2.6.1 vs v3.3.1).
//! One implementation (`lcm_tables.rs`) is compiled for each set.

use std::sync::{Arc, Mutex, PoisonError};

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

    /// The major as the `major` column of `lccn_subscription_generations` holds it.
    fn column(self) -> i32 {
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

/// [`lock_and_find_instance`], with what its statement saw.
pub fn lock_and_find_instance_seen(
    conn: &mut AnyConnection,
    major: LcmMajor,
    id: &str,
) -> DbResult<Option<(InstanceRecord, Seen)>> {
    dispatch!(major, lock_and_find_instance_seen(conn, id))
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
    Ok(update_op_seen(conn, major, record, expected_owner, expected_state)?.is_some())
}

/// [`update_op_guarded`], with what the UPDATE saw when the guard held (`None`: it did not).
pub fn update_op_seen(
    conn: &mut AnyConnection,
    major: LcmMajor,
    record: &OpOccRecord,
    expected_owner: Option<&str>,
    expected_state: &str,
) -> DbResult<Option<Seen>> {
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
    changing_subscriptions(conn, major, |conn| dispatch!(major, insert_subscription(conn, record)))
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
    changing_subscriptions(conn, major, |conn| dispatch!(major, delete_subscription(conn, id)))
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
    changing_subscriptions(conn, major, |conn| {
        dispatch!(major, update_subscription_authentication(conn, id, authentication))
    })
}

pub fn all_subscriptions(conn: &mut AnyConnection, major: LcmMajor) -> DbResult<Vec<SubscriptionRecord>> {
    dispatch!(major, all_subscriptions(conn))
}

/// What a statement of a transition saw besides its row: on PostgreSQL, the generation of
/// the major's subscriptions (`lccn_subscription_generations`), so that the transition can
/// reuse the subscriptions read at that generation ([`subscriptions_seen`]) instead of
/// reading them again: one round trip fewer per transition. `None` on SQLite, where reading
/// them costs no round trip.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Seen {
    pub subscription_generation: Option<i64>,
}

/// A subscription write and the move of its major's generation, in one transaction (a
/// savepoint inside the caller's): readers never see the one without the other.
fn changing_subscriptions<T>(
    conn: &mut AnyConnection,
    major: LcmMajor,
    change: impl FnOnce(&mut AnyConnection) -> DbResult<T>,
) -> DbResult<T> {
    use crate::schema::lccn_subscription_generations as generations;
    use diesel::prelude::*;
    conn.transaction(|conn| {
        let changed = change(conn)?;
        diesel::update(generations::table.filter(generations::major.eq(major.column())))
            .set(generations::generation.eq(generations::generation + 1))
            .execute(conn)?;
        Ok(changed)
    })
}

/// The generation of the major's subscriptions, read now.
pub fn subscription_generation(conn: &mut AnyConnection, major: LcmMajor) -> DbResult<Option<i64>> {
    use crate::schema::lccn_subscription_generations as generations;
    use diesel::prelude::*;
    Ok(generations::table
        .filter(generations::major.eq(major.column()))
        .select(generations::generation)
        .get_result::<i64>(conn)
        .optional()?)
}

/// A major's subscriptions as read at one generation of them.
struct SubscriptionsAt {
    major: LcmMajor,
    generation: i64,
    list: Arc<Vec<SubscriptionRecord>>,
}

/// The subscriptions of each major as read at its latest generation seen. Generations
/// start at a random value per database, so a process that sees two databases (tests do)
/// does not mistake one's for the other's; it only reads them more often.
static SUBSCRIPTIONS_SEEN: Mutex<Vec<SubscriptionsAt>> = Mutex::new(Vec::new());

/// The major's subscriptions for an event recorded by a statement that saw `seen`: those
/// read before at the same generation when there are, else read now (and kept when no
/// subscription changed while they were read).
pub fn subscriptions_seen(
    conn: &mut AnyConnection,
    major: LcmMajor,
    seen: Seen,
) -> DbResult<Arc<Vec<SubscriptionRecord>>> {
    let Some(generation) = seen.subscription_generation else {
        return Ok(Arc::new(all_subscriptions(conn, major)?));
    };
    let seen_before = || {
        let cache = SUBSCRIPTIONS_SEEN.lock().unwrap_or_else(PoisonError::into_inner);
        cache.iter().find(|kept| kept.major == major && kept.generation == generation).map(|kept| kept.list.clone())
    };
    if let Some(list) = seen_before() {
        return Ok(list);
    }
    let list = Arc::new(all_subscriptions(conn, major)?);
    // Each statement has its own snapshot: the list is the generation's only if the
    // generation is the same after it was read.
    if subscription_generation(conn, major)? == Some(generation) {
        let mut cache = SUBSCRIPTIONS_SEEN.lock().unwrap_or_else(PoisonError::into_inner);
        cache.retain(|kept| kept.major != major);
        cache.push(SubscriptionsAt { major, generation, list: list.clone() });
    }
    Ok(list)
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
    const SUBSCRIPTION_GENERATION: &str = "(SELECT generation FROM lccn_subscription_generations WHERE major = 1)";
    use crate::schema::grants_v1 as grants;
    use crate::schema::lccn_subscriptions_v1 as subscriptions;
    use crate::schema::vnf_instances_v1 as instances;
    use crate::schema::vnf_lcm_op_occs_v1 as op_occs;

    include!("lcm_tables.rs");
}

mod v2 {
    const SUBSCRIPTION_GENERATION: &str = "(SELECT generation FROM lccn_subscription_generations WHERE major = 2)";
    use crate::schema::grants_v2 as grants;
    use crate::schema::lccn_subscriptions_v2 as subscriptions;
    use crate::schema::vnf_instances_v2 as instances;
    use crate::schema::vnf_lcm_op_occs_v2 as op_occs;

    include!("lcm_tables.rs");
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{InstanceRecord, LcmMajor, Seen, SubscriptionRecord};
    use crate::repo::{lcm, now_text};

    /// Every write to a major's subscriptions moves that major's generation on, and one
    /// that fails does not; a transition that saw a generation gets the subscriptions of it.
    #[test]
    fn subscription_writes_move_the_generation_on() {
        let (database, _dir) = crate::test_database(1);
        let mut conn = database.conn().unwrap();
        let generation =
            |conn: &mut crate::AnyConnection, major| lcm::subscription_generation(conn, major).unwrap().unwrap();
        let (start, other) = (generation(&mut conn, LcmMajor::V2), generation(&mut conn, LcmMajor::V1));
        let record = SubscriptionRecord {
            id: "subscription".into(),
            callback_uri: "http://127.0.0.1:9/cb".into(),
            verbosity: "FULL".into(),
            body: json!({}),
            authentication: None,
            dedup_key: "key".into(),
            created_at: now_text(),
            project: String::new(),
        };
        lcm::insert_subscription(&mut conn, LcmMajor::V2, &record).unwrap();
        assert_eq!(generation(&mut conn, LcmMajor::V2), start + 1);
        assert!(lcm::insert_subscription(&mut conn, LcmMajor::V2, &record).is_err(), "the id is taken");
        assert_eq!(generation(&mut conn, LcmMajor::V2), start + 1, "a failed write moves nothing");
        let seen = Seen { subscription_generation: Some(start + 1) };
        let listed = lcm::subscriptions_seen(&mut conn, LcmMajor::V2, seen).unwrap();
        assert_eq!(listed.iter().map(|s| s.id.as_str()).collect::<Vec<_>>(), ["subscription"]);
        lcm::update_subscription_authentication(&mut conn, LcmMajor::V2, "subscription", Some(&json!({}))).unwrap();
        assert!(lcm::delete_subscription(&mut conn, LcmMajor::V2, "subscription").unwrap());
        assert_eq!(generation(&mut conn, LcmMajor::V2), start + 3);
        let seen = Seen { subscription_generation: Some(start + 3) };
        assert!(lcm::subscriptions_seen(&mut conn, LcmMajor::V2, seen).unwrap().is_empty());
        assert_eq!(generation(&mut conn, LcmMajor::V1), other, "the other major's is its own");
    }

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

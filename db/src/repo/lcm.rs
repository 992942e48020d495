//! The VNF LCM tables, one set per major API version (`*_v1`, `*_v2`). The columns are
//! the same in both sets; the JSON documents differ in shape (SOL003 v2.6.1 vs v3.3.1).
//! One implementation of each table (`lcm/instances.rs`, `lcm/op_occs.rs`,
//! `lcm/subscriptions.rs`) serves both sets; a major chooses its [`Family`] once.

mod family;
mod instances;
mod op_occs;
mod records;
mod subscriptions;

use std::sync::{Arc, Mutex, PoisonError};

use serde_json::Value;

use crate::connection::{AnyConnection, Backend};
use crate::error::DbResult;
use crate::repo::list::ListSpec;
use crate::schema;
use instances::InstanceStore;
use op_occs::{GrantStore, OpOccStore};
pub use records::{
    IN_FLIGHT_STATES, InstanceRecord, LcmMajor, OpOccRecord, RawDocument, RawInstance, Seen, SubscriptionRecord,
};
use subscriptions::LccnSubscriptionStore;

/// The tables of one major.
struct Family {
    instances: &'static dyn InstanceStore,
    op_occs: &'static dyn OpOccStore,
    grants: &'static dyn GrantStore,
    subscriptions: &'static dyn LccnSubscriptionStore,
}

/// VNF LCM v1 (SOL003 v2.6.1).
static V1: Family = Family {
    instances: &schema::vnf_instances_v1::table,
    op_occs: &schema::vnf_lcm_op_occs_v1::table,
    grants: &schema::grants_v1::table,
    subscriptions: &schema::lccn_subscriptions_v1::table,
};

/// VNF LCM v2 (SOL003 v3.3.1).
static V2: Family = Family {
    instances: &schema::vnf_instances_v2::table,
    op_occs: &schema::vnf_lcm_op_occs_v2::table,
    grants: &schema::grants_v2::table,
    subscriptions: &schema::lccn_subscriptions_v2::table,
};

fn tables(major: LcmMajor) -> &'static Family {
    match major {
        LcmMajor::V1 => &V1,
        LcmMajor::V2 => &V2,
    }
}

pub fn insert_instance(conn: &mut AnyConnection, major: LcmMajor, record: &InstanceRecord) -> DbResult<()> {
    tables(major).instances.insert(conn, record)
}

pub fn find_instance(conn: &mut AnyConnection, major: LcmMajor, id: &str) -> DbResult<Option<InstanceRecord>> {
    tables(major).instances.find(conn, id)
}

pub fn find_instance_raw(conn: &mut AnyConnection, major: LcmMajor, id: &str) -> DbResult<Option<RawInstance>> {
    tables(major).instances.find_raw(conn, id)
}

/// Stores a changed document; `false` if the row is gone.
pub fn update_instance(conn: &mut AnyConnection, major: LcmMajor, record: &InstanceRecord) -> DbResult<bool> {
    tables(major).instances.update(conn, record)
}

/// Takes the instance's row lock for the rest of the transaction (PostgreSQL; SQLite's
/// write transactions are serial anyway). `false` if there is no such instance.
pub fn lock_instance(conn: &mut AnyConnection, major: LcmMajor, id: &str) -> DbResult<bool> {
    tables(major).instances.lock(conn, id)
}

/// [`lock_instance`] and the instance as it is then (its row version moved on by one), on
/// PostgreSQL in one statement (`UPDATE … RETURNING`), with what that statement saw. `None`
/// if there is no such instance.
pub fn lock_and_find_instance_seen(
    conn: &mut AnyConnection,
    major: LcmMajor,
    id: &str,
) -> DbResult<Option<(InstanceRecord, Seen)>> {
    tables(major).instances.lock_and_find_seen(conn, id)
}

pub fn delete_instance(conn: &mut AnyConnection, major: LcmMajor, id: &str) -> DbResult<bool> {
    tables(major).instances.delete(conn, id)
}

/// A page of instances, the documents unparsed (stamp: the row version).
pub fn list_instances_raw(
    conn: &mut AnyConnection,
    backend: Backend,
    major: LcmMajor,
    spec: &ListSpec,
) -> DbResult<Vec<RawDocument>> {
    tables(major).instances.list_raw(conn, backend, spec)
}

/// The ids and row versions of the instances [`list_instances_raw`] would return: what a
/// reader holding renderings per row version needs to know which documents to read.
pub fn list_instance_versions(
    conn: &mut AnyConnection,
    backend: Backend,
    major: LcmMajor,
    spec: &ListSpec,
) -> DbResult<Vec<(String, i64)>> {
    tables(major).instances.list_versions(conn, backend, spec)
}

/// The documents of these instances, unparsed (stamp: the row version), in no given order;
/// ids that no longer exist are left out.
pub fn instances_raw_by_ids(conn: &mut AnyConnection, major: LcmMajor, ids: &[String]) -> DbResult<Vec<RawDocument>> {
    tables(major).instances.raw_by_ids(conn, ids)
}

/// As [`list_ops`], the documents unparsed (stamp: the last update time).
pub fn list_ops_raw(
    conn: &mut AnyConnection,
    backend: Backend,
    major: LcmMajor,
    spec: &ListSpec,
) -> DbResult<Vec<RawDocument>> {
    tables(major).op_occs.list_raw(conn, backend, spec)
}

/// Instances of this major created from the package.
/// Whether any instance of `major` uses the package. An EXISTS, not a count: the answer
/// comes from the first index entry, however many instances a package has (every LCM
/// operation that changes an instance asks it).
pub fn package_has_instances(conn: &mut AnyConnection, major: LcmMajor, pkg_id: &str) -> DbResult<bool> {
    tables(major).instances.package_has_instances(conn, pkg_id)
}

/// All instances (for the v1 → v2 migration and the usageState sweep).
pub fn all_instances(conn: &mut AnyConnection, major: LcmMajor) -> DbResult<Vec<InstanceRecord>> {
    tables(major).instances.all(conn)
}

/// Inserts an operation occurrence. A second in-flight operation of the same instance
/// violates `vnf_lcm_op_occs_v*_in_flight`: check [`crate::DbError::is_unique_violation`].
pub fn insert_op(conn: &mut AnyConnection, major: LcmMajor, record: &OpOccRecord) -> DbResult<()> {
    tables(major).op_occs.insert(conn, record)
}

pub fn find_op(conn: &mut AnyConnection, major: LcmMajor, id: &str) -> DbResult<Option<OpOccRecord>> {
    tables(major).op_occs.find(conn, id)
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
    tables(major).op_occs.update_guarded(conn, record, expected_owner, expected_state)
}

pub fn list_ops(
    conn: &mut AnyConnection,
    backend: Backend,
    major: LcmMajor,
    spec: &ListSpec,
) -> DbResult<Vec<OpOccRecord>> {
    tables(major).op_occs.list(conn, backend, spec)
}

/// The instance's operation in STARTING, PROCESSING, ROLLING_BACK or FAILED_TEMP.
pub fn in_flight_op(conn: &mut AnyConnection, major: LcmMajor, instance_id: &str) -> DbResult<Option<OpOccRecord>> {
    tables(major).op_occs.in_flight(conn, instance_id)
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
    tables(major).op_occs.claim(conn, id, owner, lease_expires_at)
}

/// Operations in STARTING / PROCESSING / ROLLING_BACK owned by a conductor other than
/// `live` members, i.e. left behind by a conductor that died.
pub fn ops_owned_by_others(
    conn: &mut AnyConnection,
    major: LcmMajor,
    live_owners: &[String],
) -> DbResult<Vec<OpOccRecord>> {
    tables(major).op_occs.owned_by_others(conn, live_owners)
}

pub fn insert_grant(conn: &mut AnyConnection, major: LcmMajor, op_id: &str, grant: &Value) -> DbResult<()> {
    tables(major).grants.insert(conn, op_id, grant)
}

pub fn find_grant(conn: &mut AnyConnection, major: LcmMajor, op_id: &str) -> DbResult<Option<Value>> {
    tables(major).grants.find(conn, op_id)
}

pub fn delete_grant(conn: &mut AnyConnection, major: LcmMajor, op_id: &str) -> DbResult<()> {
    tables(major).grants.delete(conn, op_id)
}

pub fn insert_subscription(conn: &mut AnyConnection, major: LcmMajor, record: &SubscriptionRecord) -> DbResult<()> {
    changing_subscriptions(conn, major, |conn| tables(major).subscriptions.insert(conn, record))
}

pub fn find_subscription(conn: &mut AnyConnection, major: LcmMajor, id: &str) -> DbResult<Option<SubscriptionRecord>> {
    tables(major).subscriptions.find(conn, id)
}

pub fn find_subscription_by_dedup_key(
    conn: &mut AnyConnection,
    major: LcmMajor,
    key: &str,
) -> DbResult<Option<SubscriptionRecord>> {
    tables(major).subscriptions.find_by_dedup_key(conn, key)
}

pub fn delete_subscription(conn: &mut AnyConnection, major: LcmMajor, id: &str) -> DbResult<bool> {
    changing_subscriptions(conn, major, |conn| tables(major).subscriptions.delete(conn, id))
}

pub fn list_subscriptions(
    conn: &mut AnyConnection,
    backend: Backend,
    major: LcmMajor,
    spec: &ListSpec,
) -> DbResult<Vec<SubscriptionRecord>> {
    tables(major).subscriptions.list(conn, backend, spec)
}

pub fn update_subscription_authentication(
    conn: &mut AnyConnection,
    major: LcmMajor,
    id: &str,
    authentication: Option<&Value>,
) -> DbResult<bool> {
    changing_subscriptions(conn, major, |conn| {
        tables(major).subscriptions.update_authentication(conn, id, authentication)
    })
}

pub fn all_subscriptions(conn: &mut AnyConnection, major: LcmMajor) -> DbResult<Vec<SubscriptionRecord>> {
    tables(major).subscriptions.all(conn)
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
        let lock_and_find = |conn: &mut crate::AnyConnection, major, id| {
            lcm::lock_and_find_instance_seen(conn, major, id).unwrap().map(|(instance, _)| instance)
        };
        let locked = lock_and_find(&mut conn, LcmMajor::V1, "instance").unwrap();
        assert_eq!((locked.row_version, locked.body, locked.project), (4, record.body, record.project));
        assert_eq!(lcm::find_instance(&mut conn, LcmMajor::V1, "instance").unwrap().unwrap().row_version, 4);
        assert!(lock_and_find(&mut conn, LcmMajor::V1, "other").is_none());
        assert!(lock_and_find(&mut conn, LcmMajor::V2, "instance").is_none());
        assert!(lcm::package_has_instances(&mut conn, LcmMajor::V1, "package").unwrap());
        assert!(!lcm::package_has_instances(&mut conn, LcmMajor::V2, "package").unwrap());
        assert!(!lcm::package_has_instances(&mut conn, LcmMajor::V1, "other").unwrap());
    }

    /// An occurrence of either major: found, listed, in flight, taken up, left behind by a
    /// dead owner, with its grant; each major's tables apart.
    #[test]
    fn an_occurrence_lives_in_its_major_only() {
        let (database, _dir) = crate::test_database(1);
        let (backend, mut conn) = (database.backend(), database.conn().unwrap());
        let now = now_text();
        for major in [LcmMajor::V1, LcmMajor::V2] {
            let id = format!("op-{}", major.number());
            let record = super::OpOccRecord {
                id: id.clone(),
                body: json!({
                    "id": id, "vnfInstanceId": "instance", "operation": "SCALE", "operationState": "STARTING",
                    "stateEnteredTime": now, "startTime": now, "isAutomaticInvocation": false,
                }),
                pending_action: Some("start".into()),
                owner: None,
                lease_expires_at: None,
                attempt: 1,
                created_at: now.clone(),
                updated_at: now.clone(),
                project: "tenant".into(),
            };
            lcm::insert_op(&mut conn, major, &record).unwrap();
            let found = lcm::find_op(&mut conn, major, &id).unwrap().unwrap();
            assert_eq!(found, record);
            assert_eq!(found.operation(), Some(solgate_model::LcmOperation::Scale));
            assert_eq!((found.state(), found.vnf_instance_id()), ("STARTING", "instance"));
            assert_eq!(lcm::in_flight_op(&mut conn, major, "instance").unwrap().map(|op| op.id), Some(id.clone()));
            let spec = crate::repo::list::ListSpec { limit: 10, project: Some("tenant".into()), ..Default::default() };
            assert_eq!(lcm::list_ops(&mut conn, backend, major, &spec).unwrap(), std::slice::from_ref(&record));
            let raw = lcm::list_ops_raw(&mut conn, backend, major, &spec).unwrap();
            assert_eq!(raw.iter().map(|raw| raw.id.as_str()).collect::<Vec<_>>(), [id.as_str()]);
            assert!(lcm::claim_op(&mut conn, major, &id, "dead", &now).unwrap().is_some());
            let left = lcm::ops_owned_by_others(&mut conn, major, &["alive".to_owned()]).unwrap();
            assert_eq!(left.iter().map(|op| op.id.as_str()).collect::<Vec<_>>(), [id.as_str()]);
            assert!(lcm::ops_owned_by_others(&mut conn, major, &["dead".to_owned()]).unwrap().is_empty());
            let grant = json!({"id": format!("grant-{id}"), "vnfLcmOpOccId": id});
            lcm::insert_grant(&mut conn, major, &id, &grant).unwrap();
            assert_eq!(lcm::find_grant(&mut conn, major, &id).unwrap(), Some(grant));
            lcm::delete_grant(&mut conn, major, &id).unwrap();
            assert!(lcm::find_grant(&mut conn, major, &id).unwrap().is_none());
        }
        let mut ids = |major| lcm::find_op(&mut conn, major, "op-1").unwrap().map(|op| op.id);
        assert_eq!((ids(LcmMajor::V1), ids(LcmMajor::V2)), (Some("op-1".to_owned()), None));
    }
}

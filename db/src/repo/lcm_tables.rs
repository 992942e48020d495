// Included by lcm.rs once per major: `instances`, `op_occs`, `grants` and
// `subscriptions` name that major's tables.

use diesel::prelude::*;
use diesel::sql_types::{BigInt, Nullable};
use serde_json::Value;

use crate::connection::{AnyConnection, Backend};
use crate::error::DbResult;
use crate::repo::lcm::{IN_FLIGHT_STATES, InstanceRecord, OpOccRecord, RawDocument, RawInstance, Seen, SubscriptionRecord};
use crate::repo::cached::{FixedSql, cached_update};
use crate::repo::list::{Db, ListSpec, predicate};
use crate::repo::now_text;

fn text(value: &Value, key: &str) -> String {
    value[key].as_str().unwrap_or_default().to_owned()
}

fn optional_text(value: &Value, key: &str) -> Option<String> {
    value[key].as_str().map(str::to_owned)
}

type InstanceRow = (String, String, String, String, String, i64, String);

fn instance_from_row(row: InstanceRow) -> DbResult<InstanceRecord> {
    let (id, vnf_pkg_id, body, created_at, updated_at, row_version, project) = row;
    Ok(InstanceRecord {
        id,
        vnf_pkg_id,
        body: serde_json::from_str(&body)?,
        created_at,
        updated_at,
        row_version,
        project,
    })
}

macro_rules! instance_columns {
    () => {
        (
            instances::id,
            instances::vnf_pkg_id,
            instances::body,
            instances::created_at,
            instances::updated_at,
            instances::row_version,
            instances::project,
        )
    };
}

pub fn insert_instance(conn: &mut AnyConnection, record: &InstanceRecord) -> DbResult<()> {
    let body = &record.body;
    diesel::insert_into(instances::table)
        .values((
            instances::id.eq(&record.id),
            instances::vnf_instance_name.eq(optional_text(body, "vnfInstanceName")),
            instances::vnfd_id.eq(text(body, "vnfdId")),
            instances::vnf_pkg_id.eq(&record.vnf_pkg_id),
            instances::vnf_provider.eq(text(body, "vnfProvider")),
            instances::vnf_product_name.eq(text(body, "vnfProductName")),
            instances::vnf_software_version.eq(text(body, "vnfSoftwareVersion")),
            instances::vnfd_version.eq(text(body, "vnfdVersion")),
            instances::instantiation_state.eq(text(body, "instantiationState")),
            instances::body.eq(body.to_string()),
            instances::created_at.eq(&record.created_at),
            instances::updated_at.eq(&record.updated_at),
            instances::row_version.eq(record.row_version),
            instances::project.eq(&record.project),
        ))
        .execute(conn)?;
    Ok(())
}

// Lookups of one row use `get_result`, not `first`: the `LIMIT ?` of `first` has SQLite
// prepare the cached statement again on every run (the planner looks at a bound LIMIT, so
// binding it again expires the statement), which cost more than the query itself.
pub fn find_instance(conn: &mut AnyConnection, id: &str) -> DbResult<Option<InstanceRecord>> {
    instances::table
        .filter(instances::id.eq(id))
        .select(instance_columns!())
        .get_result::<InstanceRow>(conn)
        .optional()?
        .map(instance_from_row)
        .transpose()
}

pub fn find_instance_raw(conn: &mut AnyConnection, id: &str) -> DbResult<Option<RawInstance>> {
    Ok(instances::table
        .filter(instances::id.eq(id))
        .select((instances::id, instances::body, instances::row_version, instances::project))
        .get_result::<(String, String, i64, String)>(conn)
        .optional()?
        .map(|(id, body, row_version, project)| RawInstance { id, body, row_version, project }))
}

/// What an instance row copies out of its document besides the instantiation state (for
/// filters and indexes; changed only by a modify or a package change).
type DescriptorColumns = (Option<String>, String, String, String, String, String, String);

fn descriptor_columns_of(record: &InstanceRecord) -> DescriptorColumns {
    let body = &record.body;
    (
        optional_text(body, "vnfInstanceName"),
        text(body, "vnfdId"),
        record.vnf_pkg_id.clone(),
        text(body, "vnfProvider"),
        text(body, "vnfProductName"),
        text(body, "vnfSoftwareVersion"),
        text(body, "vnfdVersion"),
    )
}

pub fn update_instance(conn: &mut AnyConnection, record: &InstanceRecord) -> DbResult<bool> {
    let (descriptor, state) = (descriptor_columns_of(record), text(&record.body, "instantiationState"));
    let by_id = instances::id.eq(&record.id);
    let body = record.body.to_string();
    let (updated_at, row_version) = (now_text(), instances::row_version + 1);
    // SQLite rewrites an index entry whenever its column is SET, same value or not: one
    // page more in the commit for each. Most updates (an LCM operation's result) change
    // only the document and perhaps the instantiation state, so SQLite is told only those.
    // PostgreSQL compares values itself (a HOT update), so it is spared the extra read.
    // `Some((descriptor unchanged, state unchanged))` on SQLite, `None` on PostgreSQL.
    let unchanged = if let AnyConnection::Sqlite(_) = conn {
        let stored = instances::table
            .filter(by_id)
            .select((
                (
                    instances::vnf_instance_name,
                    instances::vnfd_id,
                    instances::vnf_pkg_id,
                    instances::vnf_provider,
                    instances::vnf_product_name,
                    instances::vnf_software_version,
                    instances::vnfd_version,
                ),
                instances::instantiation_state,
            ))
            .get_result::<(DescriptorColumns, String)>(conn)
            .optional()?;
        let Some((stored_descriptor, stored_state)) = stored else { return Ok(false) };
        Some((stored_descriptor == descriptor, stored_state == state))
    } else {
        None
    };
    let document = (instances::body.eq(body), instances::updated_at.eq(updated_at), instances::row_version.eq(row_version));
    let changed = match unchanged {
        Some((true, true)) => cached_update!(instances::table, by_id, document).execute(conn)?,
        Some((true, false)) => {
            let set = (instances::instantiation_state.eq(state), document);
            cached_update!(instances::table, by_id, set).execute(conn)?
        }
        _ => {
            let (name, vnfd_id, vnf_pkg_id, provider, product_name, software_version, vnfd_version) = descriptor;
            let set = (
                instances::vnf_instance_name.eq(name),
                instances::vnfd_id.eq(vnfd_id),
                instances::vnf_pkg_id.eq(vnf_pkg_id),
                instances::vnf_provider.eq(provider),
                instances::vnf_product_name.eq(product_name),
                instances::vnf_software_version.eq(software_version),
                instances::vnfd_version.eq(vnfd_version),
                instances::instantiation_state.eq(state),
                document,
            );
            cached_update!(instances::table, by_id, set).execute(conn)?
        }
    };
    Ok(changed > 0)
}

pub fn lock_instance(conn: &mut AnyConnection, id: &str) -> DbResult<bool> {
    let lock = (instances::row_version.eq(instances::row_version + 1),);
    let locked = cached_update!(instances::table, instances::id.eq(id), lock).execute(conn)?;
    Ok(locked > 0)
}

pub fn lock_and_find_instance(conn: &mut AnyConnection, id: &str) -> DbResult<Option<InstanceRecord>> {
    Ok(lock_and_find_instance_seen(conn, id)?.map(|(instance, _)| instance))
}

/// [`lock_and_find_instance`], with what the statement saw (on PostgreSQL, the major's
/// subscription generation comes back with the row).
pub fn lock_and_find_instance_seen(conn: &mut AnyConnection, id: &str) -> DbResult<Option<(InstanceRecord, Seen)>> {
    // SQLite answers in process: its two statements stay prepared, where an UPDATE with
    // RETURNING is compiled afresh on every call. PostgreSQL saves a round trip.
    if let AnyConnection::Sqlite(_) = conn {
        let instance = if lock_instance(conn, id)? { find_instance(conn, id)? } else { None };
        return Ok(instance.map(|instance| (instance, Seen { subscription_generation: None })));
    }
    let Some((row, generation)) = diesel::update(instances::table.filter(instances::id.eq(id)))
        .set(instances::row_version.eq(instances::row_version + 1))
        .returning((instance_columns!(), subscription_generation_sql()))
        .get_result::<(InstanceRow, Option<i64>)>(conn)
        .optional()?
    else {
        return Ok(None);
    };
    Ok(Some((instance_from_row(row)?, Seen { subscription_generation: generation })))
}

pub fn delete_instance(conn: &mut AnyConnection, id: &str) -> DbResult<bool> {
    Ok(diesel::delete(instances::table.filter(instances::id.eq(id))).execute(conn)? > 0)
}

/// The rows of a list page: its predicates, project and keyset position, in id order.
fn instance_page(backend: Backend, spec: &ListSpec) -> instances::BoxedQuery<'static, Db> {
    let mut query = instances::table.order(instances::id.asc()).limit(spec.limit).into_boxed();
    for condition in &spec.predicates {
        query = query.filter(predicate::<instances::table>(backend, condition));
    }
    if let Some(project) = &spec.project {
        query = query.filter(instances::project.eq(project.clone()));
    }
    if let Some(after) = &spec.after_id {
        query = query.filter(instances::id.gt(after.clone()));
    }
    query
}

pub fn list_instances_raw(conn: &mut AnyConnection, backend: Backend, spec: &ListSpec) -> DbResult<Vec<RawDocument>> {
    Ok(instance_page(backend, spec)
        .select((instances::id, instances::row_version, instances::body))
        .load::<(String, i64, String)>(conn)?
        .into_iter()
        .map(|(id, version, body)| RawDocument { id, stamp: version.to_string(), body })
        .collect())
}

pub fn list_instance_versions(conn: &mut AnyConnection, backend: Backend, spec: &ListSpec) -> DbResult<Vec<(String, i64)>> {
    Ok(instance_page(backend, spec).select((instances::id, instances::row_version)).load(conn)?)
}

pub fn instances_raw_by_ids(conn: &mut AnyConnection, ids: &[String]) -> DbResult<Vec<RawDocument>> {
    let mut documents = Vec::with_capacity(ids.len());
    // SQLite binds one variable per id and allows 32,766 per statement; a list of all
    // records can miss more than that.
    for chunk in ids.chunks(500) {
        let rows = instances::table
            .filter(instances::id.eq_any(chunk))
            .select((instances::id, instances::row_version, instances::body))
            .load::<(String, i64, String)>(conn)?;
        documents.extend(rows.into_iter().map(|(id, version, body)| RawDocument { id, stamp: version.to_string(), body }));
    }
    Ok(documents)
}

pub fn package_has_instances(conn: &mut AnyConnection, pkg_id: &str) -> DbResult<bool> {
    Ok(diesel::select(diesel::dsl::exists(instances::table.filter(instances::vnf_pkg_id.eq(pkg_id)))).get_result(conn)?)
}

pub fn all_instances(conn: &mut AnyConnection) -> DbResult<Vec<InstanceRecord>> {
    instances::table
        .select(instance_columns!())
        .order(instances::id.asc())
        .load::<InstanceRow>(conn)?
        .into_iter()
        .map(instance_from_row)
        .collect()
}

type OpRow = (String, String, Option<String>, Option<String>, Option<String>, i32, String, String, String);

fn op_from_row(row: OpRow) -> DbResult<OpOccRecord> {
    let (id, body, pending_action, owner, lease_expires_at, attempt, created_at, updated_at, project) = row;
    Ok(OpOccRecord {
        id,
        body: serde_json::from_str(&body)?,
        pending_action,
        owner,
        lease_expires_at,
        attempt,
        created_at,
        updated_at,
        project,
    })
}

macro_rules! op_columns {
    () => {
        (
            op_occs::id,
            op_occs::body,
            op_occs::pending_action,
            op_occs::owner,
            op_occs::lease_expires_at,
            op_occs::attempt,
            op_occs::created_at,
            op_occs::updated_at,
            op_occs::project,
        )
    };
}

pub fn insert_op(conn: &mut AnyConnection, record: &OpOccRecord) -> DbResult<()> {
    let body = &record.body;
    diesel::insert_into(op_occs::table)
        .values((
            op_occs::id.eq(&record.id),
            op_occs::vnf_instance_id.eq(text(body, "vnfInstanceId")),
            op_occs::operation.eq(text(body, "operation")),
            op_occs::operation_state.eq(text(body, "operationState")),
            op_occs::state_entered_time.eq(text(body, "stateEnteredTime")),
            op_occs::start_time.eq(text(body, "startTime")),
            op_occs::is_automatic_invocation.eq(body["isAutomaticInvocation"].as_bool().unwrap_or(false)),
            op_occs::is_cancel_pending.eq(body["isCancelPending"].as_bool().unwrap_or(false)),
            op_occs::body.eq(body.to_string()),
            op_occs::pending_action.eq(&record.pending_action),
            op_occs::owner.eq(&record.owner),
            op_occs::lease_expires_at.eq(&record.lease_expires_at),
            op_occs::attempt.eq(record.attempt),
            op_occs::created_at.eq(&record.created_at),
            op_occs::updated_at.eq(&record.updated_at),
            op_occs::project.eq(&record.project),
        ))
        .execute(conn)?;
    Ok(())
}

pub fn find_op(conn: &mut AnyConnection, id: &str) -> DbResult<Option<OpOccRecord>> {
    op_occs::table.filter(op_occs::id.eq(id)).select(op_columns!()).get_result::<OpRow>(conn).optional()?.map(op_from_row).transpose()
}

pub fn update_op_guarded(
    conn: &mut AnyConnection,
    record: &OpOccRecord,
    expected_owner: Option<&str>,
    expected_state: &str,
) -> DbResult<Option<Seen>> {
    let body = &record.body;
    let changes = (
        op_occs::operation_state.eq(text(body, "operationState")),
        op_occs::state_entered_time.eq(text(body, "stateEnteredTime")),
        op_occs::is_cancel_pending.eq(body["isCancelPending"].as_bool().unwrap_or(false)),
        op_occs::body.eq(body.to_string()),
        op_occs::pending_action.eq(&record.pending_action),
        op_occs::owner.eq(&record.owner),
        op_occs::lease_expires_at.eq(&record.lease_expires_at),
        op_occs::attempt.eq(record.attempt),
        op_occs::updated_at.eq(now_text()),
    );
    // One conditional UPDATE (the rows it changed say whether the guard held), not boxed,
    // so Diesel keeps its prepared statement.
    let guarded = op_occs::id.eq(&record.id).and(op_occs::operation_state.eq(expected_state));
    if let AnyConnection::Postgresql(_) = conn {
        // The subscriptions' generation comes back with the row: no round trip of its own.
        let generation = || FixedSql::<Nullable<BigInt>>::new(SUBSCRIPTION_GENERATION);
        let seen = match expected_owner {
            Some(owner) => cached_update!(op_occs::table, guarded.and(op_occs::owner.eq(owner)), changes)
                .returning(generation())
                .get_result::<Option<i64>>(conn),
            None => cached_update!(op_occs::table, guarded.and(op_occs::owner.is_null()), changes)
                .returning(generation())
                .get_result::<Option<i64>>(conn),
        };
        return Ok(seen.optional()?.map(|generation| Seen { subscription_generation: generation }));
    }
    let changed = match expected_owner {
        Some(owner) => cached_update!(op_occs::table, guarded.and(op_occs::owner.eq(owner)), changes).execute(conn)?,
        None => cached_update!(op_occs::table, guarded.and(op_occs::owner.is_null()), changes).execute(conn)?,
    };
    Ok((changed > 0).then_some(Seen { subscription_generation: None }))
}

/// The major's subscription generation, as a subquery a statement of a transition returns
/// (in a statement that is compiled afresh each time anyway).
fn subscription_generation_sql() -> diesel::expression::SqlLiteral<Nullable<BigInt>> {
    diesel::dsl::sql(SUBSCRIPTION_GENERATION)
}

pub fn list_ops(conn: &mut AnyConnection, backend: Backend, spec: &ListSpec) -> DbResult<Vec<OpOccRecord>> {
    let mut query = op_occs::table.select(op_columns!()).order(op_occs::id.asc()).into_boxed();
    for condition in &spec.predicates {
        query = query.filter(predicate::<op_occs::table>(backend, condition));
    }
    if let Some(project) = &spec.project {
        query = query.filter(op_occs::project.eq(project.clone()));
    }
    if let Some(after) = &spec.after_id {
        query = query.filter(op_occs::id.gt(after.clone()));
    }
    query.limit(spec.limit).load::<OpRow>(conn)?.into_iter().map(op_from_row).collect()
}

pub fn list_ops_raw(conn: &mut AnyConnection, backend: Backend, spec: &ListSpec) -> DbResult<Vec<RawDocument>> {
    let mut query =
        op_occs::table.select((op_occs::id, op_occs::updated_at, op_occs::body)).order(op_occs::id.asc()).into_boxed();
    for condition in &spec.predicates {
        query = query.filter(predicate::<op_occs::table>(backend, condition));
    }
    if let Some(project) = &spec.project {
        query = query.filter(op_occs::project.eq(project.clone()));
    }
    if let Some(after) = &spec.after_id {
        query = query.filter(op_occs::id.gt(after.clone()));
    }
    Ok(query
        .limit(spec.limit)
        .load::<(String, String, String)>(conn)?
        .into_iter()
        .map(|(id, stamp, body)| RawDocument { id, stamp, body })
        .collect())
}

pub fn in_flight_op(conn: &mut AnyConnection, instance_id: &str) -> DbResult<Option<OpOccRecord>> {
    // Spelled out rather than `eq_any`, whose SQLite statement Diesel does not cache.
    let [starting, processing, rolling_back, failed_temp] = IN_FLIGHT_STATES;
    let state = op_occs::operation_state;
    op_occs::table
        .filter(op_occs::vnf_instance_id.eq(instance_id))
        .filter(state.eq(starting).or(state.eq(processing)).or(state.eq(rolling_back)).or(state.eq(failed_temp)))
        .select(op_columns!())
        .get_result::<OpRow>(conn)
        .optional()?
        .map(op_from_row)
        .transpose()
}

pub fn claim_op(conn: &mut AnyConnection, id: &str, owner: &str, lease_expires_at: &str) -> DbResult<Option<OpOccRecord>> {
    let Some(mut record) = find_op(conn, id)? else { return Ok(None) };
    let Some(pending) = record.pending_action.clone() else { return Ok(None) };
    // Conditional on the pending work still being there: of two conductors racing on a
    // repeated message, exactly one updates the row.
    let claim = (
        op_occs::owner.eq(owner),
        op_occs::lease_expires_at.eq(lease_expires_at),
        op_occs::pending_action.eq(None::<String>),
        op_occs::updated_at.eq(now_text()),
    );
    let unclaimed = op_occs::id.eq(id).and(op_occs::pending_action.eq(&pending));
    let claimed = cached_update!(op_occs::table, unclaimed, claim).execute(conn)?;
    if claimed == 0 {
        return Ok(None);
    }
    record.owner = Some(owner.to_owned());
    record.lease_expires_at = Some(lease_expires_at.to_owned());
    // The caller learns which work it took up from `pending_action`; the row no longer has it.
    Ok(Some(record))
}

pub fn ops_owned_by_others(conn: &mut AnyConnection, live_owners: &[String]) -> DbResult<Vec<OpOccRecord>> {
    op_occs::table
        .filter(op_occs::owner.is_not_null())
        .filter(op_occs::owner.ne_all(live_owners.to_vec()))
        .filter(op_occs::operation_state.eq_any(["STARTING", "PROCESSING", "ROLLING_BACK"]))
        .select(op_columns!())
        .order(op_occs::id.asc())
        .load::<OpRow>(conn)?
        .into_iter()
        .map(op_from_row)
        .collect()
}

pub fn insert_grant(conn: &mut AnyConnection, op_id: &str, grant: &Value) -> DbResult<()> {
    diesel::insert_into(grants::table)
        .values((
            grants::id.eq(text(grant, "id")),
            grants::vnf_lcm_op_occ_id.eq(op_id),
            grants::body.eq(grant.to_string()),
            grants::created_at.eq(now_text()),
        ))
        .execute(conn)?;
    Ok(())
}

/// The grant recorded for an occurrence (the NFVO's Grant, or the local one).
pub fn find_grant(conn: &mut AnyConnection, op_id: &str) -> DbResult<Option<Value>> {
    let body: Option<String> = grants::table
        .filter(grants::vnf_lcm_op_occ_id.eq(op_id))
        .select(grants::body)
        .get_result::<String>(conn)
        .optional()?;
    Ok(body.and_then(|body| serde_json::from_str(&body).ok()))
}

pub fn delete_grant(conn: &mut AnyConnection, op_id: &str) -> DbResult<()> {
    diesel::delete(grants::table.filter(grants::vnf_lcm_op_occ_id.eq(op_id))).execute(conn)?;
    Ok(())
}

type SubscriptionRow = (String, String, String, String, Option<String>, String, String, String);

fn subscription_from_row(row: SubscriptionRow) -> DbResult<SubscriptionRecord> {
    let (id, callback_uri, verbosity, body, authentication, dedup_key, created_at, project) = row;
    Ok(SubscriptionRecord {
        id,
        callback_uri,
        verbosity,
        body: serde_json::from_str(&body)?,
        authentication: authentication.map(|text| serde_json::from_str(&text)).transpose()?,
        dedup_key,
        created_at,
        project,
    })
}

macro_rules! subscription_columns {
    () => {
        (
            subscriptions::id,
            subscriptions::callback_uri,
            subscriptions::verbosity,
            subscriptions::body,
            subscriptions::authentication,
            subscriptions::dedup_key,
            subscriptions::created_at,
            subscriptions::project,
        )
    };
}

pub fn insert_subscription(conn: &mut AnyConnection, record: &SubscriptionRecord) -> DbResult<()> {
    diesel::insert_into(subscriptions::table)
        .values((
            subscriptions::id.eq(&record.id),
            subscriptions::callback_uri.eq(&record.callback_uri),
            subscriptions::verbosity.eq(&record.verbosity),
            subscriptions::body.eq(record.body.to_string()),
            subscriptions::authentication.eq(record.authentication.as_ref().map(Value::to_string)),
            subscriptions::dedup_key.eq(&record.dedup_key),
            subscriptions::created_at.eq(&record.created_at),
            subscriptions::project.eq(&record.project),
        ))
        .execute(conn)?;
    Ok(())
}

/// Rewrites a subscription's credentials (re-sealed with a new key); whether it exists.
pub fn update_subscription_authentication(
    conn: &mut AnyConnection,
    id: &str,
    authentication: Option<&Value>,
) -> DbResult<bool> {
    let changed = diesel::update(subscriptions::table.filter(subscriptions::id.eq(id)))
        .set(subscriptions::authentication.eq(authentication.map(Value::to_string)))
        .execute(conn)?;
    Ok(changed > 0)
}

pub fn find_subscription(conn: &mut AnyConnection, id: &str) -> DbResult<Option<SubscriptionRecord>> {
    subscriptions::table
        .filter(subscriptions::id.eq(id))
        .select(subscription_columns!())
        .get_result::<SubscriptionRow>(conn)
        .optional()?
        .map(subscription_from_row)
        .transpose()
}

pub fn find_subscription_by_dedup_key(conn: &mut AnyConnection, key: &str) -> DbResult<Option<SubscriptionRecord>> {
    subscriptions::table
        .filter(subscriptions::dedup_key.eq(key))
        .select(subscription_columns!())
        .get_result::<SubscriptionRow>(conn)
        .optional()?
        .map(subscription_from_row)
        .transpose()
}

pub fn delete_subscription(conn: &mut AnyConnection, id: &str) -> DbResult<bool> {
    Ok(diesel::delete(subscriptions::table.filter(subscriptions::id.eq(id))).execute(conn)? > 0)
}

pub fn list_subscriptions(
    conn: &mut AnyConnection,
    backend: Backend,
    spec: &ListSpec,
) -> DbResult<Vec<SubscriptionRecord>> {
    let mut query = subscriptions::table.select(subscription_columns!()).order(subscriptions::id.asc()).into_boxed();
    for condition in &spec.predicates {
        query = query.filter(predicate::<subscriptions::table>(backend, condition));
    }
    if let Some(project) = &spec.project {
        query = query.filter(subscriptions::project.eq(project.clone()));
    }
    if let Some(after) = &spec.after_id {
        query = query.filter(subscriptions::id.gt(after.clone()));
    }
    query.limit(spec.limit).load::<SubscriptionRow>(conn)?.into_iter().map(subscription_from_row).collect()
}

pub fn all_subscriptions(conn: &mut AnyConnection) -> DbResult<Vec<SubscriptionRecord>> {
    subscriptions::table
        .select(subscription_columns!())
        .order(subscriptions::id.asc())
        .load::<SubscriptionRow>(conn)?
        .into_iter()
        .map(subscription_from_row)
        .collect()
}

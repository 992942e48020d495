//! VNF fault management (SOL003 clause 7): alarms are raised and cleared here, in the caller's
//! transaction, with the AlarmNotification / AlarmClearedNotification rows of the FM
//! subscriptions that match; acknowledged by the API (PATCH ackState). Where the faults come
//! from (Alertmanager's alerts, correlated to an instance and its VNFCs) is the caller's.
//!
//! An alarm belongs to its VNF instance's project. Its document is stored without `_links`
//! (computed per response); its private part keeps the major of the instance's table (for the
//! `objectInstance` link) and the instance's identity when raised (for subscription filters,
//! should the instance be gone when the alarm clears).

use diesel::Connection;
use serde_json::{Map, Value, json};
use solgate_db::AnyConnection;
use solgate_db::repo::alarms::{self, AlarmRecord};

use crate::links::{Links, href};
use crate::notify::fm::{self as notify_fm, FmEvent};
use crate::requests::{IfMatch, precondition_failed};
use crate::tenancy::{ProjectScope, visible};
use crate::{CoreError, PRIVATE_KEY, now, without_private};

pub const ACKNOWLEDGED: &str = "ACKNOWLEDGED";
pub const UNACKNOWLEDGED: &str = "UNACKNOWLEDGED";

const INSTANCE_MAJOR_KEY: &str = "instanceMajor";
const INSTANCE_KEY: &str = "instance";

/// The VnfInstance attributes a VnfInstanceSubscriptionFilter reads.
const IDENTITY: &[&str] =
    &["id", "vnfInstanceName", "vnfdId", "vnfProvider", "vnfProductName", "vnfSoftwareVersion", "vnfdVersion"];

pub fn not_found(id: &str) -> CoreError {
    CoreError::NotFound(format!("Alarm {id} not found."))
}

/// A fault to raise an alarm for, correlated to its instance (and VNFCs) by the caller.
#[derive(Debug, Clone, PartialEq)]
pub struct NewAlarm {
    pub instance_id: String,
    /// The major of the instance's table (`vnf_instances_v{major}`).
    pub instance_major: u64,
    /// `vnfcInfo` ids of the VNFCs concerned (SOL002 `vnfcInstanceIds`); may be empty.
    pub vnfc_instance_ids: Vec<String>,
    /// A FaultyResourceInfo, when the fault is one virtualised resource's.
    pub root_cause_faulty_resource: Option<Value>,
    pub perceived_severity: String,
    pub event_type: String,
    /// When the fault was observed (SOL013 DateTime).
    pub event_time: String,
    pub fault_type: Option<String>,
    pub probable_cause: String,
    pub fault_details: Vec<String>,
    /// What identifies the fault at its source (Alertmanager's fingerprint): one active alarm each.
    pub fingerprint: String,
}

/// What [`raise`] did.
#[derive(Debug, Clone, PartialEq)]
pub enum Raised {
    /// A new alarm (and its notifications).
    New(Box<AlarmRecord>),
    /// The fault already has an active alarm: nothing changed (a source repeating itself).
    AlreadyActive(String),
}

/// The Alarm as clients see it: the stored document with `_links`.
pub fn shown(links: &Links, record: &AlarmRecord) -> Value {
    let mut document = without_private(record.body.clone());
    let major = record.body[PRIVATE_KEY][INSTANCE_MAJOR_KEY].as_u64().unwrap_or(2);
    if let Value::Object(map) = &mut document {
        map.insert(
            "_links".into(),
            json!({
                "self": href(&links.alarm(&record.id)),
                "objectInstance": href(&links.instance(major, &record.managed_object_id)),
            }),
        );
    }
    document
}

/// The instance identity subscription filters read: the live instance, else the one recorded
/// when the alarm was raised.
fn identity(record: &AlarmRecord, instance: Option<&Value>) -> Value {
    match instance {
        Some(instance) => instance.clone(),
        None => record.body[PRIVATE_KEY][INSTANCE_KEY].clone(),
    }
}

/// Raises an alarm for `fault` on `instance` (its stored document) of `project`, unless the
/// fault has an active alarm already. Call inside a write transaction.
pub fn raise(
    conn: &mut AnyConnection,
    links: &Links,
    fault: &NewAlarm,
    project: &str,
    instance: &Value,
) -> Result<Raised, CoreError> {
    if let Some(active) = alarms::find_active(conn, &fault.instance_id, &fault.fingerprint)? {
        return Ok(Raised::AlreadyActive(active.id));
    }
    let now = now();
    let id = solgate_db::new_id();
    let mut document = Map::new();
    document.insert("id".into(), json!(id));
    document.insert("managedObjectId".into(), json!(fault.instance_id));
    if !fault.vnfc_instance_ids.is_empty() {
        document.insert("vnfcInstanceIds".into(), json!(fault.vnfc_instance_ids));
    }
    if let Some(resource) = &fault.root_cause_faulty_resource {
        document.insert("rootCauseFaultyResource".into(), resource.clone());
    }
    document.insert("alarmRaisedTime".into(), json!(now));
    document.insert("ackState".into(), json!(UNACKNOWLEDGED));
    document.insert("perceivedSeverity".into(), json!(fault.perceived_severity));
    document.insert("eventTime".into(), json!(fault.event_time));
    document.insert("eventType".into(), json!(fault.event_type));
    if let Some(fault_type) = &fault.fault_type {
        document.insert("faultType".into(), json!(fault_type));
    }
    document.insert("probableCause".into(), json!(fault.probable_cause));
    document.insert("isRootCause".into(), json!(false));
    if !fault.fault_details.is_empty() {
        document.insert("faultDetails".into(), json!(fault.fault_details));
    }
    let identity: Map<String, Value> =
        IDENTITY.iter().filter_map(|key| instance.get(*key).map(|value| ((*key).to_owned(), value.clone()))).collect();
    document.insert(
        PRIVATE_KEY.into(),
        json!({ INSTANCE_MAJOR_KEY: fault.instance_major, INSTANCE_KEY: Value::Object(identity) }),
    );
    let record = AlarmRecord {
        id: id.clone(),
        managed_object_id: fault.instance_id.clone(),
        fingerprint: fault.fingerprint.clone(),
        ack_state: UNACKNOWLEDGED.into(),
        perceived_severity: fault.perceived_severity.clone(),
        event_type: fault.event_type.clone(),
        probable_cause: fault.probable_cause.clone(),
        alarm_raised_time: now.clone(),
        alarm_cleared_time: None,
        body: Value::Object(document),
        row_version: 1,
        created_at: now.clone(),
        updated_at: now,
        project: project.to_owned(),
    };
    // In a savepoint: on PostgreSQL a failed statement would spoil the whole transaction.
    match conn.transaction(|conn| alarms::insert(conn, &record)) {
        Ok(()) => {}
        // The same alert posted twice at the same moment (two Alertmanagers of a cluster).
        Err(error) if error.is_unique_violation() => {
            let active = alarms::find_active(conn, &fault.instance_id, &fault.fingerprint)?;
            return Ok(Raised::AlreadyActive(active.map(|alarm| alarm.id).unwrap_or_default()));
        }
        Err(error) => return Err(error.into()),
    }
    let alarm = shown(links, &record);
    notify_fm::enqueue(conn, links, project, FmEvent::Raised { alarm: &alarm, instance })?;
    Ok(Raised::New(Box::new(record)))
}

/// Clears the active alarm of a fault (`cleared_at`: when the source saw it end, SOL013
/// DateTime); `None` when it has none. `instance`: the instance's stored document, if it still
/// exists. Call inside a write transaction.
pub fn clear(
    conn: &mut AnyConnection,
    links: &Links,
    instance_id: &str,
    fingerprint: &str,
    cleared_at: &str,
    instance: Option<&Value>,
) -> Result<Option<AlarmRecord>, CoreError> {
    // An acknowledgement may move the row on between the read and the write (PostgreSQL):
    // read it again.
    for _ in 0..3 {
        let Some(mut record) = alarms::find_active(conn, instance_id, fingerprint)? else { return Ok(None) };
        let now = now();
        crate::overlay(&mut record.body, &Cleared { alarm_cleared_time: cleared_at, alarm_changed_time: &now });
        record.alarm_cleared_time = Some(now.clone());
        record.updated_at = now;
        if alarms::update(conn, &record)? {
            record.row_version += 1;
            let alarm = shown(links, &record);
            let instance = identity(&record, instance);
            notify_fm::enqueue(conn, links, &record.project, FmEvent::Cleared { alarm: &alarm, instance: &instance })?;
            return Ok(Some(record));
        }
    }
    Err(CoreError::Conflict(format!("The alarm of VNF instance {instance_id} changed meanwhile; try again.")))
}

/// The members of an Alarm (SOL003 clause 7.5.2.4) its clearing sets.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct Cleared<'a> {
    alarm_cleared_time: &'a str,
    alarm_changed_time: &'a str,
}

/// The member of an Alarm its acknowledgement sets.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct Acknowledged<'a> {
    ack_state: &'a str,
}

/// Sets an alarm's `ackState` (SOL003 clause 7.4.3.3.4): 409 when it is in that state already
/// (Tacker's text), 412 when `If-Match` names another representation. Call inside a write
/// transaction; returns the alarm as stored now.
pub fn acknowledge(
    conn: &mut AnyConnection,
    scope: ProjectScope<'_>,
    id: &str,
    ack_state: &str,
    if_match: Option<&IfMatch>,
) -> Result<AlarmRecord, CoreError> {
    let mut record =
        alarms::find(conn, id)?.filter(|record| visible(scope, &record.project)).ok_or_else(|| not_found(id))?;
    if if_match.is_some_and(|condition| !condition.matches(record.row_version)) {
        return Err(precondition_failed(&format!("Alarm {id}")));
    }
    if record.ack_state == ack_state {
        return Err(CoreError::Conflict("The ackState of alarm cannot specify the same value.".into()));
    }
    let now = now();
    record.ack_state = ack_state.to_owned();
    crate::overlay(&mut record.body, &Acknowledged { ack_state });
    if let Value::Object(map) = &mut record.body {
        if ack_state == ACKNOWLEDGED {
            map.insert("alarmAcknowledgedTime".into(), json!(now));
        } else {
            map.shift_remove("alarmAcknowledgedTime");
        }
    }
    record.updated_at = now;
    if !alarms::update(conn, &record)? {
        return Err(match if_match {
            Some(_) => precondition_failed(&format!("Alarm {id}")),
            None => CoreError::Conflict(format!("Alarm {id} changed meanwhile; try again.")),
        });
    }
    record.row_version += 1;
    Ok(record)
}

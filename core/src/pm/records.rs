//! PM jobs and thresholds as typed records (SOL003 clauses 6.5.2.7 PmJob, 6.5.3.3
//! PmJobCriteria, 6.5.2.9 Threshold, 6.5.3.4 ThresholdCriteria), read from a request or a
//! stored document, with the private part solgate keeps beside them (see [`super`]).
//! Members that are not read here stay in the stored document as they are: only the
//! private keys are ever written back ([`super::set_private`]).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use solgate_db::repo::vnfpm::PmRecord;

use crate::CoreError;

/// A PmJob or CreatePmJobRequest.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct PmJob {
    pub id: String,
    pub object_type: Option<String>,
    pub object_instance_ids: Vec<String>,
    pub sub_object_instance_ids: Vec<String>,
    pub criteria: PmJobCriteria,
    #[serde(rename = "_solgate")]
    pub private: JobPrivate,
}

/// PmJobCriteria.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct PmJobCriteria {
    pub performance_metric: Vec<String>,
    pub performance_metric_group: Vec<String>,
    pub collection_period: Option<u64>,
    pub reporting_period: Option<u64>,
    pub reporting_boundary: Option<String>,
}

/// What solgate keeps of a job: its reports (newest last) and when each measurement
/// (`object|sub-object|metric`) was last reported.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct JobPrivate {
    pub reports: Vec<ReportReference>,
    pub last_reported: Map<String, Value>,
}

/// A report of a job, as the job's private part refers to it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ReportReference {
    pub id: String,
    pub ready_time: String,
}

/// A Threshold or CreateThresholdRequest.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Threshold {
    pub id: String,
    pub object_type: Option<String>,
    pub object_instance_id: Option<String>,
    pub sub_object_instance_ids: Vec<String>,
    pub criteria: ThresholdCriteria,
    #[serde(rename = "_solgate")]
    pub private: ThresholdPrivate,
}

/// ThresholdCriteria.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ThresholdCriteria {
    pub performance_metric: String,
    pub threshold_type: String,
    pub simple_threshold_details: Option<SimpleThresholdDetails>,
}

/// ThresholdCriteria `simpleThresholdDetails`.
#[derive(Debug, Clone, Copy, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct SimpleThresholdDetails {
    pub threshold_value: f64,
    pub hysteresis: f64,
}

/// What solgate keeps of a threshold: the crossing state per sub-object (`""`: the object).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct ThresholdPrivate {
    pub crossing: Map<String, Value>,
}

/// The crossing state of one sub-object: the side of the last crossing (null before the
/// first), the last value measured and when.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CrossingState {
    pub direction: Option<String>,
    pub value: Value,
    pub at: String,
}

fn unreadable(what: &str, error: &serde_json::Error) -> CoreError {
    CoreError::BadRequest(format!("The {what} cannot be read: {error}."))
}

impl PmJob {
    /// A request or document, as given (schema-valid: it reads).
    pub fn read(document: &Value) -> Result<Self, CoreError> {
        Self::deserialize(document).map_err(|error| unreadable("PM job", &error))
    }

    /// A stored job; its id is the record's.
    pub fn of(record: &PmRecord) -> Self {
        let mut job = Self::read(&record.body).unwrap_or_else(|error| {
            tracing::warn!(%error, id = %record.id, "a stored PM job cannot be read");
            Self::default()
        });
        job.id.clone_from(&record.id);
        job
    }
}

impl Threshold {
    /// A request or document, as given (schema-valid: it reads).
    pub fn read(document: &Value) -> Result<Self, CoreError> {
        Self::deserialize(document).map_err(|error| unreadable("threshold", &error))
    }

    /// A stored threshold; its id is the record's.
    pub fn of(record: &PmRecord) -> Self {
        let mut threshold = Self::read(&record.body).unwrap_or_else(|error| {
            tracing::warn!(%error, id = %record.id, "a stored threshold cannot be read");
            Self::default()
        });
        threshold.id.clone_from(&record.id);
        threshold
    }

    /// `thresholdValue` and `hysteresis` (0 when absent).
    pub fn limits(&self) -> SimpleThresholdDetails {
        self.criteria.simple_threshold_details.unwrap_or_default()
    }
}

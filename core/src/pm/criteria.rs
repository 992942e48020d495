//! What a PM job or threshold may measure: the measured object types and performance metrics
//! Tacker's Prometheus plugin supports (ETSI GS NFV-IFA 027 clause 7.2 measurement names, as
//! Tacker's `controller/vnfpm_v2.py` lists them), their groups, and the checks of a request's
//! criteria. A job's criteria are decomposed into the metrics its rules measure.

use serde_json::Value;

use super::records::{PmJob, Threshold};
use crate::CoreError;

/// A measured object type (IFA 027 clause 7.2, Tacker's `objectType` enumeration).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ObjectType {
    Vnf,
    Vnfc,
    VnfIntCp,
    VnfExtCp,
}

const COMPUTE: &[&str] = &[
    "VCpuUsageMeanVnf",
    "VCpuUsagePeakVnf",
    "VMemoryUsageMeanVnf",
    "VMemoryUsagePeakVnf",
    "VDiskUsageMeanVnf",
    "VDiskUsagePeakVnf",
];
const INTERNAL_CP: &[&str] =
    &["ByteIncomingVnfIntCp", "ByteOutgoingVnfIntCp", "PacketIncomingVnfIntCp", "PacketOutgoingVnfIntCp"];
const EXTERNAL_CP: &[&str] =
    &["ByteIncomingVnfExtCp", "ByteOutgoingVnfExtCp", "PacketIncomingVnfExtCp", "PacketOutgoingVnfExtCp"];

impl ObjectType {
    pub const ALL: [ObjectType; 4] = [ObjectType::Vnf, ObjectType::Vnfc, ObjectType::VnfIntCp, ObjectType::VnfExtCp];

    pub fn name(self) -> &'static str {
        match self {
            ObjectType::Vnf => "Vnf",
            ObjectType::Vnfc => "Vnfc",
            ObjectType::VnfIntCp => "VnfIntCp",
            ObjectType::VnfExtCp => "VnfExtCp",
        }
    }

    pub fn parse(name: &str) -> Option<ObjectType> {
        ObjectType::ALL.into_iter().find(|kind| kind.name() == name)
    }

    /// The one `performanceMetricGroup` of the type (IFA 027 "Measurement Group").
    pub fn group(self) -> &'static str {
        match self {
            ObjectType::Vnf | ObjectType::Vnfc => "VirtualisedComputeResource",
            ObjectType::VnfIntCp => "VnfInternalCp",
            ObjectType::VnfExtCp => "VnfExternalCp",
        }
    }

    /// Its measurement names.
    pub fn measurements(self) -> &'static [&'static str] {
        match self {
            ObjectType::Vnf | ObjectType::Vnfc => COMPUTE,
            ObjectType::VnfIntCp => INTERNAL_CP,
            ObjectType::VnfExtCp => EXTERNAL_CP,
        }
    }

    /// Whether a metric of this type names the VNF instance it measures
    /// (`VCpuUsageMeanVnf.{vnfInstanceId}`, as Tacker's plugin requires).
    fn per_instance(self) -> bool {
        matches!(self, ObjectType::Vnf | ObjectType::Vnfc)
    }
}

/// A metric a rule measures: the name the criteria give (and reports and notifications
/// repeat), its measurement, and for compute metrics the VNF instance it names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Metric {
    pub name: String,
    pub measurement: &'static str,
    pub instance: Option<String>,
}

impl Metric {
    /// Whether values of the metric are counts (bytes, packets: integers in reports) rather
    /// than ratios.
    pub fn is_count(&self) -> bool {
        self.measurement.starts_with("Byte") || self.measurement.starts_with("Packet")
    }
}

fn bad(detail: String) -> CoreError {
    CoreError::BadRequest(detail)
}

fn object_type(given: Option<&str>) -> Result<ObjectType, CoreError> {
    let given = given.unwrap_or_default();
    ObjectType::parse(given).ok_or_else(|| {
        let known: Vec<&str> = ObjectType::ALL.iter().map(|kind| kind.name()).collect();
        bad(format!("objectType {given:?} is not supported; use one of {}.", known.join(", ")))
    })
}

/// Reads `name` as a metric of `kind` measuring one of `instances`.
fn metric(kind: ObjectType, name: &str, instances: &[&str], allow_suffix: bool) -> Result<Metric, CoreError> {
    let (measurement, suffix) = match name.split_once('.') {
        Some((measurement, suffix)) => (measurement, Some(suffix)),
        None => (name, None),
    };
    let Some(measurement) = kind.measurements().iter().copied().find(|known| *known == measurement) else {
        return Err(bad(format!(
            "performanceMetric {name:?} is not a metric of objectType {}; use {}.",
            kind.name(),
            kind.measurements()
                .iter()
                .map(|m| if kind.per_instance() { format!("{m}.{{vnfInstanceId}}") } else { (*m).to_owned() })
                .collect::<Vec<_>>()
                .join(", ")
        )));
    };
    if kind.per_instance() {
        match suffix {
            Some(instance) if instances.contains(&instance) => {
                Ok(Metric { name: name.to_owned(), measurement, instance: Some(instance.to_owned()) })
            }
            _ => Err(bad(format!(
                "performanceMetric {name:?} must name a VNF instance it measures: {measurement}.{{vnfInstanceId}} with \
                 one of {}.",
                instances.join(", ")
            ))),
        }
    } else if suffix.is_some() && !allow_suffix {
        Err(bad(format!(
            "performanceMetric {name:?} of objectType {} takes no suffix; use {measurement}.",
            kind.name()
        )))
    } else {
        Ok(Metric { name: name.to_owned(), measurement, instance: None })
    }
}

/// The checks of a schema-valid CreatePmJobRequest that its schema cannot express (SOL003
/// clauses 6.5.2.6 and 6.5.3.3, and Tacker's controller): the object type and metrics must be
/// ones the plugin measures, `subObjectInstanceIds` needs exactly one object instance, at least
/// one of `performanceMetric` and `performanceMetricGroup`, periods that make sense. Returns
/// the metrics the job measures (groups decomposed), without duplicates.
pub fn check_job(request: &Value) -> Result<(ObjectType, Vec<Metric>), CoreError> {
    check_pm_job(&PmJob::read(request)?)
}

/// [`check_job`] of a job already read.
pub fn check_pm_job(job: &PmJob) -> Result<(ObjectType, Vec<Metric>), CoreError> {
    let kind = object_type(job.object_type.as_deref())?;
    let instances: Vec<&str> = job.object_instance_ids.iter().map(String::as_str).collect();
    if instances.is_empty() {
        return Err(bad("objectInstanceIds must name at least one VNF instance.".into()));
    }
    if !job.sub_object_instance_ids.is_empty() && instances.len() != 1 {
        return Err(bad("With subObjectInstanceIds, objectInstanceIds must name exactly one VNF instance.".into()));
    }
    let criteria = &job.criteria;
    if criteria.performance_metric.is_empty() && criteria.performance_metric_group.is_empty() {
        return Err(bad("criteria needs performanceMetric or performanceMetricGroup.".into()));
    }
    let metrics = job_metrics(kind, &criteria.performance_metric, &criteria.performance_metric_group, &instances)?;
    let collection = criteria.collection_period.unwrap_or_default();
    let reporting = criteria.reporting_period.unwrap_or_default();
    if collection == 0 {
        return Err(bad("criteria.collectionPeriod must be at least 1 second.".into()));
    }
    // Note 1 of clause 6.5.3.3: the reporting period should be equal to or a multiple of it.
    if reporting < collection {
        return Err(bad(format!(
            "criteria.reportingPeriod ({reporting} s) must not be shorter than collectionPeriod ({collection} s)."
        )));
    }
    if let Some(boundary) = &criteria.reporting_boundary
        && solgate_sol013::parse_datetime(boundary).is_none()
    {
        return Err(bad("criteria.reportingBoundary is not a date-time (RFC 3339).".into()));
    }
    Ok((kind, metrics))
}

/// The metrics `named` and the `groups` decomposed, each once.
fn job_metrics(
    kind: ObjectType,
    named: &[String],
    groups: &[String],
    instances: &[&str],
) -> Result<Vec<Metric>, CoreError> {
    let mut metrics: Vec<Metric> = Vec::new();
    let mut add = |found: Metric| {
        if !metrics.iter().any(|known| known.name == found.name) {
            metrics.push(found);
        }
    };
    for name in named {
        add(metric(kind, name, instances, true)?);
    }
    for group in groups {
        if group != kind.group() {
            return Err(bad(format!(
                "performanceMetricGroup {group:?} is not the group of objectType {}; use {}.",
                kind.name(),
                kind.group()
            )));
        }
        for measurement in kind.measurements() {
            if kind.per_instance() {
                for instance in instances {
                    add(metric(kind, &format!("{measurement}.{instance}"), instances, true)?);
                }
            } else {
                add(metric(kind, measurement, instances, true)?);
            }
        }
    }
    Ok(metrics)
}

/// The checks of a schema-valid CreateThresholdRequest (SOL003 clauses 6.5.2.8 and 6.5.3.4,
/// Tacker's controller): a metric the plugin measures, for compute metrics naming the object
/// instance; `simpleThresholdDetails` present with thresholdType SIMPLE.
pub fn check_threshold(request: &Value) -> Result<(ObjectType, Metric), CoreError> {
    check_pm_threshold(&Threshold::read(request)?)
}

/// [`check_threshold`] of a threshold already read.
pub fn check_pm_threshold(threshold: &Threshold) -> Result<(ObjectType, Metric), CoreError> {
    let kind = object_type(threshold.object_type.as_deref())?;
    let instance = threshold.object_instance_id.as_deref().unwrap_or_default();
    let criteria = &threshold.criteria;
    let found = metric(kind, &criteria.performance_metric, &[instance], false)?;
    if criteria.threshold_type == "SIMPLE" && criteria.simple_threshold_details.is_none() {
        return Err(bad("criteria.simpleThresholdDetails must be present with thresholdType SIMPLE.".into()));
    }
    Ok((kind, found))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[allow(clippy::needless_pass_by_value)]
    fn job(object_type: &str, criteria: Value) -> Value {
        json!({"objectType": object_type, "objectInstanceIds": ["i1", "i2"], "criteria": criteria, "callbackUri": "http://x"})
    }

    #[test]
    fn job_criteria_name_metrics_of_their_object_type() {
        let (kind, metrics) = check_job(&job(
            "Vnf",
            json!({"performanceMetric": ["VCpuUsageMeanVnf.i1"], "collectionPeriod": 30, "reportingPeriod": 90}),
        ))
        .unwrap();
        assert_eq!(kind, ObjectType::Vnf);
        assert_eq!(
            metrics,
            [Metric {
                name: "VCpuUsageMeanVnf.i1".into(),
                measurement: "VCpuUsageMeanVnf",
                instance: Some("i1".into())
            }]
        );
        let (_, metrics) = check_job(&job(
            "Vnfc",
            json!({"performanceMetricGroup": ["VirtualisedComputeResource"], "performanceMetric": ["VDiskUsagePeakVnf.i2"], "collectionPeriod": 30, "reportingPeriod": 30}),
        ))
        .unwrap();
        assert_eq!(metrics.len(), 12, "six measurements of two instances, the named one once");
        let (_, metrics) = check_job(&job(
            "VnfIntCp",
            json!({"performanceMetricGroup": ["VnfInternalCp"], "collectionPeriod": 5, "reportingPeriod": 10}),
        ))
        .unwrap();
        assert_eq!(metrics.iter().map(|m| m.name.as_str()).collect::<Vec<_>>(), INTERNAL_CP);
        assert!(metrics.iter().all(Metric::is_count));

        let refused =
            |object_type: &str, criteria: Value| check_job(&job(object_type, criteria)).unwrap_err().to_string();
        let periods = json!({"collectionPeriod": 30, "reportingPeriod": 90});
        let with = |extra: Value| {
            let mut criteria = periods.clone();
            criteria.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
            criteria
        };
        assert!(refused("Vnf", with(json!({"performanceMetric": ["VNetworkUsage.i1"]}))).contains("VNetworkUsage"));
        assert!(
            refused("Vnf", with(json!({"performanceMetric": ["VCpuUsageMeanVnf"]})))
                .contains("must name a VNF instance")
        );
        assert!(refused("Vnf", with(json!({"performanceMetric": ["VCpuUsageMeanVnf.other"]}))).contains("i1, i2"));
        assert!(
            refused("Vnf", with(json!({"performanceMetric": ["ByteIncomingVnfIntCp"]})))
                .contains("not a metric of objectType Vnf")
        );
        assert!(
            refused("VnfExtCp", with(json!({"performanceMetricGroup": ["VnfInternalCp"]}))).contains("VnfExternalCp")
        );
        assert!(
            refused("VNFC", with(json!({"performanceMetric": ["VCpuUsageMeanVnf.i1"]})))
                .contains("objectType \"VNFC\"")
        );
        assert!(refused("Vnf", periods.clone()).contains("performanceMetric or performanceMetricGroup"));
        assert!(
            refused(
                "Vnf",
                json!({"performanceMetric": ["VCpuUsageMeanVnf.i1"], "collectionPeriod": 0, "reportingPeriod": 0})
            )
            .contains("at least 1")
        );
        assert!(
            refused(
                "Vnf",
                json!({"performanceMetric": ["VCpuUsageMeanVnf.i1"], "collectionPeriod": 60, "reportingPeriod": 30})
            )
            .contains("shorter")
        );
        assert!(
            refused(
                "Vnf",
                with(json!({"performanceMetric": ["VCpuUsageMeanVnf.i1"], "reportingBoundary": "2022/07/25 10:43:55"}))
            )
            .contains("reportingBoundary")
        );
        let mut two = job("Vnf", with(json!({"performanceMetric": ["VCpuUsageMeanVnf.i1"]})));
        two["subObjectInstanceIds"] = json!(["c1"]);
        assert!(check_job(&two).unwrap_err().to_string().contains("exactly one"));
    }

    #[test]
    fn threshold_criteria_name_one_metric_of_their_object() {
        let request = |object_type: &str, metric: &str| {
            json!({"objectType": object_type, "objectInstanceId": "i1", "callbackUri": "http://x",
                "criteria": {"performanceMetric": metric, "thresholdType": "SIMPLE", "simpleThresholdDetails": {"thresholdValue": 1.0, "hysteresis": 0.1}}})
        };
        assert_eq!(
            check_threshold(&request("Vnf", "VMemoryUsageMeanVnf.i1")).unwrap().1.measurement,
            "VMemoryUsageMeanVnf"
        );
        assert!(check_threshold(&request("VnfExtCp", "PacketIncomingVnfExtCp")).is_ok());
        assert!(
            check_threshold(&request("VnfExtCp", "PacketIncomingVnfExtCp.eth0"))
                .unwrap_err()
                .to_string()
                .contains("no suffix")
        );
        assert!(check_threshold(&request("Vnf", "VMemoryUsageMeanVnf.i2")).is_err());
        assert!(check_threshold(&request("Vnf", "VMemoryUsageMeanVnf")).is_err());
        let mut no_details = request("Vnf", "VMemoryUsageMeanVnf.i1");
        no_details["criteria"].as_object_mut().unwrap().remove("simpleThresholdDetails");
        assert!(check_threshold(&no_details).unwrap_err().to_string().contains("simpleThresholdDetails"));
    }
}

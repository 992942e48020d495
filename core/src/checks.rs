//! Request-time checks of LCM task bodies against the instance and its VNFD, so that a
//! request that cannot succeed is refused with 400/409/422 instead of being accepted and
//! rolled back later (Tacker defect 23).

use serde_json::Value;
use solgate_vnfpkg::Vnfd;

use crate::plan::{self, ExtConnectivity, PlanError};

/// Why a task request is refused; the gateway maps each to its status.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CheckError {
    /// 400: the body names something the VNFD does not have, or is inconsistent.
    #[error("{0}")]
    BadRequest(String),
    /// 409: the instance is not in a state that allows the task.
    #[error("{0}")]
    Conflict(String),
}

impl From<PlanError> for CheckError {
    fn from(error: PlanError) -> Self {
        CheckError::BadRequest(error.to_string())
    }
}

pub fn instantiated(instance: &Value) -> bool {
    instance["instantiationState"] == "INSTANTIATED"
}

pub fn require_instantiated(instance: &Value, id: &str) -> Result<(), CheckError> {
    if instantiated(instance) {
        Ok(())
    } else {
        Err(CheckError::Conflict(format!("VnfInstance {id} isn't instantiated.")))
    }
}

pub fn require_not_instantiated(instance: &Value, id: &str) -> Result<(), CheckError> {
    if instantiated(instance) {
        Err(CheckError::Conflict(format!("VnfInstance {id} is instantiated.")))
    } else {
        Ok(())
    }
}

fn current_flavour<'a>(vnfd: &'a Vnfd, instance: &Value) -> Result<&'a solgate_vnfpkg::Flavour, CheckError> {
    let flavour_id = instance["instantiatedVnfInfo"]["flavourId"].as_str().unwrap_or_default();
    Ok(plan::flavour(vnfd, flavour_id)?)
}

/// Checks a task body; `operation` is the SOL003 LcmOperationType.
pub fn check_task(operation: &str, vnfd: &Vnfd, instance: &Value, params: &Value) -> Result<(), CheckError> {
    match operation {
        "INSTANTIATE" => {
            let flavour_id = params["flavourId"].as_str().unwrap_or_default();
            let level = params["instantiationLevelId"].as_str();
            plan::for_instantiation(vnfd, flavour_id, level, &ExtConnectivity::from_params(params))?;
        }
        "SCALE" | "SCALE_TO_LEVEL" => {
            let flavour = current_flavour(vnfd, instance)?;
            let info = &instance["instantiatedVnfInfo"];
            let current = plan::current_levels(info);
            let levels = if operation == "SCALE" {
                plan::scaled_levels(flavour, &current, params)?
            } else {
                plan::levels_to(flavour, &current, params)?
            };
            let counts = match params["instantiationLevelId"].as_str() {
                Some(level) if operation == "SCALE_TO_LEVEL" => {
                    flavour.initial_vdu_instances(Some(level)).unwrap_or_default()
                }
                _ => plan::rescaled_counts(flavour, &plan::current_counts(info), &current, &levels),
            };
            plan::plan(flavour, counts, levels, &ExtConnectivity::default())?;
        }
        "CHANGE_FLAVOUR" => {
            let flavour_id = params["newFlavourId"].as_str().unwrap_or_default();
            if flavour_id == instance["instantiatedVnfInfo"]["flavourId"].as_str().unwrap_or_default() {
                return Err(CheckError::BadRequest(format!("The VNF instance already has flavour {flavour_id}.")));
            }
            plan::for_instantiation(
                vnfd,
                flavour_id,
                params["instantiationLevelId"].as_str(),
                &ExtConnectivity::default(),
            )?;
        }
        "HEAL" => {
            if let Some(all) = params["additionalParams"].get("all")
                && !all.is_boolean()
            {
                return Err(CheckError::BadRequest("additionalParams['all'] must be bool.".into()));
            }
            // SOL003 v3.3.1 shows VNFCs as vnfcResourceInfo; Tacker (and SOL002) name them by
            // vnfcInfo ids. Either is accepted.
            let info = &instance["instantiatedVnfInfo"];
            let known: Vec<&str> = ["vnfcInfo", "vnfcResourceInfo"]
                .iter()
                .flat_map(|key| info[*key].as_array().into_iter().flatten())
                .filter_map(|vnfc| vnfc["id"].as_str())
                .collect();
            for id in params["vnfcInstanceId"].as_array().into_iter().flatten() {
                let id = id.as_str().unwrap_or_default();
                if !known.contains(&id) {
                    return Err(CheckError::BadRequest(format!("vnfcInstanceId({id}) does not exist.")));
                }
            }
        }
        "OPERATE" => {
            let target = params["changeStateTo"].as_str().unwrap_or_default();
            let current = instance["instantiatedVnfInfo"]["vnfState"].as_str().unwrap_or("STARTED");
            if target == current {
                return Err(CheckError::Conflict(format!("The VNF is already {current}.")));
            }
        }
        _ => {}
    }
    Ok(())
}

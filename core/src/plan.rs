//! From the VNFD and an operation's parameters to the [`DeploymentPlan`] an infra driver
//! realizes. The same functions check requests at the gateway (400/422 at request time,
//! not a later ROLLED_BACK as in Tacker) and build plans in the conductor.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Value, json};
use solgate_model::infra::{DeploymentPlan, VduTarget};
use solgate_model::lcm_request::{ExtConnectivityData, ScaleInfo, ScaleVnfRequest, parse};
use solgate_model::vnf_instance::InstantiatedVnfInfo;
use solgate_vnfpkg::{Flavour, Vnfd};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    #[error("FlavourId {0} not found in the VNFD.")]
    UnknownFlavour(String),
    #[error("InstantiationLevelId {level} not found in flavour {flavour} of the VNFD.")]
    UnknownInstantiationLevel { level: String, flavour: String },
    #[error("Invalid aspectId '{0}'.")]
    UnknownAspect(String),
    #[error("Invalid numberOfSteps '{steps}': aspect {aspect} would go to scale level {target}, outside 0..{max}.")]
    StepsOutOfRange { aspect: String, steps: i64, target: i64, max: u32 },
    #[error("Invalid scaleLevel {level} for aspect {aspect}: its maximum is {max}.")]
    LevelOutOfRange { aspect: String, level: i64, max: u32 },
    #[error("VDU {vdu} would have {count} instances, outside the VNFD's bounds {min}..{max}.")]
    VduOutOfBounds { vdu: String, count: u32, min: u32, max: u32 },
    #[error("{0}")]
    Invalid(String),
}

pub fn flavour<'a>(vnfd: &'a Vnfd, flavour_id: &str) -> Result<&'a Flavour, PlanError> {
    vnfd.flavour(flavour_id).ok_or_else(|| PlanError::UnknownFlavour(flavour_id.to_owned()))
}

/// Scale levels right after instantiation at a level (default level when `None`).
pub fn initial_levels(flavour: &Flavour, level_id: Option<&str>) -> Result<BTreeMap<String, u32>, PlanError> {
    flavour.initial_scale_levels(level_id).ok_or_else(|| PlanError::UnknownInstantiationLevel {
        level: level_id.unwrap_or_default().to_owned(),
        flavour: flavour.id.clone(),
    })
}

/// VDU counts must stay within the VNFD's vdu_profile (the local NFVO's grant check). A VDU
/// of a deployable module may have none: its module is not selected. So may a VDU that
/// had none `before` (a VDU the VIM does not realize: Tacker's CNF packages describe more
/// VDUs than their manifests hold).
fn checked_targets(
    flavour: &Flavour,
    counts: BTreeMap<String, u32>,
    before: Option<&BTreeMap<String, u32>>,
) -> Result<Vec<VduTarget>, PlanError> {
    counts
        .into_iter()
        .map(|(vdu_id, count)| {
            let stays_empty = count == 0 && before.is_some_and(|before| before.get(&vdu_id).copied().unwrap_or(0) == 0);
            let optional = stays_empty
                || count == 0 && flavour.deployable_modules.iter().any(|module| module.vdus.contains(&vdu_id));
            if let Some(vdu) = flavour.vdu(&vdu_id)
                && !optional
            {
                let profile = vdu.vdu_profile;
                if count < profile.min_number_of_instances || count > profile.max_number_of_instances {
                    return Err(PlanError::VduOutOfBounds {
                        vdu: vdu_id,
                        count,
                        min: profile.min_number_of_instances,
                        max: profile.max_number_of_instances,
                    });
                }
            }
            Ok(VduTarget { vdu_id, count })
        })
        .collect()
}

/// A plan with explicit VDU counts (checked against the VNFD's bounds).
pub fn plan(
    flavour: &Flavour,
    counts: BTreeMap<String, u32>,
    levels: BTreeMap<String, u32>,
    ext: &ExtConnectivity,
) -> Result<DeploymentPlan, PlanError> {
    planned(flavour, counts, None, levels, ext)
}

/// As [`plan`], for an instance that holds `before` now: a VDU without VNFCs that gets none
/// is not held to the VNFD's minimum.
pub fn replan(
    flavour: &Flavour,
    before: &BTreeMap<String, u32>,
    counts: BTreeMap<String, u32>,
    levels: BTreeMap<String, u32>,
    ext: &ExtConnectivity,
) -> Result<DeploymentPlan, PlanError> {
    planned(flavour, counts, Some(before), levels, ext)
}

fn planned(
    flavour: &Flavour,
    counts: BTreeMap<String, u32>,
    before: Option<&BTreeMap<String, u32>>,
    levels: BTreeMap<String, u32>,
    ext: &ExtConnectivity,
) -> Result<DeploymentPlan, PlanError> {
    Ok(DeploymentPlan {
        flavour_id: flavour.id.clone(),
        vdus: checked_targets(flavour, counts, before)?,
        virtual_links: flavour.virtual_links.iter().map(|vl| vl.id.clone()).collect(),
        ext_virtual_links: ext.ext_virtual_links.clone(),
        ext_managed_virtual_links: ext.ext_managed_virtual_links.clone(),
        scale_levels: levels,
        granted: Default::default(),
    })
}

/// External connectivity of a plan.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ExtConnectivity {
    pub ext_virtual_links: Value,
    pub ext_managed_virtual_links: Value,
}

impl ExtConnectivity {
    /// The request's (InstantiateVnfRequest, ChangeExtVnfConnectivityRequest), none when
    /// it names none.
    pub fn from_params(params: &Value) -> Self {
        let data: ExtConnectivityData = parse(params).unwrap_or_default();
        Self {
            ext_virtual_links: data.ext_virtual_links.unwrap_or_else(|| json!([])),
            ext_managed_virtual_links: data.ext_managed_virtual_links.unwrap_or_else(|| json!([])),
        }
    }
}

/// The target size an InstantiateVnfRequest or ChangeVnfFlavourRequest asks for.
#[derive(Debug, Clone, Copy, Default)]
pub struct TargetSize<'a> {
    pub instantiation_level_id: Option<&'a str>,
    /// `targetScaleLevelInfo` (ScaleInfo[]), as the request gave it.
    pub target_scale_level_info: Option<&'a Value>,
}

/// ScaleInfo entries of a request member; none when it is not a list of them.
pub fn scale_infos(value: &Value) -> Option<Vec<ScaleInfo>> {
    parse(value).ok()
}

/// The target size of an instantiation or flavour change: an instantiation level, or
/// (SOL003 V4.3.1 on) a scale level per aspect, `targetScaleLevelInfo`; never both (NOTE 2
/// of InstantiateVnfRequest and ChangeVnfFlavourRequest).
pub fn for_target_size(
    vnfd: &Vnfd,
    flavour_id: &str,
    size: TargetSize<'_>,
    ext: &ExtConnectivity,
    modules: &[String],
) -> Result<DeploymentPlan, PlanError> {
    let level_id = size.instantiation_level_id;
    let Some(targets) = size.target_scale_level_info else {
        return for_instantiation(vnfd, flavour_id, level_id, ext, modules);
    };
    if level_id.is_some() {
        return Err(PlanError::Invalid(
            "instantiationLevelId and targetScaleLevelInfo are mutually exclusive; send one of them.".into(),
        ));
    }
    let flavour = flavour(vnfd, flavour_id)?;
    // Aspects the request does not name stay at the default instantiation level's scale level.
    let mut levels = initial_levels(flavour, None)?;
    set_levels(flavour, &mut levels, &scale_infos(targets).unwrap_or_default())?;
    let mut counts =
        flavour.vdu_instances_at(&levels).ok_or_else(|| PlanError::Invalid("scale levels outside the VNFD".into()))?;
    deselect(flavour, &mut counts, modules);
    plan(flavour, counts, levels, ext)
}

/// The plan of an instantiation (InstantiateVnfRequest: flavourId, instantiationLevelId,
/// and the deployable modules it selects).
pub fn for_instantiation(
    vnfd: &Vnfd,
    flavour_id: &str,
    level_id: Option<&str>,
    ext: &ExtConnectivity,
    modules: &[String],
) -> Result<DeploymentPlan, PlanError> {
    let flavour = flavour(vnfd, flavour_id)?;
    let levels = initial_levels(flavour, level_id)?;
    let mut counts = flavour.initial_vdu_instances(level_id).ok_or_else(|| PlanError::UnknownInstantiationLevel {
        level: level_id.unwrap_or_default().to_owned(),
        flavour: flavour.id.clone(),
    })?;
    deselect(flavour, &mut counts, modules);
    plan(flavour, counts, levels, ext)
}

/// The deployable modules a request selects (`selectedDeployableModule`, SOL003 V4.5.1),
/// each one of the flavour's (SOL001 V4.5.1 `tosca.nodes.nfv.DeployableModule`). `None`
/// when the request names none.
pub fn requested_modules(flavour: &Flavour, selected: Option<&Value>) -> Result<Option<Vec<String>>, PlanError> {
    let Some(selected) = selected.filter(|selected| !selected.is_null()) else {
        return Ok(None);
    };
    let ids: Option<Vec<String>> =
        selected.as_array().map(|list| list.iter().filter_map(|id| id.as_str().map(str::to_owned)).collect());
    let Some(ids) = ids.filter(|ids| !ids.is_empty() && Some(ids.len()) == selected.as_array().map(Vec::len)) else {
        return Err(PlanError::Invalid("selectedDeployableModule must list at least one deployable module id.".into()));
    };
    if let Some(unknown) = ids.iter().find(|id| !flavour.deployable_modules.iter().any(|module| &module.id == *id)) {
        return Err(PlanError::Invalid(format!(
            "selectedDeployableModule {unknown} is not a deployable module of flavour {}.",
            flavour.id
        )));
    }
    Ok(Some(ids))
}

/// The modules an instance has selected (`instantiatedVnfInfo.selectedDeployableModule`).
pub fn current_modules(instantiated: &InstantiatedVnfInfo) -> Vec<String> {
    instantiated.selected_modules()
}

/// VDUs of the selected modules.
pub fn module_vdus(flavour: &Flavour, modules: &[String]) -> BTreeSet<String> {
    flavour
        .deployable_modules
        .iter()
        .filter(|module| modules.contains(&module.id))
        .flat_map(|module| module.vdus.iter().cloned())
        .collect()
}

/// VDUs that belong to deployable modules, none of them selected, have no VNFCs (IFA011
/// clause 7.1.8.24: a module's VNFCs exist only while it is selected).
pub fn deselect(flavour: &Flavour, counts: &mut BTreeMap<String, u32>, modules: &[String]) {
    let kept = module_vdus(flavour, modules);
    for module in &flavour.deployable_modules {
        for vdu in module.vdus.iter().filter(|vdu| !kept.contains(*vdu)) {
            counts.insert(vdu.clone(), 0);
        }
    }
}

/// Scale levels after a ScaleVnfRequest (`type`, `aspectId`, `numberOfSteps` default 1).
pub fn scaled_levels(
    flavour: &Flavour,
    current: &BTreeMap<String, u32>,
    request: &ScaleVnfRequest,
) -> Result<BTreeMap<String, u32>, PlanError> {
    let aspect = request.aspect_id.as_str();
    let max = flavour.max_scale_level(aspect).ok_or_else(|| PlanError::UnknownAspect(aspect.to_owned()))?;
    let steps = request.number_of_steps.unwrap_or(1);
    let now = i64::from(current.get(aspect).copied().unwrap_or(0));
    let target = match request.kind.as_deref() {
        Some("SCALE_IN") => now - steps,
        _ => now + steps,
    };
    if steps < 1 || target < 0 || target > i64::from(max) {
        return Err(PlanError::StepsOutOfRange { aspect: aspect.to_owned(), steps, target, max });
    }
    let mut levels = current.clone();
    levels.insert(aspect.to_owned(), u32::try_from(target).unwrap_or(0));
    Ok(levels)
}

/// Scale levels after a ScaleVnfToLevelRequest (`instantiationLevelId` or `scaleInfo`).
pub fn levels_to(
    flavour: &Flavour,
    current: &BTreeMap<String, u32>,
    level_id: Option<&str>,
    scale_info: Option<&[ScaleInfo]>,
) -> Result<BTreeMap<String, u32>, PlanError> {
    if let Some(level_id) = level_id {
        return initial_levels(flavour, Some(level_id));
    }
    let Some(scale_info) = scale_info else {
        return Err(PlanError::Invalid("Either instantiationLevelId or scaleInfo is required.".into()));
    };
    let mut levels = current.clone();
    set_levels(flavour, &mut levels, scale_info)?;
    Ok(levels)
}

/// Applies ScaleInfo entries (`aspectId`, `scaleLevel`), each checked against the flavour.
fn set_levels(
    flavour: &Flavour,
    levels: &mut BTreeMap<String, u32>,
    scale_info: &[ScaleInfo],
) -> Result<(), PlanError> {
    for entry in scale_info {
        let aspect = entry.aspect_id.as_str();
        let max = flavour.max_scale_level(aspect).ok_or_else(|| PlanError::UnknownAspect(aspect.to_owned()))?;
        let level = entry.scale_level;
        if level < 0 || level > i64::from(max) {
            return Err(PlanError::LevelOutOfRange { aspect: aspect.to_owned(), level, max });
        }
        levels.insert(aspect.to_owned(), u32::try_from(level).unwrap_or(0));
    }
    Ok(())
}

/// Scale levels recorded in `instantiatedVnfInfo.scaleStatus`.
pub fn current_levels(instantiated: &InstantiatedVnfInfo) -> BTreeMap<String, u32> {
    instantiated
        .scale_status
        .iter()
        .filter_map(|status| Some((status.aspect_id.clone(), u32::try_from(status.scale_level).ok()?)))
        .collect()
}

/// VNFCs per VDU in an `instantiatedVnfInfo`.
pub fn current_counts(instantiated: &InstantiatedVnfInfo) -> BTreeMap<String, u32> {
    let mut counts = BTreeMap::new();
    for vnfc in instantiated.vnfc_resources() {
        *counts.entry(vnfc.vdu_id.clone()).or_insert(0) += 1;
    }
    counts
}

/// VDU counts after moving aspects from `old` to `new` scale levels: each VDU changes by
/// the difference of the aspects' deltas, relative to what it has now (so an
/// instantiation level with explicit VDU counts stays the baseline).
pub fn rescaled_counts(
    flavour: &Flavour,
    counts: &BTreeMap<String, u32>,
    old: &BTreeMap<String, u32>,
    new: &BTreeMap<String, u32>,
) -> BTreeMap<String, u32> {
    flavour
        .vdus
        .iter()
        .map(|vdu| {
            let mut count = i64::from(counts.get(&vdu.id).copied().unwrap_or(0));
            for aspect in &flavour.scaling_aspects {
                let before = i64::from(aspect.added_instances(&vdu.id, old.get(&aspect.id).copied().unwrap_or(0)));
                let after = i64::from(aspect.added_instances(&vdu.id, new.get(&aspect.id).copied().unwrap_or(0)));
                count += after - before;
            }
            (vdu.id.clone(), u32::try_from(count.max(0)).unwrap_or(0))
        })
        .collect()
}

//! The SOL001 clause 6.10 policies of a flavour: scaling aspects and their deltas, initial
//! deltas, instantiation levels, affinity rules.

use std::collections::{BTreeMap, BTreeSet};

use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_yaml_ng::Value;

use super::nodes::{
    AFFINITY_RULE, ANTI_AFFINITY_RULE, INSTANTIATION_LEVELS, SCALING_ASPECTS, Topology, Types, VDU_INITIAL_DELTA,
    VDU_INSTANTIATION_LEVELS, VDU_SCALING_ASPECT_DELTAS,
};
use crate::error::CsarError;
use crate::model::{Flavour, InstantiationLevel, PlacementRule, ScalingAspect};
use crate::yaml::{Entries, as_u32, lenient, read, strings, text};

struct Policy<'a> {
    name: &'a str,
    kind: &'static str,
    properties: Option<&'a Value>,
    targets: Vec<String>,
}

impl Policy<'_> {
    fn props<P: DeserializeOwned + Default>(&self) -> P {
        self.properties.map(|p| read(p.clone())).unwrap_or_default()
    }
}

/// `tosca.policies.nfv.ScalingAspects`.
#[derive(Default, Deserialize)]
#[serde(default)]
struct ScalingAspectsProps {
    aspects: Entries<AspectDef>,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct AspectDef {
    name: Option<Value>,
    description: Option<Value>,
    max_scale_level: Option<Value>,
    step_deltas: Option<Value>,
}

/// `tosca.policies.nfv.VduScalingAspectDeltas`.
#[derive(Default, Deserialize)]
#[serde(default)]
struct AspectDeltasProps {
    aspect: Option<Value>,
    deltas: Entries<Instances>,
}

/// `tosca.datatypes.nfv.VduLevel` and the deltas and levels written like it.
#[derive(Default, Deserialize)]
#[serde(default)]
struct Instances {
    number_of_instances: Option<Value>,
}

/// `tosca.policies.nfv.AffinityRule` / `AntiAffinityRule`.
#[derive(Default, Deserialize)]
#[serde(default)]
struct RuleProps {
    scope: Option<Value>,
}

/// `tosca.policies.nfv.VduInitialDelta`.
#[derive(Default, Deserialize)]
#[serde(default)]
struct InitialDeltaProps {
    #[serde(deserialize_with = "lenient")]
    initial_delta: Instances,
}

/// `tosca.policies.nfv.InstantiationLevels`.
#[derive(Default, Deserialize)]
#[serde(default)]
struct LevelsProps {
    levels: Entries<LevelDef>,
    default_level: Option<Value>,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct LevelDef {
    description: Option<Value>,
    scale_info: Entries<ScaleInfo>,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct ScaleInfo {
    scale_level: Option<Value>,
}

/// `tosca.policies.nfv.VduInstantiationLevels`.
#[derive(Default, Deserialize)]
#[serde(default)]
struct VduLevelsProps {
    levels: Entries<Instances>,
}

pub(super) fn apply_policies(
    flavour: &mut Flavour,
    topology: &Topology<'_>,
    types: &Types<'_>,
) -> Result<(), CsarError> {
    let policies: Vec<Policy<'_>> = topology
        .policies()
        .filter_map(|(name, def)| {
            let kind = types.policy_kind(def.type_name.as_deref()?)?;
            Some(Policy { name, kind, properties: def.properties.as_ref(), targets: strings(&def.targets) })
        })
        .collect();
    let of_kind = |kind: &'static str| policies.iter().filter(move |p| p.kind == kind);

    of_kind(SCALING_ASPECTS).try_for_each(|p| scaling_aspects(flavour, p))?;
    of_kind(VDU_SCALING_ASPECT_DELTAS).try_for_each(|p| aspect_deltas(flavour, p))?;
    of_kind(AFFINITY_RULE).chain(of_kind(ANTI_AFFINITY_RULE)).try_for_each(|p| placement_rule(flavour, topology, p))?;
    of_kind(VDU_INITIAL_DELTA).try_for_each(|p| initial_delta(flavour, p))?;
    if let Some(policy) = of_kind(INSTANTIATION_LEVELS).next() {
        instantiation_levels(flavour, policy)?;
    }
    of_kind(VDU_INSTANTIATION_LEVELS).try_for_each(|p| vdu_instantiation_levels(flavour, p))
}

fn check_vdu_targets(policy: &Policy<'_>, flavour: &Flavour) -> Result<(), CsarError> {
    match policy.targets.iter().find(|t| flavour.vdu(t).is_none()) {
        Some(t) => Err(CsarError::invalid(format!(
            "policy {} of flavour {} targets {t}, which is not a VDU",
            policy.name, flavour.id
        ))),
        None => Ok(()),
    }
}

fn scaling_aspects(flavour: &mut Flavour, policy: &Policy<'_>) -> Result<(), CsarError> {
    let props: ScalingAspectsProps = policy.props();
    for (aspect_id, aspect) in props.aspects.iter() {
        let Some(max_scale_level) = as_u32(&aspect.max_scale_level) else {
            return Err(CsarError::invalid(format!(
                "scaling aspect {aspect_id} of flavour {} lacks max_scale_level",
                flavour.id
            )));
        };
        flavour.scaling_aspects.push(ScalingAspect {
            id: aspect_id.to_owned(),
            name: text(&aspect.name),
            description: text(&aspect.description),
            max_scale_level,
            step_deltas: strings(&aspect.step_deltas),
            vdu_deltas: BTreeMap::new(),
        });
    }
    Ok(())
}

fn aspect_deltas(flavour: &mut Flavour, policy: &Policy<'_>) -> Result<(), CsarError> {
    check_vdu_targets(policy, flavour)?;
    let props: AspectDeltasProps = policy.props();
    let aspect_id = text(&props.aspect).unwrap_or_default();
    let deltas: BTreeMap<String, u32> = props
        .deltas
        .iter()
        .map(|(d, v)| {
            as_u32(&v.number_of_instances).map(|n| (d.to_owned(), n)).ok_or_else(|| {
                CsarError::invalid(format!("policy {}: delta {d} lacks number_of_instances", policy.name))
            })
        })
        .collect::<Result<_, _>>()?;
    let Some(aspect) = flavour.scaling_aspects.iter_mut().find(|a| a.id == aspect_id) else {
        return Err(CsarError::invalid(format!(
            "policy {} refers to unknown scaling aspect {aspect_id:?}",
            policy.name
        )));
    };
    // Tacker only notices a missing delta when scaling (DeltaMissingInVnfd); refuse it at
    // onboarding instead.
    if let Some(d) = aspect.step_deltas.iter().find(|d| !deltas.contains_key(*d)) {
        return Err(CsarError::invalid(format!(
            "policy {} does not define delta {d} used by scaling aspect {aspect_id}",
            policy.name
        )));
    }
    for vdu in &policy.targets {
        aspect.vdu_deltas.entry(vdu.clone()).or_default().extend(deltas.clone());
    }
    Ok(())
}

/// SOL001 6.10.7/6.10.8: the VDUs (directly, or as members of a placement group) whose
/// VNFCs the NFVO is to place together or apart; sent as the GrantRequest's
/// placementConstraints.
fn placement_rule(flavour: &mut Flavour, topology: &Topology<'_>, policy: &Policy<'_>) -> Result<(), CsarError> {
    let mut vdus = Vec::new();
    for target in &policy.targets {
        let members = topology.group_members(target).unwrap_or_else(|| vec![target.clone()]);
        for member in members {
            if flavour.vdu(&member).is_none() {
                return Err(CsarError::invalid(format!(
                    "policy {} of flavour {} targets {member}, which is not a VDU",
                    policy.name, flavour.id
                )));
            }
            if !vdus.contains(&member) {
                vdus.push(member);
            }
        }
    }
    let props: RuleProps = policy.props();
    let Some(scope) = text(&props.scope) else {
        return Err(CsarError::invalid(format!("policy {} of flavour {} lacks its scope", policy.name, flavour.id)));
    };
    flavour.placement_rules.push(PlacementRule {
        id: policy.name.to_owned(),
        anti_affinity: policy.kind == ANTI_AFFINITY_RULE,
        scope,
        vdus,
    });
    Ok(())
}

fn initial_delta(flavour: &mut Flavour, policy: &Policy<'_>) -> Result<(), CsarError> {
    check_vdu_targets(policy, flavour)?;
    let props: InitialDeltaProps = policy.props();
    let Some(n) = as_u32(&props.initial_delta.number_of_instances) else {
        return Err(CsarError::invalid(format!("policy {} lacks initial_delta.number_of_instances", policy.name)));
    };
    for vdu in flavour.vdus.iter_mut().filter(|v| policy.targets.contains(&v.id)) {
        vdu.initial_delta = Some(n);
    }
    Ok(())
}

fn instantiation_levels(flavour: &mut Flavour, policy: &Policy<'_>) -> Result<(), CsarError> {
    let props: LevelsProps = policy.props();
    for (level_id, level) in props.levels.iter() {
        let mut scale_info = BTreeMap::new();
        for (aspect_id, info) in level.scale_info.iter() {
            let scale_level = as_u32(&info.scale_level).unwrap_or(0);
            let Some(aspect) = flavour.scaling_aspect(aspect_id) else {
                return Err(CsarError::invalid(format!(
                    "instantiation level {level_id} refers to unknown scaling aspect {aspect_id}"
                )));
            };
            if scale_level > aspect.max_scale_level {
                return Err(CsarError::invalid(format!(
                    "instantiation level {level_id}: scale_level {scale_level} of aspect {aspect_id} exceeds max_scale_level {}",
                    aspect.max_scale_level
                )));
            }
            scale_info.insert(aspect_id.to_owned(), scale_level);
        }
        flavour.instantiation_levels.push(InstantiationLevel {
            id: level_id.to_owned(),
            description: text(&level.description),
            scale_info,
            vdu_instances: BTreeMap::new(),
        });
    }
    flavour.default_level = text(&props.default_level);
    if let Some(default) = &flavour.default_level
        && flavour.instantiation_level(default).is_none()
    {
        return Err(CsarError::invalid(format!(
            "default_level {default} of flavour {} is not among the defined levels {}",
            flavour.id,
            level_ids(flavour)
        )));
    }
    Ok(())
}

fn vdu_instantiation_levels(flavour: &mut Flavour, policy: &Policy<'_>) -> Result<(), CsarError> {
    check_vdu_targets(policy, flavour)?;
    if flavour.instantiation_levels.is_empty() {
        return Err(CsarError::invalid(format!(
            "policy {} needs a tosca.policies.nfv.InstantiationLevels policy in flavour {}",
            policy.name, flavour.id
        )));
    }
    let props: VduLevelsProps = policy.props();
    let mut unknown = BTreeSet::new();
    for (level_id, level) in props.levels.iter() {
        let n = as_u32(&level.number_of_instances).ok_or_else(|| {
            CsarError::invalid(format!("policy {}: level {level_id} lacks number_of_instances", policy.name))
        })?;
        match flavour.instantiation_levels.iter_mut().find(|l| l.id == level_id) {
            Some(l) => policy.targets.iter().for_each(|vdu| {
                l.vdu_instances.insert(vdu.clone(), n);
            }),
            None => {
                unknown.insert(level_id);
            }
        }
    }
    // Wording follows Tacker's "Level(s) X not found in defined levels Y".
    if !unknown.is_empty() {
        return Err(CsarError::invalid(format!(
            "policy {}: level(s) {} not found in defined levels {}",
            policy.name,
            unknown.into_iter().collect::<Vec<_>>().join(","),
            level_ids(flavour)
        )));
    }
    Ok(())
}

fn level_ids(flavour: &Flavour) -> String {
    flavour.instantiation_levels.iter().map(|l| l.id.as_str()).collect::<Vec<_>>().join(",")
}

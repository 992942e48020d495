//! Node templates with their SOL001 normative kind, and the type definitions behind them
//! (`derived_from` chains, property defaults).

use std::collections::{HashMap, HashSet};

use serde::de::DeserializeOwned;
use serde_yaml_ng::Value;

use super::tosca::{NodeTemplate, PolicyTemplate, ServiceTemplate, TopologyTemplate, TypeDef, is_static, properties};
use crate::loader::Doc;
use crate::yaml::strings;

pub(crate) const VNF: &str = "tosca.nodes.nfv.VNF";
pub(crate) const VDU_COMPUTE: &str = "tosca.nodes.nfv.Vdu.Compute";
pub(crate) const STORAGE_TYPES: [&str; 3] = [
    "tosca.nodes.nfv.Vdu.VirtualBlockStorage",
    "tosca.nodes.nfv.Vdu.VirtualObjectStorage",
    "tosca.nodes.nfv.Vdu.VirtualFileStorage",
];
pub(crate) const VNF_VIRTUAL_LINK: &str = "tosca.nodes.nfv.VnfVirtualLink";
pub(crate) const VDU_CP: &str = "tosca.nodes.nfv.VduCp";
pub(crate) const VNF_EXT_CP: &str = "tosca.nodes.nfv.VnfExtCp";
/// SOL001 V4.3.1: a CP giving access to a set of VNFC instances (a Kubernetes Service).
pub(crate) const VIRTUAL_CP: &str = "tosca.nodes.nfv.VirtualCp";
/// SOL001 V3.5.1: a virtual IP address shared by VduCps (properties `vip_function`,
/// `dedicated_ip_address`; requirements `virtual_link` (VipVirtualLinksTo, exactly one) and
/// `target` (DependsOn a VduCp, one or more)).
pub(crate) const VIP_CP: &str = "tosca.nodes.nfv.VipCp";
/// SOL001 V4.5.1: a set of optional VDUs (properties `name`, `description`; requirement
/// `member`, one per VDU).
pub(crate) const DEPLOYABLE_MODULE: &str = "tosca.nodes.nfv.DeployableModule";
const NODE_TYPES: [&str; 11] = [
    VNF,
    VDU_COMPUTE,
    STORAGE_TYPES[0],
    STORAGE_TYPES[1],
    STORAGE_TYPES[2],
    VNF_VIRTUAL_LINK,
    VDU_CP,
    VNF_EXT_CP,
    VIRTUAL_CP,
    VIP_CP,
    DEPLOYABLE_MODULE,
];

pub(crate) const SCALING_ASPECTS: &str = "tosca.policies.nfv.ScalingAspects";
pub(crate) const VDU_INITIAL_DELTA: &str = "tosca.policies.nfv.VduInitialDelta";
pub(crate) const VDU_SCALING_ASPECT_DELTAS: &str = "tosca.policies.nfv.VduScalingAspectDeltas";
pub(crate) const INSTANTIATION_LEVELS: &str = "tosca.policies.nfv.InstantiationLevels";
pub(crate) const VDU_INSTANTIATION_LEVELS: &str = "tosca.policies.nfv.VduInstantiationLevels";
pub(crate) const AFFINITY_RULE: &str = "tosca.policies.nfv.AffinityRule";
pub(crate) const ANTI_AFFINITY_RULE: &str = "tosca.policies.nfv.AntiAffinityRule";
const POLICY_TYPES: [&str; 7] = [
    SCALING_ASPECTS,
    VDU_INITIAL_DELTA,
    VDU_SCALING_ASPECT_DELTAS,
    INSTANTIATION_LEVELS,
    VDU_INSTANTIATION_LEVELS,
    AFFINITY_RULE,
    ANTI_AFFINITY_RULE,
];

/// A `derived_from` cycle must not hang onboarding.
const MAX_TYPE_DEPTH: usize = 64;

/// Node and policy type definitions found in the package, first definition winning.
pub(crate) struct Types<'a> {
    nodes: HashMap<&'a str, &'a TypeDef>,
    policies: HashMap<&'a str, &'a TypeDef>,
}

impl<'a> Types<'a> {
    pub(crate) fn new(templates: &'a [ServiceTemplate]) -> Self {
        let mut nodes = HashMap::new();
        let mut policies = HashMap::new();
        for template in templates {
            for (name, def) in template.node_types.iter() {
                nodes.entry(name).or_insert(def);
            }
            for (name, def) in template.policy_types.iter() {
                policies.entry(name).or_insert(def);
            }
        }
        Types { nodes, policies }
    }

    /// The SOL001 normative type `type_name` is (or derives from), if any in `known`.
    fn normative(
        defs: &HashMap<&'a str, &'a TypeDef>,
        type_name: &str,
        known: &[&'static str],
    ) -> Option<&'static str> {
        let mut current = type_name;
        for _ in 0..MAX_TYPE_DEPTH {
            if let Some(k) = known.iter().find(|k| **k == current) {
                return Some(k);
            }
            current = defs.get(current)?.derived_from.as_deref()?;
        }
        None
    }

    fn node_kind(&self, type_name: &str) -> Option<&'static str> {
        Self::normative(&self.nodes, type_name, &NODE_TYPES)
    }

    pub(crate) fn policy_kind(&self, type_name: &str) -> Option<&'static str> {
        Self::normative(&self.policies, type_name, &POLICY_TYPES)
    }

    /// The node type `type_name` and its ancestors, nearest first.
    fn lineage(&self, type_name: &str) -> Vec<&'a TypeDef> {
        let mut out = Vec::new();
        let mut current = Some(type_name);
        while let Some(name) = current
            && out.len() < MAX_TYPE_DEPTH
        {
            let Some(def) = self.nodes.get(name) else { break };
            out.push(*def);
            current = def.derived_from.as_deref();
        }
        out
    }
}

#[derive(Clone, Copy)]
pub(crate) struct Node<'a> {
    pub name: &'a str,
    pub def: &'a NodeTemplate,
    pub type_name: &'a str,
    pub kind: Option<&'static str>,
    pub doc: &'a Doc,
}

impl<'a> Node<'a> {
    /// The node's own static property values.
    fn own(&self) -> Vec<(String, Value)> {
        self.def.properties.iter().filter(|(_, v)| is_static(v)).map(|(k, v)| (k.to_owned(), v.clone())).collect()
    }

    /// The node's own static properties as `P`.
    pub(crate) fn own_props<P: DeserializeOwned + Default>(&self) -> P {
        properties(self.own())
    }

    /// The static properties as `P`: the node's own value, else the default of the nearest
    /// type defining one (functions such as `get_input` do not count as a value).
    pub(crate) fn props<P: DeserializeOwned + Default>(&self, types: &Types<'a>) -> P {
        let mut merged = self.own();
        let mut decided: HashSet<String> = merged.iter().map(|(k, _)| k.clone()).collect();
        for def in types.lineage(self.type_name) {
            for (name, prop) in def.properties.iter() {
                let Some(default) = &prop.default else { continue };
                if decided.insert(name.to_owned()) && is_static(default) {
                    merged.push((name.to_owned(), default.clone()));
                }
            }
        }
        properties(merged)
    }

    /// Targets of requirement `req`.
    pub(crate) fn requirement(&self, req: &str) -> Vec<String> {
        self.def
            .requirements
            .iter()
            .flat_map(|item| item.iter())
            .filter(|(k, _)| *k == req)
            .filter_map(|(_, target)| target.0.clone())
            .collect()
    }

    pub(crate) fn first_requirement(&self, req: &str) -> Option<String> {
        self.requirement(req).into_iter().next()
    }
}

/// One topology template of the VNFD, with the file holding it.
#[derive(Clone, Copy)]
pub(crate) struct Topology<'a> {
    pub doc: &'a Doc,
    pub tt: &'a TopologyTemplate,
}

impl<'a> Topology<'a> {
    pub(crate) fn nodes(&self, types: &Types<'a>) -> Vec<Node<'a>> {
        self.tt
            .node_templates
            .iter()
            .filter_map(|(name, def)| {
                let type_name = def.type_name.as_deref()?;
                Some(Node { name, def, type_name, kind: types.node_kind(type_name), doc: self.doc })
            })
            .collect()
    }

    pub(crate) fn policies(&self) -> impl Iterator<Item = (&'a str, &'a PolicyTemplate)> {
        self.tt.policies.0.iter().map(|(k, v)| (k.as_str(), v))
    }

    /// The members of group `name` (`tosca.groups.nfv.PlacementGroup`), if it is one.
    pub(crate) fn group_members(&self, name: &str) -> Option<Vec<String>> {
        self.tt.groups.find(name).map(|g| strings(&g.members))
    }

    /// Node templates exposed through `substitution_mappings.requirements`, with the
    /// requirement name.
    pub(crate) fn external_requirements(&self) -> HashMap<String, String> {
        let mut out = HashMap::new();
        let Some(sm) = &self.tt.substitution_mappings else { return out };
        for (req_name, target) in &sm.requirements.0 {
            if let Some(node) = &target.0 {
                out.entry(node.clone()).or_insert_with(|| req_name.clone());
            }
        }
        out
    }
}

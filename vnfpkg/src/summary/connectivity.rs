//! Internal virtual links and connection points: VduCp, VnfExtCp, VirtualCp and VipCp nodes.

use std::collections::HashMap;

use super::nodes::{Node, Types, VDU_CP, VIP_CP, VIRTUAL_CP, VNF_EXT_CP, VNF_VIRTUAL_LINK};
use super::properties::{CpProps, VirtualLinkProps};
use crate::error::CsarError;
use crate::model::{Cp, CpKind, L3ProtocolData, Vdu, VipCpd, VirtualCpd, VirtualLink};
use crate::yaml::{as_u32, strings, text};

pub(super) fn virtual_links(nodes: &[Node<'_>], types: &Types<'_>) -> Vec<VirtualLink> {
    nodes
        .iter()
        .filter(|n| n.kind == Some(VNF_VIRTUAL_LINK))
        .map(|node| {
            let props: VirtualLinkProps = node.props(types);
            VirtualLink {
                id: node.name.to_owned(),
                description: text(&props.description),
                layer_protocols: strings(&props.connectivity_type.layer_protocols),
                l3_protocol_data: props
                    .vl_profile
                    .virtual_link_protocol_data
                    .0
                    .iter()
                    .filter_map(|d| d.l3_protocol_data.as_ref())
                    .map(|l3| L3ProtocolData { ip_version: text(&l3.ip_version), cidr: text(&l3.cidr) })
                    .collect(),
            }
        })
        .collect()
}

/// What the CPs of one flavour are checked against.
pub(super) struct Scope<'s> {
    pub flavour: &'s str,
    pub vdus: &'s [Vdu],
    pub virtual_links: &'s [VirtualLink],
}

impl Scope<'_> {
    fn has_vdu(&self, id: &str) -> bool {
        self.vdus.iter().any(|d| d.id == id)
    }

    fn has_link(&self, id: &str) -> bool {
        self.virtual_links.iter().any(|l| l.id == id)
    }
}

/// VduCp and VnfExtCp nodes; `external` maps node names exposed by `substitution_mappings`
/// to their requirement.
pub(super) fn cps(
    nodes: &[Node<'_>],
    types: &Types<'_>,
    scope: &Scope<'_>,
    external: &HashMap<String, String>,
) -> Result<Vec<Cp>, CsarError> {
    let id = scope.flavour;
    let mut cps = Vec::new();
    for node in nodes.iter().filter(|n| n.kind == Some(VDU_CP) || n.kind == Some(VNF_EXT_CP)) {
        let (kind, vdu, virtual_link) = if node.kind == Some(VDU_CP) {
            (CpKind::VduCp, node.first_requirement("virtual_binding"), node.first_requirement("virtual_link"))
        } else {
            (CpKind::VnfExtCp, None, node.first_requirement("internal_virtual_link"))
        };
        if let Some(v) = vdu.as_deref().filter(|v| !scope.has_vdu(v)) {
            return Err(CsarError::invalid(format!("CP {} of flavour {id} is bound to unknown VDU {v}", node.name)));
        }
        if let Some(vl) = virtual_link.as_deref().filter(|vl| !scope.has_link(vl)) {
            return Err(CsarError::invalid(format!(
                "CP {} of flavour {id} links to unknown virtual link {vl}",
                node.name
            )));
        }
        let props: CpProps = node.props(types);
        let external_requirement = external.get(node.name).cloned();
        cps.push(Cp {
            id: node.name.to_owned(),
            kind,
            vdu,
            virtual_link,
            layer_protocols: strings(&props.layer_protocols),
            order: as_u32(&props.order),
            external: external_requirement.is_some() || kind == CpKind::VnfExtCp,
            external_requirement,
        });
    }
    Ok(cps)
}

pub(super) fn virtual_cps(nodes: &[Node<'_>], scope: &Scope<'_>) -> Result<Vec<VirtualCpd>, CsarError> {
    let mut virtual_cps = Vec::new();
    for node in nodes.iter().filter(|n| n.kind == Some(VIRTUAL_CP)) {
        let targets = node.requirement("target");
        if let Some(v) = targets.iter().find(|v| !scope.has_vdu(v)) {
            return Err(CsarError::invalid(format!(
                "VirtualCp {} of flavour {} targets unknown VDU {v}",
                node.name, scope.flavour
            )));
        }
        virtual_cps.push(VirtualCpd { id: node.name.to_owned(), vdus: targets });
    }
    Ok(virtual_cps)
}

pub(super) fn vip_cps(
    nodes: &[Node<'_>],
    types: &Types<'_>,
    scope: &Scope<'_>,
    cps: &[Cp],
) -> Result<Vec<VipCpd>, CsarError> {
    let mut vip_cps = Vec::new();
    for node in nodes.iter().filter(|n| n.kind == Some(VIP_CP)) {
        vip_cps.push(vip_cp(node, types, scope, cps)?);
    }
    Ok(vip_cps)
}

fn vip_cp(node: &Node<'_>, types: &Types<'_>, scope: &Scope<'_>, cps: &[Cp]) -> Result<VipCpd, CsarError> {
    let fail =
        |what: String| Err(CsarError::invalid(format!("VipCp {} of flavour {} {what}", node.name, scope.flavour)));
    let props: CpProps = node.props(types);
    let Some(vip_function) = text(&props.vip_function) else { return fail("lacks vip_function".into()) };
    if !["high_availability", "load_balance"].contains(&vip_function.as_str()) {
        return Err(CsarError::invalid(format!(
            "VipCp {} of flavour {}: vip_function {vip_function} is neither high_availability nor load_balance",
            node.name, scope.flavour
        )));
    }
    let Some(virtual_link) = node.first_requirement("virtual_link") else { return fail("has no virtual_link".into()) };
    if !scope.has_link(&virtual_link) {
        return fail(format!("links to unknown virtual link {virtual_link}"));
    }
    let targets = node.requirement("target");
    if targets.is_empty() {
        return fail("has no target VduCp".into());
    }
    if let Some(t) = targets.iter().find(|t| !cps.iter().any(|c| &c.id == *t && c.kind == CpKind::VduCp)) {
        return fail(format!("targets unknown VduCp {t}"));
    }
    Ok(VipCpd {
        id: node.name.to_owned(),
        vip_function,
        virtual_link,
        targets,
        layer_protocols: strings(&props.layer_protocols),
        dedicated_ip_address: props
            .dedicated_ip_address
            .as_ref()
            .and_then(serde_yaml_ng::Value::as_bool)
            .unwrap_or(true),
    })
}

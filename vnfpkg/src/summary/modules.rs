//! Deployable modules (`tosca.nodes.nfv.DeployableModule`, SOL001 V4.5.1): sets of optional VDUs.

use super::nodes::{DEPLOYABLE_MODULE, Node, Types};
use super::properties::NamedProps;
use crate::error::CsarError;
use crate::model::{DeployableModule, Vdu};
use crate::yaml::text;

pub(super) fn deployable_modules(
    nodes: &[Node<'_>],
    flavour: &str,
    types: &Types<'_>,
    vdus: &[Vdu],
) -> Result<Vec<DeployableModule>, CsarError> {
    let mut modules = Vec::new();
    for node in nodes.iter().filter(|n| n.kind == Some(DEPLOYABLE_MODULE)) {
        let members = node.requirement("member");
        if members.is_empty() {
            return Err(CsarError::invalid(format!(
                "DeployableModule {} of flavour {flavour} has no member VDU",
                node.name
            )));
        }
        if let Some(v) = members.iter().find(|v| !vdus.iter().any(|d| &d.id == *v)) {
            return Err(CsarError::invalid(format!(
                "DeployableModule {} of flavour {flavour} names unknown VDU {v}",
                node.name
            )));
        }
        let props: NamedProps = node.props(types);
        modules.push(DeployableModule {
            id: node.name.to_owned(),
            name: text(&props.name).unwrap_or_else(|| node.name.to_owned()),
            description: text(&props.description),
            vdus: members,
        });
    }
    Ok(modules)
}

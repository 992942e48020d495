//! The management scripts of the VNF node's `Vnflcm` interface (SOL001 clause 6.7).

use std::collections::BTreeMap;

use super::nodes::{Node, VNF};
use crate::error::CsarError;
use crate::yaml::text;

/// The only artifact kind Tacker and solgate run.
const PYTHON: &str = "tosca.artifacts.Implementation.Python";

/// Operation → its Python artifact's file (Tacker's `get_interface_script`). An operation
/// without `implementation` (`instantiate: []`) has no script; one naming an artifact the
/// node lacks, or one of another type than `tosca.artifacts.Implementation.Python`, is a
/// broken package.
pub(super) fn lcm_scripts(nodes: &[Node<'_>], flavour: &str) -> Result<BTreeMap<String, String>, CsarError> {
    let mut scripts = BTreeMap::new();
    for node in nodes.iter().filter(|n| n.kind == Some(VNF)) {
        for (operation, declared) in node.def.interfaces.vnflcm.iter() {
            let Some(artifact) = declared.implementation.as_deref() else { continue };
            let Some(definition) = node.def.artifacts.find(artifact) else {
                return Err(CsarError::invalid(format!(
                    "flavour {flavour}: Vnflcm operation {operation} names artifact {artifact}, which node {} does not define",
                    node.name
                )));
            };
            let detail = definition.detail();
            let kind = detail.and_then(|d| d.type_name.as_deref()).unwrap_or_default();
            if kind != PYTHON {
                return Err(CsarError::invalid(format!(
                    "flavour {flavour}: artifact {artifact} of Vnflcm operation {operation} is of type {kind:?}; \
                     only tosca.artifacts.Implementation.Python scripts run"
                )));
            }
            let Some(file) = detail.and_then(|d| text(&d.file)) else {
                return Err(CsarError::invalid(format!("flavour {flavour}: artifact {artifact} has no file")));
            };
            scripts.insert(operation.to_owned(), file);
        }
    }
    Ok(scripts)
}

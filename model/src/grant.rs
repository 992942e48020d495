//! The SOL003 Grant interface's documents (v3.3.1 clause 9.5.2; v2.6.1 for VNF LCM v1):
//! the GrantRequest a VNFM sends its NFVO and the Grant it answers, typed where solgate
//! reads or writes them. Members solgate only passes on are kept whole (`extra`), so a
//! stored Grant keeps everything the NFVO sent.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::operation::LcmOperation;

/// SOL003 clause 9.5.2.2 GrantRequest.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GrantRequest {
    pub vnf_instance_id: String,
    pub vnf_lcm_op_occ_id: String,
    pub vnfd_id: String,
    pub operation: LcmOperation,
    /// Read as `false`, and `_links` as empty, when a stored request lacks them (one kept
    /// while an asynchronous grant is decided may come from an older solgate).
    #[serde(default)]
    pub is_automatic_invocation: bool,
    #[serde(rename = "_links", default)]
    pub links: GrantRequestLinks,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flavour_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instantiation_level_id: Option<String>,
    /// The VNFD the instance changes to (CHANGE_VNFPKG).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dst_vnfd_id: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub add_resources: Vec<ResourceDefinition>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub remove_resources: Vec<ResourceDefinition>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub update_resources: Vec<ResourceDefinition>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub placement_constraints: Vec<PlacementConstraint>,
    /// The operation request's `additionalParams` (free-form), sent as the client gave them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub additional_params: Option<Map<String, Value>>,
}

impl GrantRequest {
    /// Its resource definitions of one kind of change.
    pub fn resources(&self, change: Change) -> &[ResourceDefinition] {
        match change {
            Change::Add => &self.add_resources,
            Change::Remove => &self.remove_resources,
            Change::Update => &self.update_resources,
        }
    }
}

/// The three lists of a GrantRequest and of a Grant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    Add,
    Remove,
    Update,
}

impl Change {
    pub const ALL: [Change; 3] = [Change::Add, Change::Remove, Change::Update];

    /// The member's name (in the GrantRequest and the Grant alike).
    pub fn key(self) -> &'static str {
        match self {
            Change::Add => "addResources",
            Change::Remove => "removeResources",
            Change::Update => "updateResources",
        }
    }
}

/// SOL003 clause 9.5.2.2 GrantRequest `_links`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GrantRequestLinks {
    pub vnf_lcm_op_occ: Link,
    pub vnf_instance: Link,
}

/// SOL013 Link.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Link {
    pub href: String,
}

/// SOL003 clause 9.5.3.2 ResourceDefinition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceDefinition {
    pub id: String,
    #[serde(rename = "type")]
    pub kind: ResourceKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vdu_id: Option<String>,
    pub resource_template_id: String,
    /// The existing resource (removed or updated ones).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource: Option<Handle>,
}

impl ResourceDefinition {
    /// A new resource of a VDU.
    pub fn of_vdu(id: String, kind: ResourceKind, vdu: &str, template: &str) -> Self {
        Self { id, kind, vdu_id: Some(vdu.to_owned()), resource_template_id: template.to_owned(), resource: None }
    }

    pub fn with_resource(mut self, resource: Option<Handle>) -> Self {
        self.resource = resource;
        self
    }
}

/// SOL003 clause 9.5.4.3 ResourceDefinition `type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum ResourceKind {
    Compute,
    Vl,
    Storage,
    Linkport,
}

/// SOL003 ResourceHandle, as the instance records it: the members solgate reads, the rest
/// passed on whole.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Handle {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vim_connection_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_id: Option<String>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// SOL003 clause 9.5.3.6 PlacementConstraint.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PlacementConstraint {
    pub affinity_or_anti_affinity: Affinity,
    pub scope: String,
    pub resource: Vec<ConstraintResourceRef>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Affinity {
    Affinity,
    AntiAffinity,
}

/// SOL003 clause 9.5.3.7 ConstraintResourceRef.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ConstraintResourceRef {
    pub id_type: IdType,
    /// Sent as the instance records it (`null` when a VNFC's handle has none).
    pub resource_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vim_connection_id: Option<String>,
}

/// SOL003 IdentifierInGrant kinds: a ResourceDefinition of this request or a resource the
/// VIM manages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum IdType {
    Grant,
    ResMgmt,
}

/// SOL003 clause 9.5.2.3 Grant. Optional lists stay absent when the NFVO left them out.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Grant {
    /// Required; an NFVO's answer without one is refused by the client.
    #[serde(default)]
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vnf_instance_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vnf_lcm_op_occ_id: Option<String>,
    /// VimConnectionInfo: a map keyed by id (v2) or an array (v1); an NFVO may send either.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vim_connection_info: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zones: Option<Vec<ZoneInfo>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub add_resources: Option<Vec<GrantInfo>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remove_resources: Option<Vec<GrantInfo>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub update_resources: Option<Vec<GrantInfo>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vim_assets: Option<VimAssets>,
    /// ExtVirtualLinkData[], handed to the driver as they are.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ext_virtual_links: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ext_managed_virtual_links: Option<Value>,
    /// SOL003 V4.3.1: CISM clusters and registries (container-based VNFs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cir_connection_info: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mciop_repository_info: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub additional_params: Option<GrantParams>,
    /// solgate's bookkeeping, stored with the Grant (under solgate-core's `PRIVATE_KEY`).
    #[serde(rename = "_solgate", default, skip_serializing_if = "Option::is_none")]
    pub private: Option<GrantPrivate>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl Grant {
    /// Its GrantInfo of one kind of change (none when the list is absent).
    pub fn resources(&self, change: Change) -> &[GrantInfo] {
        let list = match change {
            Change::Add => &self.add_resources,
            Change::Remove => &self.remove_resources,
            Change::Update => &self.update_resources,
        };
        list.as_deref().unwrap_or_default()
    }

    /// The VDU each COMPUTE resource it was asked for belongs to, as recorded with it.
    pub fn compute_vdu(&self, resource_definition_id: &str) -> Option<&str> {
        self.private.as_ref()?.compute_vdus.get(resource_definition_id)?.as_str()
    }

    /// The recorded (granted COMPUTE id, VDU) pairs, in the order of the request.
    pub fn compute_vdus(&self) -> impl Iterator<Item = (&str, &str)> {
        self.private
            .iter()
            .flat_map(|private| private.compute_vdus.iter())
            .filter_map(|(id, vdu)| Some((id.as_str(), vdu.as_str()?)))
    }
}

/// The private part of a stored Grant.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GrantPrivate {
    /// Requested COMPUTE ResourceDefinition id → its VDU, in the request's order: applying
    /// the Grant later (a retry, a rollback) needs it and the request is not kept.
    #[serde(default)]
    pub compute_vdus: Map<String, Value>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// SOL003 clause 9.5.3.3 GrantInfo.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GrantInfo {
    #[serde(default)]
    pub resource_definition_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vim_connection_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zone_id: Option<String>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl GrantInfo {
    /// A resource granted as asked, by its definition id (Tacker's local NFVO).
    pub fn granted(resource_definition_id: &str) -> Self {
        Self { resource_definition_id: resource_definition_id.to_owned(), ..Self::default() }
    }
}

/// SOL003 clause 9.5.3.4 ZoneInfo.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ZoneInfo {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zone_id: Option<String>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// SOL003 clause 9.5.3.5 VimAssets.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VimAssets {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compute_resource_flavours: Option<Vec<VimComputeResourceFlavour>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub software_images: Option<Vec<VimSoftwareImage>>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// SOL003 clause 9.5.3.8 VimComputeResourceFlavour.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VimComputeResourceFlavour {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vnfd_virtual_compute_desc_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vim_flavour_id: Option<String>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// SOL003 clause 9.5.3.9 VimSoftwareImage.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VimSoftwareImage {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vnfd_software_image_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vim_software_image_id: Option<String>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A Grant's `additionalParams` (free-form): `nfv` is what Tacker's user data reads.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GrantParams {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nfv: Option<Value>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_grant_keeps_what_the_nfvo_sent() {
        let sent = json!({
            "id": "g", "vnfInstanceId": "i", "vnfLcmOpOccId": "o",
            "vimConnectionInfo": {"vim1": {"vimType": "kubernetes"}},
            "zones": [{"id": "z1", "zoneId": "az-1", "vimConnectionId": "vim1"}],
            "addResources": [{"resourceDefinitionId": "c-1", "zoneId": "z1", "reservationId": "r"}],
            "vimAssets": {"softwareImages": [{"vnfdSoftwareImageId": "VDU1", "vimSoftwareImageId": "i-1"}],
                "snapshotResources": []},
            "additionalParams": {"nfv": {"CP": {}}, "other": 1},
            "_links": {"self": {"href": "x"}},
            "_solgate": {"computeVdus": {"c-1": "VDU1"}},
        });
        let grant: Grant = serde_json::from_value(sent.clone()).unwrap();
        assert_eq!(grant.compute_vdu("c-1"), Some("VDU1"));
        assert_eq!(grant.resources(Change::Add)[0].zone_id.as_deref(), Some("z1"));
        assert!(grant.resources(Change::Remove).is_empty());
        assert_eq!(serde_json::to_value(&grant).unwrap(), sent);
    }

    #[test]
    fn a_grant_request_leaves_out_what_it_has_not() {
        let request = GrantRequest {
            vnf_instance_id: "i".into(),
            vnf_lcm_op_occ_id: "o".into(),
            vnfd_id: "d".into(),
            operation: LcmOperation::Instantiate,
            is_automatic_invocation: false,
            links: GrantRequestLinks {
                vnf_lcm_op_occ: Link { href: "o".into() },
                vnf_instance: Link { href: "i".into() },
            },
            flavour_id: None,
            instantiation_level_id: None,
            dst_vnfd_id: None,
            add_resources: vec![ResourceDefinition::of_vdu("c".into(), ResourceKind::Compute, "VDU1", "VDU1")],
            remove_resources: Vec::new(),
            update_resources: Vec::new(),
            placement_constraints: Vec::new(),
            additional_params: None,
        };
        let sent = serde_json::to_value(&request).unwrap();
        assert_eq!(
            sent,
            json!({"vnfInstanceId": "i", "vnfLcmOpOccId": "o", "vnfdId": "d", "operation": "INSTANTIATE",
                "isAutomaticInvocation": false, "_links": {"vnfLcmOpOcc": {"href": "o"}, "vnfInstance": {"href": "i"}},
                "addResources": [{"id": "c", "type": "COMPUTE", "vduId": "VDU1", "resourceTemplateId": "VDU1"}]})
        );
        assert_eq!(serde_json::from_value::<GrantRequest>(sent).unwrap(), request);
    }
}

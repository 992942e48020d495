//! VnfInstance documents: `instantiatedVnfInfo` from a plan and an inventory, the
//! inventory back from a document, and the resource changes between two inventories
//! (VnfLcmOpOcc `resourceChanges`, notifications' `affected*`). The documents are read
//! and built as the typed records of `solgate_model::vnf_instance`; the JSON values the
//! conductor holds are (de)serialised here, at the boundary.

mod changes;
mod ext_cps;

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;
use solgate_model::infra::{DeploymentPlan, Inventory, VnfcResource};
use solgate_model::lcm_request::{ExtManagedVirtualLinkData, ExtVirtualLinkData, ScaleInfo, present};
use solgate_model::vnf_instance::{
    ExtManagedVirtualLinkInfo, ExtVirtualLinkInfo, InstancePrivate, InstantiatedVnfInfo, VnfExtCpInfo, VnfcCpInfo,
    VnfcInfo,
};
use solgate_vnfpkg::Vnfd;

pub use changes::{affected_vip_cps, affected_virtual_cps, resource_changes};

/// The members of an instance document its inventory is read from.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct Recorded {
    #[serde(default)]
    instantiated_vnf_info: Option<InstantiatedVnfInfo>,
    #[serde(rename = "_solgate", default)]
    private: Option<InstancePrivate>,
}

/// The inventory an instance document records (empty when not instantiated).
pub fn inventory_of(instance: &Value) -> Inventory {
    let recorded = Recorded::deserialize(instance).unwrap_or_default();
    let info = recorded.instantiated_vnf_info.unwrap_or_default();
    let private = recorded.private.unwrap_or_default();
    Inventory {
        vnfc_resources: info.vnfc_resource_info.unwrap_or_default(),
        virtual_links: info.vnf_virtual_link_resource_info.unwrap_or_default(),
        virtual_storages: info.virtual_storage_resource_info.unwrap_or_default(),
        vim_state: private.vim_state.unwrap_or_default(),
        vnf_state: info.vnf_state.unwrap_or_else(|| "STARTED".to_owned()),
        mcio_info: info.mcio_info,
        virtual_cp_info: info.virtual_cp_info,
        vip_cp_info: info.vip_cp_info,
        ext_link_ports: private.ext_link_ports.unwrap_or_default(),
    }
}

/// The members of the previous `instantiatedVnfInfo` an operation keeps.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct Kept {
    #[serde(default, deserialize_with = "present")]
    localization_language: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    metadata: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    selected_deployable_module: Option<Value>,
}

/// `instantiatedVnfInfo` (SOL003 v3.3.1 shape, shared with v2.6.1 for these members), as
/// the document's JSON.
pub fn instantiated_info(vnfd: &Vnfd, plan: &DeploymentPlan, inventory: &Inventory, previous: &Value) -> Value {
    let kept = Kept::deserialize(previous).unwrap_or_default();
    serde_json::to_value(instantiated_vnf_info(vnfd, plan, inventory, kept)).unwrap_or_default()
}

fn instantiated_vnf_info(vnfd: &Vnfd, plan: &DeploymentPlan, inventory: &Inventory, kept: Kept) -> InstantiatedVnfInfo {
    let flavour = vnfd.flavour(&plan.flavour_id);
    let scale_status: Vec<ScaleInfo> = plan
        .scale_levels
        .iter()
        .map(|(aspect, level)| ScaleInfo {
            aspect_id: aspect.clone(),
            scale_level: i64::from(*level),
            ..Default::default()
        })
        .collect();
    let max_levels: Vec<ScaleInfo> = flavour
        .into_iter()
        .flat_map(|flavour| &flavour.scaling_aspects)
        .map(|aspect| ScaleInfo {
            aspect_id: aspect.id.clone(),
            scale_level: i64::from(aspect.max_scale_level),
            ..Default::default()
        })
        .collect();
    let links: Vec<ExtVirtualLinkData> = serde_json::from_value(plan.ext_virtual_links.clone()).unwrap_or_default();
    let managed: Vec<ExtManagedVirtualLinkData> =
        serde_json::from_value(plan.ext_managed_virtual_links.clone()).unwrap_or_default();
    let ports = ext_cps::driver_ports(inventory);
    let ext_cp_info = flavour
        .map(|flavour| ext_cps::ext_cp_info(flavour, &plan.flavour_id, &links, inventory, &ports))
        .unwrap_or_default();
    let ext_virtual_link_info = links
        .iter()
        .map(|link| ExtVirtualLinkInfo {
            id: link.id.clone(),
            resource_handle: link.resource.clone(),
            current_vnf_ext_cp_data: link.ext_cps.clone(),
            ext_link_ports: ext_cps::ext_link_ports(link, &ports, &ext_cp_info),
            extra: Default::default(),
        })
        .collect();
    let mut vnfc_resources = inventory.vnfc_resources.clone();
    link_vnfc_cps_to_ext_cps(&mut vnfc_resources, &ext_cp_info);
    InstantiatedVnfInfo {
        flavour_id: Some(plan.flavour_id.clone()),
        vnf_state: Some(inventory.vnf_state.clone()),
        max_scale_levels: (!scale_status.is_empty()).then_some(max_levels),
        scale_status,
        ext_cp_info,
        ext_virtual_link_info,
        ext_managed_virtual_link_info: managed
            .iter()
            .map(|link| ext_managed_virtual_link_info(link, inventory))
            .collect(),
        vnfc_info: Some(vnfc_info(&inventory.vnfc_resources, &inventory.vnf_state)),
        vnfc_resource_info: Some(vnfc_resources),
        vnf_virtual_link_resource_info: Some(inventory.virtual_links.clone()),
        virtual_storage_resource_info: Some(inventory.virtual_storages.clone()),
        // SOL003 V4.3.1 (VNF LCM 2.10.0): what the CISM reports, only where the VIM is one.
        virtual_cp_info: inventory.virtual_cp_info.clone(),
        // SOL003 V3.5.1 (VNF LCM 2.1.0): the VipCps' addresses, as the VIM allocated them.
        vip_cp_info: inventory.vip_cp_info.clone(),
        mcio_info: inventory.mcio_info.clone(),
        localization_language: kept.localization_language,
        metadata: kept.metadata,
        selected_deployable_module: kept.selected_deployable_module,
        extra: Default::default(),
    }
}

/// VnfcInfo of each VNFC, all in the VNF's state (OPERATE changes them all at once).
fn vnfc_info(vnfcs: &[VnfcResource], state: &str) -> Vec<VnfcInfo> {
    vnfcs
        .iter()
        .map(|vnfc| VnfcInfo {
            id: format!("VNFC-{}", vnfc.id),
            vdu_id: vnfc.vdu_id.clone(),
            vnfc_resource_info_id: Some(vnfc.id.clone()),
            vnfc_state: Some(state.to_owned()),
            extra: Default::default(),
        })
        .collect()
}

/// ExtManagedVirtualLinkInfo from the request's ExtManagedVirtualLinkData, with the ports
/// the VNF has on it.
fn ext_managed_virtual_link_info(link: &ExtManagedVirtualLinkData, inventory: &Inventory) -> ExtManagedVirtualLinkInfo {
    ExtManagedVirtualLinkInfo {
        id: link.id.clone(),
        vnf_virtual_link_desc_id: link.vnf_virtual_link_desc_id.clone(),
        network_resource: link.resource.clone(),
        vnf_link_ports: inventory
            .virtual_links
            .iter()
            .find(|vl| vl.vnf_virtual_link_desc_id == link.vnf_virtual_link_desc_id)
            .map(|vl| vl.vnf_link_ports.clone())
            .unwrap_or_default(),
        ext_managed_multisite_virtual_link_id: link.ext_managed_multisite_virtual_link_id.clone(),
        extra: Default::default(),
    }
}

/// VnfcCpInfo.vnfExtCpId: each VNFC CP that is an external CP instance names it (the
/// other CPs stay as the driver reported them).
fn link_vnfc_cps_to_ext_cps(vnfc_resources: &mut [VnfcResource], ext_cp_info: &[VnfExtCpInfo]) {
    // The last CP instance on a VNFC CP names it (a trunk's subports come after its parent).
    let by_vnfc_cp: BTreeMap<&str, &str> = ext_cp_info
        .iter()
        .filter_map(|ext_cp| Some((ext_cp.associated_vnfc_cp_id.as_deref()?, ext_cp.id.as_str())))
        .collect();
    for cp in vnfc_resources.iter_mut().flat_map(|vnfc| vnfc.vnfc_cp_info.iter_mut()) {
        let Ok(mut info) = VnfcCpInfo::deserialize(&*cp) else { continue };
        let Some(ext_cp_id) = info.id.as_deref().and_then(|id| by_vnfc_cp.get(id)) else { continue };
        info.vnf_ext_cp_id = Some((*ext_cp_id).to_owned());
        if let Ok(linked) = serde_json::to_value(info) {
            *cp = linked;
        }
    }
}

/// Stores the inventory's private VIM state in the instance document.
pub fn set_vim_state(instance: &mut Value, inventory: &Inventory) {
    let mut private: InstancePrivate = crate::private_part(instance);
    private.vim_state = Some(inventory.vim_state.clone());
    // The driver's ports behind ExtLinkPortInfo, read back by `inventory_of`.
    private.ext_link_ports = (!inventory.ext_link_ports.is_empty()).then(|| inventory.ext_link_ports.clone());
    crate::set_private_part(instance, &private);
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use solgate_model::infra::{ResourceHandle, VnfcResource};
    use solgate_vnfpkg::testing::CsarBuilder;

    fn port(id: &str) -> Value {
        json!({"vimConnectionId": "vim-1", "resourceId": id, "vimLevelResourceType": "OS::Neutron::Port"})
    }

    /// VDU1_CP1 configured by `parent` on ext-vl-1, with subports `sub100` (a port the driver
    /// made, on ext-vl-2) and `sub200` (the NFVO's port elp-200, on ext-vl-3).
    #[test]
    fn trunk_subports_are_external_cp_instances_and_the_parent_port_names_its_trunk() {
        let csar = CsarBuilder::sample().to_tempfile().unwrap();
        let vnfd = solgate_vnfpkg::inspect(csar.path(), &solgate_vnfpkg::Limits::default()).unwrap().vnfd;
        let subport = |id: &str| {
            json!({"layerProtocol": "IP_OVER_ETHERNET", "ipOverEthernet": {"segmentationId": id,
                "ipAddresses": [{"type": "IPV4", "numDynamicAddresses": 1}]}})
        };
        let plan = DeploymentPlan {
            flavour_id: "simple".into(),
            vdus: Vec::new(),
            virtual_links: Vec::new(),
            ext_virtual_links: json!([
                {"id": "ext-vl-1", "resourceId": "net-a", "extCps": [{"cpdId": "VDU1_CP1", "cpConfig": {"parent": {
                    "cpProtocolData": [{"layerProtocol": "IP_OVER_ETHERNET",
                        "ipOverEthernet": {"ipAddresses": [{"type": "IPV4", "numDynamicAddresses": 1}]}}]}}}]},
                {"id": "ext-vl-2", "resourceId": "net-b", "extCps": [{"cpdId": "VDU1_CP1", "cpConfig": {"sub100": {
                    "parentCpConfigId": "parent", "cpProtocolData": [subport("100")]}}}]},
                {"id": "ext-vl-3", "resourceId": "net-c", "extCps": [{"cpdId": "VDU1_CP1", "cpConfig": {"sub200": {
                    "parentCpConfigId": "parent", "linkPortId": "elp-200", "cpProtocolData": [subport("200")]}}}]}
            ]),
            ext_managed_virtual_links: json!([]),
            scale_levels: BTreeMap::new(),
            granted: Default::default(),
        };
        let inventory = Inventory {
            vnfc_resources: vec![VnfcResource {
                id: "vnfc-1".into(),
                vdu_id: "VDU1".into(),
                compute_resource: ResourceHandle {
                    vim_connection_id: None,
                    resource_id: "server-1".into(),
                    vim_level_resource_type: None,
                },
                storage_resource_ids: Vec::new(),
                vnfc_cp_info: vec![json!({"id": "cp-1", "cpdId": "VDU1_CP1"})],
                zone_id: None,
                metadata: None,
            }],
            ext_link_ports: vec![
                json!({"id": "port-parent", "cpdId": "VDU1_CP1", "trunkResourceId": "trunk-1",
                    "resourceHandle": port("port-parent")}),
                json!({"id": "port-100", "cpdId": "VDU1_CP1", "cpConfigId": "sub100", "resourceHandle": port("port-100")}),
            ],
            ..Inventory::default()
        };
        let info = instantiated_info(&vnfd, &plan, &inventory, &json!({}));

        let ext_cps: Vec<(&str, &str, &str, Option<&str>)> = info["extCpInfo"]
            .as_array()
            .unwrap()
            .iter()
            .map(|cp| {
                (
                    cp["id"].as_str().unwrap(),
                    cp["cpConfigId"].as_str().unwrap(),
                    cp["associatedVnfcCpId"].as_str().unwrap(),
                    cp["extLinkPortId"].as_str(),
                )
            })
            .collect();
        assert_eq!(
            ext_cps,
            [
                ("VDU1_CP1-cp-1", "parent", "cp-1", Some("port-parent")),
                ("VDU1_CP1-sub100", "sub100", "cp-1", Some("port-100")),
                ("VDU1_CP1-sub200", "sub200", "cp-1", Some("elp-200")),
            ]
        );
        assert_eq!(info["extCpInfo"][1]["cpProtocolInfo"][0]["ipOverEthernet"]["segmentationId"], "100");
        let links = info["extVirtualLinkInfo"].as_array().unwrap();
        assert_eq!(
            links[0]["extLinkPorts"],
            json!([{"id": "port-parent", "resourceHandle": port("port-parent"), "cpInstanceId": "VDU1_CP1-cp-1",
                "trunkResourceId": "trunk-1"}])
        );
        assert_eq!(
            links[1]["extLinkPorts"],
            json!([{"id": "port-100", "resourceHandle": port("port-100"), "cpInstanceId": "VDU1_CP1-sub100"}])
        );
        assert!(links[2].get("extLinkPorts").is_none(), "the NFVO's port is not one the VNFM made");
    }
}

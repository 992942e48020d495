use std::io::{Cursor, Read};
use std::path::Path;

use sha2::Digest;

use super::{inspect, sha256_hex};
use crate::testing::{
    CsarBuilder, SAMPLE_DEPLOYMENT, SAMPLE_DF_SIMPLE, SAMPLE_DF_SMALL, SAMPLE_IMAGE, SAMPLE_INSTALL_SH, SAMPLE_TOP,
    SAMPLE_TYPES, SAMPLE_VNFD_ID, SINGLE_VNFD, zip_directory,
};
use crate::{CpKind, CsarError, Limits, PackageContents};

#[test]
fn sample_package_vnf_properties_come_from_type_defaults_through_derived_from() {
    let contents = inspect(&CsarBuilder::sample()).unwrap();
    let vnfd = &contents.vnfd;
    assert_eq!(vnfd.descriptor_id, SAMPLE_VNFD_ID);
    // provider and vnfm_info are defaults of the grand-parent type solgate.sample.BaseVNF.
    assert_eq!(vnfd.provider, "Solgate");
    assert_eq!(vnfd.vnfm_info, ["Tacker"]);
    assert_eq!(vnfd.product_name, "Sample VNF");
    assert_eq!(vnfd.software_version, "1.0");
    assert_eq!(vnfd.descriptor_version, "1.0");
    assert_eq!(
        vnfd.configurable_properties,
        Some(serde_json::json!({"is_autoscale_enabled": false, "is_autoheal_enabled": false}))
    );
}

#[test]
fn node_template_value_wins_over_type_default() {
    let builder = CsarBuilder::sample().edit(SAMPLE_TOP, |s| {
        s.replace(
            "flavour_id: { get_input: selected_flavour }",
            "flavour_id: { get_input: selected_flavour }\n        provider: Other Corp",
        )
    });
    let contents = inspect(&builder).unwrap();
    assert_eq!(contents.vnfd.provider, "Other Corp");
}

#[test]
fn sample_package_layout_and_checksum() {
    let builder = CsarBuilder::sample();
    let zip = builder.to_bytes().unwrap();
    let contents = inspect(&builder).unwrap();
    assert!(contents.has_tosca_metadata);
    assert_eq!(contents.entry_definitions, SAMPLE_TOP);
    assert_eq!(contents.entry_manifest, None);
    assert_eq!(contents.vnfd_files, [SAMPLE_TOP, SAMPLE_TYPES, SAMPLE_DF_SIMPLE, SAMPLE_DF_SMALL]);
    assert!(contents.multi_file_vnfd);
    assert_eq!(contents.checksum.algorithm, "sha512");
    assert_eq!(contents.checksum.hash, hex::encode(sha2::Sha512::digest(&zip)));
    assert_eq!(contents.size, zip.len() as u64);
    let install = contents.files.iter().find(|f| f.path == SAMPLE_INSTALL_SH).unwrap();
    assert_eq!(install.size, builder.get(SAMPLE_INSTALL_SH).unwrap().len() as u64);
    assert!(contents.files.iter().any(|f| f.path == "TOSCA-Metadata/TOSCA.meta"));
}

#[test]
fn sample_package_artifacts_are_verified_and_images_flagged() {
    let builder = CsarBuilder::sample();
    let contents = inspect(&builder).unwrap();
    let paths: Vec<_> = contents.artifacts.iter().map(|a| a.path.as_str()).collect();
    assert_eq!(paths, [SAMPLE_INSTALL_SH, SAMPLE_DEPLOYMENT, SAMPLE_IMAGE]);
    for artifact in &contents.artifacts {
        assert_eq!(artifact.checksum.algorithm, "SHA-256");
        assert_eq!(artifact.checksum.hash, sha256_hex(builder.get(&artifact.path).unwrap()));
        assert!(!artifact.external);
        assert_eq!(artifact.software_image, artifact.path == SAMPLE_IMAGE, "{}", artifact.path);
    }
}

#[test]
fn sample_package_flavours_vdus_and_images() {
    let contents = inspect(&CsarBuilder::sample()).unwrap();
    let vnfd = &contents.vnfd;
    let ids: Vec<_> = vnfd.flavours.iter().map(|f| f.id.as_str()).collect();
    assert_eq!(ids, ["simple", "small"]);

    let simple = vnfd.flavour("simple").unwrap();
    assert_eq!(simple.description.as_deref(), Some("Simple flavour with a scalable front end"));
    assert_eq!(simple.file, SAMPLE_DF_SIMPLE);
    let vdu_ids: Vec<_> = simple.vdus.iter().map(|v| v.id.as_str()).collect();
    assert_eq!(vdu_ids, ["VDU1", "VDU2"]);

    let vdu1 = simple.vdu("VDU1").unwrap();
    assert_eq!(vdu1.name, "VDU1");
    assert_eq!(vdu1.description.as_deref(), Some("Front end, scaled by VDU1_scale"));
    assert_eq!((vdu1.vdu_profile.min_number_of_instances, vdu1.vdu_profile.max_number_of_instances), (1, 4));
    assert_eq!(vdu1.initial_delta, Some(1));
    assert_eq!(vdu1.sw_image.as_deref(), Some("VDU1"));
    assert_eq!(vdu1.cps, ["VDU1_CP1", "VDU1_CP2"]);
    let compute = vdu1.virtual_compute.as_ref().unwrap();
    assert_eq!(compute.requested_additional_capability_name.as_deref(), Some("m1.tiny"));
    assert_eq!(compute.num_virtual_cpu, Some(1));
    assert_eq!(compute.virtual_mem_size, Some(512_000_000));

    let vdu2 = simple.vdu("VDU2").unwrap();
    assert_eq!(vdu2.virtual_storages, ["VirtualStorage"]);
    assert_eq!(vdu2.virtual_compute.as_ref().unwrap().virtual_mem_size, Some(1 << 30));
    let storage = &simple.virtual_storages[0];
    assert_eq!(storage.id, "VirtualStorage");
    assert_eq!(storage.node_type, "tosca.nodes.nfv.Vdu.VirtualBlockStorage");
    assert_eq!(storage.size_of_storage, Some(2_000_000_000));

    // Both flavours define an image on a node named VDU1: the package lists it once.
    let image_ids: Vec<_> = vnfd.software_images.iter().map(|i| i.id.as_str()).collect();
    assert_eq!(image_ids, ["VDU1", "VDU2"]);
    let image = vnfd.software_image("VDU1").unwrap();
    assert_eq!(image.name, "sample-image");
    assert_eq!(image.version.as_deref(), Some("0.5.2"));
    assert_eq!(image.checksum.as_ref().unwrap().algorithm, "sha-256");
    assert_eq!(image.container_format.as_deref(), Some("bare"));
    assert_eq!(image.disk_format.as_deref(), Some("qcow2"));
    assert_eq!(
        (image.min_disk, image.min_ram, image.size),
        (Some(1_000_000_000), Some(256_000_000), Some(12_000_000_000))
    );
    assert_eq!(image.image_path.as_deref(), Some(SAMPLE_IMAGE));
    assert_eq!(vnfd.software_image("VDU2").unwrap().image_path, None);

    let small = vnfd.flavour("small").unwrap();
    assert_eq!(small.description.as_deref(), Some("One VM, no scaling"));
    assert_eq!(small.vdus.len(), 1);
    assert!(small.scaling_aspects.is_empty() && small.instantiation_levels.is_empty());
}

#[test]
fn sample_package_links_cps_and_external_connection_points() {
    let contents = inspect(&CsarBuilder::sample()).unwrap();
    let simple = contents.vnfd.flavour("simple").unwrap();
    let vl = &simple.virtual_links[0];
    assert_eq!(vl.id, "internalVL1");
    assert_eq!(vl.layer_protocols, ["ipv4"]);
    assert_eq!(vl.l3_protocol_data[0].cidr.as_deref(), Some("192.168.10.0/24"));

    let cp_ids: Vec<_> = simple.cps.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(cp_ids, ["VDU1_CP1", "VDU1_CP2", "VDU2_CP1"]);
    let ext = &simple.cps[0];
    assert_eq!(ext.kind, CpKind::VduCp);
    assert!(ext.external);
    assert_eq!(ext.external_requirement.as_deref(), Some("virtual_link_external"));
    assert_eq!((ext.vdu.as_deref(), ext.virtual_link.as_deref()), (Some("VDU1"), None));
    let internal = &simple.cps[2];
    assert!(!internal.external);
    assert_eq!((internal.vdu.as_deref(), internal.virtual_link.as_deref()), (Some("VDU2"), Some("internalVL1")));
    assert_eq!(internal.order, Some(0));
}

#[test]
fn sample_package_scaling_and_instantiation_levels() {
    let contents = inspect(&CsarBuilder::sample()).unwrap();
    let simple = contents.vnfd.flavour("simple").unwrap();
    let aspect = simple.scaling_aspect("VDU1_scale").unwrap();
    assert_eq!(aspect.name.as_deref(), Some("VDU1_scale"));
    assert_eq!(aspect.max_scale_level, 3);
    assert_eq!(aspect.step_deltas, ["delta_1"]);
    assert_eq!(aspect.vdu_deltas["VDU1"]["delta_1"], 1);
    assert!(!aspect.vdu_deltas.contains_key("VDU2"));

    let level_ids: Vec<_> = simple.instantiation_levels.iter().map(|l| l.id.as_str()).collect();
    assert_eq!(level_ids, ["instantiation_level_1", "instantiation_level_2"]);
    assert_eq!(simple.default_level.as_deref(), Some("instantiation_level_1"));
    let largest = simple.instantiation_level("instantiation_level_2").unwrap();
    assert_eq!(largest.description.as_deref(), Some("Largest size"));
    assert_eq!(largest.scale_info["VDU1_scale"], 2);
    assert_eq!(largest.vdu_instances["VDU1"], 3);
    assert_eq!(largest.vdu_instances["VDU2"], 1);
}

#[test]
fn affinity_rules_name_their_vdus_directly_or_through_placement_groups() {
    let contents = inspect(&CsarBuilder::sample().vdu1_anti_affinity("zone")).unwrap();
    let simple = contents.vnfd.flavour("simple").unwrap();
    assert_eq!(
        simple.placement_rules,
        [crate::PlacementRule {
            id: "policy_antiaffinity_vdu1".into(),
            anti_affinity: true,
            scope: "zone".into(),
            vdus: vec!["VDU1".into()],
        }]
    );
    assert!(inspect(&CsarBuilder::sample()).unwrap().vnfd.flavour("simple").unwrap().placement_rules.is_empty());

    let grouped = CsarBuilder::sample().edit(SAMPLE_DF_SIMPLE, |text| {
        text.replacen(
            "  policies:\n",
            "  groups:\n    both:\n      type: tosca.groups.nfv.PlacementGroup\n      members: [ VDU1, VDU2 ]\n\n  \
             policies:\n    - together:\n        type: tosca.policies.nfv.AffinityRule\n        targets: [ both ]\n        \
             properties:\n          scope: nfvi_node\n\n",
            1,
        )
    });
    let contents = inspect(&grouped).unwrap();
    let rule = &contents.vnfd.flavour("simple").unwrap().placement_rules[0];
    assert!(!rule.anti_affinity);
    assert_eq!(rule.scope, "nfvi_node");
    assert_eq!(rule.vdus, ["VDU1", "VDU2"]);

    let unknown = CsarBuilder::sample().vdu1_anti_affinity("zone").edit(SAMPLE_DF_SIMPLE, |text| {
        text.replacen(
            "targets: [ VDU1 ]\n        properties:\n          scope",
            "targets: [ VDU9 ]\n        properties:\n          scope",
            1,
        )
    });
    let error = inspect(&unknown).unwrap_err().to_string();
    assert!(error.contains("targets VDU9, which is not a VDU"), "{error}");
}

#[test]
fn summary_survives_a_json_round_trip() {
    let contents = inspect(&CsarBuilder::sample()).unwrap();
    let json = serde_json::to_value(&contents).unwrap();
    assert_eq!(json["checksum"]["algorithm"], "sha512");
    assert_eq!(json["vnfd"]["descriptor_id"], SAMPLE_VNFD_ID);
    let back: PackageContents = serde_json::from_value(json).unwrap();
    assert_eq!(back, contents);
}

#[test]
fn descriptor_id_can_be_changed_per_package() {
    let id = "11111111-2222-4333-8444-555555555555";
    let contents = inspect(&CsarBuilder::sample().descriptor_id(id)).unwrap();
    assert_eq!(contents.vnfd.descriptor_id, id);
}

#[test]
fn single_file_vnfd_with_literal_properties() {
    let builder = CsarBuilder::single_file();
    let contents = inspect(&builder).unwrap();
    assert!(!contents.multi_file_vnfd);
    assert_eq!(contents.vnfd_files, [SINGLE_VNFD]);
    let vnfd = &contents.vnfd;
    assert_eq!(vnfd.descriptor_version, "2.1");
    // `software_version: 1.0` is a YAML float; it must still read as "1.0".
    assert_eq!(vnfd.software_version, "1.0");
    assert_eq!(vnfd.vnfm_info, ["Tacker"]);
    let flavour = vnfd.flavour("simple").unwrap();
    assert_eq!(flavour.description.as_deref(), Some("The only flavour"));
    assert_eq!(flavour.vdu("VDU1").unwrap().cps, ["CP1"]);
    assert!(contents.artifacts.is_empty());

    let file = builder.to_tempfile().unwrap();
    let text = crate::single_vnfd_yaml(file.path(), &Limits::default()).unwrap();
    assert_eq!(text.as_deref().map(str::as_bytes), builder.get(SINGLE_VNFD));
}

#[test]
fn multi_file_vnfd_has_no_plain_text_form() {
    let file = CsarBuilder::sample().to_tempfile().unwrap();
    assert_eq!(crate::single_vnfd_yaml(file.path(), &Limits::default()).unwrap(), None);
}

#[test]
fn vnfd_zip_holds_tosca_meta_and_vnfd_yaml_only() {
    let builder = CsarBuilder::sample();
    let file = builder.to_tempfile().unwrap();
    let mut out = Vec::new();
    crate::write_vnfd_zip(file.path(), &mut out).unwrap();
    let mut zip = zip::ZipArchive::new(Cursor::new(out)).unwrap();
    let names: Vec<String> = zip.file_names().map(|n| n.unwrap().into_owned()).collect();
    let mut sorted = names.clone();
    sorted.sort();
    let mut expected = vec!["TOSCA-Metadata/TOSCA.meta", SAMPLE_TOP, SAMPLE_TYPES, SAMPLE_DF_SIMPLE, SAMPLE_DF_SMALL];
    expected.sort();
    assert_eq!(sorted, expected);
    let mut top = Vec::new();
    zip.by_name(SAMPLE_TOP).unwrap().read_to_end(&mut top).unwrap();
    assert_eq!(top, builder.get(SAMPLE_TOP).unwrap());
}

const OPTION2_VNFD: &str = r#"tosca_definitions_version: tosca_simple_yaml_1_2
topology_template:
  node_templates:
    VNF:
      type: tosca.nodes.nfv.VNF
      properties:
        descriptor_id: 9d3c2b1a-0000-4000-8000-000000000001
        descriptor_version: '1.0'
        provider: Solgate
        product_name: Option 2 VNF
        software_version: '1.0'
        flavour_id: default
"#;

fn option2(hash: &str) -> CsarBuilder {
    let manifest = format!(
        "metadata:\n  vnf_provider_id: Solgate\n  vnf_product_name: Option 2 VNF\n\n\
         Source: Scripts/install.sh\nAlgorithm: SHA-256\nHash: {hash}\n"
    );
    CsarBuilder::new().file("vnfd.yaml", OPTION2_VNFD).file("vnfd.mf", manifest).file("Scripts/install.sh", "echo hi\n")
}

#[test]
fn csar_without_tosca_metadata_uses_the_root_yaml_and_its_manifest() {
    let contents = inspect(&option2(&sha256_hex(b"echo hi\n"))).unwrap();
    assert!(!contents.has_tosca_metadata);
    assert_eq!(contents.entry_definitions, "vnfd.yaml");
    assert_eq!(contents.entry_manifest.as_deref(), Some("vnfd.mf"));
    assert_eq!(contents.vnfd.flavours[0].id, "default");
    assert_eq!(contents.artifacts[0].path, "Scripts/install.sh");
}

#[test]
fn manifest_hash_of_a_csar_without_tosca_metadata_is_checked() {
    let err = inspect(&option2(&"ab".repeat(32))).unwrap_err();
    assert!(matches!(&err, CsarError::ChecksumMismatch { path, .. } if path == "Scripts/install.sh"), "{err}");
}

#[test]
fn etsi_entry_manifest_artifacts_are_verified_and_merged() {
    let deployment = CsarBuilder::sample().get(SAMPLE_DEPLOYMENT).unwrap().to_vec();
    let sha512 = hex::encode(sha2::Sha512::digest(&deployment));
    let manifest = format!(
        "metadata:\n  vnf_provider_id: Solgate\n\nSource: {SAMPLE_DEPLOYMENT}\nAlgorithm: SHA-512\nHash: {sha512}\n"
    );
    let ok = CsarBuilder::sample().entry_manifest("manifest.mf").file("manifest.mf", &manifest);
    let contents = inspect(&ok).unwrap();
    assert_eq!(contents.entry_manifest.as_deref(), Some("manifest.mf"));
    // Declared in TOSCA.meta and in the manifest: listed once.
    assert_eq!(contents.artifacts.iter().filter(|a| a.path == SAMPLE_DEPLOYMENT).count(), 1);

    let bad = CsarBuilder::sample()
        .entry_manifest("manifest.mf")
        .file("manifest.mf", manifest.replace(&sha512, &"0".repeat(128)));
    let err = inspect(&bad).unwrap_err();
    assert!(err.to_string().starts_with(&format!("checksum mismatch for {SAMPLE_DEPLOYMENT}: SHA-512")), "{err}");

    let missing = CsarBuilder::sample().entry_manifest("manifest.mf");
    let err = inspect(&missing).unwrap_err();
    assert_eq!(err.to_string(), "manifest file manifest.mf is not in the VNF package");
}

#[test]
fn deploy_sample_package_passes_inspect_once_zipped() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../deploy/sample-package");
    let zip = zip_directory(&dir).unwrap();
    let mut file = tempfile::NamedTempFile::new().unwrap();
    std::io::Write::write_all(&mut file, &zip).unwrap();
    let contents = crate::inspect(file.path(), &Limits::default()).unwrap();
    let simple = contents.vnfd.flavour("simple").unwrap();
    assert!(simple.vdus.len() >= 2);
    let aspect = &simple.scaling_aspects[0];
    assert!(aspect.max_scale_level >= 2);
    assert!(simple.instantiation_levels.len() >= 2);
    assert!(simple.default_instantiation_level().is_some());
    assert!(!contents.artifacts.is_empty());
    for artifact in &contents.artifacts {
        let on_disk = std::fs::read(dir.join(&artifact.path)).unwrap();
        assert_eq!(artifact.checksum.hash, sha256_hex(&on_disk), "{}", artifact.path);
    }
}

#[test]
fn derived_node_types_and_vnf_ext_cps_are_recognised() {
    let builder = CsarBuilder::sample()
        .edit(SAMPLE_TYPES, |s| {
            format!(
                "{s}\n  solgate.sample.Compute:\n    derived_from: tosca.nodes.nfv.Vdu.Compute\n    properties:\n      \
                 vdu_profile:\n        type: tosca.datatypes.nfv.VduProfile\n        default:\n          \
                 min_number_of_instances: 1\n          max_number_of_instances: 2\n"
            )
        })
        .edit(SAMPLE_DF_SIMPLE, |s| {
            s.replace(
                "    VDU2:\n      type: tosca.nodes.nfv.Vdu.Compute\n      properties:\n        name: VDU2\n        description: Back end with a data volume\n        vdu_profile:\n          min_number_of_instances: 1\n          max_number_of_instances: 1\n",
                "    VDU2:\n      type: solgate.sample.Compute\n      properties:\n        name: VDU2\n        description: Back end with a data volume\n",
            )
            .replace(
                "    internalVL1:\n",
                "    EXT_CP:\n      type: tosca.nodes.nfv.VnfExtCp\n      properties:\n        layer_protocols: [ ipv4 ]\n      \
                 requirements:\n        - internal_virtual_link: internalVL1\n\n    internalVL1:\n",
            )
        });
    let contents = inspect(&builder).unwrap();
    let simple = contents.vnfd.flavour("simple").unwrap();
    // VDU2 is found through derived_from, and its vdu_profile comes from the type default.
    let vdu2 = simple.vdu("VDU2").unwrap();
    assert_eq!(vdu2.vdu_profile.max_number_of_instances, 2);
    let ext = simple.cps.iter().find(|c| c.id == "EXT_CP").unwrap();
    assert_eq!(ext.kind, CpKind::VnfExtCp);
    assert!(ext.external);
    assert_eq!((ext.vdu.as_deref(), ext.virtual_link.as_deref()), (None, Some("internalVL1")));
}

#[test]
fn virtual_cps_and_deployable_modules_name_their_vdus() {
    let contents = inspect(&CsarBuilder::sample().vdu1_virtual_cp().two_deployable_modules()).unwrap();
    let flavour = contents.vnfd.flavour("simple").unwrap();
    assert_eq!(flavour.virtual_cps.len(), 1);
    assert_eq!(
        (flavour.virtual_cps[0].id.as_str(), flavour.virtual_cps[0].vdus.as_slice()),
        ("VDU1_VCP", &["VDU1".to_owned()][..])
    );
    let modules: Vec<_> =
        flavour.deployable_modules.iter().map(|m| (m.id.as_str(), m.name.as_str(), m.vdus.clone())).collect();
    assert_eq!(
        modules,
        [("front_module", "front", vec!["VDU1".to_owned()]), ("back_module", "back", vec!["VDU2".to_owned()])]
    );
    assert_eq!(flavour.deployable_modules[0].description.as_deref(), Some("The front end"));
    // A VirtualCp is not a VduCp: the VDUs' CP lists do not change.
    assert_eq!(flavour.vdu("VDU1").unwrap().cps, ["VDU1_CP1", "VDU1_CP2"]);

    let unknown = CsarBuilder::sample()
        .two_deployable_modules()
        .edit(SAMPLE_DF_SIMPLE, |s| s.replace("- member: VDU2", "- member: VDU9"));
    let error = inspect(&unknown).unwrap_err();
    assert!(
        error.to_string().contains("DeployableModule back_module of flavour simple names unknown VDU VDU9"),
        "{error}"
    );
}

#[test]
fn a_vip_cp_names_its_virtual_link_and_target_cps() {
    let contents = inspect(&CsarBuilder::sample().internal_vip_cp()).unwrap();
    let flavour = contents.vnfd.flavour("simple").unwrap();
    assert_eq!(flavour.vip_cps.len(), 1);
    let vip = &flavour.vip_cps[0];
    assert_eq!(
        (vip.id.as_str(), vip.vip_function.as_str(), vip.virtual_link.as_str()),
        ("VIP_CP", "high_availability", "internalVL1")
    );
    assert_eq!(vip.targets, ["VDU1_CP2", "VDU2_CP1"]);
    assert!(vip.dedicated_ip_address, "SOL001's default");
    // A VipCp is not a VduCp: no VDU gains a CP.
    assert_eq!(flavour.vdu("VDU1").unwrap().cps, ["VDU1_CP1", "VDU1_CP2"]);

    let unknown = CsarBuilder::sample()
        .internal_vip_cp()
        .edit(SAMPLE_DF_SIMPLE, |s| s.replace("- target: VDU2_CP1", "- target: VDU2"));
    let error = inspect(&unknown).unwrap_err();
    assert!(error.to_string().contains("VipCp VIP_CP of flavour simple targets unknown VduCp VDU2"), "{error}");
    let function = CsarBuilder::sample()
        .internal_vip_cp()
        .edit(SAMPLE_DF_SIMPLE, |s| s.replace("vip_function: high_availability", "vip_function: anycast"));
    let error = inspect(&function).unwrap_err();
    assert!(error.to_string().contains("vip_function anycast is neither"), "{error}");
}

/// Tacker's management driver hooks: the VNF node's `Vnflcm` operations with a Python
/// artifact (Tacker's sample test_helm_instantiate, unchanged); `instantiate: []` declares
/// no script.
#[test]
fn vnflcm_interface_scripts_are_read_per_flavour() {
    let dir =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../drivers/tests/fixtures/tacker-samples/test_helm_instantiate");
    let zip = zip_directory(&dir).unwrap();
    let mut file = tempfile::NamedTempFile::new().unwrap();
    std::io::Write::write_all(&mut file, &zip).unwrap();
    let contents = crate::inspect(file.path(), &Limits::default()).unwrap();
    let scripts = &contents.vnfd.flavour("simple").unwrap().lcm_scripts;
    assert_eq!(scripts.get("instantiate_start").map(String::as_str), Some("../Scripts/sample_script.py"));
    assert_eq!(scripts.get("terminate_end").map(String::as_str), Some("../Scripts/sample_script.py"));
    assert_eq!(scripts.len(), 10, "{scripts:?}");

    // A script of another kind is refused, naming the operation.
    let broken = CsarBuilder::sample().edit(SAMPLE_DF_SIMPLE, |s| {
        s.replacen(
            "        flavour_description: Simple flavour with a scalable front end\n",
            "        flavour_description: Simple flavour with a scalable front end\n      interfaces:\n        \
             Vnflcm:\n          instantiate_start: []\n          heal_start:\n            implementation: install-script\n",
            1,
        )
    });
    let err = inspect(&broken).unwrap_err().to_string();
    assert!(err.contains("artifact install-script of Vnflcm operation heal_start is of type"), "{err}");
}

/// Tacker's OpenStack sample packages (vendored unchanged) onboard; `basic_lcms_max`
/// declares its Vnflcm operations without scripts (`[]`), `userdata_standard` one script for
/// twelve of them.
#[test]
fn tackers_openstack_samples_onboard_with_their_vnflcm_scripts() {
    let samples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../drivers/tests/fixtures/tacker-samples");
    for (name, scripts) in [("basic_lcms_max", 0), ("userdata_standard", 12)] {
        let zip = zip_directory(&samples.join(name)).unwrap();
        let mut file = tempfile::NamedTempFile::new().unwrap();
        std::io::Write::write_all(&mut file, &zip).unwrap();
        let contents = crate::inspect(file.path(), &Limits::default()).unwrap_or_else(|e| panic!("{name}: {e}"));
        let flavour = contents.vnfd.flavour("simple").unwrap();
        assert_eq!(flavour.lcm_scripts.len(), scripts, "{name}: {:?}", flavour.lcm_scripts);
        assert!(flavour.lcm_scripts.values().all(|file| file == "../Scripts/sample_script.py"), "{name}");
    }
}

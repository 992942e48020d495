//! vnfpm 2.1.0 against ETSI's own SOL003 V3.7.1 VNF Performance Management OpenAPI (PM API
//! 2.2.0, the first edition ETSI published as YAML after V3.3.1's 2.1.0), vendored under
//! `tests/etsi/sol003-v3.7.1/` so the comparison always runs. The same rules as the vnflcm
//! comparison (`etsi_v3_7_1`): every difference is listed in
//! `data/vnfpm/etsi-sol003-v3.7.1-errata.json` with its reason, and every listed erratum still
//! matches a difference.

use serde_json::Value;
use solgate_schemas::Api;

use crate::etsi_v3_7_1::{load, matches_with_errata};
use crate::support::{entry, manifest_dir};

const ERRATA: &str = include_str!("../../data/vnfpm/etsi-sol003-v3.7.1-errata.json");
const FILES: &[&str] = &[
    "SOL003/VNFPerformanceManagement/definitions/SOL003VNFPerformanceManagement_def.yaml",
    "SOL003/General_Definitions/SOL003_def.yaml",
    "SOL003/VNFPerformanceManagementNotification/definitions/SOL003VNFPerformanceManagementNotification_def.yaml",
];

#[test]
fn vnfpm_2_1_0_matches_etsi_sol003_v3_7_1() {
    let dir = manifest_dir().join("tests/etsi/sol003-v3.7.1");
    let api: Value = serde_yaml_ng::from_str(
        &std::fs::read_to_string(dir.join("SOL003/VNFPerformanceManagement/VNFPerformanceManagement.yaml")).unwrap(),
    )
    .unwrap();
    assert_eq!(api["info"]["version"], "2.2.0-impl:etsi.org:ETSI_NFV_OpenAPI:1", "the vendored YAML is PM API 2.2.0");
    assert_eq!(api["externalDocs"]["description"], "ETSI GS NFV-SOL 003 V3.7.1");
    let etsi = load(&dir, FILES, true).expect("the vendored files are there");
    matches_with_errata(&etsi, entry(Api::Vnfpm, "2.1.0"), ERRATA, 15);
}

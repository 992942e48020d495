//! vnfpm 2.1.0 checked type by type against ETSI's SOL003 V3.7.1 VNF Performance Management
//! OpenAPI (PM API 2.2.0, a later minor of the same major), vendored under `tests/fixtures/` so
//! the check always runs: every difference must be listed, with its reason, in
//! `data/vnfpm/etsi-sol003-v3.7.1-errata.json`, and every listed erratum must still be one.

use serde_json::Value;
use solgate_schemas::Api;

use crate::etsi_v3_7_1::{check_against, load};
use crate::support::{entry, manifest_dir};

const ERRATA: &str = include_str!("../../data/vnfpm/etsi-sol003-v3.7.1-errata.json");
const FILES: &[&str] = &[
    "SOL003/VNFPerformanceManagement/definitions/SOL003VNFPerformanceManagement_def.yaml",
    "SOL003/VNFPerformanceManagementNotification/definitions/SOL003VNFPerformanceManagementNotification_def.yaml",
    "SOL003/General_Definitions/SOL003_def.yaml",
];

#[test]
fn vnfpm_2_1_0_matches_etsi_sol003_v3_7_1() {
    let dir = manifest_dir().join("tests/fixtures/etsi-sol003-v3.7.1");
    // The files are the PM API 2.2.0 of V3.7.1, as the errata file says.
    let main: Value = serde_yaml_ng::from_str(
        &std::fs::read_to_string(dir.join("SOL003/VNFPerformanceManagement/VNFPerformanceManagement.yaml")).unwrap(),
    )
    .unwrap();
    assert_eq!(main["info"]["version"], "2.2.0-impl:etsi.org:ETSI_NFV_OpenAPI:1");
    assert_eq!(main["externalDocs"]["description"], "ETSI GS NFV-SOL 003 V3.7.1");
    let etsi = load(&dir, FILES).unwrap();
    let document = entry(Api::Vnfpm, "2.1.0").dictionary.document().unwrap();
    check_against(&etsi, document, ERRATA, 15);
}

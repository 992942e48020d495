//! vnffm 1.3.0 checked type by type against ETSI's SOL003 V3.7.1 VNF Fault Management OpenAPI
//! (FM API 1.5.0, a later minor of the same major), vendored under `tests/fixtures/` so the
//! check always runs: every difference must be listed, with its reason, in
//! `data/vnffm/etsi-sol003-v3.7.1-errata.json`, and every listed erratum must still be one.

use serde_json::Value;
use solgate_schemas::Api;

use crate::etsi_v3_7_1::{check_against, load};
use crate::support::{entry, manifest_dir};

const ERRATA: &str = include_str!("../../data/vnffm/etsi-sol003-v3.7.1-errata.json");
const FILES: &[&str] = &[
    "SOL003/VNFFaultManagement/definitions/SOL003VNFFaultManagement_def.yaml",
    "SOL003/VNFFaultManagementNotification/definitions/SOL003VNFFaultManagementNotification_def.yaml",
    "SOL003/General_Definitions/SOL003_def.yaml",
];

#[test]
fn vnffm_1_3_0_matches_etsi_sol003_v3_7_1() {
    let dir = manifest_dir().join("tests/fixtures/etsi-sol003-v3.7.1");
    // The files are the FM API 1.5.0 of V3.7.1, as the errata file says.
    let main: Value = serde_yaml_ng::from_str(
        &std::fs::read_to_string(dir.join("SOL003/VNFFaultManagement/VNFFaultManagement.yaml")).unwrap(),
    )
    .unwrap();
    assert_eq!(main["info"]["version"], "1.5.0-impl:etsi.org:ETSI_NFV_OpenAPI:1");
    assert_eq!(main["externalDocs"]["description"], "ETSI GS NFV-SOL 003 V3.7.1");
    let etsi = load(&dir, FILES).unwrap();
    let document = entry(Api::Vnffm, "1.3.0").dictionary.document().unwrap();
    check_against(&etsi, document, ERRATA, 15);
}

//! What a client notices: the registry's versions, 400 details, the older minor refusing what only
//! the newer defines, v1/v2 shapes, and responses per requested minor.

use serde_json::{Value, json};
use solgate_schemas::{Api, Delta, Dictionary};

use crate::support::{entry, examples, registry};

#[test]
fn the_catalog_serves_each_version_with_its_etsi_document() {
    let listed: Vec<(String, String, &str)> =
        registry().all_versions().map(|e| (e.api.to_string(), e.version_string(), e.etsi_document)).collect();
    assert_eq!(
        listed,
        [
            ("vnflcm".to_owned(), "1.3.0".to_owned(), "ETSI GS NFV-SOL 003 V2.6.1"),
            ("vnflcm".to_owned(), "2.0.0".to_owned(), "ETSI GS NFV-SOL 003 V3.3.1"),
            ("vnflcm".to_owned(), "2.1.0".to_owned(), "ETSI GS NFV-SOL 003 V3.5.1"),
            ("vnflcm".to_owned(), "2.2.0".to_owned(), "ETSI GS NFV-SOL 003 V3.6.1"),
            ("vnflcm".to_owned(), "2.3.0".to_owned(), "ETSI GS NFV-SOL 003 V3.7.1"),
            ("vnflcm".to_owned(), "2.10.0".to_owned(), "ETSI GS NFV-SOL 003 V4.3.1"),
            ("vnflcm".to_owned(), "2.12.0".to_owned(), "ETSI GS NFV-SOL 003 V4.5.1"),
            ("vnfpkgm".to_owned(), "1.3.0".to_owned(), "ETSI GS NFV-SOL 005 V2.6.1"),
            ("vnffm".to_owned(), "1.3.0".to_owned(), "ETSI GS NFV-SOL 003 V3.3.1"),
            ("vnfpm".to_owned(), "2.1.0".to_owned(), "ETSI GS NFV-SOL 003 V3.3.1"),
        ]
    );
    // VNF FM is a Release 3 API: `Version` is required, as for vnflcm v2.
    assert!(registry().negotiate(Api::Vnffm, 1, None).is_err());
    assert_eq!(registry().negotiate(Api::Vnffm, 1, Some("1.3.0")).unwrap().version_string(), "1.3.0");
    // Ordered numerically: 2.10.0 and 2.12.0 come after 2.3.0.
    assert_eq!(registry().newest(Api::Vnflcm, 2).unwrap().version_string(), "2.12.0");
    assert_eq!(registry().negotiate(Api::Vnfpkgm, 1, None).unwrap().version_string(), "1.3.0");
}

/// The 2.1.0 difference (SOL013 V3.5.1 clause 8.3.4): OAuth 2.0 with a client certificate.
fn oauth2_client_cert_subscription() -> Value {
    json!({
        "callbackUri": "https://nfvo.example.com/notification",
        "authentication": {
            "authType": ["OAUTH2_CLIENT_CERT"],
            "paramsOauth2ClientCert": {
                "clientId": "nfvo-client",
                "certificateRef": {"type": "x5t#S256", "value": "7d2f5b3c"},
                "tokenEndpoint": "https://auth.example.com/token"
            }
        }
    })
}

#[test]
fn a_request_only_the_newer_minor_defines_is_refused_by_the_older() {
    let body = oauth2_client_cert_subscription();
    let old = registry().negotiate(Api::Vnflcm, 2, Some("2.0.0")).unwrap();
    let err = old.dictionary.validate("LccnSubscriptionRequest", &body).unwrap_err();
    assert_eq!(
        err.to_string(),
        "/authentication/authType/0: \"OAUTH2_CLIENT_CERT\" is not one of \"BASIC\", \"OAUTH2_CLIENT_CREDENTIALS\" or \"TLS_CERT\""
    );
    let new = registry().negotiate(Api::Vnflcm, 2, Some("2.1.0")).unwrap();
    assert_eq!(new.dictionary.validate("LccnSubscriptionRequest", &body), Ok(()));

    // 2.1.0 also checks the new parameters it defines, where 2.0.0 ignored an unknown member.
    let mut incomplete = body.clone();
    incomplete["authentication"]["paramsOauth2ClientCert"].as_object_mut().unwrap().remove("tokenEndpoint");
    let err = new.dictionary.validate("LccnSubscriptionRequest", &incomplete).unwrap_err();
    assert_eq!(err.to_string(), "/authentication/paramsOauth2ClientCert: \"tokenEndpoint\" is a required property");
}

#[test]
fn a_bad_body_gets_every_failure_with_its_pointer() {
    let v2 = registry().negotiate(Api::Vnflcm, 2, Some("2.0.0")).unwrap();
    let err = v2.dictionary.validate("CreateVnfRequest", &json!({"vnfdId": 123})).unwrap_err();
    assert_eq!(err.to_string(), "/vnfdId: 123 is not of type \"string\"");
    let err = v2
        .dictionary
        .validate("TerminateVnfRequest", &json!({"terminationType": "LATER", "gracefulTerminationTimeout": "60"}))
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "/terminationType: \"LATER\" is not one of \"FORCEFUL\" or \"GRACEFUL\"; /gracefulTerminationTimeout: \"60\" is not of type \"integer\""
    );
    let err = v2
        .dictionary
        .validate("LccnSubscriptionRequest", &json!({"callbackUri": "x", "verbosity": "LOUD"}))
        .unwrap_err();
    assert_eq!(err.to_string(), "/verbosity: \"LOUD\" is not one of \"FULL\" or \"SHORT\"");
    // Extra members ETSI does not define are accepted (Tacker answers 201 to them too).
    assert_eq!(v2.dictionary.validate("CreateVnfRequest", &json!({"vnfdId": "x", "vendorHint": {"a": 1}})), Ok(()));
}

#[test]
fn vim_connection_info_is_a_list_in_v1_and_a_map_in_v2() {
    let v1 = registry().negotiate(Api::Vnflcm, 1, None).unwrap();
    let v2 = registry().negotiate(Api::Vnflcm, 2, Some("2.0.0")).unwrap();
    let as_list = json!({"flavourId": "simple", "vimConnectionInfo": [{"id": "vim1", "vimType": "openstack"}]});
    let as_map =
        json!({"flavourId": "simple", "vimConnectionInfo": {"vim1": {"vimType": "ETSINFV.OPENSTACK_KEYSTONE.V_3"}}});
    assert_eq!(v1.dictionary.validate("InstantiateVnfRequest", &as_list), Ok(()));
    assert_eq!(v2.dictionary.validate("InstantiateVnfRequest", &as_map), Ok(()));
    let err = v1.dictionary.validate("InstantiateVnfRequest", &as_map).unwrap_err();
    assert!(err.to_string().starts_with("/vimConnectionInfo: {"), "{err}");
    assert!(err.to_string().ends_with("is not of type \"array\""), "{err}");
    let err = v2.dictionary.validate("InstantiateVnfRequest", &as_list).unwrap_err();
    assert!(err.to_string().ends_with("is not of type \"object\""), "{err}");
    // v1 entries carry their id; v2 keys the map by it.
    let err = v1
        .dictionary
        .validate("InstantiateVnfRequest", &json!({"flavourId": "s", "vimConnectionInfo": [{"vimType": "openstack"}]}))
        .unwrap_err();
    assert_eq!(err.to_string(), "/vimConnectionInfo/0: \"id\" is a required property");
    // Change current VNF package is a SOL003 V3.3.1 operation; v1 does not define it.
    assert!(!v1.dictionary.has("ChangeCurrentVnfPkgRequest"));
    assert!(v2.dictionary.has("ChangeCurrentVnfPkgRequest"));
}

#[test]
fn v1_responses_leave_out_attributes_only_sol003_v3_defines() {
    // A v1 instance stored with an attribute that only SOL003 V3.3.1 defines (maxScaleLevels)
    // must not reach a v1 client.
    let v1 = registry().negotiate(Api::Vnflcm, 1, None).unwrap();
    let mut stored = examples(Api::Vnflcm, "1.3.0").resources["VnfInstance"][0].clone();
    stored["instantiatedVnfInfo"]["maxScaleLevels"] = json!([{"aspectId": "VDU1", "scaleLevel": 2}]);
    stored["instantiatedVnfInfo"]["extCpInfo"][0]["cpConfigId"] = json!("VDU1_CP1_1");
    let rendered = v1.dictionary.render("VnfInstance", &stored);
    assert!(rendered["instantiatedVnfInfo"].get("maxScaleLevels").is_none());
    assert!(rendered["instantiatedVnfInfo"]["extCpInfo"][0].get("cpConfigId").is_none());
    assert_eq!(rendered["instantiatedVnfInfo"]["extCpInfo"][0]["id"], "extcp-1");
    assert_eq!(rendered["vimConnectionInfo"], stored["vimConnectionInfo"]);
}

/// A minor that adds a response attribute (built here with the same delta machinery as the
/// catalog): the stored resource has it, the older minor's representation leaves it out, the
/// newer one keeps it, and both validate.
#[test]
fn a_response_for_the_older_minor_omits_what_only_the_newer_defines() {
    let base = entry(Api::Vnflcm, "2.1.0").dictionary.document().unwrap().clone();
    let delta = Delta::parse(
        &json!({
            "api": "vnflcm", "version": "2.2.0", "base": "2.1.0", "etsiDocument": "test only", "breaking": false,
            "ops": [{
                "op": "add_property", "target": "/$defs/VnfcResourceInfo", "name": "certificateInfo",
                "schema": {"type": "object", "properties": {"id": {"type": "string"}}}, "source": "test only"
            }]
        })
        .to_string(),
    )
    .unwrap();
    let newer = Dictionary::compile(delta.apply(&base).unwrap()).unwrap();
    let older = &entry(Api::Vnflcm, "2.1.0").dictionary;

    let mut stored = examples(Api::Vnflcm, "2.0.0").resources["VnfInstance"][0].clone();
    stored["instantiatedVnfInfo"]["vnfcResourceInfo"][0]["certificateInfo"] = json!({"id": "cert-1", "internal": 1});

    let for_newer = newer.render("VnfInstance", &stored);
    assert_eq!(for_newer["instantiatedVnfInfo"]["vnfcResourceInfo"][0]["certificateInfo"], json!({"id": "cert-1"}));
    assert_eq!(newer.validate("VnfInstance", &for_newer), Ok(()));

    let for_older = older.render("VnfInstance", &stored);
    let vnfc = &for_older["instantiatedVnfInfo"]["vnfcResourceInfo"][0];
    assert!(vnfc.get("certificateInfo").is_none(), "{vnfc}");
    assert_eq!(vnfc["computeResource"], stored["instantiatedVnfInfo"]["vnfcResourceInfo"][0]["computeResource"]);
    // Free-form maps stay whole in every minor.
    assert_eq!(for_older["metadata"], stored["metadata"]);
    assert_eq!(older.validate("VnfInstance", &for_older), Ok(()));
}

//! Every ETSI release of vnflcm v2 side by side: 2.0.0 (SOL003 V3.3.1) to 2.12.0 (V4.5.1),
//! one stored shape rendered per negotiated minor; a member that only a later minor defines
//! is refused under an earlier one, naming it.

use reqwest::Method;
use serde_json::{Value, json};
use solgate_schemas::{Api, VersionPolicy};

use crate::helpers::{Reply, TestApp, send};
use crate::lcm_support::{install_sample_package, wait_op};

/// Every minor of vnflcm v2 this release serves, in order (ETSI's API version per SOL003
/// release: ../shared/etsi/README.md).
const V2_MINORS: [&str; 6] = ["2.0.0", "2.1.0", "2.2.0", "2.3.0", "2.10.0", "2.12.0"];

async fn at(app: &TestApp, version: &str, method: Method, path: &str, body: Option<Value>) -> Reply {
    let request = app.request(method, path).header("Version", version).header("Accept", "application/json");
    send(match body {
        Some(body) => request.json(&body),
        None => request,
    })
    .await
}

async fn create(app: &TestApp, version: &str, vnfd_id: &str) -> String {
    let reply = at(app, version, Method::POST, "/vnflcm/v2/vnf_instances", Some(json!({"vnfdId": vnfd_id}))).await;
    assert_eq!(reply.status, 201, "{}", reply.text);
    reply.json()["id"].as_str().unwrap().to_owned()
}

/// POSTs a task under `version` and waits for COMPLETED; returns the occurrence.
async fn run(app: &TestApp, version: &str, id: &str, task: &str, body: Value) -> Value {
    let reply = at(app, version, Method::POST, &format!("/vnflcm/v2/vnf_instances/{id}/{task}"), Some(body)).await;
    assert_eq!(reply.status, 202, "{task} under {version}: {}", reply.text);
    let op = wait_op(app, reply.header("location").unwrap(), &["COMPLETED", "FAILED_TEMP", "ROLLED_BACK"]).await;
    assert_eq!(op["operationState"], "COMPLETED", "{op}");
    op
}

#[tokio::test]
async fn api_versions_lists_every_release_and_each_is_served() {
    let app = TestApp::spawn().await;
    let listed = send(app.get("/vnflcm/v2/api_versions")).await.json();
    let versions: Vec<&str> =
        listed["apiVersions"].as_array().unwrap().iter().map(|v| v["version"].as_str().unwrap()).collect();
    assert_eq!(versions, V2_MINORS, "{listed}");
    for version in V2_MINORS {
        let reply = at(&app, version, Method::GET, "/vnflcm/v2/vnf_instances", None).await;
        assert_eq!(reply.status, 200, "{version}: {}", reply.text);
        assert_eq!(reply.header("VERSION"), Some(version), "the answer names the minor it was rendered for");
    }
    // A minor between releases is not a version ETSI published.
    let reply = at(&app, "2.4.0", Method::GET, "/vnflcm/v2/vnf_instances", None).await;
    assert_eq!(reply.problem(406), "Version 2.4.0 not supported.");
}

#[tokio::test]
async fn a_member_only_a_later_minor_defines_is_refused_naming_it() {
    let app = TestApp::spawn().await;
    // SubscriptionAuthentication.paramsOauth2ClientCert: SOL003 V3.5.1 (2.1.0) on.
    let body = json!({"callbackUri": "http://127.0.0.1:1/cb", "authentication": {"authType": ["BASIC"],
        "paramsBasic": {"userName": "u", "password": "p"},
        "paramsOauth2ClientCert": {"clientId": "c", "certificateRef": {"type": "x5t#S256", "value": "7d"},
            "tokenEndpoint": "http://127.0.0.1:1/token"}}});
    let older = at(&app, "2.0.0", Method::POST, "/vnflcm/v2/subscriptions", Some(body.clone())).await;
    assert_eq!(
        older.problem(400),
        "'/authentication/paramsOauth2ClientCert' is not defined in version 2.0.0; a later version of the API \
         defines it."
    );
    // A member no version defines is still accepted (ETSI types are open; Tacker answers 201).
    let mut open = body.clone();
    open["authentication"].as_object_mut().unwrap().remove("paramsOauth2ClientCert");
    open["vendorExtension"] = json!({"anything": 1});
    let reply = at(&app, "2.0.0", Method::POST, "/vnflcm/v2/subscriptions", Some(open)).await;
    // (The callback test against port 1 fails afterwards; the version check let it through.)
    assert!(!reply.text.contains("not defined in version"), "{}", reply.text);

    // InstantiateVnfRequest.targetScaleLevelInfo: SOL003 V4.3.1 (2.10.0) on.
    let vnfd_id = install_sample_package(&app);
    let id = create(&app, "2.0.0", &vnfd_id).await;
    let request = json!({"flavourId": "simple", "targetScaleLevelInfo": [{"aspectId": "VDU1_scale", "scaleLevel": 2}]});
    for version in ["2.0.0", "2.1.0", "2.2.0", "2.3.0"] {
        let path = format!("/vnflcm/v2/vnf_instances/{id}/instantiate");
        let reply = at(&app, version, Method::POST, &path, Some(request.clone())).await;
        assert!(reply.problem(400).starts_with("'/targetScaleLevelInfo' is not defined in version"), "{}", reply.text);
    }
}

#[tokio::test]
async fn target_scale_level_info_sets_the_initial_scale_levels_from_2_10_0() {
    let app = TestApp::spawn().await;
    let vnfd_id = install_sample_package(&app);
    let id = create(&app, "2.10.0", &vnfd_id).await;
    let instantiate =
        json!({"flavourId": "simple", "targetScaleLevelInfo": [{"aspectId": "VDU1_scale", "scaleLevel": 2}]});
    // Exclusive with instantiationLevelId (NOTE 2 of InstantiateVnfRequest).
    let mut both = instantiate.clone();
    both["instantiationLevelId"] = json!("instantiation_level_1");
    let path = format!("/vnflcm/v2/vnf_instances/{id}/instantiate");
    let reply = at(&app, "2.10.0", Method::POST, &path, Some(both)).await;
    assert!(reply.problem(400).contains("mutually exclusive"), "{}", reply.text);
    let reply = at(
        &app,
        "2.10.0",
        Method::POST,
        &path,
        Some(json!({"flavourId": "simple", "targetScaleLevelInfo": [{"aspectId": "VDU1_scale", "scaleLevel": 9}]})),
    )
    .await;
    assert!(reply.problem(400).contains("VDU1_scale"), "{}", reply.text);

    run(&app, "2.10.0", &id, "instantiate", instantiate).await;
    let instance = at(&app, "2.10.0", Method::GET, &format!("/vnflcm/v2/vnf_instances/{id}"), None).await.json();
    let info = &instance["instantiatedVnfInfo"];
    assert_eq!(info["scaleStatus"], json!([{"aspectId": "VDU1_scale", "scaleLevel": 2}]), "{instance}");
    let vdu1 = info["vnfcResourceInfo"].as_array().unwrap().iter().filter(|vnfc| vnfc["vduId"] == "VDU1").count();
    assert_eq!(vdu1, 3, "one initial VDU1 plus one per scale level: {instance}");
    // The occurrence keeps the request as sent (operationParams is an opaque object).
    let ops = at(&app, "2.10.0", Method::GET, "/vnflcm/v2/vnf_lcm_op_occs?all_fields", None).await.json();
    assert_eq!(ops[0]["operationParams"]["targetScaleLevelInfo"][0]["scaleLevel"], 2, "{ops}");
}

#[tokio::test]
async fn change_current_vnf_pkg_link_appears_from_2_2_0_on_instantiated_instances() {
    let app = TestApp::spawn().await;
    let vnfd_id = install_sample_package(&app);
    let id = create(&app, "2.0.0", &vnfd_id).await;
    let path = format!("/vnflcm/v2/vnf_instances/{id}");
    for version in V2_MINORS {
        let links = at(&app, version, Method::GET, &path, None).await.json()["_links"].clone();
        assert!(links.get("changeCurrentVnfPkg").is_none(), "not instantiated, {version}: {links}");
    }
    run(&app, "2.0.0", &id, "instantiate", json!({"flavourId": "simple"})).await;
    for version in V2_MINORS {
        let links = at(&app, version, Method::GET, &path, None).await.json()["_links"].clone();
        let expected = !matches!(version, "2.0.0" | "2.1.0");
        assert_eq!(links.get("changeCurrentVnfPkg").is_some(), expected, "{version}: {links}");
        if expected {
            assert_eq!(
                links["changeCurrentVnfPkg"]["href"],
                app.url(&format!("/vnflcm/v2/vnf_instances/{id}/change_vnfpkg")),
                "{links}"
            );
        }
        // In the list too.
        let listed = at(&app, version, Method::GET, "/vnflcm/v2/vnf_instances", None).await.json();
        assert_eq!(listed[0]["_links"].get("changeCurrentVnfPkg").is_some(), expected, "{version}: {listed}");
    }
}

#[tokio::test]
async fn release_3_minors_can_be_deprecated_as_the_others() {
    let app = TestApp::spawn_with(|settings| {
        settings.versions = ["2.1.0", "2.2.0"]
            .into_iter()
            .map(|version| VersionPolicy {
                api: Api::Vnflcm,
                version: version.into(),
                deprecated: true,
                deprecated_since: Some("2026-11-01T00:00:00Z".parse().unwrap()),
                retirement_date: None,
                retired: false,
            })
            .collect();
    })
    .await;
    let listed = send(app.get("/vnflcm/v2/api_versions")).await.json();
    for entry in listed["apiVersions"].as_array().unwrap() {
        let deprecated = matches!(entry["version"].as_str(), Some("2.1.0" | "2.2.0"));
        assert_eq!(entry.get("isDeprecated") == Some(&json!(true)), deprecated, "{entry}");
    }
    for (version, deprecated) in [("2.1.0", true), ("2.2.0", true), ("2.3.0", false)] {
        let reply = at(&app, version, Method::GET, "/vnflcm/v2/vnf_instances", None).await;
        assert_eq!(reply.status, 200, "{}", reply.text);
        assert_eq!(reply.header("Deprecation").is_some(), deprecated, "{version}");
    }
}

#[tokio::test]
async fn certificate_configuration_is_kept_and_shown_from_2_12_0() {
    let app = TestApp::spawn().await;
    let vnfd_id = install_sample_package(&app);
    let data = json!({"securityPolicy": [{"id": "policy-1", "maxValidityPeriod": 90, "minimumKeyLength": 3072}],
        "overridingCertificateProfile": [{"id": "profile-1", "issuer": "CN=operator-ca"}],
        "cmfData": {"endPoint": {"ipAddress": "192.0.2.10", "link": {"href": "https://cmf.example/.well-known/est"}},
            "supportedProtocol": ["EST"]}});
    let body = json!({"vnfdId": vnfd_id, "certificateConfigurationData": data});
    // Under 2.10.0 the member is a later minor's: refused, naming it.
    let reply = at(&app, "2.10.0", Method::POST, "/vnflcm/v2/vnf_instances", Some(body.clone())).await;
    assert!(reply.problem(400).starts_with("'/certificateConfigurationData' is not defined"), "{}", reply.text);
    let reply = at(&app, "2.12.0", Method::POST, "/vnflcm/v2/vnf_instances", Some(body)).await;
    assert_eq!(reply.status, 201, "{}", reply.text);
    let created = reply.json();
    let configuration = &created["certificateInfo"]["certificateConfigurationInfo"];
    assert_eq!(configuration["securityPolicy"], data["securityPolicy"], "{created}");
    assert_eq!(configuration["certificateBaseProfile"]["issuer"], "CN=operator-ca", "{created}");
    assert_eq!(configuration["cmfInfo"]["supportedProtocols"], json!(["EST"]), "{created}");
    assert!(created["certificateInfo"].get("certificateContents").is_none(), "no certificate is faked: {created}");
    // An earlier minor does not show it.
    let id = created["id"].as_str().unwrap();
    let older = at(&app, "2.10.0", Method::GET, &format!("/vnflcm/v2/vnf_instances/{id}"), None).await.json();
    assert!(older.get("certificateInfo").is_none(), "{older}");
}

#[tokio::test]
async fn change_flavour_takes_target_scale_levels_from_2_10_0() {
    let app = TestApp::spawn().await;
    let vnfd_id = install_sample_package(&app);
    let id = create(&app, "2.10.0", &vnfd_id).await;
    run(&app, "2.10.0", &id, "instantiate", json!({"flavourId": "small"})).await;
    let change =
        json!({"newFlavourId": "simple", "targetScaleLevelInfo": [{"aspectId": "VDU1_scale", "scaleLevel": 1}]});
    let path = format!("/vnflcm/v2/vnf_instances/{id}/change_flavour");
    let reply = at(&app, "2.3.0", Method::POST, &path, Some(change.clone())).await;
    assert!(reply.problem(400).starts_with("'/targetScaleLevelInfo' is not defined"), "{}", reply.text);
    run(&app, "2.10.0", &id, "change_flavour", change).await;
    let instance = at(&app, "2.10.0", Method::GET, &format!("/vnflcm/v2/vnf_instances/{id}"), None).await.json();
    let info = &instance["instantiatedVnfInfo"];
    assert_eq!(info["flavourId"], "simple", "{instance}");
    assert_eq!(info["scaleStatus"], json!([{"aspectId": "VDU1_scale", "scaleLevel": 1}]), "{instance}");
    let vdu1 = info["vnfcResourceInfo"].as_array().unwrap().iter().filter(|vnfc| vnfc["vduId"] == "VDU1").count();
    assert_eq!(vdu1, 2, "{instance}");
}

//! ETSI conformance points over real HTTP: ETag / If-Match (SOL003 v3.3.1 5.4.3.3.2 and
//! 5.4.3.3.4, SOL005 for packages, RFC 9110 13.1.1), and 405 before 406.

use reqwest::Method;
use serde_json::json;

use crate::helpers::{TestApp, send};
use crate::lcm_support::*;

fn patch(
    app: &TestApp,
    path: &str,
    version: Option<&str>,
    if_match: Option<&str>,
    body: &str,
) -> reqwest::RequestBuilder {
    let mut request = app
        .request(Method::PATCH, path)
        .header("Accept", "application/json")
        .header("Content-Type", "application/merge-patch+json")
        .body(body.to_owned());
    if let Some(version) = version {
        request = request.header("Version", version);
    }
    if let Some(tag) = if_match {
        // Header names are case-insensitive: sent as clients spell them, not as we do.
        request = request.header("if-MATCH", tag);
    }
    request
}

/// GET an instance (v1 or v2): its strong ETag.
async fn etag_of(app: &TestApp, path: &str, version: Option<&str>) -> String {
    let mut request = app.get(path).header("Accept", "application/json");
    if let Some(version) = version {
        request = request.header("Version", version);
    }
    let reply = send(request).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    let tag = reply.header("etag").expect("the resource carries an ETag").to_owned();
    assert!(tag.starts_with('"') && tag.ends_with('"') && !tag.starts_with("W/"), "a strong tag: {tag}");
    tag
}

#[tokio::test]
async fn if_match_guards_the_patch_of_instances_v1_and_v2() {
    let app = TestApp::spawn().await;
    let vnfd_id = install_sample_package(&app);
    for (major, version) in [(2, Some("2.0.0")), (1, None)] {
        let create = send(
            app.request(Method::POST, &format!("/vnflcm/v{major}/vnf_instances"))
                .header("Accept", "application/json")
                .header("Version", version.unwrap_or("1.3.0"))
                .json(&json!({"vnfdId": vnfd_id, "vnfInstanceName": "tagged"})),
        )
        .await;
        assert_eq!(create.status, 201, "{}", create.text);
        let id = create.json()["id"].as_str().unwrap().to_owned();
        let path = format!("/vnflcm/v{major}/vnf_instances/{id}");
        let tag = etag_of(&app, &path, version).await;
        assert_eq!(etag_of(&app, &path, version).await, tag, "the tag is stable while nothing changes");

        for stale in ["\"no-such-etag\"", "W/\"0-2.0.0\"", &tag.replace('"', "")] {
            let reply = send(patch(&app, &path, version, Some(stale), r#"{"vnfInstanceName":"stale"}"#)).await;
            assert!(reply.problem(412).contains("If-Match"), "{stale}: {}", reply.text);
        }
        let show = send(app.get(&path).header("Version", version.unwrap_or("1.3.0"))).await;
        assert_eq!(show.json()["vnfInstanceName"], "tagged", "a refused PATCH changed nothing");

        let reply = send(patch(&app, &path, version, Some(&tag), r#"{"vnfInstanceName":"renamed"}"#)).await;
        assert_eq!(reply.status, 202, "{}", reply.text);
        let op_url = reply.header("location").unwrap().to_owned();
        wait_op(&app, &op_url, &["COMPLETED"]).await;
        let changed = etag_of(&app, &path, version).await;
        assert_ne!(changed, tag, "the tag changes with the instance");
        let reply = send(patch(&app, &path, version, Some(&tag), r#"{"vnfInstanceName":"again"}"#)).await;
        reply.problem(412);
        // Any of several tags, or `*`, matches the current one.
        let several = format!("\"1-9.9.9\", {changed}");
        let reply = send(patch(&app, &path, version, Some(&several), r#"{"vnfInstanceName":"listed"}"#)).await;
        assert_eq!(reply.status, 202, "{}", reply.text);
        wait_op(&app, reply.header("location").unwrap(), &["COMPLETED"]).await;
        let reply = send(patch(&app, &path, version, Some("*"), r#"{"vnfInstanceName":"any"}"#)).await;
        assert_eq!(reply.status, 202, "{}", reply.text);
        wait_op(&app, reply.header("location").unwrap(), &["COMPLETED"]).await;
        // Without If-Match the PATCH is unconditional, as before.
        let reply = send(patch(&app, &path, version, None, r#"{"vnfInstanceName":"free"}"#)).await;
        assert_eq!(reply.status, 202, "{}", reply.text);
        wait_op(&app, reply.header("location").unwrap(), &["COMPLETED"]).await;
        // An unknown instance stays 404 whatever If-Match says.
        let unknown = format!("/vnflcm/v{major}/vnf_instances/{}", uuid::Uuid::new_v4());
        send(patch(&app, &unknown, version, Some(&tag), r#"{"vnfInstanceName":"x"}"#)).await.problem(404);
    }
}

#[tokio::test]
async fn if_match_guards_the_patch_of_packages() {
    let app = TestApp::spawn().await;
    let (package_id, _) = app.onboard_sample().await;
    let path = format!("/vnfpkgm/v1/vnf_packages/{package_id}");
    let tag = etag_of(&app, &path, None).await;
    let disable = r#"{"operationalState":"DISABLED"}"#;
    let reply = send(patch(&app, &path, None, Some("\"no-such-etag\""), disable)).await;
    reply.problem(412);
    let show = send(app.get(&path)).await;
    assert_eq!(show.json()["operationalState"], "ENABLED", "a refused PATCH changed nothing");
    let reply = send(patch(&app, &path, None, Some(&tag), disable)).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert_eq!(reply.json()["operationalState"], "DISABLED");
    let reply = send(patch(&app, &path, None, Some(&tag), r#"{"operationalState":"ENABLED"}"#)).await;
    reply.problem(412);
    let current = etag_of(&app, &path, None).await;
    assert_ne!(current, tag);
    let reply = send(patch(&app, &path, None, Some(&current), r#"{"operationalState":"ENABLED"}"#)).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
}

#[tokio::test]
async fn subscriptions_carry_a_strong_etag_per_representation() {
    let app = TestApp::spawn_with(|settings| settings.notifications.test_callback_uri = false).await;
    let reply =
        send(v2(&app, Method::POST, "/vnflcm/v2/subscriptions").json(&json!({"callbackUri": "http://127.0.0.1:9/cb"})))
            .await;
    assert_eq!(reply.status, 201, "{}", reply.text);
    let id = reply.json()["id"].as_str().unwrap().to_owned();
    let path = format!("/vnflcm/v2/subscriptions/{id}");
    let tag = etag_of(&app, &path, Some("2.0.0")).await;
    assert_eq!(etag_of(&app, &path, Some("2.0.0")).await, tag);
}

/// An unsupported method is 405 with `Allow`, whatever `Accept` asks for.
#[tokio::test]
async fn method_not_allowed_beats_not_acceptable() {
    let app = TestApp::spawn().await;
    let (package_id, _) = app.onboard_sample().await;
    let base = format!("/vnfpkgm/v1/vnf_packages/{package_id}");
    for (method, path, accept) in [
        (Method::POST, format!("{base}/vnfd"), "application/zip"),
        (Method::PUT, format!("{base}/vnfd"), "text/plain"),
        (Method::PATCH, format!("{base}/vnfd"), "application/zip"),
        (Method::DELETE, format!("{base}/vnfd"), "application/zip"),
        (Method::POST, format!("{base}/package_content"), "application/zip"),
        (Method::PUT, base.clone(), "application/zip"),
    ] {
        let reply = send(app.request(method.clone(), &path).header("Accept", accept)).await;
        assert!(reply.problem(405).contains("is not supported"), "{method} {path}");
        assert!(reply.header("allow").is_some(), "{method} {path}");
    }
    // A supported method still gets 406 for an Accept it cannot satisfy.
    let reply = send(app.get(&format!("{base}/vnfd")).header("Accept", "application/json")).await;
    reply.problem(406);
    let reply = send(app.get(&base).header("Accept", "application/zip")).await;
    reply.problem(406);
}

/// Instantiate with external virtual links and an externally managed internal VL (v2 and
/// v1): the instance info validates against the version's VnfInstance schema (checked by
/// `send` for every response) and reflects the request's cpConfig and cpProtocolData.
#[tokio::test]
async fn instance_info_reflects_external_virtual_links() {
    let app = TestApp::spawn().await;
    let vnfd_id = install_sample_package(&app);
    let protocol = json!([{
        "layerProtocol": "IP_OVER_ETHERNET",
        "ipOverEthernet": {
            "macAddress": "fa:16:3e:11:22:33",
            "ipAddresses": [
                {"type": "IPV4", "fixedAddresses": ["192.0.2.10"], "subnetId": "subnet-1"},
                {"type": "IPV6", "numDynamicAddresses": 1}
            ]
        }
    }]);
    for (major, version) in [(2, "2.0.0"), (1, "1.3.0")] {
        let cp_config = if major == 2 {
            json!({"c1": {"cpProtocolData": protocol}})
        } else {
            json!([{"cpInstanceId": "c1", "cpProtocolData": protocol}])
        };
        let body = json!({
            "flavourId": "simple",
            "extVirtualLinks": [{
                "id": "ext-vl-1", "resourceId": "net-ext-1",
                "extCps": [{"cpdId": "VDU1_CP1", "cpConfig": cp_config}]
            }],
            "extManagedVirtualLinks": [{
                "id": "ext-managed-1", "vnfVirtualLinkDescId": "internalVL1", "resourceId": "net-int-1"
            }]
        });
        let create = send(
            app.request(Method::POST, &format!("/vnflcm/v{major}/vnf_instances"))
                .header("Version", version)
                .json(&json!({"vnfdId": vnfd_id})),
        )
        .await;
        assert_eq!(create.status, 201, "{}", create.text);
        let id = create.json()["id"].as_str().unwrap().to_owned();
        let path = format!("/vnflcm/v{major}/vnf_instances/{id}");
        let reply =
            send(app.request(Method::POST, &format!("{path}/instantiate")).header("Version", version).json(&body))
                .await;
        assert_eq!(reply.status, 202, "{}", reply.text);
        wait_op(&app, reply.header("location").unwrap(), &["COMPLETED"]).await;
        let instance = send(app.get(&path).header("Version", version)).await.json();
        let info = &instance["instantiatedVnfInfo"];

        let ext_cps = info["extCpInfo"].as_array().unwrap();
        assert!(!ext_cps.is_empty(), "{info}");
        let ext_cp = ext_cps.iter().find(|cp| cp["cpdId"] == "VDU1_CP1").expect("VDU1_CP1 is exposed");
        let ip = &ext_cp["cpProtocolInfo"][0]["ipOverEthernet"];
        assert_eq!(ip["macAddress"], "fa:16:3e:11:22:33", "{ext_cp}");
        assert_eq!(ip["ipAddresses"][0], json!({"type": "IPV4", "addresses": ["192.0.2.10"], "subnetId": "subnet-1"}));
        assert_eq!(ip["ipAddresses"][1], json!({"type": "IPV6", "addresses": [], "isDynamic": true}));
        let vnfc_cp_id = ext_cp["associatedVnfcCpId"].as_str().expect("an external CP names its VNFC CP");
        let vnfc_cps: Vec<&serde_json::Value> = info["vnfcResourceInfo"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|vnfc| vnfc["vnfcCpInfo"].as_array().unwrap())
            .collect();
        let vnfc_cp = vnfc_cps.iter().find(|cp| cp["id"] == vnfc_cp_id).expect("the VNFC CP exists");
        assert_eq!(vnfc_cp["cpdId"], "VDU1_CP1");
        if major == 2 {
            assert_eq!(ext_cp["cpConfigId"], "c1", "{ext_cp}");
            assert_eq!(vnfc_cp["vnfExtCpId"], ext_cp["id"]);
            assert_eq!(
                info["extVirtualLinkInfo"][0]["currentVnfExtCpData"][0]["cpConfig"]["c1"]["cpProtocolData"],
                protocol
            );
        }
        let link = &info["extVirtualLinkInfo"][0];
        assert_eq!(
            link["resourceHandle"],
            json!({"resourceId": "net-ext-1"}),
            "absent attributes are omitted, not null"
        );
        let managed = &info["extManagedVirtualLinkInfo"][0];
        assert_eq!(managed["id"], "ext-managed-1");
        assert_eq!(managed["networkResource"], json!({"resourceId": "net-int-1"}));
    }
}

/// `[http] validate_responses`: a stored document that no longer satisfies the schema is
/// sent as it is, logged and counted; valid responses are not.
#[tokio::test]
async fn a_running_server_counts_responses_that_violate_their_schema() {
    let app = TestApp::spawn_with(|settings| settings.http.validate_responses = true).await;
    let vnfd_id = install_sample_package(&app);
    let id = create_instance(&app, &vnfd_id, "valid").await;
    let path = format!("/vnflcm/v2/vnf_instances/{id}");
    let violations = |metrics: &str| -> f64 {
        metrics
            .lines()
            .filter(|line| line.starts_with("solgate_response_schema_violations_total{"))
            .filter_map(|line| line.rsplit(' ').next()?.parse::<f64>().ok())
            .sum()
    };
    send(app.get(&path).header("Version", "2.0.0")).await;
    let metrics = send(app.get("/metrics")).await.text;
    assert_eq!(violations(&metrics), 0.0, "valid responses are not counted");

    // Break the stored document behind the API's back: vnfProvider is required.
    let database = app.database();
    let mut conn = database.conn().unwrap();
    let mut record =
        solgate_db::repo::lcm::find_instance(&mut conn, solgate_db::repo::lcm::LcmMajor::V2, &id).unwrap().unwrap();
    record.body.as_object_mut().unwrap().remove("vnfProvider");
    solgate_db::repo::lcm::update_instance(&mut conn, solgate_db::repo::lcm::LcmMajor::V2, &record).unwrap();
    // Not through `send`, whose own check would (rightly) fail this test.
    let raw = app.get(&path).header("Version", "2.0.0").send().await.unwrap();
    assert_eq!(raw.status(), 200, "the response is sent as it is");
    let metrics = send(app.get("/metrics")).await.text;
    assert_eq!(violations(&metrics), 1.0, "{metrics}");
}

/// The check every test's `send` makes fails a test on an invalid body.
#[test]
#[should_panic(expected = "violates vnflcm 2.0.0")]
fn the_test_suites_response_check_fails_on_an_invalid_body() {
    let mut headers = reqwest::header::HeaderMap::new();
    headers.insert("content-type", "application/json".parse().unwrap());
    headers.insert("version", "2.0.0".parse().unwrap());
    let reply = crate::helpers::Reply { status: 200, headers, text: r#"{"id": "i1", "vnfdId": null}"#.into() };
    crate::helpers::check_response(&Method::GET, "/vnflcm/v2/vnf_instances/i1", &reply);
}

/// `GET /{api}/v{N}/openapi.json`: the negotiated minor's description (deploy/scripts/
/// openapi-check.sh validates it with a real validator and fuzzes the server with it).
#[tokio::test]
async fn each_version_serves_its_own_openapi_description() {
    let app = TestApp::spawn().await;
    let describe = |version: &'static str| {
        let app = &app;
        async move {
            let reply = send(app.get("/vnflcm/v2/openapi.json").header("Version", version)).await;
            assert_eq!(reply.status, 200, "{}", reply.text);
            assert_eq!(reply.header("version"), Some(version));
            reply.json()
        }
    };
    let (old, new) = (describe("2.0.0").await, describe("2.1.0").await);
    assert_eq!(old["openapi"], "3.0.3");
    assert_eq!(old["info"]["version"], "2.0.0");
    assert_eq!(new["info"]["version"], "2.1.0");
    let auth_types = |document: &serde_json::Value| {
        document["components"]["schemas"]["SubscriptionAuthentication"]["properties"]["authType"]["items"]["enum"]
            .clone()
    };
    assert!(!auth_types(&old).to_string().contains("OAUTH2_CLIENT_CERT"), "2.0.0 has no OAUTH2_CLIENT_CERT");
    assert!(auth_types(&new).to_string().contains("OAUTH2_CLIENT_CERT"), "2.1.0 adds it");
    assert_eq!(old["servers"][0]["url"], format!("{}/vnflcm/v2", app.address));
    let v1 = send(app.get("/vnflcm/v1/openapi.json")).await.json();
    assert!(v1["paths"]["/vnf_instances/{vnfInstanceId}/change_vnfpkg"].is_null());
    let packages = send(app.get("/vnfpkgm/v1/openapi.json")).await.json();
    assert!(packages["paths"]["/vnf_packages/{vnfPkgId}/vnfd"]["get"].is_object());
}

/// A flavour that exposes no external CP (the sample's `small`) has no `extCpInfo` at all:
/// SOL003 allows 1..N entries, never an empty list (checked by `send`).
#[tokio::test]
async fn a_flavour_without_external_cps_lists_none() {
    let app = TestApp::spawn().await;
    let vnfd_id = install_sample_package(&app);
    let id = create_instance(&app, &vnfd_id, "no-ext-cps").await;
    wait_op(&app, &task(&app, &id, "instantiate", json!({"flavourId": "simple"})).await, &["COMPLETED"]).await;
    assert!(show_instance(&app, &id).await["instantiatedVnfInfo"]["extCpInfo"].is_array());
    wait_op(&app, &task(&app, &id, "change_flavour", json!({"newFlavourId": "small"})).await, &["COMPLETED"]).await;
    let info = show_instance(&app, &id).await["instantiatedVnfInfo"].clone();
    assert_eq!(info["flavourId"], "small");
    assert!(info.get("extCpInfo").is_none(), "{info}");
}

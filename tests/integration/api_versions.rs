//! The api_versions resources: bodies equal to Tacker's, headers, deprecation, retirement.

use serde_json::json;
use solgate_schemas::{Api, VersionPolicy};

use crate::helpers::{TestApp, newest, send};

#[tokio::test]
async fn vnflcm_api_versions_match_tacker() {
    let app = TestApp::spawn().await;
    let reply = send(app.get("/vnflcm/api_versions")).await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.header("content-type"), Some("application/json"));
    // Without a Version the newest served version answers (Tacker: its only one, 2.0.0).
    assert_eq!(reply.header("version"), Some(newest(Api::Vnflcm, 2).as_str()));
    assert_eq!(reply.header("accept-ranges"), Some("none"));
    let body = reply.json();
    assert_eq!(body["uriPrefix"], "/vnflcm");
    // Tacker's body A lists 1.3.0 and 2.0.0; the registry may list more minors, each
    // in ascending order and none deprecated by default.
    let versions: Vec<&str> =
        body["apiVersions"].as_array().unwrap().iter().map(|v| v["version"].as_str().unwrap()).collect();
    assert!(versions.contains(&"1.3.0") && versions.contains(&"2.0.0"), "{versions:?}");
    assert!(versions.windows(2).all(|w| semver::Version::parse(w[0]).unwrap() < semver::Version::parse(w[1]).unwrap()));
    assert!(
        body["apiVersions"]
            .as_array()
            .unwrap()
            .iter()
            .all(|v| v["isDeprecated"] == false && v.get("retirementDate").is_none())
    );

    let v2 = send(app.get("/vnflcm/v2/api_versions")).await;
    assert_eq!(v2.status, 200);
    assert_eq!(v2.json()["uriPrefix"], "/vnflcm/v2");
    assert!(
        v2.json()["apiVersions"].as_array().unwrap().iter().all(|v| v["version"].as_str().unwrap().starts_with("2."))
    );
    assert!(v2.json()["apiVersions"].as_array().unwrap().iter().any(|v| v["version"] == "2.0.0"));

    // Tacker serves v1's without Version; solgate adds Version and Accept-Ranges.
    let v1 = send(app.get("/vnflcm/v1/api_versions")).await;
    assert_eq!(v1.status, 200);
    assert_eq!(v1.json()["uriPrefix"], "/vnflcm/v1");
    assert!(v1.json()["apiVersions"].as_array().unwrap().iter().any(|v| v["version"] == "1.3.0"));
    assert!(v1.header("version").unwrap().starts_with("1."));
    assert_eq!(v1.header("accept-ranges"), Some("none"));
}

/// With the minors Tacker never shipped retired, the three bodies are Tacker's, value for value.
#[tokio::test]
async fn with_only_tackers_versions_the_bodies_are_tackers() {
    let registry = solgate_schemas::Registry::builtin().unwrap();
    let extra: Vec<VersionPolicy> = [1, 2]
        .into_iter()
        .flat_map(|major| registry.supported(Api::Vnflcm, major).map(|v| v.version_string()).collect::<Vec<_>>())
        .filter(|version| version != "1.3.0" && version != "2.0.0")
        .map(|version| VersionPolicy {
            api: Api::Vnflcm,
            version,
            deprecated: true,
            deprecated_since: None,
            retirement_date: None,
            retired: true,
        })
        .collect();
    let app = TestApp::spawn_with(move |settings| settings.versions = extra).await;
    let tacker = [
        (
            "/vnflcm/api_versions",
            json!({"uriPrefix": "/vnflcm", "apiVersions": [{"version": "1.3.0", "isDeprecated": false}, {"version": "2.0.0", "isDeprecated": false}]}),
        ),
        (
            "/vnflcm/v2/api_versions",
            json!({"uriPrefix": "/vnflcm/v2", "apiVersions": [{"version": "2.0.0", "isDeprecated": false}]}),
        ),
        (
            "/vnflcm/v1/api_versions",
            json!({"uriPrefix": "/vnflcm/v1", "apiVersions": [{"version": "1.3.0", "isDeprecated": false}]}),
        ),
    ];
    for (path, body) in tacker {
        let reply = send(app.get(path)).await;
        assert_eq!(reply.status, 200, "{path}");
        assert_eq!(reply.json(), body, "{path}");
    }
}

#[tokio::test]
async fn vnfpkgm_api_versions_are_served() {
    let app = TestApp::spawn().await;
    for (path, prefix) in [("/vnfpkgm/api_versions", "/vnfpkgm"), ("/vnfpkgm/v1/api_versions", "/vnfpkgm/v1")] {
        let reply = send(app.get(path)).await;
        assert_eq!(reply.status, 200, "{path}: {}", reply.text);
        let body = reply.json();
        assert_eq!(body["uriPrefix"], prefix);
        let versions = body["apiVersions"].as_array().unwrap();
        assert!(!versions.is_empty());
        assert!(versions.iter().all(|v| v["version"].as_str().unwrap().starts_with("1.")));
        assert_eq!(reply.header("version"), versions.last().unwrap()["version"].as_str());
    }
}

#[tokio::test]
async fn api_versions_accept_any_well_formed_version_and_refuse_malformed() {
    let app = TestApp::spawn().await;
    // The real client sends 2.0.0 even to v1; an unsupported one is ignored (Tacker: 9.9.9 → 200).
    for (path, version) in [
        ("/vnflcm/v1/api_versions", "2.0.0"),
        ("/vnflcm/v2/api_versions", "9.9.9"),
        ("/vnflcm/api_versions", "1.3.0"),
        ("/vnflcm/v2/api_versions", "2.0.0-impl:example.com:x:1"),
    ] {
        let reply = send(app.get(path).header("Version", version)).await;
        assert_eq!(reply.status, 200, "{path} {version}");
    }
    // A supported version is echoed back.
    let reply = send(app.get("/vnflcm/api_versions").header("Version", "1.3.0")).await;
    assert_eq!(reply.header("version"), Some("1.3.0"));

    let reply = send(app.get("/vnflcm/v2/api_versions").header("Version", "2.0")).await;
    assert_eq!(reply.problem(400), "Version String 2.0 is of invalid format. Must be of format Major.Minor.Patch.");
}

#[tokio::test]
async fn other_methods_on_api_versions_are_405_without_version() {
    let app = TestApp::spawn().await;
    for path in
        ["/vnflcm/api_versions", "/vnflcm/v2/api_versions", "/vnflcm/v1/api_versions", "/vnfpkgm/v1/api_versions"]
    {
        for method in [reqwest::Method::POST, reqwest::Method::PUT, reqwest::Method::DELETE, reqwest::Method::PATCH] {
            // Tacker answers 400 to a POST without Version on v2; solgate answers 405 everywhere.
            let reply = send(app.request(method.clone(), path)).await;
            assert_eq!(reply.problem(405), format!("Method {method} is not supported."));
            assert_eq!(reply.header("allow"), Some("GET"));
        }
    }
}

#[tokio::test]
async fn deprecated_version_gets_headers_and_retirement_date() {
    let app = TestApp::spawn_with(|settings| {
        settings.versions = vec![VersionPolicy {
            api: Api::Vnflcm,
            version: "2.0.0".into(),
            deprecated: true,
            deprecated_since: Some("2026-10-01T00:00:00Z".parse().unwrap()),
            retirement_date: Some("2027-06-30T00:00:00Z".parse().unwrap()),
            retired: false,
        }];
    })
    .await;
    let reply = send(app.get("/vnflcm/v2/api_versions")).await;
    let body = reply.json();
    let entry = body["apiVersions"].as_array().unwrap().iter().find(|v| v["version"] == "2.0.0").unwrap().clone();
    assert_eq!(entry, json!({"version": "2.0.0", "isDeprecated": true, "retirementDate": "2027-06-30T00:00:00Z"}));
    // Deprecation (RFC 9745) and Sunset (RFC 8594) on every response using the version,
    // errors included.
    let reply = send(app.get("/vnflcm/v2/nowhere").header("Version", "2.0.0")).await;
    assert_eq!(reply.status, 404);
    assert_eq!(reply.header("deprecation"), Some("@1790812800"));
    assert_eq!(reply.header("sunset"), Some("Wed, 30 Jun 2027 00:00:00 GMT"));
    // Not on another version.
    let reply = send(app.get("/vnflcm/v1/api_versions")).await;
    assert_eq!(reply.header("deprecation"), None);
    assert_eq!(reply.header("sunset"), None);
}

#[tokio::test]
async fn retired_version_is_406_and_not_listed() {
    // Retire the oldest version of a major that has several, so the major stays served.
    let registry = solgate_schemas::Registry::builtin().unwrap();
    let (api, major) = [(Api::Vnflcm, 2), (Api::Vnflcm, 1), (Api::Vnfpkgm, 1)]
        .into_iter()
        .find(|(api, major)| registry.supported(*api, *major).count() > 1)
        .expect("some major has more than one minor");
    let oldest = registry.supported(api, major).next().unwrap().version_string();
    let retired = oldest.clone();
    let app = TestApp::spawn_with(move |settings| {
        settings.versions = vec![VersionPolicy {
            api,
            version: retired,
            deprecated: true,
            deprecated_since: None,
            retirement_date: None,
            retired: true,
        }];
    })
    .await;
    let listed = send(app.get(&format!("/{api}/api_versions"))).await.json();
    assert!(listed["apiVersions"].as_array().unwrap().iter().all(|v| v["version"] != oldest.as_str()), "{listed}");
    let per_major = send(app.get(&format!("/{api}/v{major}/api_versions"))).await.json();
    let versions = per_major["apiVersions"].as_array().unwrap();
    assert!(!versions.is_empty() && versions.iter().all(|v| v["version"] != oldest.as_str()), "{per_major}");

    let reply = send(app.get(&format!("/{api}/v{major}/no_such_resource")).header("Version", oldest.as_str())).await;
    assert_eq!(reply.problem(406), format!("Version {oldest} not supported."));
}

#[tokio::test]
async fn every_listed_version_is_served_and_unlisted_ones_are_406() {
    let app = TestApp::spawn().await;
    for (api, resource) in [("vnflcm", "vnf_instances"), ("vnfpkgm", "vnf_packages")] {
        let listed = send(app.get(&format!("/{api}/api_versions"))).await.json();
        let versions: Vec<String> = listed["apiVersions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v["version"].as_str().unwrap().to_owned())
            .collect();
        assert!(!versions.is_empty());
        for version in &versions {
            let major = version.split('.').next().unwrap();
            let reply = send(app.get(&format!("/{api}/v{major}/{resource}")).header("Version", version.as_str())).await;
            assert_eq!(reply.status, 200, "{api} {version}: {}", reply.text);
            assert_eq!(reply.header("version"), Some(version.as_str()), "the version asked for is the version used");
        }
        // A minor one above the newest of each major is not served.
        for version in &versions {
            let mut parts: Vec<u64> = version.split('.').map(|p| p.parse().unwrap()).collect();
            parts[1] += 1;
            let unlisted = format!("{}.{}.{}", parts[0], parts[1], parts[2]);
            if versions.contains(&unlisted) {
                continue;
            }
            let reply =
                send(app.get(&format!("/{api}/v{}/{resource}", parts[0])).header("Version", unlisted.as_str())).await;
            assert_eq!(reply.problem(406), format!("Version {unlisted} not supported."));
        }
    }
}

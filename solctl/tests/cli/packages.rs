//! `vnf package …` / `package …`: every command, `onboard` of a directory and of a zip.

use actix_web::{App, HttpResponse, HttpServer, web};

use crate::helpers::{Server, sample_package_dir};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_package_command() {
    let server = Server::start().await;

    // onboard the repository's sample directory, as the README's quick start does
    let dir = sample_package_dir();
    let onboarded = server.ok(&["package", "onboard", dir.to_str().unwrap()]).await;
    assert!(onboarded.stdout.contains("| Onboarding State") && onboarded.stdout.contains("ONBOARDED"), "{onboarded:?}");
    assert!(onboarded.stdout.contains("3f1c2a9e-7b4d-4e21-9c55-0a8d6e2b7f10"), "the sample's vnfdId: {onboarded:?}");
    assert!(onboarded.stderr.contains(": ONBOARDED"), "progress on stderr: {onboarded:?}");

    // create, upload --wait, show
    let created =
        server.ok(&["vnf", "package", "create", "--user-data", "owner=ops", "stage=lab", "-f", "json"]).await.json();
    assert_eq!(created["Onboarding State"], "CREATED");
    assert_eq!(created["User Defined Data"], serde_json::json!({"owner": "ops", "stage": "lab"}));
    let id = created["ID"].as_str().unwrap().to_owned();
    let vnfd_id = uuid::Uuid::new_v4().to_string();
    let csar = solgate_vnfpkg::testing::CsarBuilder::sample().descriptor_id(&vnfd_id).to_bytes().unwrap();
    let zip = server.file("pkg.zip", &csar);
    let uploaded = server.ok(&["vnf", "package", "upload", &id, "--path", zip.to_str().unwrap(), "--wait"]).await;
    assert!(
        uploaded.stdout.contains(&format!("Upload request for VNF package {id} has been accepted")),
        "{uploaded:?}"
    );
    let shown = server.ok(&["vnf", "package", "show", &id, "-f", "json"]).await.json();
    assert_eq!(shown["Onboarding State"], "ONBOARDED");
    assert_eq!(shown["VNFD ID"], vnfd_id.as_str());

    // list in tackerclient's columns, with its query options
    let list = server.ok(&["vnf", "package", "list"]).await;
    for heading in ["| Id ", "Vnf Product Name", "Onboarding State", "Usage State", "Operational State", "Links"] {
        assert!(list.stdout.contains(heading), "{heading}: {list:?}");
    }
    let all = server
        .ok(&["vnf", "package", "list", "--filter", &format!("(eq,vnfdId,{vnfd_id})"), "--all_fields", "-f", "json"])
        .await
        .json();
    assert_eq!(all.as_array().unwrap().len(), 1, "{all}");
    assert!(all[0]["Software Images"].is_array() && all[0]["Vnfd Id"] == vnfd_id.as_str(), "{all}");
    let fields = server
        .ok(&["vnf", "package", "list", "--fields", "softwareImages", "--exclude_default", "-f", "json"])
        .await
        .json();
    assert!(fields[0]["Software Images"].is_array(), "{fields}");
    assert!(fields[0]["Vnfd Version"].is_string(), "exclude_default adds the simple fields: {fields}");
    let excluded = server.ok(&["vnf", "package", "list", "--exclude_fields", "checksum", "-f", "json"]).await.json();
    assert!(excluded[0].get("Checksum").is_none() && excluded[0]["User Defined Data"].is_object(), "{excluded}");

    // update
    let disabled = server.ok(&["vnf", "package", "update", &id, "--operational-state", "DISABLED"]).await;
    assert!(disabled.stdout.contains("| Operational State") && disabled.stdout.contains("DISABLED"), "{disabled:?}");
    let enabled = server
        .ok(&[
            "vnf",
            "package",
            "update",
            &id,
            "--operational-state",
            "ENABLED",
            "--user-data",
            "stage=prod",
            "-f",
            "json",
        ])
        .await
        .json();
    assert_eq!(enabled["Operational State"], "ENABLED");
    assert_eq!(enabled["User Defined Data"]["stage"], "prod");

    // downloads: the package as uploaded, the VNFD, an artifact
    let out = server.dir.path().join("downloaded.zip");
    server.ok(&["vnf", "package", "download", &id, "--file", out.to_str().unwrap()]).await;
    assert_eq!(std::fs::read(&out).unwrap(), csar);
    let vnfd = server.dir.path().join("vnfd.zip");
    server.ok(&["vnf", "package", "download", &id, "--vnfd", "--type", "both", "--file", vnfd.to_str().unwrap()]).await;
    assert!(std::fs::read(&vnfd).unwrap().starts_with(b"PK"), "a zip of the VNFD files");
    // The sample's VNFD is several files: text/plain is refused (406), as SOL005 says.
    let text = server.solctl(&["vnf", "package", "download", &id, "--vnfd", "--type", "text/plain"]).await;
    assert_eq!(text.code, 1, "{text:?}");
    assert!(text.stderr.contains("Not Acceptable (406)") && text.stderr.contains("multiple yaml files"), "{text:?}");
    let script = server.ok(&["vnf", "package", "artifact", "download", &id, "Scripts/install.sh"]).await;
    assert_eq!(
        script.stdout.as_bytes(),
        solgate_vnfpkg::testing::CsarBuilder::sample().get("Scripts/install.sh").unwrap()
    );

    // upload --url from a web server on this machine
    let other = solgate_vnfpkg::testing::CsarBuilder::sample()
        .descriptor_id(&uuid::Uuid::new_v4().to_string())
        .to_bytes()
        .unwrap();
    let source = PackageSource::start(other);
    let from_uri = server.ok(&["package", "create", "-f", "value", "-c", "ID"]).await.value();
    let fetched = server
        .ok(&[
            "package",
            "upload",
            &from_uri,
            "--url",
            &source.url,
            "--user-name",
            "u",
            "--password",
            "p",
            "--wait",
            "-f",
            "json",
        ])
        .await
        .json();
    assert_eq!(fetched["Onboarding State"], "ONBOARDED", "{fetched}");

    // delete: an ENABLED package is refused (exit 1, the ProblemDetails), DISABLED ones go
    let refused = server.solctl(&["package", "delete", &id]).await;
    assert_eq!(refused.code, 1, "{refused:?}");
    assert!(refused.stderr.contains("(409)"), "{refused:?}");
    for package in [&id, &from_uri] {
        server.ok(&["package", "update", package, "--operational-state", "DISABLED"]).await;
    }
    let deleted = server.ok(&["vnf", "package", "delete", &id, &from_uri]).await;
    assert!(deleted.stdout.contains("All specified VNF packages are deleted successfully"), "{deleted:?}");
    let missing = server.solctl(&["package", "show", &id]).await;
    assert_eq!(missing.code, 1);
    assert!(missing.stderr.contains("Not Found (404)"), "{missing:?}");
}

/// A failed onboarding ends `onboard` with exit 1 and the server's reason.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn onboarding_failure_is_shown() {
    let server = Server::start().await;
    let broken = solgate_vnfpkg::testing::CsarBuilder::sample().remove(solgate_vnfpkg::testing::SAMPLE_TYPES);
    let zip = server.file("broken.zip", broken.to_bytes().unwrap());
    let run = server.solctl(&["package", "onboard", zip.to_str().unwrap()]).await;
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stderr.contains("ERROR:"), "{run:?}");
    let not_a_dir = server.solctl(&["package", "onboard", "/nonexistent/package"]).await;
    assert_eq!(not_a_dir.code, 2, "{not_a_dir:?}");
}

struct PackageSource {
    url: String,
}

impl PackageSource {
    fn start(zip: Vec<u8>) -> PackageSource {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let zip = web::Data::new(zip);
        let server = HttpServer::new(move || {
            App::new().app_data(zip.clone()).route(
                "/pkg.zip",
                web::get().to(|zip: web::Data<Vec<u8>>| async move {
                    HttpResponse::Ok().content_type("application/zip").body(zip.get_ref().clone())
                }),
            )
        })
        .workers(1)
        .listen(listener)
        .unwrap()
        .run();
        tokio::spawn(server);
        PackageSource { url: format!("http://127.0.0.1:{port}/pkg.zip") }
    }
}

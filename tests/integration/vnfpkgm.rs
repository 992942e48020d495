//! VNF package management v1 (SOL005) over real HTTP: the life cycle, onboarding by upload
//! and from a URI, downloads with Range, bad packages, restart survival, and the rules that
//! tie packages to VNF instances.

use std::collections::BTreeSet;
use std::io::Read;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use reqwest::Method;
use serde_json::{Value, json};
use solgate_core::packages::{PackageFiles, UploadSource};
use solgate_db::repo::vnf_packages::{self, PackageRecord};
use solgate_vnfpkg::testing::{
    CsarBuilder, SAMPLE_DEPLOYMENT, SAMPLE_IMAGE, SAMPLE_INSTALL_SH, SAMPLE_TOP, SINGLE_VNFD, zip_directory,
};

use crate::helpers::{Reply, TestApp, newest, send};

const BASE: &str = "/vnfpkgm/v1/vnf_packages";

fn sample(vnfd_id: &str) -> Vec<u8> {
    CsarBuilder::sample().descriptor_id(vnfd_id).to_bytes().unwrap()
}

fn fresh_id() -> String {
    uuid::Uuid::new_v4().to_string()
}

fn store(app: &TestApp, id: &str) -> PackageFiles {
    PackageFiles::new(&app.data_dir.join("packages"), id)
}

/// The files in a package's directory (nothing for a missing directory).
fn files_in(app: &TestApp, id: &str) -> BTreeSet<String> {
    match std::fs::read_dir(store(app, id).root()) {
        Ok(entries) => entries.map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned()).collect(),
        Err(_) => BTreeSet::new(),
    }
}

async fn show(app: &TestApp, id: &str) -> Value {
    let reply = send(app.get(&format!("{BASE}/{id}"))).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    reply.json()
}

async fn patch(app: &TestApp, id: &str, body: Value) -> Reply {
    send(
        app.request(Method::PATCH, &format!("{BASE}/{id}"))
            .header("Content-Type", "application/merge-patch+json")
            .body(body.to_string()),
    )
    .await
}

async fn delete(app: &TestApp, id: &str) -> Reply {
    send(app.request(Method::DELETE, &format!("{BASE}/{id}"))).await
}

async fn download(app: &TestApp, path: &str, headers: &[(&str, &str)]) -> (u16, reqwest::header::HeaderMap, Vec<u8>) {
    let mut request = app.get(path);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    (status, headers, response.bytes().await.unwrap().to_vec())
}

fn header<'h>(headers: &'h reqwest::header::HeaderMap, name: &str) -> Option<&'h str> {
    headers.get(name).map(|value| value.to_str().unwrap())
}

fn zip_names(bytes: &[u8]) -> BTreeSet<String> {
    let archive = zip::ZipArchive::new(std::io::Cursor::new(bytes)).unwrap();
    archive.file_names().map(|name| name.unwrap().into_owned()).collect()
}

fn zip_entry(bytes: &[u8], name: &str) -> String {
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(bytes)).unwrap();
    let mut text = String::new();
    archive.by_name(name).unwrap().read_to_string(&mut text).unwrap();
    text
}

/// A stand-in web server for `upload_from_uri`: `path → (zip, expected Authorization)`.
async fn package_server(routes: Vec<(&'static str, Vec<u8>, Option<&'static str>)>) -> String {
    use actix_web::{App, HttpRequest, HttpResponse, HttpServer, web};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let routes = Arc::new(routes);
    let server = HttpServer::new(move || {
        let routes = routes.clone();
        App::new().default_service(web::to(move |req: HttpRequest| {
            let routes = routes.clone();
            async move {
                let Some((_, body, auth)) = routes.iter().find(|(path, _, _)| *path == req.path()) else {
                    return HttpResponse::NotFound().finish();
                };
                let given = req.headers().get("authorization").and_then(|value| value.to_str().ok());
                if auth.is_some() && given != *auth {
                    return HttpResponse::Unauthorized().finish();
                }
                HttpResponse::Ok().content_type("application/zip").body(body.clone())
            }
        }))
    })
    .workers(1)
    .listen(listener)
    .unwrap()
    .run();
    tokio::spawn(server);
    format!("http://127.0.0.1:{port}")
}

async fn upload_from_uri(app: &TestApp, id: &str, body: Value) -> Reply {
    send(app.request(Method::POST, &format!("{BASE}/{id}/package_content/upload_from_uri")).json(&body)).await
}

#[tokio::test]
async fn package_life_cycle_by_upload_and_from_uri() {
    let app = TestApp::spawn().await;
    let version = newest(solgate_schemas::Api::Vnfpkgm, 1);

    // Create: CREATED / DISABLED / NOT_IN_USE with the user data, absolute links, Location.
    let reply = send(app.request(Method::POST, BASE).json(&json!({"userDefinedData": {"owner": "team-a"}}))).await;
    assert_eq!(reply.status, 201, "{}", reply.text);
    assert_eq!(reply.header("version"), Some(version.as_str()));
    let created = reply.json();
    let id = created["id"].as_str().unwrap().to_owned();
    assert_eq!(reply.header("location").unwrap(), app.url(&format!("{BASE}/{id}")));
    assert_eq!(created["onboardingState"], "CREATED");
    assert_eq!(created["operationalState"], "DISABLED");
    assert_eq!(created["usageState"], "NOT_IN_USE");
    assert_eq!(created["userDefinedData"], json!({"owner": "team-a"}));
    assert_eq!(created["_links"]["self"]["href"], app.url(&format!("{BASE}/{id}")));
    assert_eq!(created["_links"]["packageContent"]["href"], app.url(&format!("{BASE}/{id}/package_content")));
    assert!(created["_links"].get("vnfd").is_none(), "no VNFD before onboarding: {created}");

    // Upload: 202 with an empty body and no Content-Type; onboarding runs in the conductor.
    let vnfd_id = fresh_id();
    let csar = sample(&vnfd_id);
    let reply = app.upload_package(&id, &csar).await;
    assert_eq!(reply.status, 202, "{}", reply.text);
    assert_eq!(reply.text, "");
    assert_eq!(reply.header("content-type"), None);
    let info = app.wait_for_onboarding(&id).await;
    assert_eq!(info["onboardingState"], "ONBOARDED", "{info}");
    // Enabled on onboarding, as Tacker does.
    assert_eq!(info["operationalState"], "ENABLED");
    assert_eq!(info["vnfdId"], vnfd_id.as_str());
    assert_eq!(info["vnfProvider"], "Solgate");
    assert_eq!(info["vnfProductName"], "Sample VNF");
    assert_eq!(info["vnfSoftwareVersion"], "1.0");
    assert_eq!(info["vnfdVersion"], "1.0");
    let zip_file = CsarBuilder::sample().descriptor_id(&vnfd_id).to_tempfile().unwrap();
    let expected = solgate_vnfpkg::inspect(zip_file.path(), &solgate_vnfpkg::Limits::default()).unwrap();
    assert_eq!(expected.size, csar.len() as u64, "the same bytes as uploaded");
    assert_eq!(info["checksum"], json!({"algorithm": "sha512", "hash": expected.checksum.hash}));
    assert_eq!(info["userDefinedData"], json!({"owner": "team-a"}));
    assert_eq!(info["_links"]["vnfd"]["href"], app.url(&format!("{BASE}/{id}/vnfd")));
    assert!(info.get("onboardingFailureDetails").is_none());
    let images = info["softwareImages"].as_array().unwrap();
    let image = images.iter().find(|image| image["id"] == "VDU1").expect("VDU1's image");
    assert_eq!(image["name"], "sample-image");
    assert_eq!(image["version"], "0.5.2");
    assert_eq!(image["containerFormat"], "BARE");
    assert_eq!(image["diskFormat"], "QCOW2");
    assert_eq!(image["minDisk"], 1, "GB");
    assert_eq!(image["minRam"], 256, "MB");
    assert_eq!(image["size"], 12_000_000_000u64, "bytes");
    assert_eq!(image["imagePath"], SAMPLE_IMAGE);
    assert_eq!(image["checksum"]["algorithm"], "sha-256");
    assert!(image["createdAt"].as_str().unwrap().ends_with('Z'));
    let artifacts: BTreeSet<&str> =
        info["additionalArtifacts"].as_array().unwrap().iter().map(|a| a["artifactPath"].as_str().unwrap()).collect();
    assert_eq!(
        artifacts,
        BTreeSet::from([SAMPLE_INSTALL_SH, SAMPLE_DEPLOYMENT]),
        "images are not additional artifacts"
    );

    // The response validates against the version's VnfPkgInfo schema.
    let registry = solgate_schemas::Registry::builtin().unwrap();
    let entry = registry.newest(solgate_schemas::Api::Vnfpkgm, 1).unwrap();
    entry.dictionary.validate("VnfPkgInfo", &info).unwrap();

    // Downloads: the zip as uploaded, whole and in part.
    let (status, headers, body) =
        download(&app, &format!("{BASE}/{id}/package_content"), &[("Accept", "application/zip")]).await;
    assert_eq!(status, 200);
    assert_eq!(header(&headers, "content-type"), Some("application/zip"));
    assert_eq!(header(&headers, "accept-ranges"), Some("bytes"));
    assert_eq!(body, csar);
    let (status, headers, body) =
        download(&app, &format!("{BASE}/{id}/package_content"), &[("Range", "bytes=0-9")]).await;
    assert_eq!(status, 206);
    assert_eq!(header(&headers, "content-range"), Some(format!("bytes 0-9/{}", csar.len()).as_str()));
    assert_eq!(body, &csar[..10]);

    // The VNFD (four YAML files: zip only).
    let (status, headers, body) = download(&app, &format!("{BASE}/{id}/vnfd"), &[("Accept", "application/zip")]).await;
    assert_eq!(status, 200);
    assert_eq!(header(&headers, "content-type"), Some("application/zip"));
    assert_eq!(
        zip_names(&body),
        BTreeSet::from(
            [
                "TOSCA-Metadata/TOSCA.meta",
                SAMPLE_TOP,
                "Definitions/sample_types.yaml",
                "Definitions/sample_df_simple.yaml",
                "Definitions/sample_df_small.yaml"
            ]
            .map(str::to_owned)
        )
    );
    assert!(zip_entry(&body, "Definitions/sample_types.yaml").contains(&vnfd_id));
    let (status, headers, _) =
        download(&app, &format!("{BASE}/{id}/vnfd"), &[("Accept", "text/plain,application/zip")]).await;
    assert_eq!((status, header(&headers, "content-type")), (200, Some("application/zip")));
    let reply = send(app.get(&format!("{BASE}/{id}/vnfd")).header("Accept", "text/plain")).await;
    assert_eq!(
        reply.problem(406),
        "VNFD is implemented as multiple yaml files, Accept header should be 'application/zip'."
    );

    // An artifact, whole and in part; python-tackerclient asks with Accept: application/json.
    let script = CsarBuilder::sample().get(SAMPLE_INSTALL_SH).unwrap().to_vec();
    let path = format!("{BASE}/{id}/artifacts/{SAMPLE_INSTALL_SH}");
    let (status, headers, body) = download(&app, &path, &[("Accept", "application/json")]).await;
    assert_eq!(status, 200);
    assert_eq!(header(&headers, "accept-ranges"), Some("bytes"));
    assert_eq!(body, script);
    let (status, headers, body) = download(&app, &path, &[("Range", "bytes=2-5")]).await;
    assert_eq!(status, 206);
    assert_eq!(header(&headers, "content-range"), Some(format!("bytes 2-5/{}", script.len()).as_str()));
    assert_eq!(body, &script[2..=5]);

    // ENABLED packages cannot be deleted; DISABLED → delete → gone, files too.
    let detail = delete(&app, &id).await.problem(409);
    assert_eq!(
        detail,
        format!(
            "VNF Package {id} cannot be deleted as its operational state is ENABLED and usage state is NOT_IN_USE."
        )
    );
    let reply = patch(&app, &id, json!({"operationalState": "DISABLED"})).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert_eq!(reply.json(), json!({"operationalState": "DISABLED"}));
    assert!(!files_in(&app, &id).is_empty());
    let reply = delete(&app, &id).await;
    assert_eq!(reply.status, 204, "{}", reply.text);
    assert_eq!(reply.header("content-type"), None);
    let detail = send(app.get(&format!("{BASE}/{id}"))).await.problem(404);
    assert_eq!(detail, format!("Can not find requested vnf package: {id}"));
    assert!(!store(&app, &id).root().exists(), "the package's files are removed");

    // The same through upload_from_uri, with the package under deploy/ that the docs use,
    // behind basic authentication.
    let deploy_sample =
        zip_directory(Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/deploy/sample-package"))).unwrap();
    let server = package_server(vec![("/sample.zip", deploy_sample.clone(), Some("Basic dm5mLXVzZXI6czNjcmV0"))]).await;
    let id = app.create_package().await;
    let reply = upload_from_uri(
        &app,
        &id,
        json!({"addressInformation": format!("{server}/sample.zip"), "userName": "vnf-user", "password": "s3cret"}),
    )
    .await;
    assert_eq!(reply.status, 202, "{}", reply.text);
    assert_eq!(reply.text, "");
    let info = app.wait_for_onboarding(&id).await;
    assert_eq!(info["onboardingState"], "ONBOARDED", "{info}");
    assert_eq!(info["vnfdId"], "3f1c2a9e-7b4d-4e21-9c55-0a8d6e2b7f10");
    assert!(!info.to_string().contains("s3cret"), "credentials never shown: {info}");
    let record = {
        let database = app.database();
        let mut conn = database.conn().unwrap();
        vnf_packages::find(&mut conn, &id).unwrap().unwrap()
    };
    assert_eq!(record.upload_source, None, "credentials are forgotten once fetched");
    let (status, _, body) = download(&app, &format!("{BASE}/{id}/package_content"), &[]).await;
    assert_eq!((status, body == deploy_sample), (200, true));
    let (status, _, body) = download(&app, &format!("{BASE}/{id}/artifacts/Scripts/install.sh"), &[]).await;
    assert_eq!(status, 200);
    assert_eq!(
        body,
        std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/deploy/sample-package/Scripts/install.sh")).unwrap()
    );
    assert_eq!(patch(&app, &id, json!({"operationalState": "DISABLED"})).await.status, 200);
    assert_eq!(delete(&app, &id).await.status, 204);
}

#[tokio::test]
async fn single_file_vnfd_is_served_as_text_or_zip() {
    let app = TestApp::spawn().await;
    let vnfd_id = fresh_id();
    let builder = CsarBuilder::single_file().descriptor_id(&vnfd_id);
    let id = app.onboard_package(&builder.to_bytes().unwrap()).await;
    let yaml = String::from_utf8(builder.get(SINGLE_VNFD).unwrap().to_vec())
        .unwrap()
        .replace(solgate_vnfpkg::testing::SAMPLE_VNFD_ID, &vnfd_id);
    for accept in [Some("text/plain"), Some("text/plain,application/zip"), None] {
        let mut request = app.get(&format!("{BASE}/{id}/vnfd"));
        if let Some(accept) = accept {
            request = request.header("Accept", accept);
        }
        let reply = send(request).await;
        assert_eq!(reply.status, 200, "{accept:?}: {}", reply.text);
        // Exactly text/plain: python-tackerclient compares the header as a string.
        assert_eq!(reply.header("content-type"), Some("text/plain"), "{accept:?}");
        assert_eq!(reply.text, yaml);
    }
    let (status, headers, body) = download(&app, &format!("{BASE}/{id}/vnfd"), &[("Accept", "application/zip")]).await;
    assert_eq!((status, header(&headers, "content-type")), (200, Some("application/zip")));
    assert_eq!(zip_names(&body), BTreeSet::from(["TOSCA-Metadata/TOSCA.meta".to_owned(), SINGLE_VNFD.to_owned()]));
    let reply = send(app.get(&format!("{BASE}/{id}/vnfd")).header("Accept", "application/json")).await;
    reply.problem(406);
}

#[tokio::test]
async fn range_requests_follow_rfc_9110() {
    let app = TestApp::spawn().await;
    let csar = sample(&fresh_id());
    let id = app.onboard_package(&csar).await;
    let size = csar.len();
    let content = format!("{BASE}/{id}/package_content");

    // Suffix, open-ended and past-the-end ranges.
    let cases = [
        ("bytes=-5", size - 5, size - 1),
        ("bytes=100-", 100, size - 1),
        ("bytes=10-999999999", 10, size - 1),
        ("bytes=0-0", 0, 0),
    ];
    for (range, first, last) in cases {
        let (status, headers, body) = download(&app, &content, &[("Range", range)]).await;
        assert_eq!(status, 206, "{range}");
        assert_eq!(header(&headers, "content-range"), Some(format!("bytes {first}-{last}/{size}").as_str()), "{range}");
        assert_eq!(header(&headers, "content-length"), Some((last - first + 1).to_string().as_str()), "{range}");
        assert_eq!(body, &csar[first..=last], "{range}");
    }

    // Unsatisfiable and multi-range: 416 ProblemDetails with the complete length.
    for range in [format!("bytes={size}-"), "bytes=-0".to_owned(), "bytes=0-1,4-5".to_owned()] {
        let reply = send(app.get(&content).header("Range", range.as_str())).await;
        let detail = reply.problem(416);
        assert!(detail.contains(&size.to_string()), "{detail}");
        assert_eq!(reply.header("content-range"), Some(format!("bytes */{size}").as_str()), "{range}");
        assert_eq!(reply.header("accept-ranges"), Some("bytes"));
    }

    // Malformed ranges, other units and If-Range: the whole file.
    for (name, value) in
        [("Range", "bytes=9-1"), ("Range", "bytes=x-"), ("Range", "lines=1-2"), ("If-Range", "\"etag\"")]
    {
        let mut headers = vec![(name, value)];
        if name == "If-Range" {
            headers.push(("Range", "bytes=0-9"));
        }
        let (status, response_headers, body) = download(&app, &content, &headers).await;
        assert_eq!(status, 200, "{name}: {value}");
        assert_eq!(header(&response_headers, "content-range"), None);
        assert_eq!(body, csar);
    }

    // Artifacts honour Range the same way.
    let script = CsarBuilder::sample().get(SAMPLE_INSTALL_SH).unwrap().to_vec();
    let artifact = format!("{BASE}/{id}/artifacts/{SAMPLE_INSTALL_SH}");
    let (status, _, body) = download(&app, &artifact, &[("Range", "bytes=-3")]).await;
    assert_eq!((status, body.as_slice()), (206, &script[script.len() - 3..]));
    let reply = send(app.get(&artifact).header("Range", format!("bytes={}-", script.len() + 10))).await;
    reply.problem(416);
    assert_eq!(reply.header("content-range"), Some(format!("bytes */{}", script.len()).as_str()));
}

#[tokio::test]
async fn upload_from_uri_failures_return_the_package_to_created() {
    let app = TestApp::spawn().await;
    let csar = sample(&fresh_id());
    let server = package_server(vec![("/pkg.zip", csar.clone(), Some("Basic dm5mLXVzZXI6czNjcmV0"))]).await;
    let id = app.create_package().await;

    let cases = [
        (json!({"addressInformation": format!("{server}/missing.zip")}), 400, "the server answered 404 Not Found"),
        (
            json!({"addressInformation": format!("{server}/pkg.zip"), "userName": "vnf-user", "password": "wrong"}),
            400,
            "the server answered 401 Unauthorized",
        ),
        (json!({"addressInformation": "http://127.0.0.1:1/pkg.zip"}), 400, "the server could not be reached"),
        // HTTPS to a server that speaks plain HTTP: the handshake fails.
        (
            json!({"addressInformation": format!("{}/pkg.zip", server.replacen("http://", "https://", 1))}),
            400,
            "the server could not be reached",
        ),
    ];
    for (request, status, expected) in cases {
        let reply = upload_from_uri(&app, &id, request.clone()).await;
        assert_eq!(reply.status, 202, "{request}: {}", reply.text);
        let info = app.wait_for_onboarding(&id).await;
        assert_eq!(info["onboardingState"], "CREATED", "{info}");
        let failure = &info["onboardingFailureDetails"];
        assert_eq!(failure["status"], status, "{info}");
        let detail = failure["detail"].as_str().unwrap();
        println!("upload_from_uri {request} -> {status}: {detail}");
        assert!(detail.contains(expected), "{detail}");
        assert!(!detail.contains("wrong"), "no credentials in details: {detail}");
        assert!(files_in(&app, &id).is_empty(), "nothing left behind: {:?}", files_in(&app, &id));
    }

    // The failure details go with the next successful onboarding.
    let reply = upload_from_uri(
        &app,
        &id,
        json!({"addressInformation": format!("{server}/pkg.zip"), "userName": "vnf-user", "password": "s3cret"}),
    )
    .await;
    assert_eq!(reply.status, 202);
    let info = app.wait_for_onboarding(&id).await;
    assert_eq!(info["onboardingState"], "ONBOARDED", "{info}");
    assert!(info.get("onboardingFailureDetails").is_none(), "{info}");
}

#[tokio::test]
async fn upload_from_uri_is_bounded_in_size() {
    let app = TestApp::spawn_with(|settings| settings.packages.max_upload_bytes = 1000).await;
    let server = package_server(vec![("/big.zip", sample(&fresh_id()), None)]).await;
    let id = app.create_package().await;
    let reply = upload_from_uri(&app, &id, json!({"addressInformation": format!("{server}/big.zip")})).await;
    assert_eq!(reply.status, 202);
    let info = app.wait_for_onboarding(&id).await;
    assert_eq!(info["onboardingState"], "CREATED");
    assert_eq!(info["onboardingFailureDetails"]["status"], 413);
    assert!(
        info["onboardingFailureDetails"]["detail"].as_str().unwrap().contains("larger than the allowed 1000 bytes")
    );
    assert!(files_in(&app, &id).is_empty());
}

/// Every kind of bad package fails onboarding with a clear reason and leaves nothing behind;
/// the same package resource then onboards a good package.
#[tokio::test]
async fn bad_packages_fail_onboarding_cleanly() {
    let app = TestApp::spawn_with(|settings| {
        settings.packages.max_uncompressed_bytes = 1 << 20;
        settings.packages.max_entries = 50;
    })
    .await;
    let mut many = CsarBuilder::sample();
    for n in 0..60 {
        many = many.file(&format!("Files/many/{n}.txt"), "x");
    }
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        ("not a zip", b"PK? no, just text".to_vec(), "the VNF package is not a valid zip archive"),
        (
            "zip bomb",
            CsarBuilder::sample().file("Files/zeros.bin", vec![0u8; 8 << 20]).to_bytes().unwrap(),
            "the VNF package expands to more than the allowed 1048576 bytes",
        ),
        ("too many entries", many.to_bytes().unwrap(), "entries, more than the allowed 50"),
        (
            "path traversal",
            CsarBuilder::sample().file("../../evil.sh", "rm -rf /").to_bytes().unwrap(),
            "unsafe entry name \"../../evil.sh\" in the VNF package: relative path segment",
        ),
        (
            "absolute path",
            CsarBuilder::sample().file("/etc/cron.d/evil", "x").to_bytes().unwrap(),
            "unsafe entry name \"/etc/cron.d/evil\" in the VNF package: absolute path",
        ),
        (
            "missing TOSCA.meta",
            CsarBuilder::sample().without_tosca_meta().to_bytes().unwrap(),
            "the VNF package has no TOSCA-Metadata/TOSCA.meta and no single YAML file at its root",
        ),
        (
            "VNFD YAML error",
            CsarBuilder::sample()
                .edit(SAMPLE_TOP, |text| text.replace("topology_template:", "topology_template: ["))
                .to_bytes()
                .unwrap(),
            "VNFD YAML error in file Definitions/sample_top.vnfd.yaml",
        ),
        (
            "artifact checksum mismatch",
            CsarBuilder::sample().artifact_hash(SAMPLE_INSTALL_SH, "SHA-256", &"0".repeat(64)).to_bytes().unwrap(),
            "checksum mismatch for Scripts/install.sh",
        ),
    ];
    let id = app.create_package().await;
    for (name, csar, expected) in cases {
        let reply = app.upload_package(&id, &csar).await;
        assert_eq!(reply.status, 202, "{name}: {}", reply.text);
        let info = app.wait_for_onboarding(&id).await;
        assert_eq!(info["onboardingState"], "CREATED", "{name}: {info}");
        assert_eq!(info["operationalState"], "DISABLED", "{name}");
        assert!(info.get("vnfdId").is_none(), "{name}: {info}");
        let failure = &info["onboardingFailureDetails"];
        assert_eq!(failure["status"], 422, "{name}: {info}");
        assert_eq!(failure["title"], "Unprocessable Entity");
        let detail = failure["detail"].as_str().unwrap();
        println!("{name} -> 422: {detail}");
        assert!(detail.contains(expected), "{name}: {detail}");
        assert!(files_in(&app, &id).is_empty(), "{name}: left behind {:?}", files_in(&app, &id));
        // Nothing outside the store either.
        assert!(!app.data_dir.join("evil.sh").exists() && !app.data_dir.join("packages/evil.sh").exists());
        let reply = send(app.get(&format!("{BASE}/{id}/package_content"))).await;
        assert_eq!(reply.problem(409), format!("VNF Package {id} onboarding state is not ONBOARDED"));
    }
    // The failure leaves no VNFD behind (Tacker defect 24): a good package onboards now.
    let info = {
        let reply = app.upload_package(&id, &sample(&fresh_id())).await;
        assert_eq!(reply.status, 202);
        app.wait_for_onboarding(&id).await
    };
    assert_eq!(info["onboardingState"], "ONBOARDED", "{info}");
    assert!(info.get("onboardingFailureDetails").is_none());
    assert_eq!(files_in(&app, &id), BTreeSet::from(["content", "package.zip", "vnfd.zip"].map(str::to_owned)));
}

#[tokio::test]
async fn a_vnfd_is_onboarded_once() {
    let app = TestApp::spawn().await;
    let vnfd_id = fresh_id();
    let first = app.onboard_package(&sample(&vnfd_id)).await;

    let second = app.create_package().await;
    assert_eq!(app.upload_package(&second, &sample(&vnfd_id)).await.status, 202);
    let info = app.wait_for_onboarding(&second).await;
    assert_eq!(info["onboardingState"], "CREATED", "{info}");
    assert_eq!(info["onboardingFailureDetails"]["status"], 409);
    let detail = info["onboardingFailureDetails"]["detail"].as_str().unwrap();
    println!("duplicate vnfdId -> 409: {detail}");
    assert!(detail.contains(&format!("vnfdId {vnfd_id} is already onboarded (VNF package {first})")), "{detail}");
    assert!(files_in(&app, &second).is_empty());
    assert_eq!(show(&app, &first).await["onboardingState"], "ONBOARDED", "the first package is untouched");

    // Once the first is gone, the second onboards the VNFD.
    assert_eq!(patch(&app, &first, json!({"operationalState": "DISABLED"})).await.status, 200);
    assert_eq!(delete(&app, &first).await.status, 204);
    assert_eq!(app.upload_package(&second, &sample(&vnfd_id)).await.status, 202);
    assert_eq!(app.wait_for_onboarding(&second).await["vnfdId"], vnfd_id.as_str());
}

#[tokio::test]
async fn upload_requests_are_checked() {
    let app = TestApp::spawn_with(|settings| settings.packages.max_upload_bytes = 64 * 1024).await;
    let csar = sample(&fresh_id());
    let id = app.create_package().await;
    let content = format!("{BASE}/{id}/package_content");

    // 404 with Tacker's text, also for ids that are not UUIDs.
    for unknown in [fresh_id(), "not-a-uuid".to_owned()] {
        let reply = app.upload_package(&unknown, &csar).await;
        assert_eq!(reply.problem(404), format!("Can not find requested vnf package: {unknown}"));
    }
    // Wrong Content-Type → 415; too large → 413; empty → 400: nothing stored, still CREATED.
    let reply = send(app.request(Method::PUT, &content).header("Content-Type", "text/plain").body(csar.clone())).await;
    assert!(reply.problem(415).contains("'text/plain'"));
    let reply = app.upload_package(&id, &vec![7u8; 100 * 1024]).await;
    assert_eq!(reply.problem(413), "The VNF package is larger than the allowed 65536 bytes.");
    let reply = app.upload_package(&id, b"").await;
    assert_eq!(reply.problem(400), "The request body is empty: send the VNF package zip.");
    assert_eq!(show(&app, &id).await["onboardingState"], "CREATED");
    assert!(files_in(&app, &id).is_empty(), "{:?}", files_in(&app, &id));
    // Downloads need an onboarded package.
    for path in [content.clone(), format!("{BASE}/{id}/vnfd"), format!("{BASE}/{id}/artifacts/{SAMPLE_INSTALL_SH}")] {
        let reply = send(app.get(&path).header("Accept", "application/zip")).await;
        assert_eq!(reply.problem(409), format!("VNF Package {id} onboarding state is not ONBOARDED"), "{path}");
    }

    // application/octet-stream is accepted too.
    let reply =
        send(app.request(Method::PUT, &content).header("Content-Type", "application/octet-stream").body(csar.clone()))
            .await;
    assert_eq!(reply.status, 202, "{}", reply.text);
    assert_eq!(app.wait_for_onboarding(&id).await["onboardingState"], "ONBOARDED");

    // Not CREATED any more: 409, checked before the Content-Type (as Tacker).
    let reply = send(app.request(Method::PUT, &content).header("Content-Type", "text/plain").body("x")).await;
    assert_eq!(reply.problem(409), format!("VNF Package {id} onboarding state is not CREATED"));
    let reply = upload_from_uri(&app, &id, json!({"addressInformation": "http://127.0.0.1:1/x.zip"})).await;
    assert_eq!(reply.problem(409), format!("VNF Package {id} onboarding state is not CREATED"));

    // Bad upload_from_uri bodies: schema (naming the pointer) and address.
    let other = app.create_package().await;
    let reply = upload_from_uri(&app, &other, json!({"userName": "u"})).await;
    assert!(reply.problem(400).contains("\"addressInformation\" is a required property"));
    for (address, rule) in [
        ("ftp://example.com/x.zip", "uses the scheme `ftp`; only http and https are allowed."),
        ("not a url", "is not an absolute URI."),
        ("file:///etc/passwd", "uses the scheme `file`; only http and https are allowed."),
    ] {
        let reply = upload_from_uri(&app, &other, json!({"addressInformation": address})).await;
        assert_eq!(
            reply.problem(400),
            format!("Vnf package url '{address}' is invalid: addressInformation {address} {rule}")
        );
    }

    // Artifacts: undeclared → 404; traversal → 400, never a file outside the package.
    let reply = send(app.get(&format!("{BASE}/{id}/artifacts/Definitions/sample_top.vnfd.yaml"))).await;
    assert_eq!(
        reply.problem(404),
        format!("Can not find requested artifact path Definitions/sample_top.vnfd.yaml in vnf package {id}.")
    );
    for path in ["Scripts/..%2F..%2Fpackage.zip", "..%2F..%2F..%2Fsolgate.db", "Scripts/%2E%2E/%2E%2E/package.zip"] {
        let reply = send(app.get(&format!("{BASE}/{id}/artifacts/{path}"))).await;
        assert!(matches!(reply.status, 400 | 404), "{path}: {} {}", reply.status, reply.text);
        assert_eq!(reply.header("content-type"), Some("application/problem+json"), "{path}");
    }
}

/// An upload that breaks off (the client goes away, or the body grows past the limit
/// without a Content-Length) leaves no partial file and the package CREATED.
#[tokio::test]
async fn broken_uploads_leave_nothing_behind() {
    let app = TestApp::spawn_with(|settings| settings.packages.max_upload_bytes = 256 * 1024).await;
    let id = app.create_package().await;
    let content = format!("{BASE}/{id}/package_content");
    let chunk = || Ok::<_, std::io::Error>(bytes_of(64 * 1024));

    // Chunked, no Content-Length, 1 MiB against a 256 KiB limit: 413 (or the connection is
    // closed on the sender), either way nothing is kept.
    let body = futures::stream::iter((0..16).map(move |_| chunk()));
    let sent = app
        .request(Method::PUT, &content)
        .header("Content-Type", "application/zip")
        .body(reqwest::Body::wrap_stream(body))
        .send()
        .await;
    if let Ok(response) = sent {
        assert_eq!(response.status().as_u16(), 413);
    }
    // The client dies half-way through.
    let body = futures::stream::iter(vec![chunk(), Err(std::io::Error::other("client crashed"))]);
    let sent = app
        .request(Method::PUT, &content)
        .header("Content-Type", "application/zip")
        .body(reqwest::Body::wrap_stream(body))
        .send()
        .await;
    assert!(sent.is_err(), "the request cannot complete");

    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !files_in(&app, &id).is_empty() {
        assert!(std::time::Instant::now() < deadline, "left behind: {:?}", files_in(&app, &id));
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(show(&app, &id).await["onboardingState"], "CREATED");
    // And the package still takes a good upload.
    assert_eq!(app.upload_package(&id, &sample(&fresh_id())).await.status, 202);
    assert_eq!(app.wait_for_onboarding(&id).await["onboardingState"], "ONBOARDED");
}

fn bytes_of(length: usize) -> Vec<u8> {
    (0..length).map(|n| (n % 251) as u8).collect()
}

#[tokio::test]
async fn create_and_patch_rules() {
    let app = TestApp::spawn().await;
    let reply = send(app.request(Method::POST, BASE).json(&json!({"userDefinedData": "x"}))).await;
    assert!(reply.problem(400).contains("/userDefinedData"));
    let reply = send(app.request(Method::POST, BASE).header("Content-Type", "application/json").body("{")).await;
    assert!(reply.problem(400).starts_with("Malformed request body"));
    // No body at all is an empty request.
    let reply = send(app.request(Method::POST, BASE)).await;
    assert_eq!(reply.status, 201, "{}", reply.text);
    assert_eq!(reply.json()["userDefinedData"], json!({}));

    let id = app.create_package().await;
    // Operational state only once ONBOARDED.
    let reply = patch(&app, &id, json!({"operationalState": "ENABLED"})).await;
    assert_eq!(reply.problem(409), format!("VNF Package {id} onboarding state is not ONBOARDED"));
    // User data: a merge patch; only real changes are reported.
    let reply = patch(&app, &id, json!({"userDefinedData": {"a": "1", "b": "2"}})).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert_eq!(reply.header("content-type"), Some("application/json"));
    assert_eq!(reply.json(), json!({"userDefinedData": {"a": "1", "b": "2"}}));
    let reply = patch(&app, &id, json!({"userDefinedData": {"a": "1", "b": null, "c": "3"}})).await;
    assert_eq!(reply.json(), json!({"userDefinedData": {"b": null, "c": "3"}}));
    assert_eq!(show(&app, &id).await["userDefinedData"], json!({"a": "1", "c": "3"}));
    let reply = patch(&app, &id, json!({"userDefinedData": {"a": "1"}})).await;
    assert!(reply.problem(409).contains("Nothing to update."));
    let reply = patch(&app, &id, json!({"operationalState": "PAUSED"})).await;
    assert!(reply.problem(400).contains("/operationalState"));
    let reply = patch(&app, &id, json!({})).await;
    reply.problem(400);

    app.upload_package(&id, &sample(&fresh_id())).await;
    app.wait_for_onboarding(&id).await;
    let reply = patch(&app, &id, json!({"operationalState": "ENABLED"})).await;
    assert_eq!(reply.problem(409), format!("VNF Package {id} is already in ENABLED operational state"));
    let reply = patch(&app, &id, json!({"operationalState": "DISABLED", "userDefinedData": {"a": "1"}})).await;
    assert_eq!(reply.json(), json!({"operationalState": "DISABLED"}));
    let reply =
        send(app.request(Method::PATCH, &format!("{BASE}/{}", fresh_id())).json(&json!({"userDefinedData": {}}))).await;
    reply.problem(404);
}

#[tokio::test]
async fn list_filters_selectors_and_paging() {
    let app = TestApp::spawn_with(|settings| settings.paging.vnf_package_page_size = 2).await;
    let onboarded = app.onboard_package(&sample(&fresh_id())).await;
    for _ in 0..2 {
        app.create_package().await;
    }

    // Page 1 of 2, default selectors: complex attributes left out, onboardingState kept.
    let reply = send(app.get(BASE)).await;
    assert_eq!(reply.status, 200);
    let page = reply.json();
    assert_eq!(page.as_array().unwrap().len(), 2);
    for entry in page.as_array().unwrap() {
        assert!(entry["onboardingState"].is_string(), "{entry}");
        for excluded in ["checksum", "softwareImages", "additionalArtifacts", "userDefinedData"] {
            assert!(entry.get(excluded).is_none(), "{excluded} in {entry}");
        }
    }
    let link = reply.header("link").expect("a next page");
    let next = link.split_once('<').and_then(|(_, rest)| rest.split_once('>')).unwrap().0.to_owned();
    let path = next.strip_prefix(&app.address).unwrap();
    let reply = send(app.get(path)).await;
    assert_eq!(reply.json().as_array().unwrap().len(), 1);
    assert!(reply.header("link").is_none());

    // Filters on indexed and nested attributes; all_fields; all_records.
    let reply = send(app.get(&format!("{BASE}?filter=(eq,onboardingState,ONBOARDED)&all_fields"))).await;
    let entries = reply.json();
    assert_eq!(entries.as_array().unwrap().len(), 1);
    assert_eq!(entries[0]["id"], onboarded.as_str());
    assert!(entries[0]["softwareImages"].is_array());
    assert!(entries[0]["checksum"].is_object());
    let reply = send(app.get(&format!("{BASE}?filter=(eq,softwareImages/diskFormat,QCOW2)"))).await;
    assert_eq!(reply.json().as_array().unwrap().len(), 1);
    let reply = send(app.get(&format!("{BASE}?filter=(eq,onboardingState,CREATED)&all_records=yes"))).await;
    assert_eq!(reply.json().as_array().unwrap().len(), 2);
    assert!(reply.header("link").is_none());
    let reply = send(app.get(&format!("{BASE}?filter=(eq,noSuchAttribute,1)"))).await;
    reply.problem(400);
}

/// A package that a VNF instance uses (LCM v2, for real) refuses DELETE.
#[tokio::test]
async fn a_package_in_use_is_not_deleted() {
    let app = TestApp::spawn().await;
    let (id, vnfd_id) = app.onboard_sample().await;
    let reply = send(
        app.request(Method::POST, "/vnflcm/v2/vnf_instances")
            .header("Version", "2.0.0")
            .json(&json!({"vnfdId": vnfd_id, "vnfInstanceName": "uses-the-package"})),
    )
    .await;
    assert_eq!(reply.status, 201, "{}", reply.text);
    let instance = reply.json()["id"].as_str().unwrap().to_owned();
    assert_eq!(show(&app, &id).await["usageState"], "IN_USE");

    assert_eq!(patch(&app, &id, json!({"operationalState": "DISABLED"})).await.status, 200);
    let detail = delete(&app, &id).await.problem(409);
    assert_eq!(
        detail,
        format!("VNF Package {id} cannot be deleted as its operational state is DISABLED and usage state is IN_USE.")
    );

    let reply =
        send(app.request(Method::DELETE, &format!("/vnflcm/v2/vnf_instances/{instance}")).header("Version", "2.0.0"))
            .await;
    assert_eq!(reply.status, 204, "{}", reply.text);
    assert_eq!(show(&app, &id).await["usageState"], "NOT_IN_USE");
    assert_eq!(delete(&app, &id).await.status, 204);
}

/// A package left in UPLOADING or PROCESSING by a crash is resumed or failed when solgate
/// starts again on the same data; leftovers of deleted packages are removed.
#[tokio::test]
async fn interrupted_onboarding_is_resumed_or_failed_on_restart() {
    let first = TestApp::spawn().await;
    let database = first.database();
    let store_dir = first.data_dir.join("packages");
    let put = |state: &str, source: Value| {
        let id = fresh_id();
        let now = solgate_db::repo::now_text();
        let record = PackageRecord {
            id: id.clone(),
            body: json!({"id": id, "onboardingState": state, "operationalState": "DISABLED", "usageState": "NOT_IN_USE", "userDefinedData": {}}),
            vnfd: None,
            upload_source: Some(source),
            created_at: now.clone(),
            updated_at: now,
            row_version: 0,
            project: String::new(),
        };
        vnf_packages::insert(&mut database.conn().unwrap(), &record).unwrap();
        id
    };
    // Crashed while processing: the stored zip is there.
    let processing = put("PROCESSING", json!({"kind": "stored", "owner": "a-dead-conductor"}));
    let files = PackageFiles::new(&store_dir, &processing);
    std::fs::create_dir_all(files.root()).unwrap();
    std::fs::write(files.package_zip(), sample(&fresh_id())).unwrap();
    // Half-extracted leftovers of the crashed attempt do not get in the way.
    std::fs::create_dir_all(files.content_dir().join("Scripts")).unwrap();
    std::fs::write(files.content_dir().join("Scripts/partial"), "x").unwrap();
    std::fs::create_dir_all(files.root().join(".csar-extract-crashed/Definitions")).unwrap();
    // A complete upload that the conductor never took.
    let name = PackageFiles::new_upload_name();
    let uploaded = put("UPLOADING", UploadSource::content(name.clone()).to_value());
    let files = PackageFiles::new(&store_dir, &uploaded);
    std::fs::create_dir_all(files.root()).unwrap();
    std::fs::write(files.upload(&name).unwrap(), sample(&fresh_id())).unwrap();
    // An upload whose file never completed.
    let lost = put("UPLOADING", UploadSource::content(PackageFiles::new_upload_name()).to_value());
    // A fetch that was running when its conductor died.
    let mut source = UploadSource::uri("http://127.0.0.1:1/p.zip".into(), Some("u".into()), Some("secret".into()));
    source.owner = Some("a-dead-conductor".into());
    let fetching = put("UPLOADING", source.to_value());
    // The directory of a package deleted while its files could not be removed.
    let orphan = store_dir.join(fresh_id());
    std::fs::create_dir_all(orphan.join("content")).unwrap();

    let second = TestApp::spawn_with_data_dir(&first.data_dir, |_| {}).await;
    for id in [&processing, &uploaded] {
        let info = second.wait_for_onboarding(id).await;
        assert_eq!(info["onboardingState"], "ONBOARDED", "{info}");
        assert_eq!(files_in(&second, id), BTreeSet::from(["content", "package.zip", "vnfd.zip"].map(str::to_owned)));
    }
    let extracted = PackageFiles::new(&store_dir, &processing).content_dir();
    assert!(!extracted.join("Scripts/partial").exists(), "re-extracted from scratch");
    assert!(extracted.join("Scripts/install.sh").is_file());
    for (id, expected) in
        [(&lost, "interrupted before it completed"), (&fetching, "was interrupted (the conductor stopped)")]
    {
        let info = second.wait_for_onboarding(id).await;
        assert_eq!(info["onboardingState"], "CREATED", "{info}");
        assert_eq!(info["onboardingFailureDetails"]["status"], 500);
        let detail = info["onboardingFailureDetails"]["detail"].as_str().unwrap();
        assert!(detail.contains(expected), "{detail}");
        assert!(!detail.contains("secret"));
    }
    let record = vnf_packages::find(&mut database.conn().unwrap(), &fetching).unwrap().unwrap();
    assert_eq!(record.upload_source, None, "the credentials are dropped");
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while orphan.exists() {
        assert!(std::time::Instant::now() < deadline, "the orphan directory stays");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The same rules on PostgreSQL (skipped where none is configured, see `PgDatabase`).
#[tokio::test]
async fn onboarding_on_postgres() {
    let Some(app) = TestApp::spawn_on(crate::helpers::Db::Postgres, |_| {}).await else { return };
    let (first, vnfd_id) = app.onboard_sample().await;
    let second = app.create_package().await;
    assert_eq!(app.upload_package(&second, &sample(&vnfd_id)).await.status, 202);
    let info = app.wait_for_onboarding(&second).await;
    assert_eq!(info["onboardingFailureDetails"]["status"], 409, "{info}");
    let reply = send(app.get(&format!("{BASE}?filter=(eq,vnfdId,{vnfd_id})"))).await;
    assert_eq!(reply.json().as_array().unwrap().len(), 1);
    assert_eq!(patch(&app, &first, json!({"operationalState": "DISABLED"})).await.status, 200);
    assert_eq!(delete(&app, &first).await.status, 204);
    assert_eq!(app.upload_package(&second, &sample(&vnfd_id)).await.status, 202);
    assert_eq!(app.wait_for_onboarding(&second).await["onboardingState"], "ONBOARDED");
}

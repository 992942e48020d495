//! Output formats, exit codes, versions and deprecation, paging, clouds, completion.

use solgate_schemas::{Api, VersionPolicy};

use crate::helpers::{Server, solctl, solctl_env};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn formats_columns_and_exit_codes() {
    let server = Server::start_with(|settings| settings.paging.vnf_instance_page_size = 2).await;
    let vnfd_id = uuid::Uuid::new_v4().to_string();
    server.onboard_sample(&vnfd_id).await;
    let mut ids = Vec::new();
    for n in 0..5 {
        let name = format!("paged-{n}");
        ids.push(server.ok(&["vnflcm", "create", &vnfd_id, "--name", &name, "-f", "value", "-c", "ID"]).await.value());
    }
    // Five instances over pages of two: the list follows Link rel="next".
    let listed = server.ok(&["vnflcm", "list", "-f", "value", "-c", "ID"]).await;
    let mut got: Vec<&str> = listed.stdout.lines().collect();
    got.sort_unstable();
    let mut want: Vec<&str> = ids.iter().map(String::as_str).collect();
    want.sort_unstable();
    assert_eq!(got, want);

    // table: aligned, cliff borders
    let table = server.ok(&["vnflcm", "show", &ids[0]]).await;
    let lines: Vec<&str> = table.stdout.lines().collect();
    assert!(lines[0].starts_with("+--") && lines[1].starts_with("| Field") && lines[2].starts_with("+--"), "{table:?}");
    assert!(lines.iter().all(|line| line.chars().count() == lines[0].chars().count()), "aligned: {table:?}");
    // json, yaml, value, -c by heading or attribute, several -c in order
    let json = server.ok(&["vnflcm", "show", &ids[0], "-f", "json"]).await.json();
    assert_eq!(json["VNF Instance Name"], "paged-0");
    let yaml = server.ok(&["vnflcm", "show", &ids[0], "-f", "yaml", "-c", "ID", "-c", "vnfInstanceName"]).await;
    assert_eq!(yaml.stdout, format!("ID: {}\nVNF Instance Name: paged-0\n", ids[0]));
    let value = server
        .ok(&["vnflcm", "show", &ids[0], "-f", "value", "-c", "vnfInstanceName", "-c", "Instantiation State"])
        .await;
    assert_eq!(value.stdout, "paged-0\nNOT_INSTANTIATED\n");

    // 1: API errors, with title, status and detail
    let conflict = server.solctl(&["vnflcm", "create", "no-such-vnfd"]).await;
    assert_eq!(conflict.code, 1, "{conflict:?}");
    assert!(conflict.stderr.starts_with("ERROR: ") && conflict.stderr.contains("no-such-vnfd"), "{conflict:?}");
    let refused = solctl(&["--endpoint", "http://127.0.0.1:9", "vnflcm", "list"]).await;
    assert_eq!(refused.code, 1, "{refused:?}");
    assert!(refused.stderr.contains("127.0.0.1:9"), "{refused:?}");
    // 2: usage
    for args in [
        vec!["vnflcm", "frobnicate"],
        vec!["vnflcm", "show"],
        vec!["vnflcm", "list", "-c", "No Such Column"],
        vec!["vnflcm", "instantiate", &ids[0], "/nonexistent.json"],
        vec!["--api-version", "3", "vnflcm", "list"],
        vec!["vnflcm", "scale", &ids[0], "--type", "SIDEWAYS", "--aspect-id", "a"],
    ] {
        let run = server.solctl(&args).await;
        assert_eq!(run.code, 2, "{args:?}: {run:?}");
        assert!(!run.stderr.is_empty(), "{args:?} says why");
    }
    let not_json = server.file("bad.json", "{not json");
    let run = server.solctl(&["vnflcm", "instantiate", &ids[0], not_json.to_str().unwrap()]).await;
    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.stderr.contains("not JSON"), "{run:?}");
    // help and version are not errors
    assert_eq!(solctl(&["--help"]).await.code, 0);
    assert!(solctl(&["--version"]).await.stdout.starts_with("solctl "));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn versions_show_deprecation_and_the_version_used() {
    let server = Server::start_with(|settings| {
        settings.versions = vec![VersionPolicy {
            api: Api::Vnflcm,
            version: "2.1.0".into(),
            deprecated: true,
            deprecated_since: Some("2026-10-01T00:00:00Z".parse().unwrap()),
            retirement_date: Some("2099-06-30T00:00:00Z".parse().unwrap()),
            retired: false,
        }];
    })
    .await;
    let versions = server.ok(&["versions", "-f", "json"]).await.json();
    let rows = versions.as_array().unwrap();
    let row = |api: &str, version: &str| {
        rows.iter()
            .find(|row| row["API"] == api && row["Version"] == version)
            .unwrap_or_else(|| panic!("{api} {version}: {versions}"))
    };
    assert_eq!(row("vnflcm v2", "2.1.0")["Deprecated"], true);
    assert!(row("vnflcm v2", "2.1.0")["Retirement Date"].as_str().unwrap().starts_with("2099-06-30"));
    assert_eq!(row("vnflcm v2", "2.1.0")["Client Uses"], true);
    assert_eq!(row("vnflcm v2", "2.0.0")["Client Uses"], false);
    assert_eq!(row("vnflcm v1", "1.3.0")["Client Uses"], true);
    assert_eq!(row("vnfpkgm v1", "1.3.0")["URI Prefix"], "/vnfpkgm/v1");
    let table = server.ok(&["versions"]).await;
    assert!(table.stdout.contains("| API") && table.stdout.contains("Retirement Date"), "{table:?}");
    // Requests with the deprecated version warn; an exact older version does not.
    let warned = server.ok(&["vnflcm", "list"]).await;
    assert!(
        warned.stderr.contains("WARNING: the server deprecates API version 2.1.0") && warned.stderr.contains("2099"),
        "{warned:?}"
    );
    let pinned = server.ok(&["--api-version", "2.0.0", "vnflcm", "list"]).await;
    assert!(!pinned.stderr.contains("WARNING"), "{pinned:?}");
    let all = server.ok(&["vnflcm", "versions", "-f", "json"]).await.json();
    assert_eq!(all["uriPrefix"], "/vnflcm");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn named_clouds_and_environment() {
    let server = Server::start().await;
    let config = server.file(
        "clouds.yaml",
        format!(
            "clouds:\n  lab:\n    endpoint: {}\n    api_version: \"1\"\n  broken:\n    endpoint: http://127.0.0.1:9\n",
            server.endpoint
        ),
    );
    let config = config.to_str().unwrap();
    let run = solctl(&[
        "--config",
        config,
        "--cloud",
        "lab",
        "vnflcm",
        "versions",
        "--major-version",
        "1",
        "-f",
        "value",
        "-c",
        "uriPrefix",
    ])
    .await;
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.value(), "/vnflcm/v1");
    let env =
        solctl_env(&["vnflcm", "list", "-f", "json"], &[("SOLCTL_CONFIG", config), ("SOLGATE_CLOUD", "lab")]).await;
    assert_eq!(env.code, 0, "{env:?}");
    // A flag wins over the cloud.
    let flag =
        solctl(&["--config", config, "--cloud", "broken", "--endpoint", &server.endpoint, "vnflcm", "list"]).await;
    assert_eq!(flag.code, 0, "{flag:?}");
    let unknown = solctl(&["--config", config, "--cloud", "nowhere", "vnflcm", "list"]).await;
    assert_eq!(unknown.code, 2, "{unknown:?}");
    assert!(unknown.stderr.contains("no cloud 'nowhere'") && unknown.stderr.contains("broken, lab"), "{unknown:?}");
    let env = solctl_env(&["vnflcm", "list"], &[("SOLGATE_ENDPOINT", &server.endpoint)]).await;
    assert_eq!(env.code, 0, "{env:?}");
}

#[tokio::test]
async fn completion_scripts() {
    for shell in ["bash", "zsh", "fish"] {
        let run = solctl(&["completion", shell]).await;
        assert_eq!(run.code, 0, "{run:?}");
        assert!(run.stdout.contains("solctl") && run.stdout.contains("vnflcm"), "{shell}");
    }
}

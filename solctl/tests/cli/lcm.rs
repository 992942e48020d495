//! `vnflcm …` in v1 and v2: every command, `--wait` to COMPLETED, and FAILED_TEMP with
//! its error, retry, rollback, fail and cancel.

use serde_json::json;

use crate::helpers::Server;

/// The v1 shape of an external connectivity change (cpConfig is a list in SOL003 2.6.1).
const EXT_V1: &str = r#"{"extVirtualLinks": [{"id": "ext1", "resourceId": "net-1", "extCps": [{"cpdId": "VDU1_CP1", "cpConfig": [{"cpProtocolData": [{"layerProtocol": "IP_OVER_ETHERNET", "ipOverEthernet": {"ipAddresses": [{"type": "IPV4", "numDynamicAddresses": 1}]}}]}]}]}]}"#;
const EXT_V2: &str = r#"{"extVirtualLinks": [{"id": "ext1", "resourceId": "net-1", "extCps": [{"cpdId": "VDU1_CP1", "cpConfig": {"cp1": {"cpProtocolData": [{"layerProtocol": "IP_OVER_ETHERNET", "ipOverEthernet": {"ipAddresses": [{"type": "IPV4", "numDynamicAddresses": 1}]}}]}}}]}]}"#;

async fn every_command(major: &str) {
    let server = Server::start().await;
    let vnfd_id = uuid::Uuid::new_v4().to_string();
    server.onboard_sample(&vnfd_id).await;
    let v = ["--api-version", major];
    let args = |rest: &[&str]| -> Vec<String> { v.iter().chain(rest.iter()).map(|s| (*s).to_owned()).collect() };
    let run = |rest: Vec<String>| {
        let server = &server;
        async move {
            let refs: Vec<&str> = rest.iter().map(String::as_str).collect();
            server.ok(&refs).await
        }
    };
    let with = |base: &[&str], more: &[&str]| -> Vec<String> {
        v.iter().chain(base.iter()).chain(more.iter()).map(|s| (*s).to_owned()).collect()
    };

    // versions, in tackerclient's form
    let versions = run(args(&["vnflcm", "versions", "--major-version", major, "-f", "json"])).await.json();
    assert_eq!(versions["uriPrefix"], format!("/vnflcm/v{major}"));

    // subscriptions
    let callback = crate::helpers::Receiver::start();
    let subsc = server.file("subsc.json", json!({"callbackUri": callback.url}).to_string());
    let created = run(with(&["vnflcm", "subsc", "create", subsc.to_str().unwrap()], &["-f", "json"])).await.json();
    let subsc_id = created["ID"].as_str().unwrap().to_owned();
    assert_eq!(created["Callback URI"], callback.url.as_str());
    let list = run(with(&["vnflcm", "subsc", "list"], &[])).await;
    assert!(list.stdout.contains(&subsc_id) && list.stdout.contains("| Callback URI"), "{list:?}");
    let filtered = run(with(
        &["vnflcm", "subsc", "list", "--filter", &format!("(eq,callbackUri,{})", callback.url)],
        &["-f", "value", "-c", "ID"],
    ))
    .await;
    assert_eq!(filtered.value(), subsc_id);
    let shown = run(with(&["vnflcm", "subsc", "show", &subsc_id], &[])).await;
    assert!(shown.stdout.contains("| Callback URI") && shown.stdout.contains(&callback.url), "{shown:?}");

    // create, list, show, update
    let created =
        run(with(&["vnflcm", "create", &vnfd_id, "--name", "cli-1", "--description", "first"], &["-f", "json"]))
            .await
            .json();
    let id = created["ID"].as_str().unwrap().to_owned();
    assert_eq!(created["Instantiation State"], "NOT_INSTANTIATED");
    assert_eq!(created["VNF Instance Name"], "cli-1");
    let list = run(with(&["vnflcm", "list"], &[])).await;
    for heading in [
        "ID",
        "VNF Instance Name",
        "Instantiation State",
        "VNF Provider",
        "VNF Software Version",
        "VNF Product Name",
        "VNFD ID",
    ] {
        assert!(list.stdout.contains(heading), "{heading}: {list:?}");
    }
    assert!(list.stdout.contains(&id) && list.stdout.contains("NOT_INSTANTIATED"), "{list:?}");
    let update = server.file("update.json", r#"{"vnfInstanceName": "renamed", "vnfInstanceDescription": "changed"}"#);
    let updated = run(with(&["vnflcm", "update", &id, "--I", update.to_str().unwrap(), "--wait"], &[])).await;
    assert!(
        updated.stdout.contains(&format!("Update vnf:{id}")) && updated.stdout.contains("MODIFY_INFO ended COMPLETED"),
        "{updated:?}"
    );
    let name = run(with(&["vnflcm", "show", &id], &["-f", "value", "-c", "VNF Instance Name"])).await;
    assert_eq!(name.value(), "renamed");

    // instantiate, scale, heal, change-ext-conn (and change-vnfpkg in v2), each to COMPLETED
    let request = if major == "1" {
        r#"{"flavourId": "simple", "vimConnectionInfo": [{"id": "vim1", "vimType": "SOLGATE.LOCAL.V_1", "accessInfo": {"username": "u", "password": "p"}}]}"#
    } else {
        r#"{"flavourId": "simple"}"#
    };
    let instantiate = server.file("instantiate.json", request);
    let done =
        run(with(&["vnflcm", "instantiate", &id, instantiate.to_str().unwrap(), "--wait", "--timeout", "60"], &[]))
            .await;
    assert!(
        done.stdout.contains("Instantiate request for VNF Instance")
            && done.stdout.contains("INSTANTIATE ended COMPLETED"),
        "{done:?}"
    );
    assert!(
        done.stderr.contains("INSTANTIATE") && done.stderr.contains("COMPLETED"),
        "state lines on stderr: {done:?}"
    );
    let shown = run(with(&["vnflcm", "show", &id], &[])).await;
    assert!(shown.stdout.contains("| Instantiated Vnf Info") && shown.stdout.contains("INSTANTIATED"), "{shown:?}");

    let scale = run(with(
        &[
            "vnflcm",
            "scale",
            &id,
            "--type",
            "SCALE_OUT",
            "--aspect-id",
            "VDU1_scale",
            "--number-of-steps",
            "1",
            "--wait",
        ],
        &[],
    ))
    .await;
    assert!(scale.stdout.contains("SCALE ended COMPLETED"), "{scale:?}");
    let scale_in = run(with(
        &["vnflcm", "scale", &id, "--type", "SCALE_IN", "--aspect-id", "VDU1_scale", "--wait"],
        &["-f", "json"],
    ))
    .await
    .json();
    assert_eq!(scale_in["Operation State"], "COMPLETED");
    assert_eq!(scale_in["Operation"], "SCALE");
    let heal = run(with(&["vnflcm", "heal", &id, "--cause", "test", "--wait"], &[])).await;
    assert!(heal.stdout.contains("HEAL ended COMPLETED"), "{heal:?}");
    // Beyond python-tackerclient: scale to level, operate, change flavour.
    let level = server.file("level.json", r#"{"scaleInfo": [{"aspectId": "VDU1_scale", "scaleLevel": 1}]}"#);
    let leveled = run(with(&["vnflcm", "scale-to-level", &id, level.to_str().unwrap(), "--wait"], &[])).await;
    assert!(leveled.stdout.contains("SCALE_TO_LEVEL ended COMPLETED"), "{leveled:?}");
    let stopped = run(with(
        &["vnflcm", "operate", &id, "--change-state-to", "STOPPED", "--stop-type", "FORCEFUL", "--wait"],
        &[],
    ))
    .await;
    assert!(stopped.stdout.contains("OPERATE ended COMPLETED"), "{stopped:?}");
    let shown = run(with(&["vnflcm", "show", &id], &["-f", "json"])).await.json();
    assert!(shown.to_string().contains("STOPPED"), "{shown}");
    let started = run(with(&["vnflcm", "operate", &id, "--change-state-to", "STARTED", "--wait"], &[])).await;
    assert!(started.stdout.contains("OPERATE ended COMPLETED"), "{started:?}");
    let ext = server.file("ext.json", if major == "1" { EXT_V1 } else { EXT_V2 });
    let changed = run(with(&["vnflcm", "change-ext-conn", &id, ext.to_str().unwrap(), "--wait"], &[])).await;
    assert!(changed.stdout.contains("CHANGE_EXT_CONN ended COMPLETED"), "{changed:?}");
    if major == "2" {
        let pkg = server.file(
            "pkg.json",
            json!({"vnfdId": vnfd_id, "additionalParams": {"upgrade_type": "RollingUpdate"}}).to_string(),
        );
        let changed = run(with(&["vnflcm", "change-vnfpkg", &id, pkg.to_str().unwrap(), "--wait"], &[])).await;
        assert!(changed.stdout.contains("CHANGE_VNFPKG ended COMPLETED"), "{changed:?}");
    } else {
        let refused =
            server.solctl(&["--api-version", "1", "vnflcm", "change-vnfpkg", &id, ext.to_str().unwrap()]).await;
        assert_eq!(refused.code, 2, "{refused:?}");
    }

    let flavour = server.file("flavour.json", r#"{"newFlavourId": "small"}"#);
    let changed = run(with(&["vnflcm", "change-flavour", &id, flavour.to_str().unwrap(), "--wait"], &[])).await;
    assert!(changed.stdout.contains("CHANGE_FLAVOUR ended COMPLETED"), "{changed:?}");

    // operation occurrences
    let ops = run(with(&["vnflcm", "op", "list", "--filter", &format!("(eq,vnfInstanceId,{id})")], &["-f", "json"]))
        .await
        .json();
    let operations: Vec<&str> = ops.as_array().unwrap().iter().map(|op| op["Operation"].as_str().unwrap()).collect();
    for operation in ["MODIFY_INFO", "INSTANTIATE", "SCALE", "HEAL", "CHANGE_EXT_CONN"] {
        assert!(operations.contains(&operation), "{operation} in {ops}");
    }
    let op_id = ops[0]["ID"].as_str().unwrap().to_owned();
    let shown = run(with(&["vnflcm", "op", "show", &op_id], &[])).await;
    assert!(shown.stdout.contains("| Operation State") && shown.stdout.contains(&op_id), "{shown:?}");
    let fields = run(with(&["vnflcm", "op", "list", "--fields", "operationParams"], &["-f", "json"])).await.json();
    assert!(fields[0]["Operation Parameters"].is_object(), "{fields}");
    let excluded =
        run(with(&["vnflcm", "op", "list", "--exclude-fields", "operationParams"], &["-f", "value", "-c", "ID"])).await;
    assert!(excluded.stdout.contains(&op_id), "{excluded:?}");

    // terminate --D: waits, then deletes
    let gone = run(with(&["vnflcm", "terminate", &id, "--termination-type", "FORCEFUL", "--D"], &[])).await;
    assert!(
        gone.stdout.contains("TERMINATE ended COMPLETED")
            && gone.stdout.contains(&format!("VNF Instance '{id}' is deleted successfully")),
        "{gone:?}"
    );
    let missing = server.solctl(&["--api-version", major, "vnflcm", "show", &id]).await;
    assert_eq!(missing.code, 1, "{missing:?}");
    assert!(missing.stderr.contains("(404)") && missing.stderr.contains(&id), "{missing:?}");

    // create --I --wait, terminate (GRACEFUL with a timeout) --wait, delete of two ids
    let created = run(with(
        &["vnflcm", "create", &vnfd_id, "--name", "cli-2", "--I", instantiate.to_str().unwrap(), "--wait"],
        &[],
    ))
    .await;
    assert!(
        created.stdout.contains("is created and instantiation request has been accepted")
            && created.stdout.contains("INSTANTIATE ended COMPLETED"),
        "{created:?}"
    );
    let second = run(with(&["vnflcm", "list", "--filter", "(eq,vnfInstanceName,cli-2)"], &["-f", "value", "-c", "ID"]))
        .await
        .value();
    let terminated = run(with(
        &[
            "vnflcm",
            "terminate",
            &second,
            "--termination-type",
            "GRACEFUL",
            "--graceful-termination-timeout",
            "5",
            "--wait",
        ],
        &[],
    ))
    .await;
    assert!(terminated.stdout.contains("TERMINATE ended COMPLETED"), "{terminated:?}");
    let third = run(with(&["vnflcm", "create", &vnfd_id], &["-f", "value", "-c", "ID"])).await.value();
    let deleted = run(with(&["vnflcm", "delete", &second, &third], &[])).await;
    assert!(deleted.stdout.contains("All specified VNF instances are deleted successfully"), "{deleted:?}");
    let left = run(with(&["vnflcm", "list"], &["-f", "json"])).await.json();
    assert_eq!(left, json!([]));

    let deleted = run(with(&["vnflcm", "subsc", "delete", &subsc_id], &[])).await;
    assert!(deleted.stdout.contains("is deleted successfully"), "{deleted:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_vnflcm_v2_command() {
    every_command("2").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_vnflcm_v1_command() {
    every_command("1").await;
}

/// FAILED_TEMP: `--wait` exits 1 with the occurrence's error; retry, rollback, fail and
/// cancel on it (v2, and cancel on v1 too).
async fn failures(major: &str) {
    let server = Server::start().await;
    let vnfd_id = uuid::Uuid::new_v4().to_string();
    server.onboard_sample(&vnfd_id).await;
    let v = |rest: &[&str]| -> Vec<String> {
        ["--api-version", major].iter().chain(rest.iter()).map(|s| (*s).to_owned()).collect()
    };
    let call = |args: Vec<String>| {
        let server = &server;
        async move {
            let refs: Vec<&str> = args.iter().map(String::as_str).collect();
            server.solctl(&refs).await
        }
    };
    let fail_once = server.file(
        "fail-once.json",
        r#"{"flavourId": "simple", "additionalParams": {"localVim": {"failAt": "create_vnfc", "failAttempts": 1}}}"#,
    );
    let fail_always = server.file(
        "fail.json",
        r#"{"flavourId": "simple", "additionalParams": {"localVim": {"failAt": "create_vnfc", "failAfter": 1}}}"#,
    );
    let slow =
        server.file("slow.json", r#"{"flavourId": "simple", "additionalParams": {"localVim": {"delayMs": 5000}}}"#);

    // FAILED_TEMP → exit 1 with the error; retry --wait → COMPLETED.
    let id = call(v(&["vnflcm", "create", &vnfd_id, "-f", "value", "-c", "ID"])).await.value();
    let failed = call(v(&["vnflcm", "instantiate", &id, fail_once.to_str().unwrap(), "--wait"])).await;
    assert_eq!(failed.code, 1, "{failed:?}");
    assert!(
        failed.stderr.contains("INSTANTIATE ended FAILED_TEMP") && failed.stderr.contains("create_vnfc"),
        "the error is shown: {failed:?}"
    );
    let op =
        call(v(&["vnflcm", "op", "list", "--filter", &format!("(eq,vnfInstanceId,{id})"), "-f", "value", "-c", "ID"]))
            .await
            .value();
    let error = call(v(&["vnflcm", "op", "show", &op, "-f", "json", "-c", "Error"])).await.json();
    assert!(error["Error"]["detail"].as_str().unwrap().contains("create_vnfc"), "{error}");
    let retried = call(v(&["vnflcm", "op", "retry", &op, "--wait"])).await;
    assert_eq!(retried.code, 0, "{retried:?}");
    assert!(
        retried.stdout.contains("Retry request for LCM operation") && retried.stdout.contains("ended COMPLETED"),
        "{retried:?}"
    );

    // rollback --wait → ROLLED_BACK; then fail on another FAILED_TEMP.
    let id2 = call(v(&["vnflcm", "create", &vnfd_id, "-f", "value", "-c", "ID"])).await.value();
    assert_eq!(call(v(&["vnflcm", "instantiate", &id2, fail_always.to_str().unwrap(), "--wait"])).await.code, 1);
    let filter = format!("(eq,vnfInstanceId,{id2})");
    let op = call(v(&["vnflcm", "op", "list", "--filter", &filter, "-f", "value", "-c", "ID"])).await.value();
    let rolled = call(v(&["vnflcm", "op", "rollback", &op, "--wait"])).await;
    assert_eq!(rolled.code, 0, "{rolled:?}");
    assert!(rolled.stdout.contains("ended ROLLED_BACK"), "{rolled:?}");
    // A retry that fails again: --wait is non-zero.
    let fail_twice = server.file(
        "fail-twice.json",
        r#"{"flavourId": "simple", "additionalParams": {"localVim": {"failAt": "create_vnfc", "failAttempts": 2}}}"#,
    );
    let id3 = call(v(&["vnflcm", "create", &vnfd_id, "-f", "value", "-c", "ID"])).await.value();
    assert_eq!(call(v(&["vnflcm", "instantiate", &id3, fail_twice.to_str().unwrap(), "--wait"])).await.code, 1);
    let filter = format!("(eq,vnfInstanceId,{id3})");
    let op = call(v(&["vnflcm", "op", "list", "--filter", &filter, "-f", "value", "-c", "ID"])).await.value();
    let retry_fails = call(v(&["vnflcm", "op", "retry", &op, "--wait"])).await;
    assert_eq!(retry_fails.code, 1, "{retry_fails:?}");
    assert!(retry_fails.stderr.contains("ended FAILED_TEMP"), "{retry_fails:?}");
    let marked = call(v(&["vnflcm", "op", "fail", &op, "-f", "json"])).await;
    assert_eq!(marked.code, 0, "{marked:?}");
    assert_eq!(marked.json()["Operation State"], "FAILED");
    let again = call(v(&["vnflcm", "op", "fail", &op])).await;
    assert_eq!(again.code, 1, "{again:?}");
    assert!(again.stderr.contains("(409)") && again.stderr.contains("FAILED_TEMP"), "the ProblemDetails: {again:?}");

    // cancel of a running operation: --wait ends in FAILED_TEMP, which is what was asked.
    let accepted = call(v(&["vnflcm", "instantiate", &id2, slow.to_str().unwrap(), "-f", "value", "-c", "id"])).await;
    assert_eq!(accepted.code, 0, "{accepted:?}");
    let op = accepted.value();
    let cancelled = call(v(&["vnflcm", "op", "cancel", &op, "--cancel-mode", "FORCEFUL", "--wait"])).await;
    assert_eq!(cancelled.code, 0, "{cancelled:?}");
    assert!(
        cancelled.stdout.contains("Cancel request for LCM operation") && cancelled.stdout.contains("ended FAILED_TEMP"),
        "{cancelled:?}"
    );
    let error = call(v(&["vnflcm", "op", "show", &op, "-f", "json"])).await.json();
    assert_eq!(error["Operation State"], "FAILED_TEMP");
    assert!(error["Error"]["detail"].as_str().unwrap().contains("cancelled"), "{error}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v2_wait_fails_on_failed_temp_and_retry_rollback_fail_cancel_work() {
    failures("2").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v1_wait_fails_on_failed_temp_and_retry_rollback_fail_cancel_work() {
    failures("1").await;
}

//! VNF LCM v2 over real HTTP, on SQLite and on PostgreSQL: instances, tasks, the
//! operation state machine with the local VIM, conflicts, query features.

use reqwest::Method;
use serde_json::{Value, json};

use crate::helpers::{Db, TestApp, send};
use crate::lcm_support::*;

/// Each scenario runs once per database.
macro_rules! on_both_databases {
    ($($scenario:ident),* $(,)?) => {
        mod sqlite {
            $(#[tokio::test] async fn $scenario() { super::$scenario(super::Db::Sqlite).await })*
        }
        mod postgres {
            $(#[tokio::test] async fn $scenario() { super::$scenario(super::Db::Postgres).await })*
        }
    };
}

on_both_databases!(
    instance_lifecycle,
    conflicts_and_request_time_checks,
    concurrent_instantiates_give_one_202,
    fault_injection_retry_rollback_fail,
    cancel_a_running_operation,
    modify_info_patch,
    credentials_never_leave,
    query_features_on_many_instances,
    the_local_vim_runs_only_where_enabled,
    accepted_starts_are_taken_up_within_the_conductors_limit,
);

async fn app(db: Db) -> Option<TestApp> {
    TestApp::spawn_on(db, |settings| {
        settings.paging.vnf_instance_page_size = 50;
        settings.paging.lcm_op_occ_page_size = 50;
    })
    .await
}

async fn instance_lifecycle(db: Db) {
    let Some(app) = app(db).await else { return };
    let vnfd_id = install_sample_package(&app);
    assert_eq!(package_usage(&app, &vnfd_id), "NOT_IN_USE");

    // Create: 201, Location, provider/product/versions from the VNFD, package IN_USE.
    let reply = send(v2(&app, Method::POST, "/vnflcm/v2/vnf_instances").json(&json!({
        "vnfdId": vnfd_id, "vnfInstanceName": "inst-1", "vnfInstanceDescription": "first instance", "metadata": {"k": "v"}
    })))
    .await;
    assert_eq!(reply.status, 201, "{}", reply.text);
    assert_eq!(reply.header("version"), Some("2.0.0"));
    let instance = reply.json();
    let id = instance["id"].as_str().unwrap().to_owned();
    assert_eq!(reply.header("location"), Some(format!("{}/vnflcm/v2/vnf_instances/{id}", app.address).as_str()));
    assert_eq!(instance["instantiationState"], "NOT_INSTANTIATED");
    assert_eq!(instance["vnfProvider"], "Solgate");
    assert_eq!(instance["metadata"], json!({"k": "v"}));
    assert!(instance["_links"]["instantiate"]["href"].as_str().unwrap().ends_with(&format!("{id}/instantiate")));
    assert!(instance["_links"].get("terminate").is_none());
    assert_eq!(package_usage(&app, &vnfd_id), "IN_USE");

    // Instantiate: STARTING → PROCESSING → COMPLETED, resources per the default level.
    let op_url = task(&app, &id, "instantiate", instantiate_body()).await;
    let op = wait_op(&app, &op_url, &["COMPLETED", "FAILED_TEMP", "ROLLED_BACK"]).await;
    assert_eq!(op["operationState"], "COMPLETED", "{op}");
    assert_eq!(op["operation"], "INSTANTIATE");
    assert_eq!(op["vnfInstanceId"], id.as_str());
    // The local NFVO's grant (not stored: nothing reads it back) still names itself.
    assert_eq!(op["grantId"].as_str().map(str::len), Some(36), "{op}");
    assert!(
        op["resourceChanges"]["affectedVnfcs"].as_array().unwrap().iter().all(|vnfc| vnfc["changeType"] == "ADDED")
    );
    assert!(op["_links"].get("retry").is_none(), "no task links on a COMPLETED operation: {op}");
    let instance = show_instance(&app, &id).await;
    assert_eq!(instance["instantiationState"], "INSTANTIATED");
    assert_eq!(instance["instantiatedVnfInfo"]["flavourId"], "simple");
    assert_eq!((vnfc_count(&instance, "VDU1"), vnfc_count(&instance, "VDU2")), (1, 1));
    assert_eq!(instance["instantiatedVnfInfo"]["scaleStatus"], json!([{"aspectId": "VDU1_scale", "scaleLevel": 0}]));
    assert!(instance["_links"]["terminate"].is_object() && instance["_links"].get("instantiate").is_none());
    // The state filter (answered from the indexed column, not the document) sees the change.
    let by_state = |state: &'static str| {
        let app = &app;
        async move {
            let path = format!("/vnflcm/v2/vnf_instances?filter=(eq,instantiationState,{state})&all_records=yes");
            let reply = send(v2(app, Method::GET, &path)).await;
            assert_eq!(reply.status, 200, "{}", reply.text);
            reply
                .json()
                .as_array()
                .unwrap()
                .iter()
                .filter_map(|item| item["id"].as_str().map(str::to_owned))
                .collect::<Vec<_>>()
        }
    };
    assert_eq!(by_state("INSTANTIATED").await, std::slice::from_ref(&id));
    assert!(by_state("NOT_INSTANTIATED").await.is_empty());

    // Scale out by 2 steps, then in by 1.
    let op_url =
        task(&app, &id, "scale", json!({"type": "SCALE_OUT", "aspectId": "VDU1_scale", "numberOfSteps": 2})).await;
    assert_eq!(wait_op(&app, &op_url, &["COMPLETED", "FAILED_TEMP"]).await["operationState"], "COMPLETED");
    let instance = show_instance(&app, &id).await;
    assert_eq!(vnfc_count(&instance, "VDU1"), 3);
    assert_eq!(instance["instantiatedVnfInfo"]["scaleStatus"][0]["scaleLevel"], 2);
    let op_url = task(&app, &id, "scale", json!({"type": "SCALE_IN", "aspectId": "VDU1_scale"})).await;
    let op = wait_op(&app, &op_url, &["COMPLETED", "FAILED_TEMP"]).await;
    assert_eq!(op["operationState"], "COMPLETED");
    assert_eq!(op["resourceChanges"]["affectedVnfcs"].as_array().unwrap().len(), 1);
    assert_eq!(op["resourceChanges"]["affectedVnfcs"][0]["changeType"], "REMOVED");
    let instance = show_instance(&app, &id).await;
    assert_eq!(vnfc_count(&instance, "VDU1"), 2);

    // Heal one VNFC: same VNFC ids, a new compute resource for the healed one.
    assert_eq!(instance["instantiatedVnfInfo"]["vnfVirtualLinkResourceInfo"][0]["vnfVirtualLinkDescId"], "internalVL1");
    let vnfc = instance["instantiatedVnfInfo"]["vnfcResourceInfo"][0].clone();
    let before = instance["instantiatedVnfInfo"]["vnfcResourceInfo"].clone();
    let op_url = task(&app, &id, "heal", json!({"vnfcInstanceId": [vnfc["id"]], "cause": "test"})).await;
    let op = wait_op(&app, &op_url, &["COMPLETED", "FAILED_TEMP"]).await;
    assert_eq!(op["operationState"], "COMPLETED");
    assert_eq!(op["resourceChanges"]["affectedVnfcs"][0]["changeType"], "MODIFIED");
    let healed = show_instance(&app, &id).await;
    let after = &healed["instantiatedVnfInfo"]["vnfcResourceInfo"];
    assert_eq!(before.as_array().unwrap().len(), after.as_array().unwrap().len());
    let changed = before
        .as_array()
        .unwrap()
        .iter()
        .zip(after.as_array().unwrap())
        .filter(|(old, new)| old["computeResource"] != new["computeResource"])
        .count();
    assert_eq!(changed, 1, "only the healed VNFC gets a new resource");

    // Terminate and delete.
    let reply = send(v2(&app, Method::DELETE, &format!("/vnflcm/v2/vnf_instances/{id}"))).await;
    assert_eq!(reply.problem(409), format!("VnfInstance {id} is instantiated."));
    let op_url = task(&app, &id, "terminate", json!({"terminationType": "FORCEFUL"})).await;
    let op = wait_op(&app, &op_url, &["COMPLETED", "FAILED_TEMP"]).await;
    assert_eq!(op["operationState"], "COMPLETED");
    assert!(
        op["resourceChanges"]["affectedVnfcs"].as_array().unwrap().iter().all(|vnfc| vnfc["changeType"] == "REMOVED")
    );
    let instance = show_instance(&app, &id).await;
    assert_eq!(instance["instantiationState"], "NOT_INSTANTIATED");
    assert!(instance.get("instantiatedVnfInfo").is_none());
    let reply = send(v2(&app, Method::DELETE, &format!("/vnflcm/v2/vnf_instances/{id}"))).await;
    assert_eq!(reply.status, 204, "{}", reply.text);
    assert!(reply.text.is_empty());
    let reply = send(v2(&app, Method::GET, &format!("/vnflcm/v2/vnf_instances/{id}"))).await;
    assert_eq!(reply.problem(404), format!("VnfInstance {id} not found."));
    assert_eq!(package_usage(&app, &vnfd_id), "NOT_IN_USE");

    // Every operation is listed, each with a stateEnteredTime not before its startTime.
    let ops =
        send(v2(&app, Method::GET, &format!("/vnflcm/v2/vnf_lcm_op_occs?filter=(eq,vnfInstanceId,{id})"))).await.json();
    let ops = ops.as_array().unwrap();
    assert_eq!(ops.len(), 5);
    assert!(ops.iter().all(|op| op["stateEnteredTime"].as_str().unwrap() >= op["startTime"].as_str().unwrap()));
}

async fn conflicts_and_request_time_checks(db: Db) {
    let Some(app) = app(db).await else { return };
    let vnfd_id = install_sample_package(&app);

    // Create: unknown package → 422; bad body → 400 naming the pointer.
    let unknown = uuid::Uuid::new_v4();
    let reply =
        send(v2(&app, Method::POST, "/vnflcm/v2/vnf_instances").json(&json!({"vnfdId": unknown.to_string()}))).await;
    assert_eq!(reply.problem(422), format!("VnfPackage of vnfdId {unknown} is not found or not operational."));
    let reply = send(v2(&app, Method::POST, "/vnflcm/v2/vnf_instances").json(&json!({"vnfdId": 123}))).await;
    assert!(reply.problem(400).contains("/vnfdId: 123 is not of type \"string\""), "{}", reply.text);

    let id = create_instance(&app, &vnfd_id, "checks").await;
    // Tasks that need an instantiated VNF.
    for (task_name, body) in [
        ("terminate", json!({"terminationType": "FORCEFUL"})),
        ("scale", json!({"type": "SCALE_OUT", "aspectId": "VDU1_scale"})),
        ("heal", json!({})),
    ] {
        let reply =
            send(v2(&app, Method::POST, &format!("/vnflcm/v2/vnf_instances/{id}/{task_name}")).json(&body)).await;
        assert_eq!(reply.problem(409), format!("VnfInstance {id} isn't instantiated."), "{task_name}");
    }
    // Unknown flavour and level: refused at request time (Tacker accepts, then rolls back).
    let reply = send(
        v2(&app, Method::POST, &format!("/vnflcm/v2/vnf_instances/{id}/instantiate"))
            .json(&json!({"flavourId": "nosuch"})),
    )
    .await;
    assert_eq!(reply.problem(400), "FlavourId nosuch not found in the VNFD.");
    let reply = send(
        v2(&app, Method::POST, &format!("/vnflcm/v2/vnf_instances/{id}/instantiate"))
            .json(&json!({"flavourId": "simple", "instantiationLevelId": "huge"})),
    )
    .await;
    assert!(reply.problem(400).contains("InstantiationLevelId huge"), "{}", reply.text);
    // A schema error wins over the unknown instance (validation first, as Tacker).
    let reply = send(v2(&app, Method::POST, "/vnflcm/v2/vnf_instances/nosuch/instantiate").json(&json!({}))).await;
    assert!(reply.problem(400).contains("flavourId"), "{}", reply.text);
    let reply =
        send(v2(&app, Method::POST, "/vnflcm/v2/vnf_instances/nosuch/instantiate").json(&instantiate_body())).await;
    assert_eq!(reply.problem(404), "VnfInstance nosuch not found.");
    // Unsupported VIM type.
    let reply = send(v2(&app, Method::POST, &format!("/vnflcm/v2/vnf_instances/{id}/instantiate")).json(&json!({
        "flavourId": "simple", "vimConnectionInfo": {"vim1": {"vimType": "NO.SUCH.VIM"}}
    })))
    .await;
    assert!(reply.problem(422).contains("vimType NO.SUCH.VIM is not supported"), "{}", reply.text);

    let op_url = task(&app, &id, "instantiate", instantiate_body()).await;
    wait_op(&app, &op_url, &["COMPLETED"]).await;
    let reply =
        send(v2(&app, Method::POST, &format!("/vnflcm/v2/vnf_instances/{id}/instantiate")).json(&instantiate_body()))
            .await;
    assert_eq!(reply.problem(409), format!("VnfInstance {id} is instantiated."));
    // Scale beyond the aspect's maximum (3), unknown aspect, scale in below 0.
    let reply = send(
        v2(&app, Method::POST, &format!("/vnflcm/v2/vnf_instances/{id}/scale"))
            .json(&json!({"type": "SCALE_OUT", "aspectId": "VDU1_scale", "numberOfSteps": 4})),
    )
    .await;
    assert!(reply.problem(400).starts_with("Invalid numberOfSteps '4'"), "{}", reply.text);
    let reply = send(
        v2(&app, Method::POST, &format!("/vnflcm/v2/vnf_instances/{id}/scale"))
            .json(&json!({"type": "SCALE_IN", "aspectId": "VDU1_scale"})),
    )
    .await;
    assert!(reply.problem(400).starts_with("Invalid numberOfSteps '1'"), "{}", reply.text);
    let reply = send(
        v2(&app, Method::POST, &format!("/vnflcm/v2/vnf_instances/{id}/scale"))
            .json(&json!({"type": "SCALE_OUT", "aspectId": "nope"})),
    )
    .await;
    assert_eq!(reply.problem(400), "Invalid aspectId 'nope'.");
    let reply = send(
        v2(&app, Method::POST, &format!("/vnflcm/v2/vnf_instances/{id}/heal"))
            .json(&json!({"vnfcInstanceId": ["nope"]})),
    )
    .await;
    assert_eq!(reply.problem(400), "vnfcInstanceId(nope) does not exist.");

    // Operation occurrence tasks in the wrong state.
    let op_id = op_url.rsplit('/').next().unwrap();
    for action in ["retry", "rollback", "fail"] {
        let reply = send(v2(&app, Method::POST, &format!("/vnflcm/v2/vnf_lcm_op_occs/{op_id}/{action}"))).await;
        assert_eq!(reply.problem(409), format!("LCM operation {op_id} not FAILED_TEMP."), "{action}");
    }
    let reply = send(v2(&app, Method::POST, &format!("/vnflcm/v2/vnf_lcm_op_occs/{op_id}/cancel"))).await;
    assert!(reply.problem(409).contains("COMPLETED"), "{}", reply.text);
    let reply = send(v2(&app, Method::GET, "/vnflcm/v2/vnf_lcm_op_occs/nosuch")).await;
    assert_eq!(reply.problem(404), "VnfLcmOpOcc nosuch not found.");
}

async fn concurrent_instantiates_give_one_202(db: Db) {
    let Some(app) = app(db).await else { return };
    let vnfd_id = install_sample_package(&app);
    for round in 0..5 {
        let id = create_instance(&app, &vnfd_id, &format!("race-{round}")).await;
        let path = format!("/vnflcm/v2/vnf_instances/{id}/instantiate");
        let requests = (0..4).map(|_| send(v2(&app, Method::POST, &path).json(&instantiate_body())));
        let replies = futures::future::join_all(requests).await;
        let accepted = replies.iter().filter(|reply| reply.status == 202).count();
        let conflicts = replies.iter().filter(|reply| reply.status == 409).count();
        assert_eq!(
            (accepted, conflicts),
            (1, 3),
            "{:?}",
            replies.iter().map(|r| (r.status, r.text.clone())).collect::<Vec<_>>()
        );
        let ops = send(v2(&app, Method::GET, &format!("/vnflcm/v2/vnf_lcm_op_occs?filter=(eq,vnfInstanceId,{id})")))
            .await
            .json();
        assert_eq!(ops.as_array().unwrap().len(), 1, "exactly one occurrence was created");
    }
}

async fn fault_injection_retry_rollback_fail(db: Db) {
    let Some(app) = app(db).await else { return };
    let vnfd_id = install_sample_package(&app);

    // Fails on the first attempt only: FAILED_TEMP, then retry → COMPLETED.
    let id = create_instance(&app, &vnfd_id, "retry").await;
    let body =
        json!({"flavourId": "simple", "additionalParams": {"localVim": {"failAt": "create_vnfc", "failAttempts": 1}}});
    let op_url = task(&app, &id, "instantiate", body).await;
    let op = wait_op(&app, &op_url, &["FAILED_TEMP", "COMPLETED"]).await;
    assert_eq!(op["operationState"], "FAILED_TEMP", "{op}");
    assert!(op["error"]["detail"].as_str().unwrap().contains("injected failure at step create_vnfc"), "{op}");
    for link in ["retry", "rollback", "fail"] {
        assert!(op["_links"][link]["href"].is_string(), "{link} link while FAILED_TEMP");
    }
    // Another task on the instance is refused while the operation is FAILED_TEMP.
    let reply = send(v2(&app, Method::DELETE, &format!("/vnflcm/v2/vnf_instances/{id}"))).await;
    assert_eq!(reply.problem(409), format!("Other LCM operation of vnfInstance {id} is in progress."));
    let reply = send(
        app.request(Method::POST, &format!("{}/retry", op_url.trim_start_matches(&app.address)))
            .header("Version", "2.0.0"),
    )
    .await;
    assert_eq!(reply.status, 202, "{}", reply.text);
    assert!(reply.header("location").is_none());
    let since = op["stateEnteredTime"].as_str().unwrap().to_owned();
    let op = wait_op_after(&app, &op_url, &["COMPLETED", "FAILED_TEMP"], &since).await;
    assert_eq!(op["operationState"], "COMPLETED", "{op}");
    assert!(op.get("error").is_none(), "a successful retry clears the error: {op}");
    assert_eq!(show_instance(&app, &id).await["instantiationState"], "INSTANTIATED");

    // Always fails: FAILED_TEMP, rollback → ROLLED_BACK, the instance stays NOT_INSTANTIATED.
    let id = create_instance(&app, &vnfd_id, "rollback").await;
    let body =
        json!({"flavourId": "simple", "additionalParams": {"localVim": {"failAt": "create_vnfc", "failAfter": 1}}});
    let op_url = task(&app, &id, "instantiate", body).await;
    let failed = wait_op(&app, &op_url, &["FAILED_TEMP", "COMPLETED"]).await;
    assert_eq!(failed["operationState"], "FAILED_TEMP");
    let op_path = op_url.trim_start_matches(&app.address).to_owned();
    let reply = send(app.request(Method::POST, &format!("{op_path}/rollback")).header("Version", "2.0.0")).await;
    assert_eq!(reply.status, 202, "{}", reply.text);
    let op =
        wait_op_after(&app, &op_url, &["ROLLED_BACK", "FAILED_TEMP"], failed["stateEnteredTime"].as_str().unwrap())
            .await;
    assert_eq!(op["operationState"], "ROLLED_BACK", "{op}");
    assert_eq!(show_instance(&app, &id).await["instantiationState"], "NOT_INSTANTIATED");

    // Fail → FAILED (200 with the occurrence), and a second fail is 409.
    let id = create_instance(&app, &vnfd_id, "fail").await;
    let body =
        json!({"flavourId": "simple", "additionalParams": {"localVim": {"failAt": "create_vnfc", "failAfter": 1}}});
    let op_url = task(&app, &id, "instantiate", body).await;
    wait_op(&app, &op_url, &["FAILED_TEMP"]).await;
    let op_path = op_url.trim_start_matches(&app.address).to_owned();
    let reply = send(app.request(Method::POST, &format!("{op_path}/fail")).header("Version", "2.0.0")).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert_eq!(reply.json()["operationState"], "FAILED");
    assert!(reply.json()["_links"].get("retry").is_none());
    let reply = send(app.request(Method::POST, &format!("{op_path}/fail")).header("Version", "2.0.0")).await;
    assert_eq!(reply.status, 409);
    // The instance is free again.
    let op_url = task(&app, &id, "instantiate", instantiate_body()).await;
    assert_eq!(wait_op(&app, &op_url, &["COMPLETED", "FAILED_TEMP"]).await["operationState"], "COMPLETED");

    // Rollback of a scale-out that failed half-way removes what it added.
    let op_url = task(
        &app,
        &id,
        "scale",
        json!({"type": "SCALE_OUT", "aspectId": "VDU1_scale", "numberOfSteps": 2,
        "additionalParams": {"localVim": {"failAt": "create_vnfc", "failAfter": 1}}}),
    )
    .await;
    let failed = wait_op(&app, &op_url, &["FAILED_TEMP", "COMPLETED"]).await;
    assert_eq!(failed["operationState"], "FAILED_TEMP", "{failed}");
    let op_path = op_url.trim_start_matches(&app.address).to_owned();
    let reply = send(app.request(Method::POST, &format!("{op_path}/rollback")).header("Version", "2.0.0")).await;
    assert_eq!(reply.status, 202, "{}", reply.text);
    let op =
        wait_op_after(&app, &op_url, &["ROLLED_BACK", "FAILED_TEMP"], failed["stateEnteredTime"].as_str().unwrap())
            .await;
    assert_eq!(op["operationState"], "ROLLED_BACK", "{op}");
    assert_eq!(vnfc_count(&show_instance(&app, &id).await, "VDU1"), 1);

    // Terminate cannot be rolled back: 422 at request time.
    let op_url = task(
        &app,
        &id,
        "terminate",
        json!({"terminationType": "FORCEFUL",
        "additionalParams": {"localVim": {"failAt": "delete_vnfc"}}}),
    )
    .await;
    wait_op(&app, &op_url, &["FAILED_TEMP"]).await;
    let op_path = op_url.trim_start_matches(&app.address).to_owned();
    let reply = send(app.request(Method::POST, &format!("{op_path}/rollback")).header("Version", "2.0.0")).await;
    assert_eq!(reply.problem(422), "Rollback of TERMINATE is not supported.");
}

async fn cancel_a_running_operation(db: Db) {
    let Some(app) = app(db).await else { return };
    let vnfd_id = install_sample_package(&app);
    let id = create_instance(&app, &vnfd_id, "cancel").await;
    let body = json!({"flavourId": "simple", "instantiationLevelId": "instantiation_level_2",
        "additionalParams": {"localVim": {"delayMs": 300}}});
    let op_url = task(&app, &id, "instantiate", body).await;
    let op = wait_op(&app, &op_url, &["PROCESSING"]).await;
    assert!(op["_links"]["cancel"].is_object(), "{op}");
    let op_path = op_url.trim_start_matches(&app.address).to_owned();
    let reply = send(
        app.request(Method::POST, &format!("{op_path}/cancel"))
            .header("Version", "2.0.0")
            .json(&json!({"cancelMode": "GRACEFUL"})),
    )
    .await;
    assert_eq!(reply.status, 202, "{}", reply.text);
    let reply = send(app.request(Method::POST, &format!("{op_path}/cancel")).header("Version", "2.0.0")).await;
    assert!(reply.status == 409 || reply.status == 202, "{}", reply.text);
    let op = wait_op(&app, &op_url, &["FAILED_TEMP", "COMPLETED"]).await;
    assert_eq!(op["operationState"], "FAILED_TEMP", "cancel of PROCESSING ends in FAILED_TEMP: {op}");
    let failed_at = op["stateEnteredTime"].as_str().unwrap().to_owned();
    assert_eq!(op["isCancelPending"], false);
    assert!(op["error"]["detail"].as_str().unwrap().contains("cancelled"), "{op}");
    // Roll back what was created.
    let reply = send(app.request(Method::POST, &format!("{op_path}/rollback")).header("Version", "2.0.0")).await;
    assert_eq!(reply.status, 202, "{}", reply.text);
    assert_eq!(
        wait_op_after(&app, &op_url, &["ROLLED_BACK", "FAILED_TEMP"], &failed_at).await["operationState"],
        "ROLLED_BACK"
    );
}

async fn modify_info_patch(db: Db) {
    let Some(app) = app(db).await else { return };
    let vnfd_id = install_sample_package(&app);
    let id = create_instance(&app, &vnfd_id, "before").await;
    // Read (and so cached) before the change: the read after it must show the change.
    assert_eq!(show_instance(&app, &id).await["vnfInstanceName"], "before");
    for fields in ["", "?fields=vnfInstanceName"] {
        assert_eq!(listed_name(&app, &id, fields).await, "before", "{fields}");
    }
    let reply = send(
        v2(&app, Method::PATCH, &format!("/vnflcm/v2/vnf_instances/{id}"))
            .header("Content-Type", "application/merge-patch+json")
            .body(json!({"vnfInstanceName": "after", "metadata": {"a": "1", "k": null}}).to_string()),
    )
    .await;
    assert_eq!(reply.status, 202, "{}", reply.text);
    let op_url = reply.header("location").unwrap().to_owned();
    let op = wait_op(&app, &op_url, &["COMPLETED", "FAILED_TEMP"]).await;
    assert_eq!(op["operation"], "MODIFY_INFO");
    assert_eq!(op["operationState"], "COMPLETED", "{op}");
    assert_eq!(op["changedInfo"]["vnfInstanceName"], "after");
    let instance = show_instance(&app, &id).await;
    assert_eq!(instance["vnfInstanceName"], "after");
    assert_eq!(instance["metadata"], json!({"a": "1"}));
    // The list's cached renderings (plain and with selectors) are of the old row version.
    for fields in ["", "?fields=vnfInstanceName"] {
        assert_eq!(listed_name(&app, &id, fields).await, "after", "{fields}");
    }
    // The name filter (answered from the indexed column) finds the new name only.
    for (name, found) in [("after", 1), ("before", 0)] {
        let path = format!("/vnflcm/v2/vnf_instances?filter=(eq,vnfInstanceName,{name})");
        let reply = send(v2(&app, Method::GET, &path)).await;
        assert_eq!(reply.status, 200, "{}", reply.text);
        assert_eq!(reply.json().as_array().unwrap().len(), found, "{name}: {}", reply.text);
    }
}

/// The name an unfiltered list (with `query`, e.g. selectors) shows for the instance.
async fn listed_name(app: &TestApp, id: &str, query: &str) -> Value {
    let reply = send(v2(app, Method::GET, &format!("/vnflcm/v2/vnf_instances{query}"))).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    let listed = reply.json();
    let entry = listed.as_array().unwrap().iter().find(|entry| entry["id"] == id).cloned();
    entry.expect("the instance is listed")["vnfInstanceName"].clone()
}

async fn credentials_never_leave(db: Db) {
    let Some(app) = app(db).await else { return };
    let vnfd_id = install_sample_package(&app);
    let id = create_instance(&app, &vnfd_id, "secret").await;
    let body = json!({"flavourId": "simple", "vimConnectionInfo": {"vim1": {
        "vimType": "SOLGATE.LOCAL.V_1",
        "accessInfo": {"username": "admin", "password": "hunter2", "bearer_token": "tok-sekrit", "client_secret": "cs-sekrit"}
    }}});
    let op_url = task(&app, &id, "instantiate", body).await;
    wait_op(&app, &op_url, &["COMPLETED"]).await;
    let shown = [
        send(v2(&app, Method::GET, &format!("/vnflcm/v2/vnf_instances/{id}"))).await.text,
        send(v2(&app, Method::GET, "/vnflcm/v2/vnf_instances?all_fields")).await.text,
        get(&app, &op_url).await.text,
        send(v2(&app, Method::GET, "/vnflcm/v2/vnf_lcm_op_occs?all_fields")).await.text,
    ];
    for text in &shown {
        for secret in ["hunter2", "tok-sekrit", "cs-sekrit"] {
            assert!(!text.contains(secret), "{secret} leaked in {text}");
        }
    }
    let instance = show_instance(&app, &id).await;
    assert_eq!(instance["vimConnectionInfo"]["vim1"]["accessInfo"]["username"], "admin", "other fields stay");
    // A filter cannot probe a secret either.
    let reply = send(v2(
        &app,
        Method::GET,
        "/vnflcm/v2/vnf_instances?filter=(eq,vimConnectionInfo/vim1/accessInfo/password,hunter2)",
    ))
    .await;
    assert!(reply.status == 400 || reply.json().as_array().is_some_and(Vec::is_empty), "{}", reply.text);
}

async fn query_features_on_many_instances(db: Db) {
    let Some(app) = app(db).await else { return };
    let vnfd_id = install_sample_package(&app);
    let other_vnfd = install_sample_package(&app);
    let total = 240;
    let creates = (0..total).map(|i| {
        let vnfd = if i % 4 == 0 { other_vnfd.clone() } else { vnfd_id.clone() };
        let app = &app;
        async move {
            let reply = send(v2(app, Method::POST, "/vnflcm/v2/vnf_instances").json(&json!({
                "vnfdId": vnfd, "vnfInstanceName": format!("vnf-{i:03}"), "metadata": {"tier": if i % 2 == 0 { "gold" } else { "silver" }, "n": i}
            })))
            .await;
            assert_eq!(reply.status, 201, "{}", reply.text);
        }
    });
    // A few at a time: SQLite serialises writers.
    use futures::StreamExt;
    futures::stream::iter(creates).buffer_unordered(16).collect::<Vec<()>>().await;

    let list = |query: String| {
        let app = &app;
        async move { send(v2(app, Method::GET, &format!("/vnflcm/v2/vnf_instances{query}"))).await }
    };
    // Paging: 50 a page, `Link` with an absolute URI, every instance once, in id order.
    // Ids are time-ordered: one created while a client pages comes on the last page (a
    // random id could sort before the client's marker and never be seen).
    let mut late = None;
    let mut seen = Vec::new();
    let mut next = Some(format!("{}/vnflcm/v2/vnf_instances", app.address));
    let mut pages = 0;
    while let Some(url) = next.take() {
        let reply = send(app.client.get(&url).header("Version", "2.0.0")).await;
        assert_eq!(reply.status, 200, "{}", reply.text);
        let page = reply.json();
        assert!(page.as_array().unwrap().len() <= 50);
        seen.extend(page.as_array().unwrap().iter().map(|item| item["id"].as_str().unwrap().to_owned()));
        if let Some(link) = reply.header("link") {
            assert!(link.ends_with("; rel=\"next\""), "{link}");
            next = Some(link.trim_start_matches('<').split('>').next().unwrap().to_owned());
            assert!(next.as_ref().unwrap().starts_with(&app.address));
        }
        pages += 1;
        if pages == 1 {
            let reply = send(v2(&app, Method::POST, "/vnflcm/v2/vnf_instances").json(&json!({
                "vnfdId": vnfd_id, "vnfInstanceName": "vnf-0late", "metadata": {"tier": "late", "n": total}
            })))
            .await;
            assert_eq!(reply.status, 201, "{}", reply.text);
            late = reply.json()["id"].as_str().map(str::to_owned);
        }
    }
    assert_eq!(pages, 5);
    assert_eq!(seen.last(), late.as_ref(), "created while paging: last");
    assert_eq!(seen.len(), total + 1);
    let mut sorted = seen.clone();
    sorted.sort();
    assert_eq!(seen, sorted, "stable id order across pages");

    // Filters: SQL-pushed (top-level) and in-memory (nested), every operator family.
    let count = |reply: crate::helpers::Reply| {
        assert_eq!(reply.status, 200, "{}", reply.text);
        reply.json().as_array().unwrap().len()
    };
    assert_eq!(count(list(format!("?filter=(eq,vnfdId,{other_vnfd})&all_records=yes")).await), 60);
    assert_eq!(count(list(format!("?filter=(neq,vnfdId,{other_vnfd})&all_records=yes")).await), 181);
    assert_eq!(count(list("?filter=(in,vnfInstanceName,vnf-001,vnf-002,nope)".into()).await), 2);
    assert_eq!(count(list("?filter=(cont,vnfInstanceName,-00)".into()).await), 10);
    assert_eq!(count(list("?filter=(gte,vnfInstanceName,vnf-230)".into()).await), 10);
    assert_eq!(count(list("?filter=(eq,metadata/tier,gold);(lt,metadata/n,20)".into()).await), 10);
    assert_eq!(
        count(list(format!("?filter=(eq,metadata/tier,gold);(eq,vnfdId,{other_vnfd})&all_records=yes")).await),
        60
    );
    assert_eq!(count(list("?filter=(eq,instantiationState,INSTANTIATED)".into()).await), 0);
    assert_eq!(count(list("?filter=(ncont,vnfInstanceName,vnf)".into()).await), 0);
    assert_eq!(count(list("?filter=%28eq%2CvnfInstanceName%2Cvnf-007%29".into()).await), 1);
    // Filtered and paged at once: the in-memory part does not break paging.
    let reply = list("?filter=(eq,metadata/tier,silver)".into()).await;
    assert_eq!(reply.json().as_array().unwrap().len(), 50);
    assert!(reply.header("link").is_some());

    // Selectors: default excludes metadata; all_fields and fields include it.
    let page = list("?filter=(eq,vnfInstanceName,vnf-003)".into()).await.json();
    assert!(page[0].get("metadata").is_none() && page[0]["_links"].is_object());
    let page = list("?filter=(eq,vnfInstanceName,vnf-003)&all_fields".into()).await.json();
    assert_eq!(page[0]["metadata"]["tier"], "silver");
    let page = list("?filter=(eq,vnfInstanceName,vnf-003)&fields=metadata".into()).await.json();
    assert_eq!(page[0]["metadata"]["n"], 3);
    let page =
        list("?filter=(eq,vnfInstanceName,vnf-003)&exclude_fields=vnfInstanceDescription,metadata".into()).await.json();
    assert!(page[0].get("metadata").is_none() && page[0]["vnfdId"].is_string());

    // Bad queries are 400 ProblemDetails, never 500.
    for (query, detail) in [
        ("?filter=(eq,vnfInstanceName", "filter parse error"),
        ("?filter=(foo,vnfInstanceName,x)", "Invalid op foo"),
        ("?filter=(eq,vnfInstanceName,a,b)", "Only one value is allowed for op eq"),
        ("?filter=(eq,noSuchAttr,x)", "AttrName noSuchAttr is invalid"),
        ("?all_fields&fields=metadata", "Attribute selector expression is invalid."),
        ("?fields=metadata&exclude_fields=extensions", "Attribute selector expression is invalid."),
        ("?nextpage_opaque_marker=bogus", "Paging marker value bogus is invalid."),
    ] {
        let reply = list(query.into()).await;
        assert_eq!(reply.problem(400), detail, "{query}");
    }
    // Op occs list too.
    let ops = send(v2(&app, Method::GET, "/vnflcm/v2/vnf_lcm_op_occs?filter=(eq,operationState,COMPLETED)")).await;
    assert_eq!(ops.status, 200, "{}", ops.text);
    let _: Value = ops.json();
}

/// The local simulated VIM and its fault injection are a test hook behind a setting: with
/// it off, an instance without a VIM connection is refused at request time and never run
/// on the simulator, and naming the simulator's vimType does not get around it.
async fn the_local_vim_runs_only_where_enabled(db: Db) {
    let Some(app) = TestApp::spawn_on(db, |settings| settings.conductor.local_vim = Some(false)).await else {
        return;
    };
    let vnfd_id = install_sample_package(&app);
    let id = create_instance(&app, &vnfd_id, "no-vim").await;
    let instantiate = format!("/vnflcm/v2/vnf_instances/{id}/instantiate");
    let reply = send(v2(&app, Method::POST, &instantiate).json(&instantiate_body())).await;
    assert_eq!(
        reply.problem(422),
        "The VNF instance has no vimConnectionInfo, and the local simulated VIM is not enabled."
    );
    let body = json!({
        "flavourId": "simple",
        "vimConnectionInfo": {"vim1": {"vimType": "SOLGATE.LOCAL.V_1"}},
        "additionalParams": {"localVim": {"delayMs": 10}}
    });
    let reply = send(v2(&app, Method::POST, &instantiate).json(&body)).await;
    assert!(reply.problem(422).starts_with("vimType SOLGATE.LOCAL.V_1 is not supported"), "{}", reply.text);
    // Nothing was accepted: no occurrence, the instance untouched.
    let ops = send(v2(&app, Method::GET, "/vnflcm/v2/vnf_lcm_op_occs")).await;
    assert_eq!(ops.status, 200, "{}", ops.text);
    assert_eq!(ops.json(), json!([]));
    assert_eq!(show_instance(&app, &id).await["instantiationState"], "NOT_INSTANTIATED");
}

/// `solgate_lcm_work_taken_total{by=...}` as the process's /metrics shows it.
async fn work_taken(app: &TestApp, by: &str) -> u64 {
    let metrics = send(app.get("/metrics")).await.text;
    let prefix = format!("solgate_lcm_work_taken_total{{by=\"{by}\"}} ");
    metrics.lines().find_map(|line| line.strip_prefix(&prefix)?.parse().ok()).unwrap_or(0)
}

/// In `solgate serve` the conductor takes an accepted start up in the accepting transaction:
/// the occurrence the 202 names is PROCESSING already. Those starts and the messaged ones
/// share `max_concurrent_operations`: beyond it the work goes by message, and every
/// operation completes either way.
async fn accepted_starts_are_taken_up_within_the_conductors_limit(db: Db) {
    let Some(app) = TestApp::spawn_on(db, |settings| {
        // The loop waiting for a message holds one place: one is left for a local start.
        settings.conductor.max_concurrent_operations = 2;
        // Slow enough that the later instantiates arrive while the first runs.
        settings.conductor.local_vim_delay_ms = 150;
    })
    .await
    else {
        return;
    };
    let vnfd_id = install_sample_package(&app);
    let mut ids = Vec::new();
    for n in 0..4 {
        ids.push(create_instance(&app, &vnfd_id, &format!("limit-{n}")).await);
    }
    let (accepted_before, messaged_before) = (work_taken(&app, "accept").await, work_taken(&app, "message").await);

    let first = task(&app, &ids[0], "instantiate", instantiate_body()).await;
    let op = get(&app, &first).await.json();
    assert_eq!(op["operationState"], "PROCESSING", "started in the accepting transaction: {op}");
    assert_eq!(work_taken(&app, "accept").await, accepted_before + 1);

    // The one local place is taken: these go by message, and wait for places.
    let rest = ids[1..].iter().map(|id| task(&app, id, "instantiate", instantiate_body()));
    let urls = futures::future::join_all(rest).await;
    for url in std::iter::once(&first).chain(&urls) {
        let op = wait_op(&app, url, &["COMPLETED", "FAILED_TEMP", "ROLLED_BACK"]).await;
        assert_eq!(op["operationState"], "COMPLETED", "{op}");
    }
    let accepted = work_taken(&app, "accept").await - accepted_before;
    let messaged = work_taken(&app, "message").await - messaged_before;
    assert!(messaged >= 1, "beyond the limit the work went by message (accept {accepted}, message {messaged})");
    assert_eq!(accepted + messaged, 4, "each operation was taken up once");
    for id in &ids {
        assert_eq!(show_instance(&app, id).await["instantiationState"], "INSTANTIATED");
    }
}

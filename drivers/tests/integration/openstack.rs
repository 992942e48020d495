//! Keystone v3 + Heat v1 clients against recorded exchanges (tests/fixtures/openstack).

use std::time::Duration;

use chrono::{SecondsFormat, Utc};
use serde_json::{Value, json};
use solgate_drivers::VimConnection;
use solgate_drivers::openstack::{
    CreateStackRequest, HeatClient, OpenStackError, UpdateStackRequest, VimCredentials, WaitOptions, parse_hot,
};
use wiremock::MockServer;

use crate::support::{header_of, mount_exchanges, mount_fixture, mount_fixture_times, query_of, received};

const AUTH: &str = "/identity/v3/auth/tokens";
const HEAT: &str = "/heat-api/v1/a6944d763bf64ee6a275f1263fae0352";
const STACK: &str = "vnf-c8a1e1b4";
const STACK_ID: &str = "3095aefc-09fb-4bc7-b1f0-f21a304e864c";

/// Keystone's `expires_at` format (`2015-11-07T02:58:43.578887Z`), `secs` from now.
fn expires_in(secs: i64) -> String {
    (Utc::now() + chrono::Duration::seconds(secs)).to_rfc3339_opts(SecondsFormat::Micros, true)
}

/// A SOL003 VimConnectionInfo as Tacker's vim_utils.vim_to_conn_info writes it.
fn vim(server: &MockServer, region: &str) -> VimConnection {
    serde_json::from_value(json!({
        "vimId": "c3369b54-e376-4423-bb61-afd255900fea",
        "vimType": "ETSINFV.OPENSTACK_KEYSTONE.V_3",
        "interfaceInfo": {"endpoint": format!("{}/identity/v3", server.uri())},
        "accessInfo": {"username": "nfv_user", "password": "devstack", "region": region,
            "project": "nfv", "projectDomain": "Default", "userDomain": "Default"}
    }))
    .unwrap()
}

fn heat_client(server: &MockServer) -> HeatClient {
    HeatClient::new(VimCredentials::from_vim_connection(&vim(server, "RegionOne")).unwrap()).unwrap()
}

async fn authenticated_server() -> MockServer {
    let server = MockServer::start().await;
    mount_fixture(&server, "openstack/keystone_auth.json", &[("token", "tok-1"), ("expires_at", &expires_in(3600))])
        .await;
    server
}

fn fast() -> WaitOptions {
    WaitOptions { poll_interval: Duration::from_millis(10), timeout: Duration::from_secs(10) }
}

fn stack_body(status: &str, reason: &str) -> Value {
    json!({"stack": {"id": STACK_ID, "stack_name": STACK, "stack_status": status, "stack_status_reason": reason,
        "parameters": {}, "outputs": [], "creation_time": "2026-11-22T02:00:05Z", "updated_time": null,
        "links": []}})
}

#[tokio::test]
async fn password_auth_sends_the_v3_body_and_heat_is_found_in_the_catalog() {
    let server = authenticated_server().await;
    mount_fixture(&server, "openstack/heat_stack_create.json", &[]).await;
    let heat = heat_client(&server);

    let stack = heat.get_stack(STACK).await.unwrap().unwrap();
    assert_eq!(stack.stack_status, "CREATE_IN_PROGRESS");

    let auth = received(&server, "POST", AUTH).await;
    assert_eq!(auth.len(), 1);
    assert_eq!(
        auth[0].body_json::<Value>().unwrap(),
        json!({"auth": {
            "identity": {"methods": ["password"], "password": {"user": {
                "name": "nfv_user", "domain": {"name": "Default"}, "password": "devstack"}}},
            "scope": {"project": {"name": "nfv", "domain": {"name": "Default"}}}
        }})
    );
    // The public RegionOne endpoint, not the internal one nor RegionTwo's; the redirect
    // to Heat's internal host was re-rooted on it.
    let by_id = received(&server, "GET", &format!("{HEAT}/stacks/{STACK}/{STACK_ID}")).await;
    assert_eq!(by_id.len(), 1);
    assert_eq!(header_of(&by_id[0], "x-auth-token"), Some("tok-1"));
    let session = heat.keystone().session().await.unwrap();
    assert_eq!(session.project_id.as_deref(), Some("a6944d763bf64ee6a275f1263fae0352"));
}

#[tokio::test]
async fn region_selects_the_catalog_entry_and_an_unknown_region_is_reported() {
    let server = authenticated_server().await;
    let two = HeatClient::new(VimCredentials::from_vim_connection(&vim(&server, "RegionTwo")).unwrap()).unwrap();
    let url = two.keystone().endpoint("orchestration").await.unwrap();
    assert_eq!(url.as_str(), format!("{}/heat-region-two/v1/a6944d763bf64ee6a275f1263fae0352", server.uri()));

    let three = HeatClient::new(VimCredentials::from_vim_connection(&vim(&server, "RegionThree")).unwrap()).unwrap();
    let err = three.get_stack(STACK).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "no public endpoint for service type 'orchestration' in region 'RegionThree' in the Keystone catalog"
    );
}

#[tokio::test]
async fn token_is_cached_until_it_nears_expiry() {
    let server = authenticated_server().await;
    mount_fixture(&server, "openstack/heat_stack_create.json", &[]).await;
    let heat = heat_client(&server);
    for _ in 0..3 {
        heat.get_stack(&format!("{STACK}/{STACK_ID}")).await.unwrap();
    }
    assert_eq!(received(&server, "POST", AUTH).await.len(), 1);

    // A token with less life left than the margin (120 s) is replaced before each use.
    let server = MockServer::start().await;
    mount_fixture(&server, "openstack/keystone_auth.json", &[("token", "tok-short"), ("expires_at", &expires_in(60))])
        .await;
    mount_fixture(&server, "openstack/heat_stack_create.json", &[]).await;
    let heat = heat_client(&server);
    heat.get_stack(&format!("{STACK}/{STACK_ID}")).await.unwrap();
    heat.get_stack(&format!("{STACK}/{STACK_ID}")).await.unwrap();
    assert_eq!(received(&server, "POST", AUTH).await.len(), 2);
}

#[tokio::test]
async fn heat_401_triggers_exactly_one_reauthentication() {
    let server = MockServer::start().await;
    let expires = expires_in(3600);
    mount_fixture_times(
        &server,
        "openstack/keystone_auth.json",
        &[("token", "tok-1"), ("expires_at", &expires)],
        Some(1),
    )
    .await;
    mount_fixture(&server, "openstack/keystone_auth.json", &[("token", "tok-2"), ("expires_at", &expires)]).await;
    // keystonemiddleware's answer to a revoked token.
    let path = format!("{HEAT}/stacks/{STACK}/{STACK_ID}");
    mount_exchanges(
        &server,
        json!([
            {"request": {"method": "GET", "path": path, "headers": {"X-Auth-Token": "tok-1"}},
             "response": {"status": 401, "headers": {"WWW-Authenticate": "Keystone uri=\"http://192.0.2.10/identity\""},
                "body": {"error": {"code": 401, "title": "Unauthorized",
                    "message": "The request you have made requires authentication."}}}},
            {"request": {"method": "GET", "path": path, "headers": {"X-Auth-Token": "tok-2"}},
             "response": {"status": 200, "body": stack_body("CREATE_COMPLETE", "Stack CREATE completed successfully")}}
        ]),
    )
    .await;
    let heat = heat_client(&server);

    let stack = heat.get_stack(&format!("{STACK}/{STACK_ID}")).await.unwrap().unwrap();
    assert_eq!(stack.stack_status, "CREATE_COMPLETE");
    assert_eq!(received(&server, "POST", AUTH).await.len(), 2);
    let tokens: Vec<_> = received(&server, "GET", &path)
        .await
        .iter()
        .map(|r| header_of(r, "x-auth-token").unwrap().to_owned())
        .collect();
    assert_eq!(tokens, ["tok-1", "tok-2"]);
}

#[tokio::test]
async fn a_401_after_reauthentication_is_returned_not_retried_forever() {
    let server = authenticated_server().await;
    let path = format!("{HEAT}/stacks/{STACK}/{STACK_ID}");
    mount_exchanges(
        &server,
        json!([{"request": {"method": "GET", "path": path},
            "response": {"status": 401, "body": {"error": {"code": 401, "title": "Unauthorized",
                "message": "The request you have made requires authentication."}}}}]),
    )
    .await;
    let err = heat_client(&server).get_stack(&format!("{STACK}/{STACK_ID}")).await.unwrap_err();
    assert_eq!(err.http_status(), Some(401));
    assert_eq!(err.to_string(), "Heat returned HTTP 401: The request you have made requires authentication.");
    assert_eq!(received(&server, "POST", AUTH).await.len(), 2);
    assert_eq!(received(&server, "GET", &path).await.len(), 2);
}

#[tokio::test]
async fn keystone_refusing_the_password_is_an_authentication_error() {
    let server = MockServer::start().await;
    mount_exchanges(
        &server,
        json!([{"request": {"method": "POST", "path": AUTH},
            "response": {"status": 401, "body": {"error": {"code": 401, "title": "Unauthorized",
                "message": "The request you have made requires authentication."}}}}]),
    )
    .await;
    let err = heat_client(&server).get_stack(STACK).await.unwrap_err();
    assert!(matches!(err, OpenStackError::Authentication { status: 401, .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        "Keystone authentication failed with HTTP 401: The request you have made requires authentication."
    );
}

const HOT: &str = "\
heat_template_version: 2013-05-23
description: VNF flavour simple
parameters:
  nfv:
    type: json
resources:
  VDU1_scale_group:
    type: OS::Heat::AutoScalingGroup
    properties:
      min_size: 1
      max_size: 3
      desired_capacity: { get_param: [ nfv, VDU, VDU1, desired_capacity ] }
      resource:
        type: VDU1.yaml
";

const NESTED: &str = "heat_template_version: 2013-05-23\nresources:\n  VDU1:\n    type: OS::Nova::Server\n";

#[tokio::test]
async fn create_stack_then_wait_polls_until_create_complete() {
    let server = authenticated_server().await;
    mount_fixture(&server, "openstack/heat_stack_create.json", &[]).await;
    let heat = heat_client(&server);

    let request = CreateStackRequest::new(STACK, parse_hot(HOT).unwrap())
        .with_file("VDU1.yaml", NESTED)
        .with_parameter("nfv", json!({"VDU": {"VDU1": {"desired_capacity": 1}}}))
        .with_timeout_mins(60);
    let created = heat.create_stack(&request).await.unwrap();
    assert_eq!(created.to_string(), format!("{STACK}/{STACK_ID}"));

    let stack = heat.wait_for(STACK, "CREATE_COMPLETE", &fast()).await.unwrap().unwrap();
    assert_eq!(stack.stack_status, "CREATE_COMPLETE");
    assert_eq!(stack.stack_status_reason.as_deref(), Some("Stack CREATE completed successfully"));

    let posts = received(&server, "POST", &format!("{HEAT}/stacks")).await;
    assert_eq!(posts.len(), 1);
    assert_eq!(header_of(&posts[0], "content-type"), Some("application/json"));
    assert_eq!(
        posts[0].body_json::<Value>().unwrap(),
        json!({
            "stack_name": STACK,
            "template": {
                "heat_template_version": "2013-05-23",
                "description": "VNF flavour simple",
                "parameters": {"nfv": {"type": "json"}},
                "resources": {"VDU1_scale_group": {"type": "OS::Heat::AutoScalingGroup", "properties": {
                    "min_size": 1, "max_size": 3,
                    "desired_capacity": {"get_param": ["nfv", "VDU", "VDU1", "desired_capacity"]},
                    "resource": {"type": "VDU1.yaml"}}}}
            },
            "files": {"VDU1.yaml": NESTED},
            "parameters": {"nfv": {"VDU": {"VDU1": {"desired_capacity": 1}}}},
            "timeout_mins": 60
        })
    );
    // Two CREATE_IN_PROGRESS answers, then CREATE_COMPLETE: three polls, each via the name lookup.
    assert_eq!(received(&server, "GET", &format!("{HEAT}/stacks/{STACK}")).await.len(), 3);
    assert_eq!(received(&server, "GET", &format!("{HEAT}/stacks/{STACK}/{STACK_ID}")).await.len(), 3);
}

#[tokio::test]
async fn create_failed_surfaces_the_stack_status_reason() {
    let server = authenticated_server().await;
    mount_fixture(&server, "openstack/heat_stack_create_failed.json", &[]).await;
    let heat = heat_client(&server);
    heat.create_stack(&CreateStackRequest::new(STACK, parse_hot(HOT).unwrap())).await.unwrap();

    let err = heat.wait_for(STACK, "CREATE_COMPLETE", &fast()).await.unwrap_err();
    match &err {
        OpenStackError::StackFailed { status, reason, .. } => {
            assert_eq!(status, "CREATE_FAILED");
            assert!(reason.contains("No valid host was found"), "{reason}");
        }
        other => panic!("expected StackFailed, got {other:?}"),
    }
    assert!(err.to_string().starts_with("stack vnf-c8a1e1b4 reached CREATE_FAILED: Resource CREATE failed"));
}

#[tokio::test]
async fn update_repeats_the_patch_on_the_redirect_and_waits_for_update_complete() {
    let server = authenticated_server().await;
    mount_fixture(&server, "openstack/heat_stack_update.json", &[]).await;
    let heat = heat_client(&server);

    let mut update = UpdateStackRequest::default();
    update.parameters.insert("VDU1_desired_capacity".into(), json!(2));
    heat.update_stack(STACK, &update).await.unwrap();

    // The 302 was followed with PATCH and the same body, not downgraded to GET.
    let patched = received(&server, "PATCH", &format!("{HEAT}/stacks/{STACK}/{STACK_ID}")).await;
    assert_eq!(patched.len(), 1);
    assert_eq!(patched[0].body_json::<Value>().unwrap(), json!({"parameters": {"VDU1_desired_capacity": 2}}));
    assert!(received(&server, "GET", &format!("{HEAT}/stacks/{STACK}/{STACK_ID}")).await.is_empty());

    let stack = heat.wait_for(&format!("{STACK}/{STACK_ID}"), "UPDATE_COMPLETE", &fast()).await.unwrap().unwrap();
    assert_eq!(stack.parameters["VDU1_desired_capacity"], "2");
}

#[tokio::test]
async fn delete_then_wait_treats_404_as_gone() {
    let server = authenticated_server().await;
    mount_fixture(&server, "openstack/heat_stack_delete.json", &[]).await;
    let heat = heat_client(&server);
    let stack = format!("{STACK}/{STACK_ID}");

    assert!(heat.delete_stack(&stack).await.unwrap());
    assert_eq!(heat.wait_for(&stack, "DELETE_COMPLETE", &fast()).await.unwrap().map(|s| s.stack_status), None);
    assert_eq!(received(&server, "GET", &format!("{HEAT}/stacks/{stack}")).await.len(), 2);
    // Gone is gone: a later wait for another status says so.
    let err = heat.wait_for(&stack, "CREATE_COMPLETE", &fast()).await.unwrap_err();
    assert!(matches!(err, OpenStackError::StackNotFound { .. }), "{err:?}");
}

#[tokio::test]
async fn delete_complete_counts_as_deleted_and_deleting_a_missing_stack_is_not_an_error() {
    let server = authenticated_server().await;
    let path = format!("{HEAT}/stacks/{STACK}/{STACK_ID}");
    mount_exchanges(
        &server,
        json!([
            {"request": {"method": "GET", "path": path},
             "response": {"status": 200, "body": stack_body("DELETE_COMPLETE", "Stack DELETE completed successfully")}},
            {"request": {"method": "DELETE", "path": path},
             "response": {"status": 404, "body": {"explanation": "The resource could not be found.", "code": 404,
                "error": {"message": "The Stack (vnf-c8a1e1b4) could not be found.", "traceback": null,
                    "type": "EntityNotFound"}, "title": "Not Found"}}}
        ]),
    )
    .await;
    let heat = heat_client(&server);
    let stack = format!("{STACK}/{STACK_ID}");
    let deleted = heat.wait_for(&stack, "DELETE_COMPLETE", &fast()).await.unwrap().unwrap();
    assert_eq!(deleted.stack_status, "DELETE_COMPLETE");
    assert!(!heat.delete_stack(&stack).await.unwrap());
    // A deleted stack will not reach another action's status: no waiting until the timeout.
    let err = heat.wait_for(&stack, "UPDATE_COMPLETE", &fast()).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "stack vnf-c8a1e1b4/3095aefc-09fb-4bc7-b1f0-f21a304e864c is DELETE_COMPLETE while waiting for UPDATE_COMPLETE"
    );
}

#[tokio::test]
async fn resources_are_listed_with_nested_depth() {
    let server = authenticated_server().await;
    mount_fixture(&server, "openstack/heat_resources.json", &[]).await;
    let resources = heat_client(&server).list_resources(&format!("{STACK}/{STACK_ID}"), 2).await.unwrap();

    let listed = received(&server, "GET", &format!("{HEAT}/stacks/{STACK}/{STACK_ID}/resources")).await;
    assert_eq!(query_of(&listed[0]), [("nested_depth".to_owned(), "2".to_owned())]);
    let names: Vec<_> = resources.iter().map(|r| (r.resource_name.as_str(), r.resource_type.as_str())).collect();
    assert_eq!(names, [("VDU1_scale_group", "OS::Heat::AutoScalingGroup"), ("VDU1", "OS::Nova::Server")]);
    let server_res = &resources[1];
    assert_eq!(server_res.physical_resource_id, "9b1f2ad5-7a9e-4d5c-8f2b-3c4d5e6f7a8b");
    assert_eq!(server_res.parent_resource.as_deref(), Some("ohlbrvzj4qet"));
    assert_eq!(
        server_res.stack_identifier().as_deref(),
        Some(
            "vnf-c8a1e1b4-VDU1_scale_group-dmqpxbs6jnzp-ohlbrvzj4qet-6x5nhmbxsf6a/b2c3d4e5-0000-4000-8000-000000000002"
        )
    );
}

#[tokio::test]
async fn mark_unhealthy_resolves_the_stack_name_and_patches_the_resource() {
    let server = authenticated_server().await;
    mount_fixture(&server, "openstack/heat_mark_unhealthy.json", &[]).await;
    heat_client(&server).mark_resource_unhealthy(STACK, "VDU1", "marked by solgate").await.unwrap();

    let patched = received(&server, "PATCH", &format!("{HEAT}/stacks/{STACK}/{STACK_ID}/resources/VDU1")).await;
    assert_eq!(patched.len(), 1);
    assert_eq!(
        patched[0].body_json::<Value>().unwrap(),
        json!({"mark_unhealthy": true, "resource_status_reason": "marked by solgate"})
    );
}

#[tokio::test]
async fn heat_errors_keep_status_message_and_type() {
    let server = authenticated_server().await;
    mount_fixture(&server, "openstack/heat_stack_conflict.json", &[]).await;
    let err =
        heat_client(&server).create_stack(&CreateStackRequest::new(STACK, parse_hot(HOT).unwrap())).await.unwrap_err();
    match &err {
        OpenStackError::Api { service, status, message, error_type } => {
            assert_eq!((*service, *status), ("Heat", 409));
            assert_eq!(message, "The Stack (vnf-c8a1e1b4) already exists.");
            assert_eq!(error_type.as_deref(), Some("StackExists"));
        }
        other => panic!("expected Api, got {other:?}"),
    }
    assert_eq!(err.http_status(), Some(409));
}

#[tokio::test]
async fn wait_for_gives_up_at_the_timeout_with_the_last_status() {
    let server = authenticated_server().await;
    mount_exchanges(
        &server,
        json!([{"request": {"method": "GET", "path": format!("{HEAT}/stacks/{STACK}/{STACK_ID}")},
            "response": {"status": 200, "body": stack_body("UPDATE_IN_PROGRESS", "Stack UPDATE started")}}]),
    )
    .await;
    let options = WaitOptions { poll_interval: Duration::from_millis(20), timeout: Duration::from_millis(150) };
    let err =
        heat_client(&server).wait_for(&format!("{STACK}/{STACK_ID}"), "UPDATE_COMPLETE", &options).await.unwrap_err();
    match err {
        OpenStackError::Timeout { last_status, target, .. } => {
            assert_eq!(last_status, "UPDATE_IN_PROGRESS");
            assert_eq!(target, "UPDATE_COMPLETE");
        }
        other => panic!("expected Timeout, got {other:?}"),
    }
}

#[tokio::test]
async fn template_and_files_are_read_back_as_heat_stored_them() {
    let server = authenticated_server().await;
    let base = format!("{HEAT}/stacks/{STACK}/{STACK_ID}");
    // GET stacks/{name}/{id}/template and /files (api-ref stacks.inc "Get stack template",
    // "Show stack files"); Tacker's heat_utils.get_template / get_files read them for change_vnfpkg.
    mount_exchanges(
        &server,
        json!([
            {"request": {"method": "GET", "path": format!("{base}/template")},
             "response": {"status": 200, "body": {"heat_template_version": "2013-05-23",
                "resources": {"VDU1_scale_group": {"type": "OS::Heat::AutoScalingGroup"}}}}},
            {"request": {"method": "GET", "path": format!("{base}/files")},
             "response": {"status": 200, "body": {"VDU1.yaml": NESTED}}}
        ]),
    )
    .await;
    let heat = heat_client(&server);
    let stack = format!("{STACK}/{STACK_ID}");
    let template = heat.get_template(&stack).await.unwrap();
    assert_eq!(template["resources"]["VDU1_scale_group"]["type"], "OS::Heat::AutoScalingGroup");
    let files = heat.get_files(&stack).await.unwrap();
    assert_eq!(files.get("VDU1.yaml").map(String::as_str), Some(NESTED));
}

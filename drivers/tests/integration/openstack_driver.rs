//! `OpenStackDriver` through `InfraDriver::execute`, against recorded Keystone/Heat/Nova
//! exchanges (tests/fixtures/openstack). The VNF instance id is `c8a1e1b4`, so the stack is
//! `vnf-c8a1e1b4`, the name the recorded stack exchanges carry. The package is the vnfpkg
//! sample (flavour `simple`: VDU1 scalable, VDU2 with VirtualStorage, internalVL1) with a
//! Tacker-style BaseHOT added.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use chrono::{SecondsFormat, Utc};
use serde_json::{Value, json};
use solgate_drivers::infra::{DeploymentPlan, VduTarget};
use solgate_drivers::openstack::{OpenStackDriver, WaitOptions};
use solgate_drivers::{DriverError, InfraAction, InfraContext, InfraDriver, Inventory, VimConnection};
use solgate_vnfpkg::testing::CsarBuilder;
use solgate_vnfpkg::{Limits, Vnfd};
use wiremock::MockServer;

use crate::support::{TlsFront, mount_exchanges, mount_fixture, mount_fixture_at, received};

const INSTANCE: &str = "c8a1e1b4";
const HEAT: &str = "/heat-api/v1/a6944d763bf64ee6a275f1263fae0352";
const STACK: &str = "vnf-c8a1e1b4";
const STACK_ID: &str = "3095aefc-09fb-4bc7-b1f0-f21a304e864c";
/// The scaling group's nested stack, holding its members.
const GROUP_STACK: &str = "vnf-c8a1e1b4-VDU1_scale_group-dmqpxbs6jnzp/a1b2c3d4-0000-4000-8000-000000000001";
const MEMBER1_STACK: &str =
    "vnf-c8a1e1b4-VDU1_scale_group-dmqpxbs6jnzp-ohlbrvzj4qet-6x5nhmbxsf6a/b2c3d4e5-0000-4000-8000-000000000002";
const SERVER1: &str = "9b1f2ad5-7a9e-4d5c-8f2b-3c4d5e6f7a8b";
const SERVER2: &str = "4c8e7f1a-2b3d-4e5f-9a6b-7c8d9e0f1a2b";
const SERVER3: &str = "7d2e9c4b-5a6f-4b8c-9d1e-2f3a4b5c6d7e";
const SERVER1_HEALED: &str = "0e1f2a3b-4c5d-4e6f-8a7b-9c0d1e2f3a4b";
const VDU2_SERVER: &str = "5e6f7a8b-9c0d-4e1f-8a2b-3c4d5e6f7a90";
const EXT_NET: &str = "a1e4d3c2-7b6f-4e5d-9c8b-0a1f2e3d4c5b";

/// Top template in Tacker's sample style: VDU1 in an AutoScalingGroup sized by
/// `nfv.VDU.VDU1.desired_capacity`, VDU2 a plain server with a volume and an internal port.
const TOP_HOT: &str = include_str!("../fixtures/openstack/basehot/sample_hot.yaml");

const NESTED_VDU1: &str = include_str!("../fixtures/openstack/basehot/VDU1.yaml");

struct Package {
    _dir: tempfile::TempDir,
    path: PathBuf,
    vnfd: Vnfd,
}

fn package(builder: &CsarBuilder) -> Package {
    let csar = builder.to_tempfile().unwrap();
    let vnfd = solgate_vnfpkg::inspect(csar.path(), &Limits::default()).unwrap().vnfd;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("package");
    solgate_vnfpkg::extract(csar.path(), &path, &Limits::default()).unwrap();
    Package { _dir: dir, path, vnfd }
}

fn sample_package() -> Package {
    package(
        &CsarBuilder::sample()
            .file("BaseHOT/simple/sample_hot.yaml", TOP_HOT)
            .file("BaseHOT/simple/nested/VDU1.yaml", NESTED_VDU1),
    )
}

/// A VimConnectionInfo as Tacker's vim_utils.vim_to_conn_info writes it.
fn vim(server: &MockServer) -> VimConnection {
    VimConnection {
        id: "vim-os-1".into(),
        vim_id: Some("c3369b54-e376-4423-bb61-afd255900fea".into()),
        vim_type: "ETSINFV.OPENSTACK_KEYSTONE.V_3".into(),
        interface_info: json!({"endpoint": format!("{}/identity/v3", server.uri())}),
        access_info: json!({"username": "nfv_user", "password": "devstack", "region": "RegionOne",
            "project": "nfv", "projectDomain": "Default", "userDomain": "Default"}),
        extra: json!({}),
    }
}

fn driver() -> OpenStackDriver {
    OpenStackDriver {
        wait: WaitOptions { poll_interval: Duration::from_millis(10), timeout: Duration::from_secs(10) },
        cancel_poll: Duration::from_millis(10),
        stack_timeout_mins: 20,
        trust: solgate_drivers::VimTrust::default(),
        scripts: Default::default(),
    }
}

fn plan(vdu1: u32) -> DeploymentPlan {
    DeploymentPlan {
        flavour_id: "simple".into(),
        vdus: vec![VduTarget { vdu_id: "VDU1".into(), count: vdu1 }, VduTarget { vdu_id: "VDU2".into(), count: 1 }],
        virtual_links: vec!["internalVL1".into()],
        // SOL003 v3.3.1 ExtVirtualLinkData with a map-shaped cpConfig.
        ext_virtual_links: json!([{
            "id": "ext-vl-1", "resourceId": EXT_NET,
            "extCps": [{"cpdId": "VDU1_CP1", "cpConfig": {"VDU1_CP1_1": {"cpProtocolData": [{
                "layerProtocol": "IP_OVER_ETHERNET",
                "ipOverEthernet": {"ipAddresses": [{"type": "IPV4", "numDynamicAddresses": 1,
                    "subnetId": "f3e2d1c0-b9a8-4765-8432-10fedcba9876"}]}}]}}}]
        }]),
        ext_managed_virtual_links: json!([]),
        scale_levels: BTreeMap::from([("VDU1_scale".to_owned(), vdu1.saturating_sub(1))]),
        granted: Default::default(),
    }
}

async fn execute(
    server: &MockServer,
    pkg: &Package,
    current: &Inventory,
    params: Value,
    action: InfraAction<'_>,
    cancelled: &(dyn Fn() -> bool + Send + Sync),
) -> Result<Inventory, DriverError> {
    execute_on(&driver(), &vim(server), pkg, current, params, action, cancelled).await
}

async fn execute_on(
    driver: &OpenStackDriver,
    vim: &VimConnection,
    pkg: &Package,
    current: &Inventory,
    params: Value,
    action: InfraAction<'_>,
    cancelled: &(dyn Fn() -> bool + Send + Sync),
) -> Result<Inventory, DriverError> {
    let ctx = InfraContext {
        instance_id: INSTANCE,
        vim,
        vnfd: &pkg.vnfd,
        package_dir: Some(&pkg.path),
        current,
        additional_params: &params,
        attempt: 1,
        run: 1,
        cancelled,
        rolling_back: false,
        lcm_input: None,
    };
    driver.execute(ctx, action).await
}

fn never() -> impl Fn() -> bool + Send + Sync {
    || false
}

async fn keystone(server: &MockServer) {
    keystone_at(server, &server.uri()).await;
}

/// Keystone with a catalog whose endpoints start with `base`.
async fn keystone_at(server: &MockServer, base: &str) {
    let expires = (Utc::now() + chrono::Duration::hours(1)).to_rfc3339_opts(SecondsFormat::Micros, true);
    mount_fixture_at(server, base, "openstack/keystone_auth.json", &[("token", "tok-1"), ("expires_at", &expires)])
        .await;
}

/// Instantiates with two VDU1 instances; returns the server (still answering) and the inventory.
async fn instantiated(pkg: &Package) -> (MockServer, Inventory) {
    let server = MockServer::start().await;
    keystone(&server).await;
    // The name is looked up first: Heat has no such stack yet.
    mount_fixture(&server, "openstack/heat_stack_absent.json", &[]).await;
    mount_fixture(&server, "openstack/heat_stack_create.json", &[]).await;
    mount_fixture(&server, "openstack/heat_resources_vnf.json", &[]).await;
    let params = json!({"nfv": {"VDU": {"VDU2": {"computeFlavourId": "m1.small"}}}});
    let plan = plan(2);
    let inventory =
        execute(&server, pkg, &Inventory::default(), params, InfraAction::Realize { plan: &plan }, &never())
            .await
            .unwrap();
    (server, inventory)
}

/// A fresh server for the next operation: Keystone plus the given fixtures.
async fn next_server(fixtures: &[&str]) -> MockServer {
    let server = MockServer::start().await;
    keystone(&server).await;
    for fixture in fixtures {
        mount_fixture(&server, fixture, &[]).await;
    }
    server
}

/// `GET stacks/{name}/{id}` answering the given statuses in turn, each `times` times (the
/// last one for good when `None`).
async fn mount_stack_status(server: &MockServer, statuses: &[(&str, Option<u64>)]) {
    let exchanges: Vec<Value> = statuses
        .iter()
        .map(|(status, times)| {
            json!({"request": {"method": "GET", "path": format!("{HEAT}/stacks/{STACK}/{STACK_ID}")},
                "response": {"status": 200, "body": {"stack": {"id": STACK_ID, "stack_name": STACK,
                    "stack_status": status, "stack_status_reason": format!("Stack {status}"),
                    "links": [{"rel": "self",
                        "href": format!("{}{HEAT}/stacks/{STACK}/{STACK_ID}", server.uri())}]}}},
                "times": times})
        })
        .collect();
    mount_exchanges(server, Value::Array(exchanges)).await;
}

/// As [`next_server`], the known stack first answering once that it is settled in `status`
/// (the read before a change of a known stack), then the fixtures.
async fn next_server_settled(status: &str, fixtures: &[&str]) -> MockServer {
    let server = next_server(&[]).await;
    mount_stack_status(&server, &[(status, Some(1))]).await;
    for fixture in fixtures {
        mount_fixture(&server, fixture, &[]).await;
    }
    server
}

fn servers_of(inventory: &Inventory, vdu: &str) -> Vec<(String, String)> {
    inventory
        .vnfc_resources
        .iter()
        .filter(|v| v.vdu_id == vdu)
        .map(|v| (v.id.clone(), v.compute_resource.resource_id.clone()))
        .collect()
}

#[tokio::test]
async fn instantiate_creates_the_stack_from_basehot_and_maps_its_resources() {
    let pkg = sample_package();
    let (server, inventory) = instantiated(&pkg).await;

    // The name is looked up (404), then POST /stacks: the BaseHOT as JSON, the nested
    // template by file name, Tacker's nfv parameter.
    let requests = server.received_requests().await.unwrap();
    let lookup =
        requests.iter().position(|r| r.method.as_str() == "GET" && r.url.path() == format!("{HEAT}/stacks/{STACK}"));
    let create = requests.iter().position(|r| r.method.as_str() == "POST" && r.url.path() == format!("{HEAT}/stacks"));
    assert!(lookup.is_some() && lookup < create, "looked up before the create");
    let posts = received(&server, "POST", &format!("{HEAT}/stacks")).await;
    assert_eq!(posts.len(), 1);
    let body: Value = posts[0].body_json().unwrap();
    assert_eq!(body["stack_name"], STACK);
    assert_eq!(body["timeout_mins"], 20);
    assert_eq!(body["files"], json!({"VDU1.yaml": NESTED_VDU1}));
    assert_eq!(body["template"]["resources"]["VDU1_scale_group"]["type"], "OS::Heat::AutoScalingGroup");
    assert_eq!(
        body["parameters"]["nfv"],
        json!({
            "VDU": {
                "VDU1": {"desired_capacity": 2, "computeFlavourId": "m1.tiny", "vcImageId": "sample-image"},
                // VDU2 names no flavour in the VNFD; additionalParams.nfv supplies it.
                "VDU2": {"computeFlavourId": "m1.small", "vcImageId": "sample-image"}
            },
            "CP": {"VDU1_CP1": {"network": EXT_NET}}
        })
    );

    // Servers become VNFCs, by the VDU their resource is named after.
    let vdu1 = servers_of(&inventory, "VDU1");
    assert_eq!(vdu1.iter().map(|(_, r)| r.as_str()).collect::<Vec<_>>(), [SERVER1, SERVER2]);
    let vdu2 = inventory.vnfc_resources.iter().find(|v| v.vdu_id == "VDU2").unwrap();
    assert_eq!(vdu2.compute_resource.resource_id, VDU2_SERVER);
    assert_eq!(vdu2.compute_resource.vim_level_resource_type.as_deref(), Some("OS::Nova::Server"));
    assert_eq!(vdu2.compute_resource.vim_connection_id.as_deref(), Some("vim-os-1"));
    // The volume is VDU2's storage, in the same (top) stack.
    assert_eq!(inventory.virtual_storages.len(), 1);
    let storage = &inventory.virtual_storages[0];
    assert_eq!(storage.virtual_storage_desc_id, "VirtualStorage");
    assert_eq!(storage.storage_resource.resource_id, "6f7a8b9c-0d1e-4f2a-9b3c-4d5e6f7a8b9c");
    assert_eq!(vdu2.storage_resource_ids, std::slice::from_ref(&storage.id));
    // The network, with the internal ports of every VNFC attached.
    assert_eq!(inventory.virtual_links.len(), 1);
    let vl = &inventory.virtual_links[0];
    assert_eq!(vl.vnf_virtual_link_desc_id, "internalVL1");
    assert_eq!(vl.network_resource.resource_id, "1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d");
    let mut port_ids: Vec<&str> = vl.vnf_link_ports.iter().map(|p| p["id"].as_str().unwrap()).collect();
    port_ids.sort();
    assert_eq!(
        port_ids,
        [
            "8b9c0d1e-2f3a-4b4c-8d5e-6f7a8b9c0d1e",
            "c21100000-0000-4000-8000-000000000011",
            "c21200000-0000-4000-8000-000000000012"
        ]
    );
    let first = &inventory.vnfc_resources[0];
    let cp2 = first.vnfc_cp_info.iter().find(|cp| cp["cpdId"] == "VDU1_CP2").unwrap();
    assert_eq!(cp2["vnfLinkPortId"], "c21100000-0000-4000-8000-000000000011");
    let cp1 = first.vnfc_cp_info.iter().find(|cp| cp["cpdId"] == "VDU1_CP1").unwrap();
    assert_eq!(cp1.get("vnfLinkPortId"), None, "the external CP's port is not a VNF link port");
    assert!(vl.vnf_link_ports.iter().any(|p| p["cpInstanceId"] == cp2["id"] && p["cpInstanceType"] == "VNFC_CP"));
    // Scaling-group membership, for scale-in; the stack in vim_state.
    let metadata = first.metadata.as_ref().unwrap();
    assert_eq!(metadata["parent_stack_id"], GROUP_STACK);
    assert_eq!(metadata["parent_resource_name"], "ohlbrvzj4qet");
    assert_eq!(metadata["stack_id"], MEMBER1_STACK);
    assert_eq!(inventory.vim_state["stackName"], STACK);
    assert_eq!(inventory.vim_state["stackId"], STACK_ID);
    assert_eq!(inventory.vim_state["flavourId"], "simple");
}

#[tokio::test]
async fn scale_out_patches_desired_capacity_and_keeps_the_existing_vnfcs() {
    let pkg = sample_package();
    let (_, before) = instantiated(&pkg).await;
    // The known stack is read first: settled since the instantiate.
    let server = next_server_settled(
        "CREATE_COMPLETE",
        &["openstack/heat_stack_update.json", "openstack/heat_resources_scaled_out.json"],
    )
    .await;

    let plan = plan(3);
    let after =
        execute(&server, &pkg, &before, json!({}), InfraAction::Realize { plan: &plan }, &never()).await.unwrap();

    let patches = received(&server, "PATCH", &format!("{HEAT}/stacks/{STACK}/{STACK_ID}")).await;
    assert_eq!(patches.len(), 1);
    let body: Value = patches[0].body_json().unwrap();
    // Only the parameters: the template did not change. The instantiate request's nfv stays.
    assert!(body.get("template").is_none() && body.get("files").is_none(), "{body}");
    assert_eq!(body["parameters"]["nfv"]["VDU"]["VDU1"]["desired_capacity"], 3);
    assert_eq!(body["parameters"]["nfv"]["VDU"]["VDU2"]["computeFlavourId"], "m1.small");
    assert!(received(&server, "POST", &format!("{HEAT}/stacks")).await.is_empty());

    let old = servers_of(&before, "VDU1");
    let new = servers_of(&after, "VDU1");
    assert_eq!(new.len(), 3);
    assert_eq!(new[..2], old[..], "existing VNFCs keep id and server");
    assert_eq!(new[2].1, SERVER3);
    assert!(!old.iter().any(|(id, _)| *id == new[2].0));
}

#[tokio::test]
async fn scale_in_marks_the_newest_member_unhealthy_before_the_update() {
    let pkg = sample_package();
    let (_, before) = instantiated(&pkg).await;
    // The known stack is read first: settled since the instantiate.
    let server = next_server_settled(
        "CREATE_COMPLETE",
        &["openstack/heat_stack_update.json", "openstack/heat_resources_scaled_in.json"],
    )
    .await;
    // PATCH .../resources/{member} with mark_unhealthy (api-ref resources.inc) → 200, no body.
    let mark = format!("{HEAT}/stacks/{GROUP_STACK}/resources/x7v3k2pq9wnm");
    mount_exchanges(&server, json!([{"request": {"method": "PATCH", "path": mark}, "response": {"status": 200}}]))
        .await;

    let plan = plan(1);
    let after =
        execute(&server, &pkg, &before, json!({}), InfraAction::Realize { plan: &plan }, &never()).await.unwrap();

    let marked = received(&server, "PATCH", &mark).await;
    assert_eq!(marked.len(), 1);
    assert_eq!(
        marked[0].body_json::<Value>().unwrap(),
        json!({"mark_unhealthy": true, "resource_status_reason": "marked by solgate for scale-in"})
    );
    let patches = received(&server, "PATCH", &format!("{HEAT}/stacks/{STACK}/{STACK_ID}")).await;
    assert_eq!(patches[0].body_json::<Value>().unwrap()["parameters"]["nfv"]["VDU"]["VDU1"]["desired_capacity"], 1);
    // The older VNFC stays.
    assert_eq!(servers_of(&after, "VDU1"), servers_of(&before, "VDU1")[..1]);
}

/// `GET .../resources/VDU1` of the first VDU1 member (api-ref resources.inc "Show resource
/// data"): the server resource holding `server`.
async fn mount_member1_server(server: &MockServer, physical_id: &str) -> String {
    let path = format!("{HEAT}/stacks/{MEMBER1_STACK}/resources/VDU1");
    mount_exchanges(
        server,
        json!([{"request": {"method": "GET", "path": path}, "response": {"status": 200, "body": {"resource": {
            "attributes": {}, "creation_time": "2026-11-22T02:00:20Z", "description": "",
            "links": [
                {"href": format!("{}{path}", server.uri()), "rel": "self"},
                {"href": format!("{}{HEAT}/stacks/{MEMBER1_STACK}", server.uri()), "rel": "stack"}
            ],
            "logical_resource_id": "VDU1", "physical_resource_id": physical_id, "required_by": [],
            "resource_name": "VDU1", "resource_status": "CREATE_COMPLETE",
            "resource_status_reason": "state changed", "resource_type": "OS::Nova::Server",
            "updated_time": "2026-11-22T02:00:20Z"
        }}}}]),
    )
    .await;
    path
}

#[tokio::test]
async fn heal_marks_the_server_unhealthy_and_the_replacement_keeps_the_vnfc_id() {
    let pkg = sample_package();
    let (_, before) = instantiated(&pkg).await;
    // The known stack is read first: settled since the instantiate.
    let server = next_server_settled(
        "CREATE_COMPLETE",
        &["openstack/heat_stack_update.json", "openstack/heat_resources_healed.json"],
    )
    .await;
    // The resource still holds the server the inventory knows: it is marked.
    let resource = mount_member1_server(&server, SERVER1).await;
    let mark = format!("{HEAT}/stacks/{MEMBER1_STACK}/resources/VDU1");
    mount_exchanges(&server, json!([{"request": {"method": "PATCH", "path": mark}, "response": {"status": 200}}]))
        .await;

    let healed_id = before.vnfc_resources[0].id.clone();
    let plan = plan(2);
    let ids = [healed_id.clone()];
    let after = execute(&server, &pkg, &before, json!({}), InfraAction::Heal { plan: &plan, vnfc_ids: &ids }, &never())
        .await
        .unwrap();

    let requests = server.received_requests().await.unwrap();
    let read = requests.iter().position(|r| r.method.as_str() == "GET" && r.url.path() == resource);
    let marked = requests.iter().position(|r| r.method.as_str() == "PATCH" && r.url.path() == mark);
    assert!(read.is_some() && read < marked, "the resource is read before it is marked");
    assert_eq!(received(&server, "PATCH", &mark).await.len(), 1);
    let update = received(&server, "PATCH", &format!("{HEAT}/stacks/{STACK}/{STACK_ID}")).await;
    assert_eq!(update.len(), 1, "the stack update replaces what is marked unhealthy");
    assert_eq!(
        servers_of(&after, "VDU1"),
        [(healed_id, SERVER1_HEALED.to_owned()), servers_of(&before, "VDU1")[1].clone()]
    );
    assert_eq!(after.vnfc_resources.len(), before.vnfc_resources.len());
}

#[tokio::test]
async fn a_resumed_heal_does_not_replace_the_server_twice() {
    let pkg = sample_package();
    let (_, before) = instantiated(&pkg).await;
    // The earlier run of this heal had the server replaced (its update completed), then the
    // conductor died: the re-run starts from the pre-operation inventory (SERVER1), while
    // the resource now holds the replacement.
    // The stack is read first: the earlier run's update is over.
    let server = next_server_settled("UPDATE_COMPLETE", &["openstack/heat_resources_healed.json"]).await;
    let resource = mount_member1_server(&server, SERVER1_HEALED).await;

    let healed_id = before.vnfc_resources[0].id.clone();
    let plan = plan(2);
    let ids = [healed_id.clone()];
    let after = execute(&server, &pkg, &before, json!({}), InfraAction::Heal { plan: &plan, vnfc_ids: &ids }, &never())
        .await
        .unwrap();

    assert_eq!(received(&server, "GET", &resource).await.len(), 1);
    assert_eq!(received(&server, "PATCH", &resource).await.len(), 0, "the replacement is not marked unhealthy");
    let requests = server.received_requests().await.unwrap();
    assert!(!requests.iter().any(|r| r.method.as_str() == "PATCH"), "no stack update either");
    assert_eq!(
        servers_of(&after, "VDU1"),
        [(healed_id, SERVER1_HEALED.to_owned()), servers_of(&before, "VDU1")[1].clone()]
    );
    assert_eq!(after.vnfc_resources.len(), before.vnfc_resources.len());
    assert_eq!(after.vim_state, before.vim_state);
}

#[tokio::test]
async fn a_heal_rerun_waits_for_the_update_still_running() {
    let pkg = sample_package();
    let (_, before) = instantiated(&pkg).await;
    // The earlier run of this heal marked the server and sent the update, then the conductor
    // died; the re-run finds the update still running (UPDATE_IN_PROGRESS, then
    // UPDATE_COMPLETE). Once it is over the resource holds the replacement.
    let server = next_server(&["openstack/heat_resources_healed.json"]).await;
    mount_stack_status(&server, &[("UPDATE_IN_PROGRESS", Some(1)), ("UPDATE_COMPLETE", None)]).await;
    let resource = mount_member1_server(&server, SERVER1_HEALED).await;

    let healed_id = before.vnfc_resources[0].id.clone();
    let plan = plan(2);
    let ids = [healed_id.clone()];
    let after = execute(&server, &pkg, &before, json!({}), InfraAction::Heal { plan: &plan, vnfc_ids: &ids }, &never())
        .await
        .unwrap();

    let by_id = format!("{HEAT}/stacks/{STACK}/{STACK_ID}");
    let requests = server.received_requests().await.unwrap();
    let read = requests.iter().position(|r| r.method.as_str() == "GET" && r.url.path() == resource).unwrap();
    let status_reads = requests[..read].iter().filter(|r| r.method.as_str() == "GET" && r.url.path() == by_id).count();
    assert_eq!(status_reads, 2, "the resource is read only once the stack left UPDATE_IN_PROGRESS");
    assert_eq!(received(&server, "GET", &resource).await.len(), 1);
    assert_eq!(received(&server, "PATCH", &resource).await.len(), 0, "the replacement is not marked unhealthy");
    assert!(!requests.iter().any(|r| r.method.as_str() == "PATCH"), "no mark_unhealthy and no stack update");
    assert_eq!(
        servers_of(&after, "VDU1"),
        [(healed_id, SERVER1_HEALED.to_owned()), servers_of(&before, "VDU1")[1].clone()]
    );
    assert_eq!(after.vnfc_resources.len(), before.vnfc_resources.len());
}

#[tokio::test]
async fn a_scale_rerun_waits_for_the_update_still_running() {
    let pkg = sample_package();
    let (_, before) = instantiated(&pkg).await;
    // The earlier run of this scale-out sent its update, then the conductor died; the
    // re-run (stack id known) finds it still running: UPDATE_IN_PROGRESS, then
    // UPDATE_COMPLETE.
    let server = next_server(&["openstack/heat_resources_scaled_out.json"]).await;
    let by_id = format!("{HEAT}/stacks/{STACK}/{STACK_ID}");
    mount_stack_status(&server, &[("UPDATE_IN_PROGRESS", Some(1)), ("UPDATE_COMPLETE", None)]).await;
    mount_exchanges(&server, json!([{"request": {"method": "PATCH", "path": by_id}, "response": {"status": 202}}]))
        .await;

    let plan = plan(3);
    let after =
        execute(&server, &pkg, &before, json!({}), InfraAction::Realize { plan: &plan }, &never()).await.unwrap();

    let patches = received(&server, "PATCH", &by_id).await;
    assert_eq!(patches.len(), 1, "exactly one update");
    assert_eq!(patches[0].body_json::<Value>().unwrap()["parameters"]["nfv"]["VDU"]["VDU1"]["desired_capacity"], 3);
    let requests = server.received_requests().await.unwrap();
    let patch = requests.iter().position(|r| r.method.as_str() == "PATCH").unwrap();
    let gets_before = requests[..patch].iter().filter(|r| r.method.as_str() == "GET" && r.url.path() == by_id).count();
    assert_eq!(gets_before, 2, "no PATCH while the stack was UPDATE_IN_PROGRESS, one right after it settled");
    assert!(received(&server, "POST", &format!("{HEAT}/stacks")).await.is_empty());
    assert_eq!(servers_of(&after, "VDU1").len(), 3);
    assert_eq!(servers_of(&after, "VDU1")[..2], servers_of(&before, "VDU1")[..]);
}

#[tokio::test]
async fn terminate_deletes_the_stack_and_waits_until_heat_answers_404() {
    let pkg = sample_package();
    let (_, before) = instantiated(&pkg).await;
    let server = next_server(&["openstack/heat_stack_delete.json"]).await;

    let after = execute(&server, &pkg, &before, json!({}), InfraAction::Teardown, &never()).await.unwrap();

    assert!(after.is_empty());
    assert_eq!(after.vim_state, Value::Null);
    assert_eq!(received(&server, "DELETE", &format!("{HEAT}/stacks/{STACK}/{STACK_ID}")).await.len(), 1);
    // DELETE_IN_PROGRESS, then 404.
    assert_eq!(received(&server, "GET", &format!("{HEAT}/stacks/{STACK}/{STACK_ID}")).await.len(), 2);
}

#[tokio::test]
async fn a_failed_create_reports_heats_reason_and_the_stack_as_partial() {
    let pkg = sample_package();
    let server = next_server(&[
        "openstack/heat_stack_absent.json",
        "openstack/heat_stack_create_failed.json",
        "openstack/heat_resources_create_failed.json",
    ])
    .await;

    let plan = plan(1);
    let error =
        execute(&server, &pkg, &Inventory::default(), json!({}), InfraAction::Realize { plan: &plan }, &never())
            .await
            .unwrap_err();

    assert!(!error.cancelled);
    assert!(
        error.message.starts_with("waiting for Heat stack vnf-c8a1e1b4 to reach CREATE_COMPLETE"),
        "{}",
        error.message
    );
    assert!(error.message.contains("CREATE_FAILED"), "{}", error.message);
    assert!(error.message.contains("No valid host was found"), "{}", error.message);
    assert!(!error.transient, "CREATE_FAILED is Heat's own decision, not worth asking again");
    // The stack exists: a retry updates it, a rollback deletes it. The server Nova left in
    // ERROR is part of what the VNF holds.
    let partial = error.partial.unwrap();
    assert_eq!(partial.vim_state["stackId"], STACK_ID);
    assert_eq!(servers_of(&partial, "VDU1").iter().map(|(_, r)| r.as_str()).collect::<Vec<_>>(), [SERVER1]);
}

#[tokio::test]
async fn a_stack_left_by_an_earlier_attempt_is_adopted_and_updated() {
    let pkg = sample_package();
    // The lookup finds nothing, then the POST finds the name taken (created in between).
    let server = next_server(&[
        "openstack/heat_stack_absent.json",
        "openstack/heat_stack_conflict.json",
        "openstack/heat_stack_update.json",
        "openstack/heat_resources_vnf.json",
    ])
    .await;

    let plan = plan(2);
    let inventory =
        execute(&server, &pkg, &Inventory::default(), json!({}), InfraAction::Realize { plan: &plan }, &never())
            .await
            .unwrap();

    // 404 → POST → 409 StackExists → looked up by name again → PATCHed with the whole template.
    assert_eq!(received(&server, "GET", &format!("{HEAT}/stacks/{STACK}")).await.len(), 2);
    assert_eq!(received(&server, "POST", &format!("{HEAT}/stacks")).await.len(), 1);
    let patches = received(&server, "PATCH", &format!("{HEAT}/stacks/{STACK}/{STACK_ID}")).await;
    assert_eq!(patches.len(), 1);
    let body: Value = patches[0].body_json().unwrap();
    assert_eq!(body["files"], json!({"VDU1.yaml": NESTED_VDU1}));
    assert_eq!(body["template"]["heat_template_version"], "2013-05-23");
    assert_eq!(inventory.vim_state["stackId"], STACK_ID);
    assert_eq!(servers_of(&inventory, "VDU1").len(), 2);
}

#[tokio::test]
async fn a_resumed_create_finds_the_stack_and_does_not_post_again() {
    let pkg = sample_package();
    // A crash came between "create stack" and "stack complete": Heat has the stack, in
    // CREATE_IN_PROGRESS then CREATE_COMPLETE (the create exchanges, without the 404 lookup);
    // the inventory the operation started from knows nothing of it.
    let server = next_server(&["openstack/heat_stack_create.json", "openstack/heat_resources_vnf.json"]).await;

    let params = json!({"nfv": {"VDU": {"VDU2": {"computeFlavourId": "m1.small"}}}});
    let plan = plan(2);
    let inventory =
        execute(&server, &pkg, &Inventory::default(), params, InfraAction::Realize { plan: &plan }, &never())
            .await
            .unwrap();

    assert_eq!(received(&server, "POST", &format!("{HEAT}/stacks")).await.len(), 0, "no second create");
    assert_eq!(received(&server, "GET", &format!("{HEAT}/stacks/{STACK}")).await.len(), 1, "one lookup by name");
    assert_eq!(received(&server, "PATCH", &format!("{HEAT}/stacks/{STACK}")).await.len(), 0, "no update either");
    assert_eq!(received(&server, "PATCH", &format!("{HEAT}/stacks/{STACK}/{STACK_ID}")).await.len(), 0);
    // Waited until CREATE_COMPLETE, then mapped the stack's resources.
    assert_eq!(received(&server, "GET", &format!("{HEAT}/stacks/{STACK}/{STACK_ID}")).await.len(), 3);
    assert_eq!(servers_of(&inventory, "VDU1").iter().map(|(_, r)| r.as_str()).collect::<Vec<_>>(), [SERVER1, SERVER2]);
    assert_eq!(
        inventory.vnfc_resources.iter().find(|v| v.vdu_id == "VDU2").unwrap().compute_resource.resource_id,
        VDU2_SERVER
    );
    assert_eq!(inventory.virtual_storages.len(), 1);
    assert_eq!(inventory.virtual_links.len(), 1);
    assert_eq!(inventory.vim_state["stackId"], STACK_ID);
    assert_eq!(inventory.vim_state["flavourId"], "simple");
    assert_eq!(inventory.vim_state["nfv"]["VDU"]["VDU1"]["desired_capacity"], 2);
}

#[tokio::test]
async fn a_stack_rolling_back_is_waited_for_before_it_is_updated() {
    let pkg = sample_package();
    // An earlier attempt left the stack, and Heat is rolling back its failed operation:
    // ROLLBACK_IN_PROGRESS (the lookup, one poll), ROLLBACK_COMPLETE, then the update's
    // UPDATE_IN_PROGRESS and UPDATE_COMPLETE.
    let server = next_server(&[
        "openstack/heat_stack_rolling_back.json",
        "openstack/heat_stack_update.json",
        "openstack/heat_resources_vnf.json",
    ])
    .await;

    let plan = plan(2);
    let inventory =
        execute(&server, &pkg, &Inventory::default(), json!({}), InfraAction::Realize { plan: &plan }, &never())
            .await
            .unwrap();

    assert_eq!(received(&server, "POST", &format!("{HEAT}/stacks")).await.len(), 0, "no create");
    let by_id = format!("{HEAT}/stacks/{STACK}/{STACK_ID}");
    let patches = received(&server, "PATCH", &by_id).await;
    assert_eq!(patches.len(), 1);
    let body: Value = patches[0].body_json().unwrap();
    assert_eq!(body["template"]["heat_template_version"], "2013-05-23", "the whole template again");
    assert_eq!(body["parameters"]["nfv"]["VDU"]["VDU1"]["desired_capacity"], 2);
    // The PATCH came only after the third GET: two ROLLBACK_IN_PROGRESS, one ROLLBACK_COMPLETE.
    let requests = server.received_requests().await.unwrap();
    let patch = requests.iter().position(|r| r.method.as_str() == "PATCH").unwrap();
    let gets_before = requests[..patch].iter().filter(|r| r.method.as_str() == "GET" && r.url.path() == by_id).count();
    assert_eq!(gets_before, 3, "no PATCH while the stack was ROLLBACK_IN_PROGRESS");
    // Then waited for UPDATE_COMPLETE and mapped the resources.
    assert_eq!(inventory.vim_state["stackId"], STACK_ID);
    assert_eq!(servers_of(&inventory, "VDU1").iter().map(|(_, r)| r.as_str()).collect::<Vec<_>>(), [SERVER1, SERVER2]);
}

/// Realize from an empty inventory against `server` (the lookup answering 404), Heat
/// answering `status` to the POST.
async fn create_answered(status: u16, body: Value) -> DriverError {
    let pkg = sample_package();
    let server = next_server(&["openstack/heat_stack_absent.json"]).await;
    mount_exchanges(
        &server,
        json!([{"request": {"method": "POST", "path": format!("{HEAT}/stacks")},
                "response": {"status": status, "body": body}}]),
    )
    .await;
    let plan = plan(1);
    let error =
        execute(&server, &pkg, &Inventory::default(), json!({}), InfraAction::Realize { plan: &plan }, &never())
            .await
            .unwrap_err();
    assert_eq!(received(&server, "POST", &format!("{HEAT}/stacks")).await.len(), 1);
    error
}

#[tokio::test]
async fn a_heat_503_is_transient_and_a_bad_template_is_not() {
    // Heat's API behind a load balancer with no backend (503): asking again may succeed.
    let unavailable = json!({"code": 503, "title": "Service Unavailable",
        "explanation": "The server is currently unavailable. Please try again at a later time."});
    let error = create_answered(503, unavailable).await;
    assert!(error.transient && !error.cancelled, "{error:?}");
    assert!(error.message.starts_with("creating Heat stack vnf-c8a1e1b4: Heat returned HTTP 503"), "{}", error.message);

    // A template Heat refuses (400): the same request fails the same way.
    let invalid = json!({"code": 400, "title": "Bad Request",
        "explanation": "The server could not comply with the request since it is either malformed or otherwise incorrect.",
        "error": {"type": "StackValidationFailed", "traceback": null,
            "message": "Property error: resources.VDU2.properties.flavor: Error validating value 'm1.nope'"}});
    let error = create_answered(400, invalid).await;
    assert!(!error.transient && !error.cancelled, "{error:?}");
    assert!(error.message.contains("Error validating value 'm1.nope'"), "{}", error.message);

    // Keystone unreachable (nothing listens on its port): transient too.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let pkg = sample_package();
    let server = next_server(&[]).await;
    let mut vim = vim(&server);
    vim.interface_info = json!({"endpoint": format!("http://127.0.0.1:{port}/identity/v3")});
    let plan = plan(1);
    let error = execute_on(
        &driver(),
        &vim,
        &pkg,
        &Inventory::default(),
        json!({}),
        InfraAction::Realize { plan: &plan },
        &never(),
    )
    .await
    .unwrap_err();
    assert!(error.transient && !error.cancelled, "{error:?}");
    assert!(error.message.contains("HTTP transport error"), "{}", error.message);
    assert!(server.received_requests().await.unwrap().is_empty());
}

#[tokio::test]
async fn cancel_during_the_create_wait_stops_polling_and_keeps_the_stack_id() {
    let pkg = sample_package();
    let server = next_server(&[]).await;
    let by_id = format!("{HEAT}/stacks/{STACK}/{STACK_ID}");
    mount_exchanges(
        &server,
        json!([
            {"request": {"method": "POST", "path": format!("{HEAT}/stacks")},
             "response": {"status": 201, "body": {"stack": {"id": STACK_ID, "links": []}}}},
            {"request": {"method": "GET", "path": by_id},
             "response": {"status": 200, "body": {"stack": {"id": STACK_ID, "stack_name": STACK,
                "stack_status": "CREATE_IN_PROGRESS", "stack_status_reason": "Stack CREATE started"}}}}
        ]),
    )
    .await;
    let flag = Arc::new(AtomicBool::new(false));
    let setter = flag.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        setter.store(true, Ordering::Relaxed);
    });
    let cancelled = move || flag.load(Ordering::Relaxed);

    let started = std::time::Instant::now();
    let plan = plan(1);
    let error =
        execute(&server, &pkg, &Inventory::default(), json!({}), InfraAction::Realize { plan: &plan }, &cancelled)
            .await
            .unwrap_err();

    assert!(error.cancelled);
    assert!(error.message.contains("cancelled while waiting for Heat stack vnf-c8a1e1b4"), "{}", error.message);
    assert!(started.elapsed() < Duration::from_secs(5), "the wait was abandoned, not timed out");
    assert_eq!(error.partial.unwrap().vim_state["stackId"], STACK_ID);
    let polls = received(&server, "GET", &by_id).await.len();
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(received(&server, "GET", &by_id).await.len(), polls, "no polling after the cancel");
}

#[tokio::test]
async fn operate_stops_the_servers_through_nova() {
    let pkg = sample_package();
    let server = next_server(&[]).await;
    mount_fixture(&server, "openstack/nova_server_stop.json", &[("server", SERVER1)]).await;
    let current: Inventory = serde_json::from_value(json!({
        "vnfcResources": [{"id": "vnfc-1", "vduId": "VDU1",
            "computeResource": {"resourceId": SERVER1, "vimLevelResourceType": "OS::Nova::Server"}}],
        "virtualLinks": [], "virtualStorages": [],
        "vimState": {"stackName": STACK, "stackId": STACK_ID}, "vnfState": "STARTED"
    }))
    .unwrap();

    let after =
        execute(&server, &pkg, &current, json!({}), InfraAction::Operate { change_state_to: "STOPPED" }, &never())
            .await
            .unwrap();

    assert_eq!(after.vnf_state, "STOPPED");
    assert_eq!(after.vnfc_resources, current.vnfc_resources);
    let actions = received(&server, "POST", &format!("/compute/v2.1/servers/{SERVER1}/action")).await;
    assert_eq!(actions.len(), 1);
    assert_eq!(actions[0].body_json::<Value>().unwrap(), json!({"os-stop": null}));
    // ACTIVE before, ACTIVE/powering-off, then SHUTOFF.
    assert_eq!(received(&server, "GET", &format!("/compute/v2.1/servers/{SERVER1}")).await.len(), 3);
}

#[tokio::test]
async fn a_package_without_basehot_for_the_flavour_is_refused_before_any_heat_call() {
    let pkg = package(&CsarBuilder::sample());
    let server = next_server(&[]).await;
    let plan = plan(1);
    let error =
        execute(&server, &pkg, &Inventory::default(), json!({}), InfraAction::Realize { plan: &plan }, &never())
            .await
            .unwrap_err();
    assert_eq!(error.message, "the VNF package has no BaseHOT/simple/ template for the OpenStack VIM");
    assert!(server.received_requests().await.unwrap().is_empty());
}

/// A server answering the instantiate flow with every URL it hands out (Keystone catalog,
/// Heat links) on the TLS front in front of it.
async fn https_instantiate_server() -> (MockServer, TlsFront) {
    let server = MockServer::start().await;
    let front = TlsFront::start(*server.address()).await;
    keystone_at(&server, &front.uri).await;
    mount_fixture_at(&server, &front.uri, "openstack/heat_stack_absent.json", &[]).await;
    mount_fixture_at(&server, &front.uri, "openstack/heat_stack_create.json", &[]).await;
    mount_fixture_at(&server, &front.uri, "openstack/heat_resources_vnf.json", &[]).await;
    (server, front)
}

/// The VIM of [`vim`] with Keystone at the TLS front, with more `interfaceInfo` keys.
fn https_vim(server: &MockServer, front: &TlsFront, interface: Value) -> VimConnection {
    let mut vim = vim(server);
    vim.interface_info = json!({"endpoint": format!("{}/identity/v3", front.uri)});
    let Value::Object(extra) = interface else { panic!("interfaceInfo keys: {interface}") };
    vim.interface_info.as_object_mut().unwrap().extend(extra);
    vim
}

async fn instantiate_over(
    driver: &OpenStackDriver,
    vim: &VimConnection,
    pkg: &Package,
) -> Result<Inventory, DriverError> {
    let plan = plan(2);
    let params = json!({"nfv": {"VDU": {"VDU2": {"computeFlavourId": "m1.small"}}}});
    execute_on(driver, vim, pkg, &Inventory::default(), params, InfraAction::Realize { plan: &plan }, &never()).await
}

/// Keystone, then Heat from the catalog, all through the front.
async fn assert_instantiated_over_tls(server: &MockServer, front: &TlsFront, inventory: &Inventory) {
    assert!(front.handshakes() > 0, "the calls went through the TLS front");
    assert_eq!(front.handshake_failures(), Vec::<String>::new());
    assert_eq!(received(server, "POST", "/identity/v3/auth/tokens").await.len(), 1);
    assert_eq!(received(server, "POST", &format!("{HEAT}/stacks")).await.len(), 1);
    assert_eq!(servers_of(inventory, "VDU1").iter().map(|(_, r)| r.as_str()).collect::<Vec<_>>(), [SERVER1, SERVER2]);
    assert_eq!(inventory.vim_state["stackId"], STACK_ID);
}

#[tokio::test]
async fn instantiate_over_https_trusts_the_operators_ca_file() {
    let pkg = sample_package();
    let (server, front) = https_instantiate_server().await;
    // [tls] ca_file, as the settings hand it to the driver.
    let driver = OpenStackDriver {
        trust: solgate_drivers::VimTrust { extra_ca_pem: Some(front.ca_pem.as_str().into()), ..Default::default() },
        ..driver()
    };

    let inventory = instantiate_over(&driver, &https_vim(&server, &front, json!({})), &pkg).await.unwrap();

    assert_instantiated_over_tls(&server, &front, &inventory).await;
}

#[tokio::test]
async fn instantiate_over_https_trusts_the_vims_trusted_certificates() {
    let pkg = sample_package();
    let (server, front) = https_instantiate_server().await;
    let vim = https_vim(&server, &front, json!({"trustedCertificates": [front.ca_pem]}));

    let inventory = instantiate_over(&driver(), &vim, &pkg).await.unwrap();

    assert_instantiated_over_tls(&server, &front, &inventory).await;
}

#[tokio::test]
async fn instantiate_over_https_without_the_ca_fails_the_certificate_check_and_skip_is_refused() {
    let pkg = sample_package();
    let (server, front) = https_instantiate_server().await;

    // Default [tls], no trustedCertificates: Keystone's certificate is not trusted.
    let error = instantiate_over(&driver(), &https_vim(&server, &front, json!({})), &pkg).await.unwrap_err();
    // The driver's message stops at reqwest's "error sending request" (the cause, rustls'
    // UnknownIssuer, is not in it); the front tells why: the client rejected its certificate.
    assert!(error.message.contains("HTTP transport error"), "{}", error.message);
    assert!(error.message.contains("invalid peer certificate"), "the cause is shown: {}", error.message);
    assert!(error.message.contains(&format!("({}/", front.uri)), "{}", error.message);
    assert_eq!(front.handshakes(), 0);
    let failures = front.settled_handshake_failures().await;
    assert!(!failures.is_empty() && failures.iter().all(|f| f.contains("UnknownCA")), "{failures:?}");
    assert!(server.received_requests().await.unwrap().is_empty(), "nothing reached Keystone");

    let skip = https_vim(&server, &front, json!({"skipCertificateVerification": true}));
    let error = instantiate_over(&driver(), &skip, &pkg).await.unwrap_err();
    assert!(error.message.contains("allow_vim_skip_verification"), "{}", error.message);
    assert_eq!(front.handshake_failures().len(), failures.len(), "refused before any connection");
    assert_eq!(front.handshakes(), 0);
    assert!(server.received_requests().await.unwrap().is_empty());
}

/// A VipCp (SOL001 V3.5.1) on internalVL1 shared by VDU1_CP2 (in the nested template) and
/// VDU2_CP1 (in the top one): the stack gets a port for it on the VL's network, both target
/// ports allow its address, and the inventory reports the address Neutron gave it (read from
/// the port resource's `fixed_ips` attribute) with the VNFC CPs sharing it.
#[tokio::test]
async fn a_vip_cp_becomes_a_port_whose_address_the_target_ports_allow() {
    let pkg = package(
        &CsarBuilder::sample()
            .internal_vip_cp()
            .file("BaseHOT/simple/sample_hot.yaml", TOP_HOT)
            .file("BaseHOT/simple/nested/VDU1.yaml", NESTED_VDU1),
    );
    let server = MockServer::start().await;
    keystone(&server).await;
    mount_fixture(&server, "openstack/heat_stack_absent.json", &[]).await;
    mount_fixture(&server, "openstack/heat_stack_create.json", &[]).await;
    mount_fixture(&server, "openstack/heat_resources_vnf_vip.json", &[]).await;
    let plan = plan(2);
    let inventory =
        execute(&server, &pkg, &Inventory::default(), json!({}), InfraAction::Realize { plan: &plan }, &never())
            .await
            .unwrap();

    let posts = received(&server, "POST", &format!("{HEAT}/stacks")).await;
    let body: Value = posts[0].body_json().unwrap();
    let resources = &body["template"]["resources"];
    assert_eq!(
        resources["VIP_CP"],
        json!({"type": "OS::Neutron::Port", "properties": {"network": {"get_resource": "internalVL1"}}})
    );
    let address = json!({"get_attr": ["VIP_CP", "fixed_ips", 0, "ip_address"]});
    assert_eq!(resources["VDU2_CP1"]["properties"]["allowed_address_pairs"], json!([{"ip_address": address}]));
    // VDU1_CP2 is in the scaling group's member template: the address goes down as a parameter.
    assert_eq!(resources["VDU1_scale_group"]["properties"]["resource"]["properties"]["VIP_CP_address"], address);
    let nested = solgate_drivers::openstack::parse_hot(body["files"]["VDU1.yaml"].as_str().unwrap()).unwrap();
    assert_eq!(nested["parameters"]["VIP_CP_address"], json!({"type": "string"}));
    assert_eq!(
        nested["resources"]["VDU1_CP2"]["properties"]["allowed_address_pairs"],
        json!([{"ip_address": {"get_param": "VIP_CP_address"}}])
    );
    assert!(nested["resources"]["VDU1_CP1"]["properties"].get("allowed_address_pairs").is_none(), "not a target");
    assert!(resources["VDU1_scale_group"]["properties"]["resource"]["properties"]["net2"].is_object());

    let vip_port = "d4e5f6a7-8b9c-4d0e-9f1a-2b3c4d5e6f70";
    assert_eq!(inventory.vip_cp_info.len(), 1);
    let vip = &inventory.vip_cp_info[0];
    assert_eq!(vip["cpdId"], "VIP_CP");
    assert_eq!(vip["vnfLinkPortId"], vip_port);
    assert_eq!(
        vip["cpProtocolInfo"],
        json!([{"layerProtocol": "IP_OVER_ETHERNET", "ipOverEthernet": {"ipAddresses": [{"type": "IPV4",
            "addresses": ["192.168.10.23"], "isDynamic": true, "subnetId": "9c0d1e2f-3a4b-4c5d-9e6f-7a8b9c0d1e2f"}]}}])
    );
    let mut sharing: Vec<&str> = inventory
        .vnfc_resources
        .iter()
        .flat_map(|vnfc| vnfc.vnfc_cp_info.iter())
        .filter(|cp| cp["cpdId"] == "VDU1_CP2" || cp["cpdId"] == "VDU2_CP1")
        .map(|cp| cp["id"].as_str().unwrap())
        .collect();
    sharing.sort();
    let mut associated: Vec<&str> =
        vip["associatedVnfcCpIds"].as_array().unwrap().iter().map(|id| id.as_str().unwrap()).collect();
    associated.sort();
    assert_eq!((associated.len(), associated), (3, sharing));
    let link_port = inventory.virtual_links[0].vnf_link_ports.iter().find(|p| p["id"] == vip_port).unwrap();
    assert_eq!(link_port["vipCpInstanceId"], vip["cpInstanceId"]);
    assert_eq!(link_port["resourceHandle"]["resourceId"], vip_port);
}

/// BaseHOT with VDU1 a plain server, so that its external port VDU1_CP1 is a top-level
/// resource that a trunk can take as parent.
const TRUNK_HOT: &str = "\
heat_template_version: 2013-05-23
parameters:
  nfv:
    type: json
resources:
  VDU1:
    type: OS::Nova::Server
    properties:
      flavor: { get_param: [ nfv, VDU, VDU1, computeFlavourId ] }
      image: { get_param: [ nfv, VDU, VDU1, vcImageId ] }
      networks:
        - port: { get_resource: VDU1_CP1 }
        - port: { get_resource: VDU1_CP2 }
  VDU1_CP1:
    type: OS::Neutron::Port
    properties:
      network: { get_param: [ nfv, CP, VDU1_CP1, network ] }
  VDU1_CP2:
    type: OS::Neutron::Port
    properties:
      network: { get_resource: internalVL1 }
  VDU2:
    type: OS::Nova::Server
    properties:
      flavor: m1.small
      image: { get_param: [ nfv, VDU, VDU2, vcImageId ] }
      networks:
        - port: { get_resource: VDU2_CP1 }
  VDU2_CP1:
    type: OS::Neutron::Port
    properties:
      network: { get_resource: internalVL1 }
  internalVL1:
    type: OS::Neutron::Net
";

const NET_B: &str = "5d6e7f8a-9b0c-4d1e-8f2a-3b4c5d6e7f8a";
const NET_C: &str = "6e7f8a9b-0c1d-4e2f-9a3b-4c5d6e7f8a9b";
const PRECREATED_PORT: &str = "7f8a9b0c-1d2e-4f3a-8b4c-5d6e7f8a9b0c";

/// VDU1_CP1 on EXT_NET (cpConfig `parent`), with subports on two more external networks
/// (SOL003 V3.5.1): `sub100` VLAN 100 with a fixed address, for the VNFM to create, and
/// `sub200` VLAN 200 on the NFVO's pre-created port `elp-200`.
fn trunk_plan(sub200: &Value) -> DeploymentPlan {
    let mut plan = plan(1);
    plan.ext_virtual_links = json!([
        {"id": "ext-vl-1", "resourceId": EXT_NET, "extCps": [{"cpdId": "VDU1_CP1", "cpConfig": {"parent": {
            "cpProtocolData": [{"layerProtocol": "IP_OVER_ETHERNET",
                "ipOverEthernet": {"ipAddresses": [{"type": "IPV4", "numDynamicAddresses": 1}]}}]}}}]},
        {"id": "ext-vl-2", "resourceId": NET_B, "extCps": [{"cpdId": "VDU1_CP1", "cpConfig": {"sub100": {
            "parentCpConfigId": "parent",
            "cpProtocolData": [{"layerProtocol": "IP_OVER_ETHERNET", "ipOverEthernet": {
                "segmentationType": "VLAN", "segmentationId": "100",
                "ipAddresses": [{"type": "IPV4", "fixedAddresses": ["10.20.0.5"]}]}}]}}}]},
        {"id": "ext-vl-3", "resourceId": NET_C, "extCps": [{"cpdId": "VDU1_CP1", "cpConfig": {"sub200": sub200}}],
         "extLinkPorts": [{"id": "elp-200", "resourceHandle": {"resourceId": PRECREATED_PORT}}]}
    ]);
    plan
}

#[tokio::test]
async fn vlan_subports_of_an_external_cp_become_a_trunk_on_its_port() {
    let pkg = package(&CsarBuilder::sample().file("BaseHOT/simple/sample_hot.yaml", TRUNK_HOT));
    let server = MockServer::start().await;
    keystone(&server).await;
    mount_fixture(&server, "openstack/heat_stack_absent.json", &[]).await;
    mount_fixture(&server, "openstack/heat_stack_create.json", &[]).await;
    mount_fixture(&server, "openstack/heat_resources_trunk.json", &[]).await;
    let sub200 = json!({"parentCpConfigId": "parent", "linkPortId": "elp-200", "cpProtocolData": [{
        "layerProtocol": "IP_OVER_ETHERNET", "ipOverEthernet": {"segmentationId": "200",
            "ipAddresses": [{"type": "IPV4", "numDynamicAddresses": 1}]}}]});
    let plan = trunk_plan(&sub200);
    let inventory =
        execute(&server, &pkg, &Inventory::default(), json!({}), InfraAction::Realize { plan: &plan }, &never())
            .await
            .unwrap();

    let posts = received(&server, "POST", &format!("{HEAT}/stacks")).await;
    let body: Value = posts[0].body_json().unwrap();
    let resources = &body["template"]["resources"];
    assert_eq!(
        resources["VDU1_CP1_trunk"],
        json!({"type": "OS::Neutron::Trunk", "properties": {"port": {"get_resource": "VDU1_CP1"}, "sub_ports": [
            {"port": {"get_resource": "VDU1_CP1_sub100"}, "segmentation_type": "vlan", "segmentation_id": 100},
            // The NFVO's port, used as it is (segmentationType absent: VLAN, SOL003's default).
            {"port": PRECREATED_PORT, "segmentation_type": "vlan", "segmentation_id": 200}
        ]}})
    );
    assert_eq!(
        resources["VDU1_CP1_sub100"],
        json!({"type": "OS::Neutron::Port", "properties": {"network": NET_B, "fixed_ips": [{"ip_address": "10.20.0.5"}]}})
    );
    assert!(resources.get("VDU1_CP1_sub200").is_none(), "no port is made where one is given");
    // The server takes its port from the trunk (Heat's advice for Open vSwitch).
    assert_eq!(
        resources["VDU1"]["properties"]["networks"],
        json!([{"port": {"get_attr": ["VDU1_CP1_trunk", "port_id"]}}, {"port": {"get_resource": "VDU1_CP2"}}])
    );
    // The parent port stays on the parent's network; subport addresses are not its own.
    assert_eq!(body["parameters"]["nfv"]["CP"]["VDU1_CP1"], json!({"network": EXT_NET}));

    let mut ports = inventory.ext_link_ports.clone();
    ports.sort_by_key(|port| port["id"].as_str().unwrap().to_owned());
    assert_eq!(
        ports,
        [
            json!({"id": "a3b4c5d6-e7f8-4a9b-8c0d-2e3f4a5b6c7d", "cpdId": "VDU1_CP1", "cpConfigId": "sub100",
                "resourceHandle": {"vimConnectionId": "vim-os-1", "resourceId": "a3b4c5d6-e7f8-4a9b-8c0d-2e3f4a5b6c7d",
                    "vimLevelResourceType": "OS::Neutron::Port"}}),
            json!({"id": "e1f2a3b4-c5d6-4e7f-8a9b-0c1d2e3f4a5b", "cpdId": "VDU1_CP1",
                "trunkResourceId": "b4c5d6e7-f8a9-4b0c-9d1e-3f4a5b6c7d8e",
                "resourceHandle": {"vimConnectionId": "vim-os-1", "resourceId": "e1f2a3b4-c5d6-4e7f-8a9b-0c1d2e3f4a5b",
                    "vimLevelResourceType": "OS::Neutron::Port"}}),
        ]
    );

    // A subport needs a port: none is made with createExtLinkPort false, and none given.
    let mut no_port = sub200.clone();
    no_port.as_object_mut().unwrap().remove("linkPortId");
    no_port["createExtLinkPort"] = json!(false);
    let server = next_server(&[]).await;
    let plan = trunk_plan(&no_port);
    let error =
        execute(&server, &pkg, &Inventory::default(), json!({}), InfraAction::Realize { plan: &plan }, &never())
            .await
            .unwrap_err();
    assert!(error.message.contains("createExtLinkPort is false and no linkPortId"), "{}", error.message);
    assert!(received(&server, "POST", &format!("{HEAT}/stacks")).await.is_empty());
    // Heat's trunk takes only vlan subports.
    let mut inherit = sub200;
    inherit["cpProtocolData"][0]["ipOverEthernet"]["segmentationType"] = json!("INHERIT");
    let plan = trunk_plan(&inherit);
    let error =
        execute(&server, &pkg, &Inventory::default(), json!({}), InfraAction::Realize { plan: &plan }, &never())
            .await
            .unwrap_err();
    assert!(error.message.contains("segmentationType \"INHERIT\" is not possible"), "{}", error.message);
}

/// The sample package with Tacker's `basic_lcms_max` user data class (unchanged) in it.
fn package_with_tackers_user_data() -> Package {
    let user_data = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/tacker-samples/basic_lcms_max/UserData/userdata.py"),
    )
    .unwrap();
    package(
        &CsarBuilder::sample()
            .file("BaseHOT/simple/sample_hot.yaml", TOP_HOT)
            .file("BaseHOT/simple/nested/VDU1.yaml", NESTED_VDU1)
            .file("UserData/__init__.py", "")
            .file("UserData/userdata.py", &user_data),
    )
}

/// The InstantiateVnfRequest, VNF instance, GrantRequest (the conductor's, as Tacker builds
/// it: a COMPUTE resource per new VNFC) and Grant (the local NFVO's) of the instantiation.
fn instantiate_input(additional: &Value) -> solgate_drivers::script::ScriptInput {
    let mut request = json!({"flavourId": "simple", "extVirtualLinks": plan(2).ext_virtual_links});
    request["additionalParams"] = additional.clone();
    let add = |id: &str, vdu: &str| json!({"id": id, "type": "COMPUTE", "vduId": vdu, "resourceTemplateId": vdu});
    solgate_drivers::script::ScriptInput {
        request,
        vnf_instance: json!({"id": INSTANCE, "vnfdId": solgate_vnfpkg::testing::SAMPLE_VNFD_ID,
            "instantiationState": "NOT_INSTANTIATED"}),
        grant_request: json!({"operation": "INSTANTIATE", "vnfInstanceId": INSTANCE,
            "addResources": [add("c-1", "VDU1"), add("c-2", "VDU1"), add("c-3", "VDU2")]}),
        grant: json!({"id": "g-1", "addResources": [{"resourceDefinitionId": "c-1"},
            {"resourceDefinitionId": "c-2"}, {"resourceDefinitionId": "c-3"}]}),
    }
}

/// A realize on an instance without resources, with the operation's documents.
async fn realize_with_input(
    server: &MockServer,
    pkg: &Package,
    params: &Value,
    input: &solgate_drivers::script::ScriptInput,
    plan: &DeploymentPlan,
) -> Result<Inventory, DriverError> {
    let (vim, current, cancelled) = (vim(server), Inventory::default(), never());
    let ctx = InfraContext {
        instance_id: INSTANCE,
        vim: &vim,
        vnfd: &pkg.vnfd,
        package_dir: Some(&pkg.path),
        current: &current,
        additional_params: params,
        attempt: 1,
        run: 1,
        cancelled: &cancelled,
        rolling_back: false,
        lcm_input: Some(input),
    };
    driver().execute(ctx, InfraAction::Realize { plan }).await
}

/// Tacker's sample user data runs the instantiation; the stack body is what Tacker sends for
/// these inputs: the class's fields (template and nested files as the YAML text it dumped, the
/// `nfv` it made: capacities from the grant request, flavour and image from the VNFD, the
/// network from extVirtualLinks, additionalParams.nfv merged) plus `stack_name` and
/// `timeout_mins`. Later operations without user data keep its template (Tacker's default
/// user data changes only `desired_capacity`), then heal and terminate.
#[tokio::test]
async fn tackers_sample_user_data_runs_a_life_cycle() {
    let pkg = package_with_tackers_user_data();
    let server = MockServer::start().await;
    keystone(&server).await;
    mount_fixture(&server, "openstack/heat_stack_absent.json", &[]).await;
    mount_fixture(&server, "openstack/heat_stack_create.json", &[]).await;
    mount_fixture(&server, "openstack/heat_resources_vnf.json", &[]).await;
    let params = json!({
        "lcm-operation-user-data": "./UserData/userdata.py",
        "lcm-operation-user-data-class": "UserData",
        "nfv": {"VDU": {"VDU2": {"computeFlavourId": "m1.small"}}}
    });
    let input = instantiate_input(&params);
    let plan2 = plan(2);
    let before = realize_with_input(&server, &pkg, &params, &input, &plan2).await.unwrap();

    let posts = received(&server, "POST", &format!("{HEAT}/stacks")).await;
    assert_eq!(posts.len(), 1);
    let body: Value = posts[0].body_json().unwrap();
    let keys: Vec<&str> = body.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(keys, ["stack_name", "template", "files", "parameters", "timeout_mins"], "{body}");
    assert_eq!(body["stack_name"], STACK);
    assert_eq!(body["timeout_mins"], 20);
    // Heat gets the text the class dumped (yaml.safe_dump of the BaseHOT it read), unchanged.
    let template = body["template"].as_str().expect("the template as the class's YAML text");
    let parse = |text: &str| solgate_drivers::openstack::parse_hot(text).unwrap();
    assert_eq!(parse(template), parse(TOP_HOT));
    assert_eq!(parse(body["files"]["VDU1.yaml"].as_str().unwrap()), parse(NESTED_VDU1));
    assert_eq!(
        body["parameters"],
        json!({"nfv": {
            "VDU": {
                "VDU1": {"desired_capacity": 2, "computeFlavourId": "m1.tiny", "vcImageId": "sample-image"},
                "VDU2": {"computeFlavourId": "m1.small", "vcImageId": "sample-image"}
            },
            "CP": {"VDU1_CP1": {"network": EXT_NET}}
        }})
    );
    assert_eq!(servers_of(&before, "VDU1").len(), 2);
    assert_eq!(before.vim_state["userData"], true);

    // Heal naming the class, which implements only instantiate: Tacker's abstract method
    // raises, and nothing is marked or updated.
    let server = next_server_settled("CREATE_COMPLETE", &[]).await;
    let healed_id = before.vnfc_resources[0].id.clone();
    let ids = [healed_id.clone()];
    let mut heal_input = instantiate_input(&params);
    heal_input.grant_request = json!({"operation": "HEAL", "vnfInstanceId": INSTANCE});
    let (heal_vim, cancelled) = (vim(&server), never());
    let ctx = InfraContext {
        instance_id: INSTANCE,
        vim: &heal_vim,
        vnfd: &pkg.vnfd,
        package_dir: Some(&pkg.path),
        current: &before,
        additional_params: &params,
        attempt: 1,
        run: 1,
        cancelled: &cancelled,
        rolling_back: false,
        lcm_input: Some(&heal_input),
    };
    let error = driver().execute(ctx, InfraAction::Heal { plan: &plan2, vnfc_ids: &ids }).await.unwrap_err();
    assert!(error.message.contains("(UserData.heal) failed"), "{}", error.message);
    assert!(
        error.message.ends_with("UserDataClassNotImplemented: The user data class does not implement this operation."),
        "{}",
        error.message
    );
    assert!(received(&server, "PATCH", &format!("{HEAT}/stacks/{STACK}/{STACK_ID}")).await.is_empty());

    // Heal without user data (Tacker's default: the same parameters): the server is marked
    // unhealthy and the stack updated; the replacement keeps the VNFC id.
    let server = next_server_settled(
        "CREATE_COMPLETE",
        &["openstack/heat_stack_update.json", "openstack/heat_resources_healed.json"],
    )
    .await;
    mount_member1_server(&server, SERVER1).await;
    let mark = format!("{HEAT}/stacks/{MEMBER1_STACK}/resources/VDU1");
    mount_exchanges(&server, json!([{"request": {"method": "PATCH", "path": mark}, "response": {"status": 200}}]))
        .await;
    let healed =
        execute(&server, &pkg, &before, json!({}), InfraAction::Heal { plan: &plan2, vnfc_ids: &ids }, &never())
            .await
            .unwrap();
    assert_eq!(received(&server, "PATCH", &mark).await.len(), 1);
    let update = received(&server, "PATCH", &format!("{HEAT}/stacks/{STACK}/{STACK_ID}")).await;
    let body: Value = update[0].body_json().unwrap();
    assert!(body.get("template").is_none(), "{body}");
    assert_eq!(body["parameters"]["nfv"]["VDU"]["VDU1"]["desired_capacity"], 2);
    assert_eq!(servers_of(&healed, "VDU1")[0], (healed_id, SERVER1_HEALED.to_owned()));
    let before = healed;

    // Scale out without user data: the user data's template stays, only desired_capacity changes.
    let server = next_server_settled(
        "CREATE_COMPLETE",
        &["openstack/heat_stack_update.json", "openstack/heat_resources_scaled_out.json"],
    )
    .await;
    let plan3 = plan(3);
    let scaled =
        execute(&server, &pkg, &before, json!({}), InfraAction::Realize { plan: &plan3 }, &never()).await.unwrap();
    let patches = received(&server, "PATCH", &format!("{HEAT}/stacks/{STACK}/{STACK_ID}")).await;
    let body: Value = patches[0].body_json().unwrap();
    assert!(body.get("template").is_none() && body.get("files").is_none(), "{body}");
    assert_eq!(body["parameters"]["nfv"]["VDU"]["VDU1"]["desired_capacity"], 3);
    assert_eq!(body["parameters"]["nfv"]["VDU"]["VDU2"]["computeFlavourId"], "m1.small");
    assert_eq!(body["parameters"]["nfv"]["CP"]["VDU1_CP1"]["network"], EXT_NET);
    assert_eq!(servers_of(&scaled, "VDU1").len(), 3);

    // Terminate.
    let server = next_server(&["openstack/heat_stack_delete.json"]).await;
    let after = execute(&server, &pkg, &scaled, json!({}), InfraAction::Teardown, &never()).await.unwrap();
    assert!(after.is_empty());
}

/// A user data class that fails, or a request naming only half of the user data, fails the
/// operation before Heat is asked to create anything.
#[tokio::test]
async fn failing_user_data_fails_before_any_stack_is_made() {
    let pkg = package(
        &CsarBuilder::sample()
            .file("BaseHOT/simple/sample_hot.yaml", TOP_HOT)
            .file("UserData/__init__.py", "")
            .file("UserData/broken.py", "class Broken:\n    @staticmethod\n    def instantiate(*args):\n        raise RuntimeError('cannot reach the license server')\n"),
    );
    let server = MockServer::start().await;
    keystone(&server).await;
    mount_fixture(&server, "openstack/heat_stack_absent.json", &[]).await;
    let params = json!({"lcm-operation-user-data": "./UserData/broken.py", "lcm-operation-user-data-class": "Broken"});
    let input = instantiate_input(&params);
    let plan2 = plan(2);
    let error = realize_with_input(&server, &pkg, &params, &input, &plan2).await.unwrap_err();
    assert!(!error.transient);
    assert_eq!(error.refused_by_package, Some("Userdata execution failed"));
    assert!(
        error.message.contains("LCM operation user data ./UserData/broken.py (Broken.instantiate) failed"),
        "{}",
        error.message
    );
    assert!(error.message.ends_with("RuntimeError: cannot reach the license server"), "{}", error.message);
    let half = json!({"lcm-operation-user-data": "./UserData/broken.py"});
    let error = realize_with_input(&server, &pkg, &half, &input, &plan2).await.unwrap_err();
    assert!(
        error.message.contains("must give both lcm-operation-user-data and lcm-operation-user-data-class"),
        "{}",
        error.message
    );
    assert!(received(&server, "POST", &format!("{HEAT}/stacks")).await.is_empty());
}

/// A package directory of `tests/fixtures/tacker-samples` as onboarded and extracted.
fn tacker_sample(name: &str) -> Package {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tacker-samples").join(name);
    let zip = solgate_vnfpkg::testing::zip_directory(&dir).unwrap();
    let mut csar = tempfile::NamedTempFile::new().unwrap();
    std::io::Write::write_all(&mut csar, &zip).unwrap();
    let vnfd = solgate_vnfpkg::inspect(csar.path(), &Limits::default()).unwrap().vnfd;
    let extracted = tempfile::tempdir().unwrap();
    let path = extracted.path().join("package");
    solgate_vnfpkg::extract(csar.path(), &path, &Limits::default()).unwrap();
    Package { _dir: extracted, path, vnfd }
}

/// Without user data, the stack solgate creates for Tacker's `basic_lcms_max` package is the
/// one Tacker's default user data makes of the same inputs (recorded from Tacker 16.0.0:
/// `tests/fixtures/tacker-samples/recorded-default/`): the template (the externally managed
/// VL's network and subnet gone, its references replaced), the nested template and the `nfv`
/// parameter — capacities from the grant request, the Grant's flavour, image and zone, the
/// request's addresses and subnets, additionalParams.nfv and then the Grant's
/// additionalParams.nfv merged. One difference, on purpose: solgate fills `nfv.CP.<cpd>.port`
/// with the pre-created port the request names (`extLinkPorts`), which Tacker's default user
/// data leaves null (Heat then fails on the template's `port: null`; Tacker's sample class
/// fills it, as solgate does).
#[tokio::test]
async fn the_default_stack_body_is_tackers() {
    let recorded: Value = serde_json::from_str(
        &std::fs::read_to_string(
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("tests/fixtures/tacker-samples/recorded-default/basic_lcms_max.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let pkg = tacker_sample("basic_lcms_max");
    let request = &recorded["inputs"]["request"];
    let grant = &recorded["inputs"]["grant_response"];
    // The plan the conductor makes of these inputs (level 2: two VDU1, one VDU2) and the Grant.
    let mut granted = solgate_drivers::GrantedPlacement::default();
    granted.zones.insert("VDU1".into(), "az-1".into());
    granted.flavours.insert("VDU1".into(), "nfvo-flavour-small".into());
    granted.images.insert("VDU2-VirtualStorage".into(), "glance-image-vdu2".into());
    granted.nfv = grant["additionalParams"]["nfv"].clone();
    let plan = DeploymentPlan {
        flavour_id: "simple".into(),
        vdus: vec![VduTarget { vdu_id: "VDU1".into(), count: 2 }, VduTarget { vdu_id: "VDU2".into(), count: 1 }],
        virtual_links: vec!["internalVL1".into(), "internalVL2".into(), "internalVL3".into()],
        ext_virtual_links: request["extVirtualLinks"].clone(),
        ext_managed_virtual_links: request["extManagedVirtualLinks"].clone(),
        scale_levels: BTreeMap::new(),
        granted,
    };
    let server = MockServer::start().await;
    keystone(&server).await;
    mount_fixture(&server, "openstack/heat_stack_absent.json", &[]).await;
    mount_fixture(&server, "openstack/heat_stack_create.json", &[]).await;
    // The resources of this stack are not recorded: the run fails after the create, whose
    // body is what this test is about.
    let _ = execute(
        &server,
        &pkg,
        &Inventory::default(),
        request["additionalParams"].clone(),
        InfraAction::Realize { plan: &plan },
        &never(),
    )
    .await;

    let posts = received(&server, "POST", &format!("{HEAT}/stacks")).await;
    assert_eq!(posts.len(), 1);
    let body: Value = posts[0].body_json().unwrap();
    let tacker = &recorded["fields"];
    let parse = |text: &Value| solgate_drivers::openstack::parse_hot(text.as_str().unwrap()).unwrap();
    assert_eq!(body["template"], parse(&tacker["template"]));
    assert_eq!(parse(&body["files"]["VDU1.yaml"]), parse(&tacker["files"]["VDU1.yaml"]));
    let mut expected = tacker["parameters"].clone();
    for (cpd, port) in [("VDU2_CP1-1", "neutron-port-VDU2_CP1-1"), ("VDU2_CP1-2", "neutron-port-VDU2_CP1-2")] {
        assert_eq!(expected["nfv"]["CP"][cpd]["port"], Value::Null, "Tacker leaves it null");
        expected["nfv"]["CP"][cpd]["port"] = json!(port);
    }
    assert_eq!(body["parameters"], expected);
    assert_eq!(body["stack_name"], STACK);
    assert_eq!(body["timeout_mins"], 20);
}

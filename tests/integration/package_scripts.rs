//! A VNF package's management scripts (its VNFD's `Vnflcm` interface, Tacker's management
//! driver hooks) over the API, on the local VIM: `<operation>_start` runs before the VIM is
//! touched and `<operation>_end` after, each as Tacker v2 runs it (the pickled operation dict on
//! its stdin); a script that fails or hangs fails the operation (FAILED_TEMP) with its message.

use reqwest::Method;
use serde_json::{Value, json};
use solgate_vnfpkg::testing::{CsarBuilder, SAMPLE_DF_SIMPLE};

use crate::helpers::{TestApp, send};
use crate::lcm_support::{create_instance, show_instance, task, vnfc_count, wait_op, wait_op_after};

/// A management script in Tacker's sample style: records each operation it is run for (in
/// the file `additionalParams.hookRecord` names), fails the one `failHook` names and hangs in
/// the one `hangHook` names.
const HOOK: &str = r#"
import json
import os
import pickle
import sys
import time


def main():
    script_dict = pickle.load(sys.stdin.buffer)
    operation = script_dict['operation']
    params = script_dict['request'].get('additionalParams', {})
    record = params.get('hookRecord')
    if record:
        with open(record, 'a') as f:
            f.write(json.dumps({
                'operation': operation,
                'instance': script_dict['vnf_instance']['id'],
                'grant_operation': script_dict['grant_request']['operation'],
                'credentials': 'accessInfo' in json.dumps(script_dict['vnf_instance']),
            }) + '\n')
    if params.get('failHook') == operation:
        raise Exception('refused by the VNF: {}'.format(operation))
    if params.get('hangHook') == operation:
        time.sleep(300)


if __name__ == "__main__":
    try:
        main()
        os._exit(0)
    except Exception as ex:
        sys.stderr.write(str(ex))
        sys.stderr.flush()
        os._exit(1)
"#;

fn package_with_hooks() -> Vec<u8> {
    let operations =
        ["instantiate_start", "instantiate_end", "scale_start", "scale_end", "terminate_start", "terminate_end"];
    let interface: String = operations
        .iter()
        .map(|operation| format!("          {operation}:\n            implementation: hook-script\n"))
        .collect();
    CsarBuilder::sample()
        .descriptor_id(&uuid::Uuid::new_v4().to_string())
        .edit(SAMPLE_DF_SIMPLE, |s| {
            s.replacen(
                "        flavour_description: Simple flavour with a scalable front end\n      artifacts:\n",
                &format!(
                    "        flavour_description: Simple flavour with a scalable front end\n      interfaces:\n        \
                     Vnflcm:\n{interface}      artifacts:\n        hook-script:\n          \
                     type: tosca.artifacts.Implementation.Python\n          file: ../Scripts/hook.py\n"
                ),
                1,
            )
        })
        .file("Scripts/hook.py", HOOK)
        .to_bytes()
        .unwrap()
}

fn records(path: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(path).unwrap_or_default().lines().map(|line| serde_json::from_str(line).unwrap()).collect()
}

fn operations(path: &std::path::Path) -> Vec<String> {
    records(path).iter().map(|r| r["operation"].as_str().unwrap().to_owned()).collect()
}

#[tokio::test]
async fn vnflcm_scripts_run_around_the_operations_and_their_failure_is_the_operations() {
    let app = TestApp::spawn_with(|settings| settings.drivers.script_timeout_secs = 3).await;
    let package_id = app.onboard_package(&package_with_hooks()).await;
    let package = send(app.request(Method::GET, &format!("/vnfpkgm/v1/vnf_packages/{package_id}"))).await.json();
    let vnfd_id = package["vnfdId"].as_str().unwrap().to_owned();
    let id = create_instance(&app, &vnfd_id, "hooks").await;
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("hooks.jsonl");

    let body = json!({"flavourId": "simple", "additionalParams": {"hookRecord": record}});
    let op = wait_op(&app, &task(&app, &id, "instantiate", body).await, &["COMPLETED", "FAILED_TEMP"]).await;
    assert_eq!(op["operationState"], "COMPLETED", "{op}");
    assert_eq!(operations(&record), ["instantiate_start", "instantiate_end"]);
    let first = &records(&record)[0];
    assert_eq!(first["instance"], id.as_str());
    assert_eq!(first["grant_operation"], "INSTANTIATE");
    assert_eq!(first["credentials"], false);
    assert_eq!(vnfc_count(&show_instance(&app, &id).await, "VDU1"), 1);

    // scale_start refuses: FAILED_TEMP with the script's message, the VIM untouched.
    let scale = json!({"type": "SCALE_OUT", "aspectId": "VDU1_scale",
        "additionalParams": {"hookRecord": record, "failHook": "scale_start"}});
    let op = wait_op(&app, &task(&app, &id, "scale", scale).await, &["COMPLETED", "FAILED_TEMP"]).await;
    assert_eq!(op["operationState"], "FAILED_TEMP", "{op}");
    // Tacker's MgmtDriverExecutionFailed: the package refused, not the server failing.
    assert_eq!(op["error"]["status"], 422, "{op}");
    assert_eq!(op["error"]["title"], "Mgmt driver execution failed", "{op}");
    let detail = op["error"]["detail"].as_str().unwrap();
    assert!(detail.starts_with("scale_start script ../Scripts/hook.py failed (exit status: 1)"), "{detail}");
    assert!(detail.ends_with("refused by the VNF: scale_start"), "{detail}");
    assert_eq!(operations(&record)[2..], ["scale_start"]);
    assert_eq!(vnfc_count(&show_instance(&app, &id).await, "VDU1"), 1, "the VIM was not touched");
    let op_path = format!("/vnflcm/v2/vnf_lcm_op_occs/{}", op["id"].as_str().unwrap());
    let reply = send(app.request(Method::POST, &format!("{op_path}/fail")).header("Version", "2.0.0")).await;
    assert_eq!(reply.status, 200, "{}", reply.text);

    // scale_end hangs: killed at the timeout, FAILED_TEMP saying so.
    let scale = json!({"type": "SCALE_OUT", "aspectId": "VDU1_scale",
        "additionalParams": {"hookRecord": record, "hangHook": "scale_end"}});
    let op = wait_op(&app, &task(&app, &id, "scale", scale).await, &["COMPLETED", "FAILED_TEMP"]).await;
    assert_eq!(op["operationState"], "FAILED_TEMP", "{op}");
    let detail = op["error"]["detail"].as_str().unwrap();
    assert!(detail.contains("scale_end script ../Scripts/hook.py did not finish within 3s and was killed"), "{detail}");
    assert_eq!(operations(&record)[3..], ["scale_start", "scale_end"]);
    let op_path = format!("/vnflcm/v2/vnf_lcm_op_occs/{}", op["id"].as_str().unwrap());
    let reply = send(app.request(Method::POST, &format!("{op_path}/rollback")).header("Version", "2.0.0")).await;
    assert_eq!(reply.status, 202, "{}", reply.text);
    let since = op["stateEnteredTime"].as_str().unwrap().to_owned();
    let op = wait_op_after(&app, &app.url(&op_path), &["ROLLED_BACK", "FAILED_TEMP"], &since).await;
    assert_eq!(op["operationState"], "ROLLED_BACK", "{op}");
    assert_eq!(vnfc_count(&show_instance(&app, &id).await, "VDU1"), 1);

    let terminate = json!({"terminationType": "FORCEFUL", "additionalParams": {"hookRecord": record}});
    let op = wait_op(&app, &task(&app, &id, "terminate", terminate).await, &["COMPLETED", "FAILED_TEMP"]).await;
    assert_eq!(op["operationState"], "COMPLETED", "{op}");
    assert_eq!(operations(&record)[5..], ["terminate_start", "terminate_end"]);
}

//! Recovery of a dead conductor's work (embedded, SQLite): an operation the dead conductor
//! had claimed but not begun (still STARTING) is queued again and completed by a live
//! conductor — not ROLLED_BACK as Tacker does.

use std::time::Duration;

use serde_json::json;
use solgate_core::operation::LcmOperation;
use solgate_core::requests::{self, TaskRequest};
use solgate_db::repo::lcm::{self, LcmMajor};
use solgate_db::repo::outbox;

use crate::helpers::TestApp;
use crate::lcm_support::*;

/// An instantiate accepted straight in the database (no work message is sent) and claimed
/// by a conductor that no longer exists, as if it died right after its claim; `resumes`:
/// how often it was queued again before. Returns the app, the instance id and the
/// occurrence's URL.
async fn orphaned_instantiate(resumes: u64) -> (TestApp, String, String) {
    let app = TestApp::spawn_with(|settings| {
        settings.conductor.heartbeat_interval_secs = 1;
        settings.conductor.lease_timeout_secs = 2;
    })
    .await;
    let vnfd_id = install_sample_package(&app);
    let instance_id = create_instance(&app, &vnfd_id, "orphan").await;
    let database = app.database();
    let mut conn = database.conn().unwrap();
    let links = solgate_core::links::Links::new(&app.address);
    let params = json!({"flavourId": "simple"});
    let vim_types = [solgate_drivers::infra::VIM_TYPE_LOCAL];
    let accepted = requests::accept(
        &mut conn,
        &TaskRequest {
            major: LcmMajor::V2,
            operation: LcmOperation::Instantiate,
            instance_id: &instance_id,
            params: &params,
            shapes: solgate_core::shapes::for_major(LcmMajor::V2),
            vim_types: &vim_types,
            links: &links,
            scope: None,
            if_match: None,
        },
    )
    .unwrap();
    let mut op = accepted.op;
    op.owner = Some("conductor-that-died".into());
    op.lease_expires_at = Some(solgate_db::repo::now_text());
    op.pending_action = None;
    if resumes > 0 {
        op.body["_solgate"]["resumes"] = json!(resumes);
    }
    assert!(lcm::update_op_guarded(&mut conn, LcmMajor::V2, &op, None, "STARTING").unwrap());
    outbox::complete(&mut conn, &op.id).unwrap();

    let url = format!("{}/vnflcm/v2/vnf_lcm_op_occs/{}", app.address, op.id);
    (app, instance_id, url)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dead_conductors_unstarted_operation_is_resumed_not_rolled_back() {
    let (app, instance_id, url) = orphaned_instantiate(0).await;
    let database = app.database();
    let mut conn = database.conn().unwrap();
    let op_id = url.rsplit('/').next().unwrap().to_owned();
    let done = tokio::time::timeout(
        Duration::from_secs(30),
        wait_op(&app, &url, &["COMPLETED", "ROLLED_BACK", "FAILED_TEMP"]),
    )
    .await
    .expect("the orphaned operation is taken on within 30 s");
    assert_eq!(done["operationState"], "COMPLETED", "{done}");
    assert!(done.get("error").is_none(), "{done}");
    // Without recovery it would stay STARTING for ever; Tacker's rule made it ROLLED_BACK.
    let stored = lcm::find_op(&mut conn, LcmMajor::V2, &op_id).unwrap().unwrap();
    assert_ne!(stored.owner.as_deref(), Some("conductor-that-died"));
    assert_eq!(vnfc_count(&show_instance(&app, &instance_id).await, "VDU1"), 1, "instantiated once");
}

/// One that was queued again as often as allowed (its conductors kept dying on it) is
/// ROLLED_BACK instead of looping for ever.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_operation_resumed_too_often_is_rolled_back() {
    let (app, _, url) = orphaned_instantiate(solgate_conductor::recovery::MAX_RESUMES).await;
    let done = tokio::time::timeout(
        Duration::from_secs(30),
        wait_op(&app, &url, &["COMPLETED", "ROLLED_BACK", "FAILED_TEMP"]),
    )
    .await
    .expect("the orphaned operation is taken on within 30 s");
    assert_eq!(done["operationState"], "ROLLED_BACK", "{done}");
    let detail = done["error"]["detail"].as_str().unwrap();
    assert!(detail.contains("stopped 3 times before the operation began"), "{detail}");
}

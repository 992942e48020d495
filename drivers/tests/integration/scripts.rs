//! Package scripts through `solgate_drivers::script` with a real Python 3: a user data class
//! that raises, hangs (and leaves a child behind), prints garbage or returns something else
//! than stack fields; a management script; what the script's process sees (environment,
//! arguments); and that nothing of a run outlives it.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use solgate_drivers::script::{ScriptError, ScriptInput, ScriptSettings, run_mgmt_script, run_user_data};

const CLASS: &str = r#"
import json
import os
import subprocess
import sys
import time

from tacker.sol_refactored.infra_drivers.openstack import userdata_utils


def _record(req):
    path = req.get("additionalParams", {}).get("pids")
    if path:
        child = subprocess.Popen(["sleep", "300"])
        with open(path, "w") as f:
            json.dump([os.getpid(), child.pid], f)


class Samples(userdata_utils.AbstractUserData):

    @staticmethod
    def instantiate(req, inst, grant_req, grant, tmp_csar_dir):
        print("this goes to stderr, not into the result")
        sys.stdout.write("{not json")
        return {"parameters": {"nfv": {"VDU": {"VDU1": {"desired_capacity": 1}}}},
                "seen": {"environ": sorted(os.environ), "argv": sys.argv, "csar": os.listdir(tmp_csar_dir),
                         "vnfdId": inst["vnfdId"], "operation": grant_req["operation"]}}

    @staticmethod
    def scale(req, inst, grant_req, grant, tmp_csar_dir):
        raise ValueError("no flavour for VDU1 in this zone")

    @staticmethod
    def heal(req, inst, grant_req, grant, tmp_csar_dir):
        _record(req)
        time.sleep(300)

    @staticmethod
    def change_ext_conn(req, inst, grant_req, grant, tmp_csar_dir):
        _record(req)
        return "garbage"
"#;

fn package() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("UserData")).unwrap();
    std::fs::write(dir.path().join("UserData/__init__.py"), "").unwrap();
    std::fs::write(dir.path().join("UserData/samples.py"), CLASS).unwrap();
    std::fs::create_dir_all(dir.path().join("Files/images")).unwrap();
    std::fs::write(dir.path().join("Files/images/big.img"), "not copied").unwrap();
    dir
}

fn input(operation: &str, additional: &Value) -> ScriptInput {
    ScriptInput {
        request: json!({"additionalParams": additional}),
        vnf_instance: json!({"id": "inst-1", "vnfdId": "vnfd-1"}),
        grant_request: json!({"operation": operation}),
        grant: json!({}),
    }
}

fn settings(timeout: Duration) -> ScriptSettings {
    ScriptSettings { python: "python3".into(), timeout }
}

async fn user_data(pkg: &Path, operation: &str, additional: &Value, timeout: Duration) -> Result<Value, ScriptError> {
    run_user_data(&settings(timeout), pkg, "./UserData/samples.py", "Samples", &input(operation, additional), false)
        .await
}

/// (state, parent pid) of a process, `None` once it is gone.
fn process(pid: u32) -> Option<(char, u32)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // "pid (comm) state ppid ..."; comm may hold spaces, so read after the last ')'.
    let rest = &stat[stat.rfind(')')? + 2..];
    let mut fields = rest.split(' ');
    let state = fields.next()?.chars().next()?;
    let ppid = fields.next()?.parse().ok()?;
    Some((state, ppid))
}

/// Nothing of the run is left: each process is gone, or (a grandchild reparented to the
/// machine's init, which reaps it in its own time) dead and not ours to reap.
fn assert_nothing_left(pids_file: &Path) {
    let pids: Vec<u32> = serde_json::from_str(&std::fs::read_to_string(pids_file).unwrap()).unwrap();
    assert_eq!(pids.len(), 2);
    let me = std::process::id();
    let deadline = Instant::now() + Duration::from_secs(5);
    for pid in pids {
        loop {
            match process(pid) {
                None => break,
                Some(('Z', ppid)) if ppid != me => break,
                Some(state) if Instant::now() > deadline => panic!("process {pid} left behind: {state:?}"),
                Some(_) => std::thread::sleep(Duration::from_millis(50)),
            }
        }
    }
}

#[tokio::test]
async fn a_class_gets_tackers_inputs_in_a_clean_environment_and_its_prints_stay_out_of_the_result() {
    let pkg = package();
    let fields = user_data(pkg.path(), "INSTANTIATE", &json!({}), Duration::from_secs(30)).await.unwrap();
    assert_eq!(fields["parameters"]["nfv"]["VDU"]["VDU1"]["desired_capacity"], 1);
    let seen = &fields["seen"];
    assert_eq!(seen["vnfdId"], "vnfd-1");
    assert_eq!(seen["operation"], "INSTANTIATE");
    // Only what solgate sets (and what Python adds itself): no variable of solgate's own.
    let environ: Vec<&str> = seen["environ"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
    for name in &environ {
        assert!(
            ["PATH", "HOME", "LANG", "PYTHONPATH", "PYTHONIOENCODING", "LC_CTYPE"].contains(name),
            "{name} in the script's environment: {environ:?}"
        );
    }
    // The inputs came on stdin, not on the command line.
    assert_eq!(seen["argv"].as_array().unwrap().len(), 1, "{seen}");
    // tmp_csar_dir is a copy of the package without Files/images' contents.
    let csar: Vec<&str> = seen["csar"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
    assert!(csar.contains(&"UserData"), "{csar:?}");
    assert!(!pkg.path().join("UserData/__pycache__").exists(), "the package itself is not written to");
}

#[tokio::test]
async fn a_class_that_raises_fails_with_its_traceback_tail() {
    let pkg = package();
    let error = user_data(pkg.path(), "SCALE", &json!({}), Duration::from_secs(30)).await.unwrap_err();
    let text = error.to_string();
    assert!(matches!(error, ScriptError::Failed { .. }), "{text}");
    assert!(
        text.starts_with("LCM operation user data ./UserData/samples.py (Samples.scale) failed (exit status: 1)"),
        "{text}"
    );
    assert!(text.contains("ValueError: no flavour for VDU1 in this zone"), "{text}");
}

#[tokio::test]
async fn a_class_that_hangs_is_killed_with_what_it_started_at_the_timeout() {
    let pkg = package();
    let pids = tempfile::tempdir().unwrap();
    let pids_file = pids.path().join("pids.json");
    let started = Instant::now();
    let error = user_data(pkg.path(), "HEAL", &json!({"pids": pids_file}), Duration::from_secs(2)).await.unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(20), "took {:?}", started.elapsed());
    assert!(matches!(error, ScriptError::TimedOut { .. }), "{error}");
    assert!(error.to_string().contains("did not finish within 2s and was killed"), "{error}");
    assert_nothing_left(&pids_file);
}

#[tokio::test]
async fn a_class_that_returns_garbage_fails_clearly_and_leaves_nothing() {
    let pkg = package();
    let pids = tempfile::tempdir().unwrap();
    let pids_file = pids.path().join("pids.json");
    let error = user_data(pkg.path(), "CHANGE_EXT_CONN", &json!({"pids": pids_file}), Duration::from_secs(30))
        .await
        .unwrap_err();
    assert!(error.to_string().contains("returned str instead of a dict of Heat stack fields"), "{error}");
    // Its child (a `sleep 300` it did not wait for) went with it.
    assert_nothing_left(&pids_file);
}

#[tokio::test]
async fn an_interpreter_that_prints_garbage_is_not_taken_at_its_word() {
    let pkg = package();
    let bin = tempfile::tempdir().unwrap();
    let fake = bin.path().join("python3");
    std::fs::write(&fake, "#!/bin/sh\ncat >/dev/null\necho 'Traceback? no: <html>garbage'\n").unwrap();
    std::os::unix::fs::PermissionsExt::set_mode(&mut std::fs::metadata(&fake).unwrap().permissions(), 0o755);
    std::fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let settings = ScriptSettings { python: fake, timeout: Duration::from_secs(30) };
    let error =
        run_user_data(&settings, pkg.path(), "./UserData/samples.py", "Samples", &input("SCALE", &json!({})), false)
            .await
            .unwrap_err();
    assert!(matches!(error, ScriptError::BadResult { .. }), "{error}");
    assert!(error.to_string().contains("returned no valid result (not JSON"), "{error}");
}

#[tokio::test]
async fn names_from_the_request_reach_no_shell() {
    let pkg = package();
    let marker = tempfile::tempdir().unwrap();
    let touched = marker.path().join("pwned");
    let module = format!("./UserData/samples.py; touch {}", touched.display());
    let class = format!("Samples$(touch {})", touched.display());
    let error = run_user_data(
        &settings(Duration::from_secs(30)),
        pkg.path(),
        &module,
        &class,
        &input("SCALE", &json!({})),
        false,
    )
    .await
    .unwrap_err();
    assert!(matches!(error, ScriptError::Failed { .. }), "{error}");
    assert!(!touched.exists(), "a name ran a command");
    // A module outside the package is refused before anything runs.
    let error = run_user_data(
        &settings(Duration::from_secs(30)),
        pkg.path(),
        "../../etc/passwd",
        "X",
        &input("SCALE", &json!({})),
        false,
    )
    .await
    .unwrap_err();
    assert!(error.to_string().contains("leaves the VNF package"), "{error}");
    // An interpreter that does not exist is named.
    let missing = ScriptSettings { python: "/nonexistent/python3".into(), timeout: Duration::from_secs(5) };
    let error =
        run_user_data(&missing, pkg.path(), "./UserData/samples.py", "Samples", &input("SCALE", &json!({})), false)
            .await
            .unwrap_err();
    assert!(error.to_string().contains("the Python interpreter /nonexistent/python3 cannot be run"), "{error}");
}

/// Tacker's own management script (test_helm_instantiate's `Scripts/sample_script.py`,
/// unchanged) runs as Tacker runs it: the pickled operation dict on its stdin.
#[tokio::test]
async fn tackers_sample_management_script_runs_and_a_failing_one_fails_with_its_message() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tacker-samples/test_helm_instantiate");
    let input = input("INSTANTIATE", &json!({}));
    let settings = settings(Duration::from_secs(30));
    run_mgmt_script(&settings, &fixtures, "../Scripts/sample_script.py", "instantiate_start", &input).await.unwrap();
    // The sample fails an operation when /tmp/<operation> exists (Tacker's error-handling tests).
    let operation = format!("solgate_test_{}_start", std::process::id());
    let flag = std::env::temp_dir().join(&operation);
    std::fs::write(&flag, "").unwrap();
    let failed = run_mgmt_script(&settings, &fixtures, "../Scripts/sample_script.py", &operation, &input).await;
    std::fs::remove_file(&flag).unwrap();
    let error = failed.unwrap_err().to_string();
    assert!(error.contains(&format!("{operation} script ../Scripts/sample_script.py failed")), "{error}");
    assert!(error.ends_with(&format!("test {operation} error")), "{error}");
    let error =
        run_mgmt_script(&settings, &fixtures, "../Scripts/missing.py", "instantiate_start", &input).await.unwrap_err();
    assert!(error.to_string().contains("has no such file"), "{error}");
}

/// The fields solgate's runner and support modules make of Tacker's sample user data are
/// those Tacker's own modules made of the same inputs (recorded with Tacker 16.0.0 by
/// `tests/fixtures/tacker-samples/record_user_data.py`): `basic_lcms_max`'s class for an
/// instantiation, Tacker's `StandardUserData` (the `userdata_standard` sample) for
/// instantiate, scale out, scale in, heal and change_ext_conn. Template and file texts
/// included, byte for byte.
#[tokio::test]
async fn tackers_sample_user_data_makes_the_fields_tacker_made() {
    let samples = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tacker-samples");
    let mut names: Vec<_> = std::fs::read_dir(samples.join("recorded"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .collect();
    names.sort();
    assert_eq!(names.len(), 6, "{names:?}");
    for path in names {
        let case: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let inputs = &case["inputs"];
        let input = ScriptInput {
            request: inputs["request"].clone(),
            vnf_instance: inputs["vnf_instance"].clone(),
            grant_request: inputs["grant_request"].clone(),
            grant: inputs["grant_response"].clone(),
        };
        let fields = run_user_data(
            &settings(Duration::from_secs(60)),
            &samples.join(case["package"].as_str().unwrap()),
            case["user_data"].as_str().unwrap(),
            case["user_data_class"].as_str().unwrap(),
            &input,
            inputs["is_rollback"] == true,
        )
        .await
        .unwrap_or_else(|error| panic!("{}: {error}", path.display()));
        assert_eq!(fields, case["fields"], "{}", path.display());
    }
}

//! What a running `solgate serve` keeps resident of its own executable.

use std::path::Path;
use std::time::Duration;

use crate::processes::spawn_serve;

/// KiB resident of `binary`'s read-only mappings (code and constant data) in process `pid`.
fn resident_kib_of_executable(pid: u32, binary: &Path) -> u64 {
    let smaps = std::fs::read_to_string(format!("/proc/{pid}/smaps")).unwrap();
    let binary = binary.to_string_lossy();
    let mut counting = false;
    let mut total = 0;
    for line in smaps.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.first().is_some_and(|range| range.contains('-') && !range.ends_with(':')) && fields.len() >= 5 {
            counting = fields.get(5).is_some_and(|path| *path == binary) && !fields[1].contains('w');
        } else if counting && fields.first() == Some(&"Rss:") {
            total += fields[1].parse::<u64>().unwrap();
        }
    }
    total
}

/// Once it listens, `solgate serve` gives back the pages of its executable that start-up
/// touched: against the same binary run with `memory.release_startup_pages = false`, less
/// than half as much of the executable is resident then, still less after the same requests,
/// and every request is answered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_gives_back_the_executables_start_up_pages() {
    let dir = tempfile::tempdir().unwrap();
    // A copy of its own: the kernel keeps pages that another process (another test's
    // solgate) maps too.
    let binary = dir.path().join("solgate");
    std::fs::copy(env!("CARGO_BIN_EXE_solgate"), &binary).unwrap();
    let client = reqwest::Client::new();
    let mut resident = Vec::new();
    for release in [false, true] {
        let data = dir.path().join(format!("data-{release}"));
        let setting = if release { "true" } else { "false" };
        let server = spawn_serve(&binary, &data, &[("SOLGATE__MEMORY__RELEASE_STARTUP_PAGES", setting)]);
        let base = server.base_url();
        if release {
            let event = server.wait_for_log("start-up pages of the executable released", Duration::from_secs(10));
            assert!(event["mappings"].as_u64().unwrap() >= 2, "{event}");
        } else {
            // As long as the release waits for start-up to end.
            tokio::time::sleep(Duration::from_secs(2)).await;
            assert!(!server.log_contains("start-up pages"));
        }
        let listening = resident_kib_of_executable(server.pid(), &binary);
        for (path, version) in [
            ("/vnflcm/api_versions", None),
            ("/vnflcm/v2/vnf_instances", Some("2.0.0")),
            ("/vnflcm/v2/vnf_lcm_op_occs", Some("2.0.0")),
            ("/vnfpkgm/v1/vnf_packages", None),
        ] {
            let mut request = client.get(format!("{base}{path}"));
            if let Some(version) = version {
                request = request.header("Version", version);
            }
            let response = request.send().await.unwrap();
            assert_eq!(response.status(), 200, "{path}");
        }
        resident.push((listening, resident_kib_of_executable(server.pid(), &binary)));
    }
    let [(kept, kept_later), (released, released_later)] = resident[..] else { unreachable!() };
    eprintln!(
        "KiB of the executable resident once listening, then after the requests: kept {kept}, {kept_later}; \
         released {released}, {released_later}"
    );
    assert!(released * 2 < kept, "once listening: {released} KiB resident with the release, {kept} KiB without");
    // Serving brings back what it runs, not what only start-up ran.
    assert!(
        released_later * 10 < kept_later * 9,
        "after the requests: {released_later} KiB resident with the release, {kept_later} KiB without"
    );
}

//! Request ids, health, readiness, metrics, and the binary's start-up and shutdown.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::helpers::{TestApp, send};

#[tokio::test]
async fn request_ids_are_echoed_or_generated() {
    let app = TestApp::spawn().await;
    let reply = send(app.get("/vnflcm/api_versions").header("X-Request-Id", "trace-42")).await;
    assert_eq!(reply.header("x-request-id"), Some("trace-42"));
    let first = send(app.get("/healthz")).await;
    let second = send(app.get("/healthz")).await;
    let (a, b) = (first.header("x-request-id").unwrap(), second.header("x-request-id").unwrap());
    assert!(!a.is_empty() && a != b);
    // Unsafe values are replaced, never echoed into headers or logs.
    let reply = send(app.get("/healthz").header("X-Request-Id", "a b\"<script>")).await;
    assert_ne!(reply.header("x-request-id"), Some("a b\"<script>"));
}

#[tokio::test]
async fn health_readiness_and_metrics() {
    let app = TestApp::spawn().await;
    assert_eq!(send(app.get("/healthz")).await.status, 200);
    let ready = send(app.get("/readyz")).await;
    assert_eq!(ready.status, 200, "{}", ready.text);
    assert_eq!(ready.json()["checks"]["database"], "ok");

    send(app.get("/vnflcm/v2/api_versions").header("Version", "2.0.0")).await;
    send(app.get("/vnflcm/v2/api_versions").header("Version", "bad")).await;
    let metrics = send(app.get("/metrics")).await;
    assert_eq!(metrics.status, 200);
    assert!(metrics.header("content-type").unwrap().starts_with("text/plain"));
    assert!(
        metrics.text.contains(
            r#"solgate_http_requests_total{method="GET",route="/vnflcm/v{major}/api_versions",status="200",version="2.0.0"} 1"#
        ),
        "{}",
        metrics.text
    );
    assert!(metrics.text.contains(r#"status="400""#), "{}", metrics.text);
    assert!(metrics.text.contains("solgate_http_request_duration_seconds_bucket"), "{}", metrics.text);
}

/// The real binary: `serve` on port 0 logs the port it picked, answers, and exits 0 on
/// SIGTERM after a graceful shutdown.
#[test]
fn binary_serves_on_a_free_port_and_stops_on_sigterm() {
    let data_dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_solgate"))
        .args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(data_dir.path())
        .env("SOLGATE_LOG_FORMAT", "json")
        // In-flight requests get 5 s (30 by default), well inside the 20 s this test waits.
        .env("SOLGATE__HTTP__SHUTDOWN_TIMEOUT_SECS", "5")
        .env_remove("RUST_LOG")
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Read stderr all the time (a full pipe would block the server's logging, and with it
    // its shutdown), handing the lines over a channel.
    let stderr = child.stderr.take().unwrap();
    let (sender, lines) = std::sync::mpsc::channel::<String>();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if sender.send(line).is_err() {
                break;
            }
        }
    });
    let port = loop {
        let line = lines.recv_timeout(Duration::from_secs(30)).expect("the server logs that it listens");
        let event: serde_json::Value = serde_json::from_str(&line).unwrap_or_else(|_| panic!("JSON log line: {line}"));
        if let Some(address) = event["address"].as_str()
            && event["message"].as_str().unwrap_or_default().contains("listening")
        {
            break address.rsplit(':').next().unwrap().parse::<u16>().unwrap();
        }
    };
    assert_ne!(port, 0);
    let body = blocking_get(port);
    assert!(body.contains("\"uriPrefix\":\"/vnflcm\""), "{body}");
    assert!(data_dir.path().join("solgate.db").exists(), "the SQLite file lives in the data directory");

    Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap();
    let status = wait_with_timeout(&mut child, Duration::from_secs(20), &lines);
    assert!(status.success(), "exit status {status:?}");
    // The reader ends at the end of stderr, when the server has exited.
    let rest: Vec<String> = lines.iter().collect();
    assert!(rest.iter().any(|line| line.contains("solgate stopped")), "{rest:?}");
}

fn wait_with_timeout(
    child: &mut std::process::Child,
    timeout: Duration,
    lines: &std::sync::mpsc::Receiver<String>,
) -> std::process::ExitStatus {
    let deadline = std::time::Instant::now() + timeout;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let log: Vec<String> = lines.try_iter().collect();
            panic!("the server did not stop within {timeout:?}; its log since: {log:#?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A plain blocking GET over a TCP socket (this test is synchronous).
fn blocking_get(port: u16) -> String {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(stream, "GET /vnflcm/api_versions HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    response
}

//! solgate's load driver: real HTTP against a running solgate, N concurrent clients for a
//! fixed time, requests/s and latency percentiles per scenario.
//!
//! ```text
//! cargo run --release -p solgate-bench -- --target http://127.0.0.1:9890 all
//! ```
//! Scenarios: `show` (GET one VNF instance), `list` (GET 100 instances), `create`
//! (POST vnf_instances), `lcm` (instantiate + terminate pairs to COMPLETED, end to end:
//! pairs/s, LCM operations/s and each operation's time from its 202 to COMPLETED),
//! `page` (GET the first page of all VNF instances, however many there are),
//! `versions` (GET /vnflcm/api_versions, and with `--bare URL` the same against
//! `solgate-bare`, a bare actix-web JSON handler, in the same run), `all` (each in turn). Setup onboards the sample package (deploy/sample-package) over
//! the package API and creates 100 instances for `show` and `list`.
#![allow(clippy::print_stdout)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use clap::{Parser, ValueEnum};
use serde_json::{Value, json};

use load::{Run, Target, create_instance};
use records::{PackageView, TokenAnswer};

mod load;
mod records;
mod scenarios;

#[derive(Debug, Parser)]
#[command(about = "Load driver for solgate")]
struct Args {
    /// Base URL of the solgate gateway.
    #[arg(long, default_value = "http://127.0.0.1:9890")]
    target: String,
    /// Concurrent clients.
    #[arg(long, default_value_t = 16)]
    connections: usize,
    /// Seconds each scenario runs.
    #[arg(long, default_value_t = 10)]
    duration: u64,
    /// The sample package directory to onboard.
    #[arg(long, default_value = "deploy/sample-package")]
    package: PathBuf,
    /// PEM trust anchors for an `https://` target (e.g. the test CA of bench/run.sh).
    #[arg(long)]
    ca_file: Option<PathBuf>,
    /// `ID:SECRET` of an OAuth 2.0 client: a token from the target's `/oauth2/token` is sent
    /// with every request (one token for the whole run, as a client caches it).
    #[arg(long)]
    client: Option<String>,
    /// Milliseconds between two reads of a running occurrence in `lcm` (each read is a
    /// request the server serves beside the operations it measures).
    #[arg(long, default_value_t = 10)]
    poll_ms: u64,
    /// A bare actix-web server (`solgate-bare`) to measure `versions` against.
    #[arg(long)]
    bare: Option<String>,
    /// A label printed with the results (e.g. "sqlite" or "postgres").
    #[arg(long, default_value = "")]
    label: String,
    #[arg(value_enum)]
    scenario: Scenario,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Scenario {
    Show,
    List,
    Create,
    Lcm,
    Versions,
    /// The first page of every VNF instance (the default page size), whatever their number.
    Page,
    All,
}

/// Zips the package directory in memory (what `python3 -m zipfile -c` would produce).
fn zip_package(dir: &Path, vnfd_id: &str) -> anyhow::Result<Vec<u8>> {
    fn walk(dir: &Path, base: &Path, out: &mut Vec<(String, Vec<u8>)>) -> anyhow::Result<()> {
        for entry in std::fs::read_dir(dir)? {
            let path = entry?.path();
            if path.is_dir() {
                walk(&path, base, out)?;
            } else {
                let name = path.strip_prefix(base)?.to_string_lossy().replace('\\', "/");
                out.push((name, std::fs::read(&path)?));
            }
        }
        Ok(())
    }
    let mut files = Vec::new();
    walk(dir, dir, &mut files)?;
    let original_id = files
        .iter()
        .filter(|(name, _)| name.ends_with(".yaml"))
        .find_map(|(_, content)| {
            let text = String::from_utf8_lossy(content);
            text.lines().find_map(|line| {
                let line = line.trim();
                line.strip_prefix("default: ")
                    .filter(|value| value.len() == 36 && value.matches('-').count() == 4)
                    .map(str::to_owned)
            })
        })
        .context("the sample package names a descriptor_id")?;
    let mut buffer = std::io::Cursor::new(Vec::new());
    let mut writer = zip::ZipWriter::new(&mut buffer);
    for (name, content) in files {
        writer.start_file(name.as_str(), zip::write::SimpleFileOptions::default())?;
        // Each run onboards its own copy: a fresh vnfdId.
        let content = if name.ends_with(".yaml") {
            String::from_utf8_lossy(&content).replace(&original_id, vnfd_id).into_bytes()
        } else {
            content
        };
        std::io::Write::write_all(&mut writer, &content)?;
    }
    writer.finish()?;
    Ok(buffer.into_inner())
}

async fn onboard(target: &Target, package_dir: &Path) -> anyhow::Result<String> {
    let vnfd_id = uuid::Uuid::new_v4().to_string();
    let zip = zip_package(package_dir, &vnfd_id)?;
    let created: Value = target
        .client
        .post(format!("{}/vnfpkgm/v1/vnf_packages", target.base))
        .json(&json!({}))
        .send()
        .await?
        .error_for_status()?
        .json()
        .await?;
    let id = PackageView::of(&created).id.context("package id")?;
    target
        .client
        .put(format!("{}/vnfpkgm/v1/vnf_packages/{id}/package_content", target.base))
        .header("Content-Type", "application/zip")
        .body(zip)
        .send()
        .await?
        .error_for_status()?;
    let deadline = Instant::now() + Duration::from_secs(60);
    let package = loop {
        let package: Value =
            target.client.get(format!("{}/vnfpkgm/v1/vnf_packages/{id}", target.base)).send().await?.json().await?;
        let view = PackageView::of(&package);
        match view.onboarding_state.as_deref() {
            Some("ONBOARDED") => break view,
            _ if view.onboarding_failure_details.is_some() => bail!("onboarding failed: {package}"),
            _ if Instant::now() > deadline => bail!("onboarding did not finish: {package}"),
            _ => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    };
    // Onboarding enables the package unless packages.enable_on_onboarding = false.
    if package.operational_state.as_deref() != Some("ENABLED") {
        target
            .client
            .patch(format!("{}/vnfpkgm/v1/vnf_packages/{id}", target.base))
            .header("Content-Type", "application/merge-patch+json")
            .body(r#"{"operationalState":"ENABLED"}"#)
            .send()
            .await?
            .error_for_status()?;
    }
    Ok(vnfd_id)
}

/// The HTTP client: the trust anchors of `--ca-file`, and a token sent with every request
/// for `--client`.
async fn http_client(args: &Args) -> anyhow::Result<reqwest::Client> {
    let roots = match &args.ca_file {
        Some(path) => {
            let pem = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
            reqwest::Certificate::from_pem_bundle(&pem)?
        }
        None => Vec::new(),
    };
    let mut builder =
        reqwest::Client::builder().pool_max_idle_per_host(args.connections * 2).tls_certs_merge(roots.clone());
    if let Some(credentials) = &args.client {
        let (id, secret) = credentials.split_once(':').context("--client is ID:SECRET")?;
        let answer: Value = reqwest::Client::builder()
            .tls_certs_merge(roots)
            .build()?
            .post(format!("{}/oauth2/token", args.target.trim_end_matches('/')))
            .basic_auth(id, Some(secret))
            .header("Content-Type", "application/x-www-form-urlencoded")
            .body("grant_type=client_credentials")
            .send()
            .await?
            .error_for_status()?
            .json()
            .await?;
        let token = TokenAnswer::of(&answer).access_token.context("no access_token in the token answer")?;
        let mut headers = reqwest::header::HeaderMap::new();
        headers.insert(reqwest::header::AUTHORIZATION, format!("Bearer {token}").parse()?);
        builder = builder.default_headers(headers);
    }
    Ok(builder.build()?)
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let client = http_client(&args).await?;
    let target = Arc::new(Target { base: args.target.trim_end_matches('/').to_owned(), client });
    let run = Run { connections: args.connections, duration: Duration::from_secs(args.duration), label: &args.label };
    // `page` reads what is there; every other scenario gets a package and 100 instances.
    let (vnfd_id, ids) = if args.scenario == Scenario::Page {
        (String::new(), Arc::new(Vec::new()))
    } else {
        let vnfd_id = onboard(&target, &args.package).await.context("onboarding the sample package")?;
        let mut ids = Vec::new();
        for i in 0..100 {
            ids.push(create_instance(&target, &vnfd_id, &format!("bench-{i}")).await?);
        }
        (vnfd_id, Arc::new(ids))
    };
    println!(
        "solgate-bench: {} connections, {} s per scenario, target {}",
        args.connections, args.duration, target.base
    );
    let chosen = |scenario: Scenario| args.scenario == scenario || args.scenario == Scenario::All;
    if args.scenario == Scenario::Page {
        scenarios::page(&run, &target).await;
    }
    if chosen(Scenario::Show) {
        scenarios::show(&run, &target, &ids).await;
    }
    if chosen(Scenario::List) {
        scenarios::list(&run, &target, &vnfd_id).await;
    }
    if chosen(Scenario::Create) {
        scenarios::create(&run, &target, &vnfd_id).await;
    }
    if chosen(Scenario::Lcm) {
        scenarios::lcm(&run, &target, &vnfd_id, Duration::from_millis(args.poll_ms.max(1))).await;
    }
    if chosen(Scenario::Versions) {
        scenarios::versions(&run, &target, args.bare.as_deref()).await;
    }
    Ok(())
}

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
use hdrhistogram::Histogram;
use serde_json::{Value, json};

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

struct Target {
    base: String,
    client: reqwest::Client,
}

impl Target {
    fn v2(&self, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
        self.client
            .request(method, format!("{}{}", self.base, path))
            .header("Version", "2.0.0")
            .header("Accept", "application/json")
    }
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
    let id = created["id"].as_str().context("package id")?.to_owned();
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
        match package["onboardingState"].as_str() {
            Some("ONBOARDED") => break package,
            _ if package.get("onboardingFailureDetails").is_some() => bail!("onboarding failed: {package}"),
            _ if Instant::now() > deadline => bail!("onboarding did not finish: {package}"),
            _ => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    };
    // Onboarding enables the package unless packages.enable_on_onboarding = false.
    if package["operationalState"] != "ENABLED" {
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

async fn create_instance(target: &Target, vnfd_id: &str, name: &str) -> anyhow::Result<String> {
    let response = target
        .v2(reqwest::Method::POST, "/vnflcm/v2/vnf_instances")
        .json(&json!({"vnfdId": vnfd_id, "vnfInstanceName": name}))
        .send()
        .await?;
    if response.status() != 201 {
        bail!("create answered {}: {}", response.status(), response.text().await?);
    }
    let body: Value = response.json().await?;
    Ok(body["id"].as_str().context("instance id")?.to_owned())
}

/// Runs a task and polls its occurrence until COMPLETED; the time from the 202 to then.
async fn run_task(
    target: &Target,
    instance: &str,
    task: &str,
    body: Value,
    poll: Duration,
) -> anyhow::Result<Duration> {
    let response = target
        .v2(reqwest::Method::POST, &format!("/vnflcm/v2/vnf_instances/{instance}/{task}"))
        .json(&body)
        .send()
        .await?;
    if response.status() != 202 {
        bail!("{task} answered {}: {}", response.status(), response.text().await?);
    }
    let accepted = Instant::now();
    let location = response.headers().get("location").context("Location")?.to_str()?.to_owned();
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        if Instant::now() > deadline {
            bail!("{task} did not complete within 120 s: {location}");
        }
        let op: Value = target.client.get(&location).header("Version", "2.0.0").send().await?.json().await?;
        match op["operationState"].as_str() {
            Some("COMPLETED") => return Ok(accepted.elapsed()),
            Some("FAILED_TEMP" | "FAILED" | "ROLLED_BACK") => bail!("{task} ended {}", op["operationState"]),
            _ => tokio::time::sleep(poll).await,
        }
    }
}

struct Outcome {
    label: String,
    done: u64,
    errors: u64,
    elapsed: Duration,
    latency: Histogram<u64>,
}

impl Outcome {
    fn print(&self, run_label: &str) {
        let rate = self.done as f64 / self.elapsed.as_secs_f64();
        let ms = |q: f64| self.latency.value_at_quantile(q) as f64 / 1000.0;
        println!(
            "{:<28} {:>8} {:>10.1}/s  p50 {:>8.2} ms  p99 {:>8.2} ms  max {:>8.2} ms  errors {}{}",
            self.label,
            self.done,
            rate,
            ms(0.5),
            ms(0.99),
            self.latency.max() as f64 / 1000.0,
            self.errors,
            if run_label.is_empty() { String::new() } else { format!("  [{run_label}]") }
        );
    }
}

/// `connections` workers call `step(worker, iteration)` until the time is up.
async fn drive<F, Fut>(label: &str, connections: usize, duration: Duration, step: F) -> Outcome
where
    F: Fn(usize, u64) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = anyhow::Result<()>> + Send,
{
    let step = Arc::new(step);
    let started = Instant::now();
    let deadline = started + duration;
    let workers = (0..connections).map(|worker| {
        let step = step.clone();
        tokio::spawn(async move {
            let mut histogram = Histogram::<u64>::new(3).unwrap_or_else(|_| std::process::abort());
            let (mut done, mut errors, mut iteration) = (0u64, 0u64, 0u64);
            while Instant::now() < deadline {
                let begin = Instant::now();
                match step(worker, iteration).await {
                    Ok(()) => {
                        done += 1;
                        let _ = histogram.record(begin.elapsed().as_micros() as u64);
                    }
                    Err(error) => {
                        errors += 1;
                        if errors <= 3 {
                            eprintln!("{error:#}");
                        }
                    }
                }
                iteration += 1;
            }
            (done, errors, histogram)
        })
    });
    let mut latency = Histogram::<u64>::new(3).unwrap_or_else(|_| std::process::abort());
    let (mut done, mut errors) = (0, 0);
    for result in futures::future::join_all(workers).await.into_iter().flatten() {
        done += result.0;
        errors += result.1;
        let _ = latency.add(result.2);
    }
    Outcome { label: label.to_owned(), done, errors, elapsed: started.elapsed(), latency }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
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
        let token = answer["access_token"].as_str().context("no access_token in the token answer")?;
        let mut headers = reqwest::header::HeaderMap::new();
        headers.insert(reqwest::header::AUTHORIZATION, format!("Bearer {token}").parse()?);
        builder = builder.default_headers(headers);
    }
    let client = builder.build()?;
    let target = Arc::new(Target { base: args.target.trim_end_matches('/').to_owned(), client });
    let duration = Duration::from_secs(args.duration);
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
    let list_filter = format!("/vnflcm/v2/vnf_instances?filter=(eq,vnfdId,{vnfd_id})");
    println!(
        "solgate-bench: {} connections, {} s per scenario, target {}",
        args.connections, args.duration, target.base
    );
    let run = |scenario: Scenario| args.scenario == scenario || args.scenario == Scenario::All;
    if args.scenario == Scenario::Page {
        let target = target.clone();
        drive("GET vnf_instances (first page)", args.connections, duration, move |_, _| {
            let target = target.clone();
            async move {
                let response = target.v2(reqwest::Method::GET, "/vnflcm/v2/vnf_instances").send().await?;
                if response.status() != 200 {
                    bail!("list answered {}", response.status());
                }
                let entries: Vec<serde::de::IgnoredAny> = serde_json::from_slice(&response.bytes().await?)?;
                if entries.is_empty() {
                    bail!("an empty first page");
                }
                Ok(())
            }
        })
        .await
        .print(&args.label);
    }

    if run(Scenario::Show) {
        let (target, ids) = (target.clone(), ids.clone());
        drive("GET vnf_instances/{id}", args.connections, duration, move |worker, i| {
            let (target, ids) = (target.clone(), ids.clone());
            async move {
                let id = &ids[(worker * 7 + i as usize) % ids.len()];
                let response =
                    target.v2(reqwest::Method::GET, &format!("/vnflcm/v2/vnf_instances/{id}")).send().await?;
                if response.status() != 200 {
                    bail!("show answered {}", response.status());
                }
                response.bytes().await?;
                Ok(())
            }
        })
        .await
        .print(&args.label);
    }
    if run(Scenario::List) {
        let target = target.clone();
        let path = list_filter.clone();
        drive("GET vnf_instances (100)", args.connections, duration, move |_, _| {
            let (target, path) = (target.clone(), path.clone());
            async move {
                let response = target.v2(reqwest::Method::GET, &path).send().await?;
                if response.status() != 200 {
                    bail!("list answered {}", response.status());
                }
                // Counted, not built: the load generator shares the cores with the server.
                let entries: Vec<serde::de::IgnoredAny> = serde_json::from_slice(&response.bytes().await?)?;
                if entries.len() != 100 {
                    bail!("list returned {} entries", entries.len());
                }
                Ok(())
            }
        })
        .await
        .print(&args.label);
    }
    if run(Scenario::Create) {
        let (target, vnfd) = (target.clone(), vnfd_id.clone());
        drive("POST vnf_instances", args.connections, duration, move |worker, i| {
            let (target, vnfd) = (target.clone(), vnfd.clone());
            async move { create_instance(&target, &vnfd, &format!("load-{worker}-{i}")).await.map(|_| ()) }
        })
        .await
        .print(&args.label);
    }
    if run(Scenario::Lcm) {
        let (target, vnfd) = (target.clone(), vnfd_id.clone());
        let operations =
            Arc::new(std::sync::Mutex::new(Histogram::<u64>::new(3).unwrap_or_else(|_| std::process::abort())));
        let recorded = operations.clone();
        let poll = Duration::from_millis(args.poll_ms.max(1));
        let pairs = drive("instantiate+terminate pair", args.connections, duration, move |worker, i| {
            let (target, vnfd, recorded) = (target.clone(), vnfd.clone(), recorded.clone());
            async move {
                let id = create_instance(&target, &vnfd, &format!("lcm-{worker}-{i}")).await?;
                let instantiated = run_task(&target, &id, "instantiate", json!({"flavourId": "simple"}), poll).await?;
                let terminated =
                    run_task(&target, &id, "terminate", json!({"terminationType": "FORCEFUL"}), poll).await?;
                if let Ok(mut histogram) = recorded.lock() {
                    let _ = histogram.record(instantiated.as_micros() as u64);
                    let _ = histogram.record(terminated.as_micros() as u64);
                }
                Ok(())
            }
        })
        .await;
        pairs.print(&args.label);
        let latency = operations.lock().map(|histogram| histogram.clone()).unwrap_or_else(|_| std::process::abort());
        Outcome {
            label: "LCM operation, 202 to COMPLETED".into(),
            done: pairs.done * 2,
            errors: pairs.errors,
            elapsed: pairs.elapsed,
            latency,
        }
        .print(&args.label);
    }
    if run(Scenario::Versions) {
        let mut targets = vec![("GET api_versions (solgate)", target.base.clone())];
        if let Some(bare) = &args.bare {
            targets.push(("GET api_versions (bare actix)", bare.trim_end_matches('/').to_owned()));
        }
        let mut rates = Vec::new();
        for (label, base) in targets {
            let (client, url) = (target.client.clone(), format!("{base}/vnflcm/api_versions"));
            let outcome = drive(label, args.connections, duration, move |_, _| {
                let (client, url) = (client.clone(), url.clone());
                async move {
                    let response = client.get(&url).header("Accept", "application/json").send().await?;
                    if response.status() != 200 {
                        bail!("api_versions answered {}", response.status());
                    }
                    response.bytes().await?;
                    Ok(())
                }
            })
            .await;
            outcome.print(&args.label);
            rates.push(outcome.done as f64 / outcome.elapsed.as_secs_f64());
        }
        if let [solgate, bare] = rates[..] {
            println!("api_versions: solgate / bare actix-web = {:.2}", solgate / bare);
        }
    }
    Ok(())
}

//! The load machinery: requests against the target, workers for a fixed time, results.

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use hdrhistogram::Histogram;
use serde_json::Value;

use crate::records::{CreateVnfRequest, InstanceView, OpOccView};

pub(crate) struct Target {
    pub base: String,
    pub client: reqwest::Client,
}

impl Target {
    pub(crate) fn v2(&self, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
        self.client
            .request(method, format!("{}{}", self.base, path))
            .header("Version", "2.0.0")
            .header("Accept", "application/json")
    }
}

pub(crate) async fn create_instance(target: &Target, vnfd_id: &str, name: &str) -> anyhow::Result<String> {
    let response = target
        .v2(reqwest::Method::POST, "/vnflcm/v2/vnf_instances")
        .json(&CreateVnfRequest { vnfd_id, vnf_instance_name: name })
        .send()
        .await?;
    if response.status() != 201 {
        bail!("create answered {}: {}", response.status(), response.text().await?);
    }
    let body: Value = response.json().await?;
    InstanceView::of(&body).id.context("instance id")
}

/// Runs a task and polls its occurrence until COMPLETED; the time from the 202 to then.
pub(crate) async fn run_task(
    target: &Target,
    instance: &str,
    task: &str,
    body: impl serde::Serialize,
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
    let location = response.headers().get(reqwest::header::LOCATION).context("Location")?.to_str()?.to_owned();
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        if Instant::now() > deadline {
            bail!("{task} did not complete within 120 s: {location}");
        }
        let op: Value = target.client.get(&location).header("Version", "2.0.0").send().await?.json().await?;
        match OpOccView::of(&op).operation_state.as_deref() {
            Some("COMPLETED") => return Ok(accepted.elapsed()),
            Some(state @ ("FAILED_TEMP" | "FAILED" | "ROLLED_BACK")) => bail!("{task} ended {state:?}"),
            _ => tokio::time::sleep(poll).await,
        }
    }
}

/// How every scenario runs: its workers, its time, the label printed with its results.
pub(crate) struct Run<'a> {
    pub connections: usize,
    pub duration: Duration,
    pub label: &'a str,
}

pub(crate) struct Outcome {
    pub label: String,
    pub done: u64,
    pub errors: u64,
    pub elapsed: Duration,
    pub latency: Histogram<u64>,
}

impl Outcome {
    pub(crate) fn print(&self, run_label: &str) {
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
pub(crate) async fn drive<F, Fut>(label: &str, connections: usize, duration: Duration, step: F) -> Outcome
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

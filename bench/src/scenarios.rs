//! The scenarios: each drives its requests for the run's time and prints its results.

use std::sync::Arc;
use std::time::Duration;

use anyhow::bail;
use hdrhistogram::Histogram;

use crate::load::{Outcome, Run, Target, create_instance, drive, run_task};
use crate::records::{InstantiateVnfRequest, TerminateVnfRequest};

/// A response that is a JSON array, counted, not built: the load generator shares the cores
/// with the server.
async fn count_entries(response: reqwest::Response) -> anyhow::Result<usize> {
    let entries: Vec<serde::de::IgnoredAny> = serde_json::from_slice(&response.bytes().await?)?;
    Ok(entries.len())
}

/// GET the first page of all VNF instances, however many there are.
pub(crate) async fn page(run: &Run<'_>, target: &Arc<Target>) {
    let target = target.clone();
    drive("GET vnf_instances (first page)", run.connections, run.duration, move |_, _| {
        let target = target.clone();
        async move {
            let response = target.v2(reqwest::Method::GET, "/vnflcm/v2/vnf_instances").send().await?;
            if response.status() != 200 {
                bail!("list answered {}", response.status());
            }
            if count_entries(response).await? == 0 {
                bail!("an empty first page");
            }
            Ok(())
        }
    })
    .await
    .print(run.label);
}

pub(crate) async fn show(run: &Run<'_>, target: &Arc<Target>, ids: &Arc<Vec<String>>) {
    let (target, ids) = (target.clone(), ids.clone());
    drive("GET vnf_instances/{id}", run.connections, run.duration, move |worker, i| {
        let (target, ids) = (target.clone(), ids.clone());
        async move {
            let id = &ids[(worker * 7 + i as usize) % ids.len()];
            let response = target.v2(reqwest::Method::GET, &format!("/vnflcm/v2/vnf_instances/{id}")).send().await?;
            if response.status() != 200 {
                bail!("show answered {}", response.status());
            }
            response.bytes().await?;
            Ok(())
        }
    })
    .await
    .print(run.label);
}

/// GET the 100 instances of the run's package.
pub(crate) async fn list(run: &Run<'_>, target: &Arc<Target>, vnfd_id: &str) {
    let target = target.clone();
    let path = format!("/vnflcm/v2/vnf_instances?filter=(eq,vnfdId,{vnfd_id})");
    drive("GET vnf_instances (100)", run.connections, run.duration, move |_, _| {
        let (target, path) = (target.clone(), path.clone());
        async move {
            let response = target.v2(reqwest::Method::GET, &path).send().await?;
            if response.status() != 200 {
                bail!("list answered {}", response.status());
            }
            let entries = count_entries(response).await?;
            if entries != 100 {
                bail!("list returned {entries} entries");
            }
            Ok(())
        }
    })
    .await
    .print(run.label);
}

pub(crate) async fn create(run: &Run<'_>, target: &Arc<Target>, vnfd_id: &str) {
    let (target, vnfd) = (target.clone(), vnfd_id.to_owned());
    drive("POST vnf_instances", run.connections, run.duration, move |worker, i| {
        let (target, vnfd) = (target.clone(), vnfd.clone());
        async move { create_instance(&target, &vnfd, &format!("load-{worker}-{i}")).await.map(|_| ()) }
    })
    .await
    .print(run.label);
}

/// Instantiate + terminate pairs to COMPLETED: pairs/s, then each operation's time from its
/// 202 to COMPLETED.
pub(crate) async fn lcm(run: &Run<'_>, target: &Arc<Target>, vnfd_id: &str, poll: Duration) {
    let (target, vnfd) = (target.clone(), vnfd_id.to_owned());
    let operations = Arc::new(std::sync::Mutex::new(histogram()));
    let recorded = operations.clone();
    let pairs = drive("instantiate+terminate pair", run.connections, run.duration, move |worker, i| {
        let (target, vnfd, recorded) = (target.clone(), vnfd.clone(), recorded.clone());
        async move {
            let id = create_instance(&target, &vnfd, &format!("lcm-{worker}-{i}")).await?;
            let instantiate = InstantiateVnfRequest { flavour_id: "simple" };
            let instantiated = run_task(&target, &id, "instantiate", instantiate, poll).await?;
            let terminate = TerminateVnfRequest { termination_type: "FORCEFUL" };
            let terminated = run_task(&target, &id, "terminate", terminate, poll).await?;
            if let Ok(mut histogram) = recorded.lock() {
                let _ = histogram.record(instantiated.as_micros() as u64);
                let _ = histogram.record(terminated.as_micros() as u64);
            }
            Ok(())
        }
    })
    .await;
    pairs.print(run.label);
    let latency = operations.lock().map(|histogram| histogram.clone()).unwrap_or_else(|_| std::process::abort());
    Outcome {
        label: "LCM operation, 202 to COMPLETED".into(),
        done: pairs.done * 2,
        errors: pairs.errors,
        elapsed: pairs.elapsed,
        latency,
    }
    .print(run.label);
}

fn histogram() -> Histogram<u64> {
    Histogram::<u64>::new(3).unwrap_or_else(|_| std::process::abort())
}

/// GET /vnflcm/api_versions, and against `solgate-bare` too when given.
pub(crate) async fn versions(run: &Run<'_>, target: &Arc<Target>, bare: Option<&str>) {
    let mut targets = vec![("GET api_versions (solgate)", target.base.clone())];
    if let Some(bare) = bare {
        targets.push(("GET api_versions (bare actix)", bare.trim_end_matches('/').to_owned()));
    }
    let mut rates = Vec::new();
    for (label, base) in targets {
        let (client, url) = (target.client.clone(), format!("{base}/vnflcm/api_versions"));
        let outcome = drive(label, run.connections, run.duration, move |_, _| {
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
        outcome.print(run.label);
        rates.push(outcome.done as f64 / outcome.elapsed.as_secs_f64());
    }
    if let [solgate, bare] = rates[..] {
        println!("api_versions: solgate / bare actix-web = {:.2}", solgate / bare);
    }
}

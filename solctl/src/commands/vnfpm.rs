//! `solctl vnfpm job …`, `vnfpm report show`, `vnfpm threshold …` (SOL003 clause 6), with
//! tackerclient's columns.

use solgate_client::{ListQuery, PmResource};

use super::context::{Context, Outcome, read_json};
use crate::cli::{PmJob, PmReport, PmThreshold, Vnfpm};
use crate::output::{Column, record_columns};

/// tackerclient's `vnfpm job list` columns: the defaults, what the selectors add.
fn job_columns(query: &ListQuery) -> Vec<Column> {
    let mut attributes: Vec<String> = ["id", "objectType", "_links"].map(str::to_owned).to_vec();
    let complex = ["objectInstanceIds", "subObjectInstanceIds", "criteria", "reports"];
    attributes.extend(query.fields.iter().flat_map(|fields| fields.split(',').map(str::to_owned)));
    if let Some(excluded) = &query.exclude_fields {
        let excluded: Vec<&str> = excluded.split(',').collect();
        attributes.extend(complex.iter().filter(|f| !excluded.contains(f)).map(|f| (*f).to_owned()));
    }
    if query.all_fields {
        attributes.extend(complex.iter().map(|field| (*field).to_owned()));
    }
    if query.all_fields || query.exclude_default {
        attributes.push("callbackUri".to_owned());
    }
    let mut seen = std::collections::HashSet::new();
    attributes.retain(|attribute| seen.insert(attribute.clone()));
    attributes.iter().map(|attribute| Column::new(attribute)).collect()
}

impl Context {
    pub(super) async fn vnfpm(&self, command: Vnfpm) -> Outcome {
        match command {
            Vnfpm::Job { command } => self.pm_job(command).await,
            Vnfpm::Report { command: PmReport::Show { vnf_pm_job_id, vnf_pm_report_id } } => {
                let report = self.client.show_pm_report(&vnf_pm_job_id, &vnf_pm_report_id).await?;
                self.print(&report, vec![Column::new("entries")])
            }
            Vnfpm::Threshold { command } => self.pm_threshold(command).await,
        }
    }

    async fn pm_job(&self, command: PmJob) -> Outcome {
        let client = &self.client;
        let job = PmResource::Job;
        match command {
            PmJob::Create { param_file } => {
                let created = client.create_pm(job, read_json(&param_file)?).await?;
                self.print(&created, record_columns(&created))
            }
            PmJob::List { filter, all_fields, fields, exclude_fields, exclude_default } => {
                let query = ListQuery { filter, all_fields, fields, exclude_fields, exclude_default };
                let items = client.list_pm(job, &query).await?;
                self.print_list(&items, job_columns(&query))
            }
            PmJob::Show { vnf_pm_job_id } => {
                let shown = client.show_pm(job, &vnf_pm_job_id).await?;
                self.print(&shown, record_columns(&shown))
            }
            PmJob::Update { vnf_pm_job_id, param_file } => {
                let changed = client.update_pm(job, &vnf_pm_job_id, read_json(&param_file)?).await?;
                self.print(&changed, vec![Column::new("callbackUri")])
            }
            PmJob::Delete { vnf_pm_job_id } => {
                let delete = async |id: &str| client.delete_pm(job, id).await;
                self.delete_each("VNF PM job", &vnf_pm_job_id, delete).await
            }
        }
    }

    async fn pm_threshold(&self, command: PmThreshold) -> Outcome {
        let client = &self.client;
        let threshold = PmResource::Threshold;
        match command {
            PmThreshold::Create { param_file } => {
                let created = client.create_pm(threshold, read_json(&param_file)?).await?;
                self.print(&created, record_columns(&created))
            }
            PmThreshold::List { filter } => {
                let items = client.list_pm(threshold, &ListQuery { filter, ..ListQuery::default() }).await?;
                self.print_list(&items, ["id", "objectType", "_links"].iter().map(|a| Column::new(a)).collect())
            }
            PmThreshold::Show { vnf_pm_threshold_id } => {
                let shown = client.show_pm(threshold, &vnf_pm_threshold_id).await?;
                self.print(&shown, record_columns(&shown))
            }
            PmThreshold::Update { vnf_pm_threshold_id, param_file } => {
                let changed = client.update_pm(threshold, &vnf_pm_threshold_id, read_json(&param_file)?).await?;
                self.print(&changed, vec![Column::new("callbackUri")])
            }
            PmThreshold::Delete { vnf_pm_threshold_id } => {
                let delete = async |id: &str| client.delete_pm(threshold, id).await;
                self.delete_each("VNF PM threshold", &vnf_pm_threshold_id, delete).await
            }
        }
    }
}

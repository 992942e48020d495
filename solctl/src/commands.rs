//! What each command does.

use std::io::{IsTerminal, Write};
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};
use solgate_client::{Api, Client, ListQuery, OpAction, PmResource, VnfdFormat, WaitOptions};

use crate::Failure;
use crate::cli::{
    Alarm, Artifact, CancelMode, Cli, Command, FmSub, Format, OperateState, OperationalState, Package, PmJob, PmReport,
    PmThreshold, ScaleType, Subsc, TerminationType, Vim, Vnf, VnfdType, Vnffm, Vnflcm, Vnfpm, Wait,
};
use crate::output::{Column, Printer, record_columns, title_case};

type Outcome = Result<(), Failure>;

pub async fn run(cli: Cli) -> Outcome {
    let printer = Printer { format: cli.global.format, selected: cli.global.columns.clone() };
    if let Command::Completion { shell } = cli.command {
        let mut command = <Cli as clap::CommandFactory>::command();
        clap_complete::generate(shell, &mut command, "solctl", &mut std::io::stdout());
        return Ok(());
    }
    let config = crate::config::client_config(&cli.global).map_err(Failure::Usage)?;
    let client = Client::new(config)?;
    let context = Context { client, printer };
    let result = match cli.command {
        Command::Versions => context.versions().await,
        Command::Vnflcm { command } => context.vnflcm(command).await,
        Command::Vnf { command: Vnf::Package { command } } | Command::Package { command } => {
            context.package(command).await
        }
        Command::Vim { command } => context.vim(command).await,
        Command::Vnffm { command } => context.vnffm(command).await,
        Command::Vnfpm { command } => context.vnfpm(command).await,
        Command::Completion { .. } => Ok(()),
    };
    for deprecation in context.client.deprecations() {
        let sunset = deprecation.sunset.map(|date| format!(", to be retired {date}")).unwrap_or_default();
        eprintln!("WARNING: the server deprecates API version {}{sunset}", deprecation.version);
    }
    result
}

struct Context {
    client: Client,
    printer: Printer,
}

fn read_json(path: &Path) -> Result<Value, Failure> {
    let text = std::fs::read_to_string(path).map_err(|error| Failure::Usage(format!("{}: {error}", path.display())))?;
    serde_json::from_str(&text).map_err(|error| Failure::Usage(format!("{}: not JSON: {error}", path.display())))
}

fn read_object(path: &Path) -> Result<Map<String, Value>, Failure> {
    match read_json(path)? {
        Value::Object(map) => Ok(map),
        _ => Err(Failure::Usage(format!("{}: a JSON object is expected", path.display()))),
    }
}

fn key_values(pairs: &[String]) -> Result<Map<String, Value>, Failure> {
    pairs
        .iter()
        .map(|pair| match pair.split_once('=') {
            Some((key, value)) if !key.is_empty() => Ok((key.to_owned(), Value::String(value.to_owned()))),
            _ => Err(Failure::Usage(format!("'{pair}': KEY=VALUE expected"))),
        })
        .collect()
}

fn write_output(file: Option<&Path>, bytes: &[u8]) -> Result<(), Failure> {
    match file {
        Some(path) => {
            std::fs::write(path, bytes).map_err(|error| Failure::Usage(format!("{}: {error}", path.display())))
        }
        None => std::io::stdout().write_all(bytes).map_err(|error| Failure::Failed(error.to_string())),
    }
}

/// What a `--wait` expects the operation to end in.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Expect {
    Completed,
    RolledBack,
    /// A cancelled operation stops in FAILED_TEMP.
    FailedTemp,
}

impl Expect {
    fn state(self) -> &'static str {
        match self {
            Expect::Completed => "COMPLETED",
            Expect::RolledBack => "ROLLED_BACK",
            Expect::FailedTemp => "FAILED_TEMP",
        }
    }
}

fn describe_error(op: &Value) -> String {
    let error = &op["error"];
    if error.is_null() {
        return String::new();
    }
    let title = error["title"].as_str().unwrap_or("Error");
    let status = error["status"].as_u64().map(|status| format!(" ({status})")).unwrap_or_default();
    let detail = error["detail"].as_str().unwrap_or_default();
    format!(": {title}{status}: {detail}")
}

impl Context {
    fn print(&self, object: &Value, columns: Vec<Column>) -> Outcome {
        self.printer.record(&mut std::io::stdout().lock(), object, columns).map_err(Failure::Usage)
    }

    fn print_list(&self, items: &[Value], columns: Vec<Column>) -> Outcome {
        self.printer.list(&mut std::io::stdout().lock(), items, columns).map_err(Failure::Usage)
    }

    /// A message for people; left out with `-f json|yaml|value`, where stdout is data.
    fn say(&self, message: &str) {
        if self.printer.format == Format::Table {
            println!("{message}");
        }
    }

    /// Follows the occurrence of an accepted task until it settles; a progress line on a
    /// terminal, one line per state change otherwise (stderr either way).
    async fn wait_operation(
        &self,
        href: &str,
        since: Option<&str>,
        wait: Wait,
        expect: Expect,
    ) -> Result<Value, Failure> {
        let started = Instant::now();
        let tty = std::io::stderr().is_terminal();
        let bar = indicatif::ProgressBar::with_draw_target(None, indicatif::ProgressDrawTarget::stderr());
        if tty {
            bar.set_style(
                indicatif::ProgressStyle::with_template("{spinner} {msg} [{elapsed}]")
                    .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner()),
            );
            bar.enable_steady_tick(Duration::from_millis(120));
        }
        let mut last = String::new();
        let options = WaitOptions { timeout: Duration::from_secs(wait.timeout), poll: Duration::from_millis(300) };
        let result = self
            .client
            .wait_for_operation(href, since, options, |op| {
                let line = format!(
                    "{} {}: {}",
                    op["operation"].as_str().unwrap_or("operation"),
                    op["id"].as_str().unwrap_or(href),
                    op["operationState"].as_str().unwrap_or("?")
                );
                if tty {
                    bar.set_message(line);
                } else if line != last {
                    eprintln!("{line}");
                    last = line;
                }
            })
            .await;
        bar.finish_and_clear();
        let op = result?;
        let state = op["operationState"].as_str().unwrap_or("?");
        let summary = format!(
            "Operation {} {} ended {state} after {:.1} s",
            op["id"].as_str().unwrap_or(href),
            op["operation"].as_str().unwrap_or_default(),
            started.elapsed().as_secs_f64()
        );
        if state != expect.state() {
            return Err(Failure::Failed(format!("{summary}{}", describe_error(&op))));
        }
        self.say(&format!("{summary}."));
        Ok(op)
    }

    async fn after_task(&self, accepted: &solgate_client::Accepted, message: &str, wait: Wait) -> Outcome {
        let op = accepted.op_id().map(|id| format!(" (operation {id})")).unwrap_or_default();
        self.say(&format!("{message}{op}."));
        if wait.wait {
            let href = accepted.location.as_deref().ok_or_else(|| {
                Failure::Failed("the server named no operation occurrence (Location) to wait for".into())
            })?;
            let op = self.wait_operation(href, None, wait, Expect::Completed).await?;
            if self.printer.format != Format::Table {
                self.print(&op, op_columns(&op))?;
            }
        } else if self.printer.format != Format::Table {
            self.print(&json!({"id": accepted.op_id(), "location": accepted.location}), vec![Column::new("id")])?;
        }
        Ok(())
    }

    async fn versions(&self) -> Outcome {
        let mut rows = Vec::new();
        for api in Api::ALL {
            for &major in api.majors() {
                let offered = match self.client.api_versions(api, Some(major)).await {
                    Ok(offered) => offered,
                    Err(solgate_client::Error::Api(problem)) if problem.status == 404 => continue,
                    Err(error) => return Err(error.into()),
                };
                let uses = self.client.version(api, major).await.ok();
                for info in &offered.api_versions {
                    rows.push(json!({
                        "api": format!("{} v{major}", api.name()),
                        "uriPrefix": offered.uri_prefix,
                        "version": info.version,
                        "isDeprecated": info.is_deprecated,
                        "retirementDate": info.retirement_date.map(|date| date.to_rfc3339()),
                        "clientUses": uses.as_deref() == Some(info.version.as_str()),
                    }));
                }
            }
        }
        let columns = vec![
            Column::titled("api", "API"),
            Column::titled("uriPrefix", "URI Prefix"),
            Column::titled("version", "Version"),
            Column::titled("isDeprecated", "Deprecated"),
            Column::titled("retirementDate", "Retirement Date"),
            Column::titled("clientUses", "Client Uses"),
        ];
        self.print_list(&rows, columns)
    }

    async fn vnflcm(&self, command: Vnflcm) -> Outcome {
        let client = &self.client;
        match command {
            Vnflcm::Versions { major_version } => {
                if major_version.is_some_and(|major| !matches!(major, 1 | 2)) {
                    return Err(Failure::Usage("--major-version is 1 or 2".into()));
                }
                let versions = client.api_versions(Api::Vnflcm, major_version).await?;
                let value = serde_json::to_value(&versions).map_err(|error| Failure::Failed(error.to_string()))?;
                self.print(
                    &value,
                    vec![Column::titled("uriPrefix", "uriPrefix"), Column::titled("apiVersions", "apiVersions")],
                )
            }
            Vnflcm::Create { vnfd_id, name, description, instantiate, wait } => {
                let request = instantiate.as_deref().map(read_json).transpose()?;
                let mut body = json!({"vnfdId": vnfd_id});
                if let Some(name) = name {
                    body["vnfInstanceName"] = json!(name);
                }
                if let Some(description) = description {
                    body["vnfInstanceDescription"] = json!(description);
                }
                let instance = client.create_instance(body).await?;
                let id = instance["id"].as_str().unwrap_or_default().to_owned();
                self.print(&instance, instance_columns(&instance))?;
                if let Some(request) = request {
                    let accepted = client.instance_task(&id, "instantiate", request).await?;
                    let message = format!("VNF Instance {id} is created and instantiation request has been accepted");
                    self.after_task(&accepted, &message, wait).await?;
                }
                Ok(())
            }
            Vnflcm::List { filter } => {
                let items = client.list_instances(&ListQuery { filter, ..ListQuery::default() }).await?;
                let columns = [
                    "id",
                    "vnfInstanceName",
                    "instantiationState",
                    "vnfProvider",
                    "vnfSoftwareVersion",
                    "vnfProductName",
                    "vnfdId",
                ];
                self.print_list(&items, columns.iter().map(|name| Column::new(name)).collect())
            }
            Vnflcm::Show { vnf_instance } => {
                let instance = client.show_instance(&vnf_instance).await?;
                self.print(&instance, instance_columns(&instance))
            }
            Vnflcm::Update { vnf_instance, param_file, if_match, wait } => {
                let body = Value::Object(read_object(&param_file)?);
                let accepted = client.modify_instance(&vnf_instance, body, if_match.as_deref()).await?;
                self.after_task(&accepted, &format!("Update vnf:{vnf_instance}"), wait).await
            }
            Vnflcm::Instantiate { vnf_instance, param_file, wait } => {
                let body = read_json(&param_file)?;
                let accepted = client.instance_task(&vnf_instance, "instantiate", body).await?;
                let message = format!("Instantiate request for VNF Instance {vnf_instance} has been accepted");
                self.after_task(&accepted, &message, wait).await
            }
            Vnflcm::Terminate { vnf_instance, termination_type, graceful_termination_timeout, delete, wait } => {
                if graceful_termination_timeout.is_some() && termination_type == Some(TerminationType::Forceful) {
                    return Err(Failure::Usage(
                        "--graceful-termination-timeout applies to --termination-type GRACEFUL only".into(),
                    ));
                }
                let mut body = json!({"terminationType": match termination_type {
                    Some(TerminationType::Forceful) => "FORCEFUL",
                    _ => "GRACEFUL",
                }});
                if let Some(seconds) = graceful_termination_timeout {
                    body["gracefulTerminationTimeout"] = json!(seconds);
                }
                let accepted = client.instance_task(&vnf_instance, "terminate", body).await?;
                let message = format!("Terminate request for VNF Instance '{vnf_instance}' has been accepted");
                // --D waits for the termination whether or not --wait was given.
                let wait = if delete { Wait { wait: true, ..wait } } else { wait };
                self.after_task(&accepted, &message, wait).await?;
                if delete {
                    client.delete_instance(&vnf_instance).await?;
                    self.say(&format!("VNF Instance '{vnf_instance}' is deleted successfully"));
                }
                Ok(())
            }
            Vnflcm::Scale { vnf_instance, scale_type, aspect_id, number_of_steps, additional_param_file, wait } => {
                let mut body = additional_param_file.as_deref().map(read_object).transpose()?.unwrap_or_default();
                body.insert(
                    "type".into(),
                    json!(match scale_type {
                        ScaleType::ScaleOut => "SCALE_OUT",
                        ScaleType::ScaleIn => "SCALE_IN",
                    }),
                );
                body.insert("aspectId".into(), json!(aspect_id));
                if let Some(steps) = number_of_steps {
                    body.insert("numberOfSteps".into(), json!(steps));
                }
                let accepted = client.instance_task(&vnf_instance, "scale", Value::Object(body)).await?;
                let message = format!("Scale request for VNF Instance {vnf_instance} has been accepted");
                self.after_task(&accepted, &message, wait).await
            }
            Vnflcm::Heal { vnf_instance, cause, vnfc_instance, additional_param_file, wait } => {
                let mut body = additional_param_file.as_deref().map(read_object).transpose()?.unwrap_or_default();
                if let Some(cause) = cause {
                    body.insert("cause".into(), json!(cause));
                }
                if !vnfc_instance.is_empty() {
                    body.insert("vnfcInstanceId".into(), json!(vnfc_instance));
                }
                let accepted = client.instance_task(&vnf_instance, "heal", Value::Object(body)).await?;
                let message = format!("Heal request for VNF Instance {vnf_instance} has been accepted");
                self.after_task(&accepted, &message, wait).await
            }
            Vnflcm::ScaleToLevel { vnf_instance, param_file, wait } => {
                let accepted = client.instance_task(&vnf_instance, "scale_to_level", read_json(&param_file)?).await?;
                let message = format!("Scale to level request for VNF Instance {vnf_instance} has been accepted");
                self.after_task(&accepted, &message, wait).await
            }
            Vnflcm::ChangeFlavour { vnf_instance, param_file, wait } => {
                let accepted = client.instance_task(&vnf_instance, "change_flavour", read_json(&param_file)?).await?;
                let message = format!("Change flavour request for VNF Instance {vnf_instance} has been accepted");
                self.after_task(&accepted, &message, wait).await
            }
            Vnflcm::Operate { vnf_instance, change_state_to, stop_type, graceful_stop_timeout, wait } => {
                let mut body = json!({"changeStateTo": match change_state_to {
                    OperateState::Started => "STARTED",
                    OperateState::Stopped => "STOPPED",
                }});
                if let Some(stop_type) = stop_type {
                    body["stopType"] = json!(match stop_type {
                        TerminationType::Graceful => "GRACEFUL",
                        TerminationType::Forceful => "FORCEFUL",
                    });
                }
                if let Some(seconds) = graceful_stop_timeout {
                    body["gracefulStopTimeout"] = json!(seconds);
                }
                let accepted = client.instance_task(&vnf_instance, "operate", body).await?;
                let message = format!("Operate request for VNF Instance {vnf_instance} has been accepted");
                self.after_task(&accepted, &message, wait).await
            }
            Vnflcm::ChangeExtConn { vnf_instance, param_file, wait } => {
                let accepted = client.instance_task(&vnf_instance, "change_ext_conn", read_json(&param_file)?).await?;
                let message =
                    format!("Change External VNF Connectivity for VNF Instance {vnf_instance} has been accepted");
                self.after_task(&accepted, &message, wait).await
            }
            Vnflcm::ChangeVnfpkg { vnf_instance, param_file, wait } => {
                if client.lcm_major() == 1 {
                    return Err(Failure::Usage("change-vnfpkg is a VNF LCM v2 operation: use --api-version 2".into()));
                }
                let accepted = client.instance_task(&vnf_instance, "change_vnfpkg", read_json(&param_file)?).await?;
                let message = format!("Change Current VNF Package for VNF Instance {vnf_instance} has been accepted");
                self.after_task(&accepted, &message, wait).await
            }
            Vnflcm::Delete { vnf_instance } => {
                let mut failures = Vec::new();
                for id in &vnf_instance {
                    if let Err(error) = client.delete_instance(id).await {
                        failures.push(format!("{id}: {}", Failure::from(error)));
                    }
                }
                delete_summary(self, "VNF instance", &vnf_instance, &failures)
            }
            Vnflcm::Op { command } => self.op(command).await,
            Vnflcm::Subsc { command } => self.subsc(command).await,
        }
    }

    async fn op(&self, command: crate::cli::Op) -> Outcome {
        use crate::cli::Op;
        let client = &self.client;
        match command {
            Op::List { filter, fields, exclude_fields } => {
                let query = ListQuery { filter, fields: fields.clone(), exclude_fields, ..ListQuery::default() };
                let items = client.list_operations(&query).await?;
                let mut columns: Vec<Column> = ["id", "operationState", "vnfInstanceId", "operation"]
                    .iter()
                    .map(|name| Column::new(name))
                    .collect();
                for field in fields.iter().flat_map(|fields| fields.split(',')) {
                    let attribute = field.split('/').next().unwrap_or(field);
                    if !columns.iter().any(|column| column.attribute == attribute) {
                        columns.push(Column::new(attribute));
                    }
                }
                self.print_list(&items, columns)
            }
            Op::Show { vnf_lcm_op_occ_id } => {
                let op = client.show_operation(&vnf_lcm_op_occ_id).await?;
                self.print(&op, op_columns(&op))
            }
            Op::Retry { vnf_lcm_op_occ_id, wait } => {
                self.op_task(&vnf_lcm_op_occ_id, OpAction::Retry, None, wait, Expect::Completed, "Retry").await
            }
            Op::Rollback { vnf_lcm_op_occ_id, wait } => {
                self.op_task(&vnf_lcm_op_occ_id, OpAction::Rollback, None, wait, Expect::RolledBack, "Rollback").await
            }
            Op::Cancel { vnf_lcm_op_occ_id, cancel_mode, wait } => {
                let mode = match cancel_mode {
                    CancelMode::Graceful => "GRACEFUL",
                    CancelMode::Forceful => "FORCEFUL",
                };
                let body = Some(json!({"cancelMode": mode}));
                self.op_task(&vnf_lcm_op_occ_id, OpAction::Cancel, body, wait, Expect::FailedTemp, "Cancel").await
            }
            Op::Fail { vnf_lcm_op_occ_id } => {
                let op = match client.operation_task(&vnf_lcm_op_occ_id, OpAction::Fail, None).await? {
                    Some(op) => op,
                    None => client.show_operation(&vnf_lcm_op_occ_id).await?,
                };
                self.print(&op, op_columns(&op))
            }
        }
    }

    async fn op_task(
        &self,
        id: &str,
        action: OpAction,
        body: Option<Value>,
        wait: Wait,
        expect: Expect,
        what: &str,
    ) -> Outcome {
        // The state before: after the request the occurrence keeps it until the conductor
        // takes the request up, so the wait looks for a state entered later.
        let since = if wait.wait && action != OpAction::Cancel {
            self.client.show_operation(id).await?["stateEnteredTime"].as_str().map(str::to_owned)
        } else {
            None
        };
        self.client.operation_task(id, action, body).await?;
        self.say(&format!("{what} request for LCM operation {id} has been accepted"));
        if wait.wait {
            let op = self.wait_operation(id, since.as_deref(), wait, expect).await?;
            if self.printer.format != Format::Table {
                self.print(&op, op_columns(&op))?;
            }
        }
        Ok(())
    }

    /// `vnffm alarm …` and `vnffm sub …`, with tackerclient's columns.
    async fn vnffm(&self, command: Vnffm) -> Outcome {
        let client = &self.client;
        match command {
            Vnffm::Alarm { command: Alarm::List { filter } } => {
                let items = client.list_alarms(&ListQuery { filter, ..ListQuery::default() }).await?;
                let columns = ["id", "managedObjectId", "ackState", "eventType", "perceivedSeverity", "probableCause"];
                self.print_list(&items, columns.iter().map(|attribute| Column::new(attribute)).collect())
            }
            Vnffm::Alarm { command: Alarm::Show { alarm_id } } => {
                let alarm = client.show_alarm(&alarm_id).await?;
                self.print(&alarm, record_columns(&alarm))
            }
            Vnffm::Alarm { command: Alarm::Update { alarm_id, ack_state } } => {
                let changed = client.update_alarm(&alarm_id, ack_state.as_str()).await?;
                self.print(&changed, vec![Column::new("ackState")])
            }
            Vnffm::Sub { command: FmSub::Create { param_file } } => {
                let subscription = client.create_fm_subscription(read_json(&param_file)?).await?;
                self.print(&subscription, record_columns(&subscription))
            }
            Vnffm::Sub { command: FmSub::List { filter } } => {
                let items = client.list_fm_subscriptions(&ListQuery { filter, ..ListQuery::default() }).await?;
                self.print_list(&items, vec![Column::new("id"), Column::new("callbackUri")])
            }
            Vnffm::Sub { command: FmSub::Show { subscription_id } } => {
                let subscription = client.show_fm_subscription(&subscription_id).await?;
                self.print(&subscription, record_columns(&subscription))
            }
            Vnffm::Sub { command: FmSub::Delete { subscription_id } } => {
                let mut failures = Vec::new();
                for id in &subscription_id {
                    if let Err(error) = client.delete_fm_subscription(id).await {
                        failures.push(format!("{id}: {}", Failure::from(error)));
                    }
                }
                delete_summary(self, "VNF FM subscription", &subscription_id, &failures)
            }
        }
    }

    /// `vnfpm job …`, `vnfpm report show`, `vnfpm threshold …`, with tackerclient's columns.
    async fn vnfpm(&self, command: Vnfpm) -> Outcome {
        let client = &self.client;
        let job = PmResource::Job;
        let threshold = PmResource::Threshold;
        match command {
            Vnfpm::Job { command: PmJob::Create { param_file } } => {
                let created = client.create_pm(job, read_json(&param_file)?).await?;
                self.print(&created, record_columns(&created))
            }
            Vnfpm::Job { command: PmJob::List { filter, all_fields, fields, exclude_fields, exclude_default } } => {
                let query = ListQuery {
                    filter,
                    all_fields,
                    fields: fields.clone(),
                    exclude_fields: exclude_fields.clone(),
                    exclude_default,
                };
                let items = client.list_pm(job, &query).await?;
                // tackerclient's columns: the defaults, what the selectors add.
                let mut attributes: Vec<String> = ["id", "objectType", "_links"].map(str::to_owned).to_vec();
                let complex = ["objectInstanceIds", "subObjectInstanceIds", "criteria", "reports"];
                attributes.extend(fields.iter().flat_map(|fields| fields.split(',').map(str::to_owned)));
                if let Some(excluded) = &exclude_fields {
                    let excluded: Vec<&str> = excluded.split(',').collect();
                    attributes.extend(complex.iter().filter(|f| !excluded.contains(f)).map(|f| (*f).to_owned()));
                }
                if all_fields {
                    attributes.extend(complex.iter().map(|field| (*field).to_owned()));
                }
                if all_fields || exclude_default {
                    attributes.push("callbackUri".to_owned());
                }
                let mut seen = std::collections::HashSet::new();
                attributes.retain(|attribute| seen.insert(attribute.clone()));
                self.print_list(&items, attributes.iter().map(|attribute| Column::new(attribute)).collect())
            }
            Vnfpm::Job { command: PmJob::Show { vnf_pm_job_id } } => {
                let shown = client.show_pm(job, &vnf_pm_job_id).await?;
                self.print(&shown, record_columns(&shown))
            }
            Vnfpm::Job { command: PmJob::Update { vnf_pm_job_id, param_file } } => {
                let changed = client.update_pm(job, &vnf_pm_job_id, read_json(&param_file)?).await?;
                self.print(&changed, vec![Column::new("callbackUri")])
            }
            Vnfpm::Job { command: PmJob::Delete { vnf_pm_job_id } } => {
                let mut failures = Vec::new();
                for id in &vnf_pm_job_id {
                    if let Err(error) = client.delete_pm(job, id).await {
                        failures.push(format!("{id}: {}", Failure::from(error)));
                    }
                }
                delete_summary(self, "VNF PM job", &vnf_pm_job_id, &failures)
            }
            Vnfpm::Report { command: PmReport::Show { vnf_pm_job_id, vnf_pm_report_id } } => {
                let report = client.show_pm_report(&vnf_pm_job_id, &vnf_pm_report_id).await?;
                self.print(&report, vec![Column::new("entries")])
            }
            Vnfpm::Threshold { command: PmThreshold::Create { param_file } } => {
                let created = client.create_pm(threshold, read_json(&param_file)?).await?;
                self.print(&created, record_columns(&created))
            }
            Vnfpm::Threshold { command: PmThreshold::List { filter } } => {
                let items = client.list_pm(threshold, &ListQuery { filter, ..ListQuery::default() }).await?;
                self.print_list(&items, ["id", "objectType", "_links"].iter().map(|a| Column::new(a)).collect())
            }
            Vnfpm::Threshold { command: PmThreshold::Show { vnf_pm_threshold_id } } => {
                let shown = client.show_pm(threshold, &vnf_pm_threshold_id).await?;
                self.print(&shown, record_columns(&shown))
            }
            Vnfpm::Threshold { command: PmThreshold::Update { vnf_pm_threshold_id, param_file } } => {
                let changed = client.update_pm(threshold, &vnf_pm_threshold_id, read_json(&param_file)?).await?;
                self.print(&changed, vec![Column::new("callbackUri")])
            }
            Vnfpm::Threshold { command: PmThreshold::Delete { vnf_pm_threshold_id } } => {
                let mut failures = Vec::new();
                for id in &vnf_pm_threshold_id {
                    if let Err(error) = client.delete_pm(threshold, id).await {
                        failures.push(format!("{id}: {}", Failure::from(error)));
                    }
                }
                delete_summary(self, "VNF PM threshold", &vnf_pm_threshold_id, &failures)
            }
        }
    }

    async fn subsc(&self, command: Subsc) -> Outcome {
        let client = &self.client;
        let columns = |object: &Value| record_columns(object);
        match command {
            Subsc::Create { param_file } => {
                let subscription = client.create_subscription(read_json(&param_file)?).await?;
                self.print(&subscription, columns(&subscription))
            }
            Subsc::List { filter } => {
                let items = client.list_subscriptions(&ListQuery { filter, ..ListQuery::default() }).await?;
                self.print_list(&items, vec![Column::new("id"), Column::new("callbackUri")])
            }
            Subsc::Show { subscription_id } => {
                let subscription = client.show_subscription(&subscription_id).await?;
                self.print(&subscription, columns(&subscription))
            }
            Subsc::Delete { subscription_id } => {
                let mut failures = Vec::new();
                for id in &subscription_id {
                    if let Err(error) = client.delete_subscription(id).await {
                        failures.push(format!("{id}: {}", Failure::from(error)));
                    }
                }
                delete_summary(self, "Lccn Subscription", &subscription_id, &failures)
            }
        }
    }

    async fn package(&self, command: Package) -> Outcome {
        let client = &self.client;
        match command {
            Package::Create { user_data } => {
                let mut body = json!({});
                if !user_data.is_empty() {
                    body["userDefinedData"] = Value::Object(key_values(&user_data)?);
                }
                let package = client.create_package(body).await?;
                self.print(&package, record_columns(&package))
            }
            Package::List { filter, all_fields, fields, exclude_fields, exclude_default } => {
                let query = ListQuery {
                    filter,
                    all_fields,
                    fields: fields.clone(),
                    exclude_fields: exclude_fields.clone(),
                    exclude_default,
                };
                let items = client.list_packages(&query).await?;
                let mut attributes: Vec<String> =
                    ["id", "vnfProductName", "onboardingState", "usageState", "operationalState", "_links"]
                        .map(str::to_owned)
                        .to_vec();
                let complex = ["checksum", "softwareImages", "userDefinedData", "additionalArtifacts"];
                let simple = ["vnfdVersion", "vnfProvider", "vnfSoftwareVersion", "vnfdId"];
                attributes.extend(fields.iter().flat_map(|fields| fields.split(',').map(str::to_owned)));
                if let Some(excluded) = &exclude_fields {
                    let excluded: Vec<&str> = excluded.split(',').collect();
                    attributes
                        .extend(complex.iter().filter(|field| !excluded.contains(field)).map(|f| (*f).to_owned()));
                }
                if all_fields {
                    attributes.extend(complex.iter().chain(simple.iter()).map(|field| (*field).to_owned()));
                } else if exclude_default {
                    attributes.extend(simple.iter().map(|field| (*field).to_owned()));
                }
                let mut columns: Vec<Column> = Vec::new();
                for attribute in attributes {
                    if !columns.iter().any(|column| column.attribute == attribute) {
                        columns.push(Column::titled(&attribute, &title_case(&attribute)));
                    }
                }
                self.print_list(&items, columns)
            }
            Package::Show { vnf_package } => {
                let package = client.show_package(&vnf_package).await?;
                self.print(&package, record_columns(&package))
            }
            Package::Upload { vnf_package, path, url, user_name, password, wait } => {
                match (path, url) {
                    (Some(path), _) => {
                        let bytes = std::fs::read(&path)
                            .map_err(|error| Failure::Usage(format!("{}: {error}", path.display())))?;
                        client.upload_package(&vnf_package, bytes).await?;
                    }
                    (None, Some(url)) => {
                        let mut body = json!({"addressInformation": url});
                        if let Some(user_name) = user_name {
                            body["userName"] = json!(user_name);
                        }
                        if let Some(password) = password {
                            body["password"] = json!(password);
                        }
                        client.upload_package_from_uri(&vnf_package, body).await?;
                    }
                    (None, None) => return Err(Failure::Usage("--path or --url is required".into())),
                }
                self.say(&format!("Upload request for VNF package {vnf_package} has been accepted."));
                if wait.wait {
                    let package = self.wait_onboarded(&vnf_package, wait.timeout).await?;
                    if self.printer.format != Format::Table {
                        self.print(&package, record_columns(&package))?;
                    }
                }
                Ok(())
            }
            Package::Download { vnf_package, file, vnfd, vnfd_type } => {
                let content = if vnfd {
                    let format = match vnfd_type {
                        VnfdType::TextPlain => VnfdFormat::TextPlain,
                        VnfdType::Zip => VnfdFormat::Zip,
                        VnfdType::Both => VnfdFormat::Both,
                    };
                    client.download_vnfd(&vnf_package, format).await?
                } else {
                    client.download_package(&vnf_package).await?
                };
                write_output(file.as_deref(), &content.bytes)
            }
            Package::Artifact { command: Artifact::Download { vnf_package, artifact_path, file } } => {
                let content = client.download_artifact(&vnf_package, &artifact_path).await?;
                write_output(file.as_deref(), &content.bytes)
            }
            Package::Update { vnf_package, operational_state, user_data } => {
                let mut body = json!({});
                if let Some(state) = operational_state {
                    body["operationalState"] = json!(match state {
                        OperationalState::Enabled => "ENABLED",
                        OperationalState::Disabled => "DISABLED",
                    });
                }
                if !user_data.is_empty() {
                    body["userDefinedData"] = Value::Object(key_values(&user_data)?);
                }
                if body.as_object().is_some_and(Map::is_empty) {
                    return Err(Failure::Usage("give --operational-state or --user-data".into()));
                }
                let modifications = client.update_package(&vnf_package, body).await?;
                self.print(&modifications, record_columns(&modifications))
            }
            Package::Delete { vnf_package } => {
                let mut failures = Vec::new();
                for id in &vnf_package {
                    if let Err(error) = client.delete_package(id).await {
                        failures.push(format!("{id}: {}", Failure::from(error)));
                    }
                }
                delete_summary(self, "VNF package", &vnf_package, &failures)
            }
            Package::Onboard { source, user_data, timeout } => {
                let bytes = if source.is_dir() {
                    solgate_client::zip_directory(&source)?
                } else {
                    std::fs::read(&source).map_err(|error| Failure::Usage(format!("{}: {error}", source.display())))?
                };
                let mut body = json!({});
                if !user_data.is_empty() {
                    body["userDefinedData"] = Value::Object(key_values(&user_data)?);
                }
                let created = client.create_package(body).await?;
                let id = created["id"]
                    .as_str()
                    .ok_or_else(|| Failure::Failed(format!("the created package has no id: {created}")))?
                    .to_owned();
                client.upload_package(&id, bytes).await?;
                let package = self.wait_onboarded(&id, timeout).await?;
                self.print(&package, record_columns(&package))
            }
        }
    }

    async fn wait_onboarded(&self, id: &str, timeout: u64) -> Result<Value, Failure> {
        let tty = std::io::stderr().is_terminal();
        let bar = indicatif::ProgressBar::with_draw_target(None, indicatif::ProgressDrawTarget::stderr());
        if tty {
            bar.enable_steady_tick(Duration::from_millis(120));
        }
        let mut last = String::new();
        let result = self
            .client
            .wait_for_onboarding(id, Duration::from_secs(timeout), Duration::from_millis(300), |state| {
                let line = format!("VNF package {id}: {state}");
                if tty {
                    bar.set_message(line);
                } else if line != last {
                    eprintln!("{line}");
                    last = line;
                }
            })
            .await;
        bar.finish_and_clear();
        Ok(result?)
    }
}

/// The `vim` part of a register/set body from the YAML python-tackerclient's
/// `--config-file` takes: `auth_url`, `auth_cred`, `vim_project` and `type`.
fn vim_from_config(path: &Path) -> Result<Map<String, Value>, Failure> {
    let text = std::fs::read_to_string(path).map_err(|error| Failure::Usage(format!("{}: {error}", path.display())))?;
    let config: Value =
        serde_yaml_ng::from_str(&text).map_err(|error| Failure::Usage(format!("{}: {error}", path.display())))?;
    let text_of = |key: &str| {
        config.get(key).and_then(|value| match value {
            Value::String(text) => Some(text.clone()),
            Value::Bool(flag) => Some(if *flag { "True".into() } else { "False".into() }),
            Value::Number(number) => Some(number.to_string()),
            _ => None,
        })
    };
    let auth_url =
        text_of("auth_url").ok_or_else(|| Failure::Usage(format!("{}: auth_url is required", path.display())))?;
    let kind = text_of("type").unwrap_or_else(|| "openstack".into());
    let mut cred = Map::new();
    let mut project = Map::new();
    if kind == "kubernetes" {
        for key in
            ["bearer_token", "username", "password", "ssl_ca_cert", "oidc_token_url", "client_id", "client_secret"]
        {
            if let Some(value) = text_of(key) {
                cred.insert(key.into(), json!(value));
            }
        }
        project.insert("name".into(), json!(text_of("project_name").unwrap_or_else(|| "default".into())));
    } else {
        for key in ["username", "password"] {
            cred.insert(
                key.into(),
                json!(text_of(key).ok_or_else(|| Failure::Usage(format!("{}: {key} is required", path.display())))?),
            );
        }
        cred.insert("user_domain_name".into(), json!(text_of("user_domain_name").unwrap_or_else(|| "Default".into())));
        cred.insert("cert_verify".into(), json!(text_of("cert_verify").unwrap_or_else(|| "True".into())));
        project.insert("name".into(), json!(text_of("project_name").unwrap_or_default()));
        project.insert(
            "project_domain_name".into(),
            json!(text_of("project_domain_name").unwrap_or_else(|| "Default".into())),
        );
    }
    let mut vim = Map::new();
    vim.insert("type".into(), json!(kind));
    vim.insert("auth_url".into(), json!(auth_url));
    vim.insert("auth_cred".into(), Value::Object(cred));
    vim.insert("vim_project".into(), Value::Object(project));
    Ok(vim)
}

impl Context {
    async fn vim(&self, command: Vim) -> Outcome {
        let client = &self.client;
        match command {
            Vim::Register { name, config_file, description, is_default } => {
                let mut vim = vim_from_config(&config_file)?;
                vim.insert("name".into(), json!(name));
                vim.insert("is_default".into(), json!(is_default));
                if let Some(description) = description {
                    vim.insert("description".into(), json!(description));
                }
                let registered = client.register_vim(Value::Object(vim)).await?;
                self.print(&registered, record_columns(&registered))
            }
            Vim::List => {
                let vims = client.list_vims().await?;
                // python-tackerclient's `vim list` columns.
                let columns = [
                    ("id", "ID"),
                    ("name", "Name"),
                    ("tenant_id", "Tenant_id"),
                    ("type", "Type"),
                    ("is_default", "Is Default"),
                    ("status", "Status"),
                ]
                .iter()
                .map(|(attribute, title)| Column::titled(attribute, title))
                .collect();
                self.print_list(&vims, columns)
            }
            Vim::Show { vim } => {
                let shown = client.show_vim(&vim).await?;
                self.print(&shown, record_columns(&shown))
            }
            Vim::Set { vim, name, description, is_default, config_file } => {
                let mut changes = match &config_file {
                    Some(path) => {
                        let mut config = vim_from_config(path)?;
                        // type and auth_url cannot change: only the credentials are sent.
                        config.retain(|key, _| key == "auth_cred" || key == "vim_project");
                        config
                    }
                    None => Map::new(),
                };
                if let Some(name) = name {
                    changes.insert("name".into(), json!(name));
                }
                if let Some(description) = description {
                    changes.insert("description".into(), json!(description));
                }
                if let Some(is_default) = is_default {
                    changes.insert("is_default".into(), json!(is_default));
                }
                if changes.is_empty() {
                    return Err(Failure::Usage(
                        "nothing to change: give --name, --description, --is-default or --config-file".into(),
                    ));
                }
                let updated = client.update_vim(&vim, Value::Object(changes)).await?;
                self.print(&updated, record_columns(&updated))
            }
            Vim::Delete { vim } => {
                let mut failures = Vec::new();
                for id in &vim {
                    if let Err(error) = client.delete_vim(id).await {
                        failures.push(format!("{id}: {}", Failure::from(error)));
                    }
                }
                delete_summary(self, "VIM", &vim, &failures)
            }
        }
    }
}

fn delete_summary(context: &Context, what: &str, ids: &[String], failures: &[String]) -> Outcome {
    if failures.is_empty() {
        match ids {
            [one] => context.say(&format!("{what} '{one}' is deleted successfully")),
            _ => context.say(&format!("All specified {what}s are deleted successfully")),
        }
        return Ok(());
    }
    let deleted = ids.len() - failures.len();
    Err(Failure::Failed(format!(
        "failed to delete {} of {} {what}(s) ({deleted} deleted):\n  {}",
        failures.len(),
        ids.len(),
        failures.join("\n  ")
    )))
}

/// tackerclient's show columns of an instance: `instantiatedVnfInfo` only when
/// INSTANTIATED; every other attribute it has.
fn instance_columns(instance: &Value) -> Vec<Column> {
    let mut columns = record_columns(instance);
    if instance["instantiationState"] != "INSTANTIATED" {
        columns.retain(|column| column.attribute != "instantiatedVnfInfo");
    }
    columns
}

fn op_columns(op: &Value) -> Vec<Column> {
    record_columns(op)
}

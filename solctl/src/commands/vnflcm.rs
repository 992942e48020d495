//! `solctl vnflcm …`: VNF instances and their tasks (SOL003 clause 5.4); `op` and `subsc`
//! live in their own modules.

use std::path::Path;

use serde_json::{Map, Value, json};
use solgate_client::records::{CreateVnfRequest, InstanceView, OperateVnfRequest, TerminateVnfRequest, to_body};
use solgate_client::{Api, ListQuery};

use super::context::{Context, Outcome, instance_columns, read_json, read_object};
use crate::Failure;
use crate::cli::{OperateState, ScaleType, TerminationType, Vnflcm, Wait};
use crate::output::Column;

const LIST_COLUMNS: [&str; 7] =
    ["id", "vnfInstanceName", "instantiationState", "vnfProvider", "vnfSoftwareVersion", "vnfProductName", "vnfdId"];

fn termination(kind: TerminationType) -> String {
    match kind {
        TerminationType::Graceful => "GRACEFUL",
        TerminationType::Forceful => "FORCEFUL",
    }
    .to_owned()
}

/// A task resource of a VNF instance (SOL003 clauses 5.4.4 to 5.4.11): its path segment,
/// and what tackerclient says when the server accepted it.
#[derive(Clone, Copy)]
enum Task {
    Instantiate,
    Scale,
    ScaleToLevel,
    ChangeFlavour,
    Heal,
    Operate,
    ChangeExtConn,
    ChangeVnfpkg,
    Terminate,
}

impl Task {
    fn segment(self) -> &'static str {
        match self {
            Task::Instantiate => "instantiate",
            Task::Scale => "scale",
            Task::ScaleToLevel => "scale_to_level",
            Task::ChangeFlavour => "change_flavour",
            Task::Heal => "heal",
            Task::Operate => "operate",
            Task::ChangeExtConn => "change_ext_conn",
            Task::ChangeVnfpkg => "change_vnfpkg",
            Task::Terminate => "terminate",
        }
    }

    fn accepted(self, id: &str) -> String {
        let what = match self {
            Task::Instantiate => "Instantiate request for",
            Task::Scale => "Scale request for",
            Task::ScaleToLevel => "Scale to level request for",
            Task::ChangeFlavour => "Change flavour request for",
            Task::Heal => "Heal request for",
            Task::Operate => "Operate request for",
            Task::ChangeExtConn => "Change External VNF Connectivity for",
            Task::ChangeVnfpkg => "Change Current VNF Package for",
            Task::Terminate => return format!("Terminate request for VNF Instance '{id}' has been accepted"),
        };
        format!("{what} VNF Instance {id} has been accepted")
    }
}

impl Context {
    pub(super) async fn vnflcm(&self, command: Vnflcm) -> Outcome {
        let client = &self.client;
        match command {
            Vnflcm::Versions { major_version } => self.lcm_versions(major_version).await,
            Vnflcm::Create { vnfd_id, name, description, instantiate, wait } => {
                let request =
                    CreateVnfRequest { vnfd_id, vnf_instance_name: name, vnf_instance_description: description };
                self.create_instance(request, instantiate.as_deref(), wait).await
            }
            Vnflcm::List { filter } => {
                let items = client.list_instances(&ListQuery { filter, ..ListQuery::default() }).await?;
                self.print_list(&items, LIST_COLUMNS.iter().map(|name| Column::new(name)).collect())
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
                self.file_task(&vnf_instance, Task::Instantiate, &param_file, wait).await
            }
            Vnflcm::Terminate { vnf_instance, termination_type, graceful_termination_timeout, delete, wait } => {
                self.terminate(&vnf_instance, termination_type, graceful_termination_timeout, delete, wait).await
            }
            Vnflcm::Scale { vnf_instance, scale_type, aspect_id, number_of_steps, additional_param_file, wait } => {
                let body = additional_param_file.as_deref().map(read_object).transpose()?.unwrap_or_default();
                self.scale(&vnf_instance, body, scale_type, aspect_id, number_of_steps, wait).await
            }
            Vnflcm::Heal { vnf_instance, cause, vnfc_instance, additional_param_file, wait } => {
                let mut body = additional_param_file.as_deref().map(read_object).transpose()?.unwrap_or_default();
                if let Some(cause) = cause {
                    body.insert("cause".into(), json!(cause));
                }
                if !vnfc_instance.is_empty() {
                    body.insert("vnfcInstanceId".into(), json!(vnfc_instance));
                }
                self.body_task(&vnf_instance, Task::Heal, Value::Object(body), wait).await
            }
            Vnflcm::ScaleToLevel { vnf_instance, param_file, wait } => {
                self.file_task(&vnf_instance, Task::ScaleToLevel, &param_file, wait).await
            }
            Vnflcm::ChangeFlavour { vnf_instance, param_file, wait } => {
                self.file_task(&vnf_instance, Task::ChangeFlavour, &param_file, wait).await
            }
            Vnflcm::Operate { vnf_instance, change_state_to, stop_type, graceful_stop_timeout, wait } => {
                let request = OperateVnfRequest {
                    change_state_to: match change_state_to {
                        OperateState::Started => "STARTED",
                        OperateState::Stopped => "STOPPED",
                    }
                    .to_owned(),
                    stop_type: stop_type.map(termination),
                    graceful_stop_timeout,
                };
                self.body_task(&vnf_instance, Task::Operate, to_body(&request), wait).await
            }
            Vnflcm::ChangeExtConn { vnf_instance, param_file, wait } => {
                self.file_task(&vnf_instance, Task::ChangeExtConn, &param_file, wait).await
            }
            Vnflcm::ChangeVnfpkg { vnf_instance, param_file, wait } => {
                if client.lcm_major() == 1 {
                    return Err(Failure::Usage("change-vnfpkg is a VNF LCM v2 operation: use --api-version 2".into()));
                }
                self.file_task(&vnf_instance, Task::ChangeVnfpkg, &param_file, wait).await
            }
            Vnflcm::Delete { vnf_instance } => {
                self.delete_each("VNF instance", &vnf_instance, async |id: &str| client.delete_instance(id).await).await
            }
            Vnflcm::Op { command } => self.op(command).await,
            Vnflcm::Subsc { command } => self.subsc(command).await,
        }
    }

    async fn lcm_versions(&self, major_version: Option<u64>) -> Outcome {
        if major_version.is_some_and(|major| !matches!(major, 1 | 2)) {
            return Err(Failure::Usage("--major-version is 1 or 2".into()));
        }
        let versions = self.client.api_versions(Api::Vnflcm, major_version).await?;
        let value = serde_json::to_value(&versions).map_err(|error| Failure::Failed(error.to_string()))?;
        self.print(&value, vec![Column::titled("uriPrefix", "uriPrefix"), Column::titled("apiVersions", "apiVersions")])
    }

    /// A task whose request body is the `--param-file` as given.
    async fn file_task(&self, id: &str, task: Task, param_file: &Path, wait: Wait) -> Outcome {
        self.body_task(id, task, read_json(param_file)?, wait).await
    }

    async fn body_task(&self, id: &str, task: Task, body: Value, wait: Wait) -> Outcome {
        let accepted = self.client.instance_task(id, task.segment(), body).await?;
        self.after_task(&accepted, &task.accepted(id), wait).await
    }

    /// `ScaleVnfRequest` (SOL003 clause 5.5.2.5) over the `--additional-param-file` object,
    /// the options winning.
    async fn scale(
        &self,
        vnf_instance: &str,
        mut body: Map<String, Value>,
        scale_type: ScaleType,
        aspect_id: String,
        number_of_steps: Option<u64>,
        wait: Wait,
    ) -> Outcome {
        let kind = match scale_type {
            ScaleType::ScaleOut => "SCALE_OUT",
            ScaleType::ScaleIn => "SCALE_IN",
        };
        body.insert("type".into(), json!(kind));
        body.insert("aspectId".into(), json!(aspect_id));
        if let Some(steps) = number_of_steps {
            body.insert("numberOfSteps".into(), json!(steps));
        }
        self.body_task(vnf_instance, Task::Scale, Value::Object(body), wait).await
    }

    async fn create_instance(&self, request: CreateVnfRequest, instantiate: Option<&Path>, wait: Wait) -> Outcome {
        let instantiate = instantiate.map(read_json).transpose()?;
        let instance = self.client.create_instance(to_body(&request)).await?;
        let id = InstanceView::of(&instance).id.unwrap_or_default();
        self.print(&instance, instance_columns(&instance))?;
        if let Some(body) = instantiate {
            let accepted = self.client.instance_task(&id, Task::Instantiate.segment(), body).await?;
            let message = format!("VNF Instance {id} is created and instantiation request has been accepted");
            self.after_task(&accepted, &message, wait).await?;
        }
        Ok(())
    }

    async fn terminate(
        &self,
        vnf_instance: &str,
        termination_type: Option<TerminationType>,
        graceful_termination_timeout: Option<u64>,
        delete: bool,
        wait: Wait,
    ) -> Outcome {
        if graceful_termination_timeout.is_some() && termination_type == Some(TerminationType::Forceful) {
            return Err(Failure::Usage(
                "--graceful-termination-timeout applies to --termination-type GRACEFUL only".into(),
            ));
        }
        let request = TerminateVnfRequest {
            termination_type: termination(termination_type.unwrap_or(TerminationType::Graceful)),
            graceful_termination_timeout,
        };
        let accepted = self.client.instance_task(vnf_instance, Task::Terminate.segment(), to_body(&request)).await?;
        let message = Task::Terminate.accepted(vnf_instance);
        // --D waits for the termination whether or not --wait was given.
        let wait = if delete { Wait { wait: true, ..wait } } else { wait };
        self.after_task(&accepted, &message, wait).await?;
        if delete {
            self.client.delete_instance(vnf_instance).await?;
            self.say(&format!("VNF Instance '{vnf_instance}' is deleted successfully"));
        }
        Ok(())
    }
}

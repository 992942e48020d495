//! `solctl vnflcm op …`: VNF LCM operation occurrences and their tasks (SOL003 clause 5.4.13
//! to 5.4.17).

use serde::Serialize;
use serde_json::Value;
use solgate_client::records::{OpOccView, to_body};
use solgate_client::{ListQuery, OpAction};

use super::context::{Context, Expect, Outcome, op_columns};
use crate::cli::{CancelMode, Format, Op, Wait};
use crate::output::Column;

/// `CancelMode` (SOL003 clause 5.5.2.14).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CancelRequest {
    cancel_mode: &'static str,
}

impl Context {
    pub(super) async fn op(&self, command: Op) -> Outcome {
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
                let cancel_mode = match cancel_mode {
                    CancelMode::Graceful => "GRACEFUL",
                    CancelMode::Forceful => "FORCEFUL",
                };
                let body = Some(to_body(&CancelRequest { cancel_mode }));
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
            OpOccView::of(&self.client.show_operation(id).await?).state_entered_time
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
}

//! `solctl vnffm alarm …` and `vnffm sub …` (SOL003 clause 7), with tackerclient's columns.

use solgate_client::ListQuery;

use super::context::{Context, Outcome, read_json};
use crate::cli::{Alarm, FmSub, Vnffm};
use crate::output::{Column, record_columns};

const ALARM_COLUMNS: [&str; 6] =
    ["id", "managedObjectId", "ackState", "eventType", "perceivedSeverity", "probableCause"];

impl Context {
    pub(super) async fn vnffm(&self, command: Vnffm) -> Outcome {
        let client = &self.client;
        match command {
            Vnffm::Alarm { command: Alarm::List { filter } } => {
                let items = client.list_alarms(&ListQuery { filter, ..ListQuery::default() }).await?;
                self.print_list(&items, ALARM_COLUMNS.iter().map(|attribute| Column::new(attribute)).collect())
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
                let delete = async |id: &str| client.delete_fm_subscription(id).await;
                self.delete_each("VNF FM subscription", &subscription_id, delete).await
            }
        }
    }
}

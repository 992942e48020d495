//! `solctl vnflcm subsc …`: LCM notification subscriptions (SOL003 clause 5.4.18).

use solgate_client::ListQuery;

use super::context::{Context, Outcome, read_json};
use crate::cli::Subsc;
use crate::output::{Column, record_columns};

impl Context {
    pub(super) async fn subsc(&self, command: Subsc) -> Outcome {
        let client = &self.client;
        match command {
            Subsc::Create { param_file } => {
                let subscription = client.create_subscription(read_json(&param_file)?).await?;
                self.print(&subscription, record_columns(&subscription))
            }
            Subsc::List { filter } => {
                let items = client.list_subscriptions(&ListQuery { filter, ..ListQuery::default() }).await?;
                self.print_list(&items, vec![Column::new("id"), Column::new("callbackUri")])
            }
            Subsc::Show { subscription_id } => {
                let subscription = client.show_subscription(&subscription_id).await?;
                self.print(&subscription, record_columns(&subscription))
            }
            Subsc::Delete { subscription_id } => {
                let delete = async |id: &str| client.delete_subscription(id).await;
                self.delete_each("Lccn Subscription", &subscription_id, delete).await
            }
        }
    }
}

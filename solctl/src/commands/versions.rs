//! `solctl versions`: every API major the server offers, and the version the client uses.

use serde::Serialize;
use solgate_client::Api;
use solgate_client::records::to_body;

use super::context::{Context, Outcome};
use crate::output::Column;

/// One row of the table.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct VersionRow {
    api: String,
    uri_prefix: String,
    version: String,
    is_deprecated: bool,
    retirement_date: Option<String>,
    client_uses: bool,
}

impl Context {
    pub(super) async fn versions(&self) -> Outcome {
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
                    rows.push(to_body(&VersionRow {
                        api: format!("{} v{major}", api.name()),
                        uri_prefix: offered.uri_prefix.clone(),
                        version: info.version.clone(),
                        is_deprecated: info.is_deprecated,
                        retirement_date: info.retirement_date.map(|date| date.to_rfc3339()),
                        client_uses: uses.as_deref() == Some(info.version.as_str()),
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
}

//! The PATCH and DELETE of PM jobs and thresholds, which differ only in names and in the rows
//! and Prometheus rules each owns.

use actix_web::HttpResponse;
use serde_json::{Value, json};
use solgate_core::pm::rules::Owner;
use solgate_db::repo::notifications;
use solgate_db::repo::vnfpm::{self, PmRecord};
use solgate_db::{AnyConnection, write_transaction};

use super::{modifications, pm_jobs, thresholds};
use crate::common::Tenant;
use crate::error::ApiResult;
use crate::sol013::Negotiated;
use crate::state::AppState;

#[derive(Debug, Clone, Copy)]
pub enum PmResource {
    Job,
    Threshold,
}

impl PmResource {
    /// The record, if the request may see it (404 otherwise, as for a missing one).
    fn find(self, conn: &mut AnyConnection, tenant: &Tenant, id: &str) -> ApiResult<PmRecord> {
        match self {
            Self::Job => pm_jobs::find(conn, tenant, id),
            Self::Threshold => thresholds::find(conn, tenant, id),
        }
    }

    fn not_found(self, id: &str) -> crate::error::ApiError {
        match self {
            Self::Job => pm_jobs::not_found(id),
            Self::Threshold => thresholds::not_found(id),
        }
    }

    fn modifications_schema(self) -> &'static str {
        match self {
            Self::Job => "PmJobModifications",
            Self::Threshold => "ThresholdModifications",
        }
    }

    fn owner(self, id: &str) -> Owner<'_> {
        match self {
            Self::Job => Owner::Job(id),
            Self::Threshold => Owner::Threshold(id),
        }
    }

    /// PATCH (JSON Merge Patch of the modifications): a new callback URI and/or credentials,
    /// tested as at creation (422). 200 with the modifications, never the credentials.
    pub async fn modify(
        self,
        state: &AppState,
        negotiated: &Negotiated,
        tenant: Tenant,
        id: String,
        request: &Value,
    ) -> ApiResult<HttpResponse> {
        let (lookup, who) = (id.clone(), tenant.clone());
        let current = state.db(move |conn| self.find(conn, &who, &lookup)).await?;
        let schema = self.modifications_schema();
        let (uri, authentication, answer) =
            modifications(state, negotiated, schema, request, current.callback_uri(), current.authentication.as_ref())
                .await?;
        state
            .db(move |conn| {
                write_transaction(conn, |conn| {
                    let mut record = self.find(conn, &tenant, &id)?;
                    record.body["callbackUri"] = json!(uri);
                    record.authentication = authentication;
                    match self {
                        Self::Job => vnfpm::update_job(conn, &record)?,
                        Self::Threshold => vnfpm::update_threshold(conn, &record)?,
                    };
                    Ok(())
                })
            })
            .await?;
        let body = negotiated.entry.dictionary.render(schema, &answer);
        Ok(HttpResponse::Ok().content_type("application/json").body(body.to_string()))
    }

    /// DELETE: 204; the rows it owns (a job's reports) and its undelivered notifications go
    /// with it, then its Prometheus rules.
    pub async fn delete(self, state: &AppState, tenant: Tenant, id: String) -> ApiResult<HttpResponse> {
        let target = id.clone();
        state
            .db(move |conn| {
                write_transaction(conn, |conn| {
                    self.find(conn, &tenant, &target)?;
                    let deleted = match self {
                        Self::Job => vnfpm::delete_job(conn, &target)?,
                        Self::Threshold => vnfpm::delete_threshold(conn, &target)?,
                    };
                    if !deleted {
                        return Err(self.not_found(&target));
                    }
                    notifications::drop_for_subscription(conn, &target)?;
                    Ok(())
                })
            })
            .await?;
        state.vnfpm.remove(self.owner(&id)).await;
        tracing::info!(resource = ?self, %id, "PM resource deleted");
        Ok(HttpResponse::NoContent().finish())
    }
}

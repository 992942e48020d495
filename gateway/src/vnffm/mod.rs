//! VNF Fault Management (SOL003 clause 7, API 1.x) under `/vnffm/v1`: alarms (raised and cleared
//! from Alertmanager's alerts, see [`crate::alerts`]; listed, read and acknowledged here) and FM
//! subscriptions, whose notifications the conductor's delivery worker sends like every other.

pub mod alarms;
pub mod subscriptions;

use actix_web::web;

use crate::route::resource;

pub fn configure(cfg: &mut web::ServiceConfig) {
    const ALARMS: &str = "/vnffm/v1/alarms";
    cfg.service(resource(ALARMS).get(alarms::list::list).finish())
        .service(resource(&format!("{ALARMS}/{{id}}")).get(alarms::show::show).patch(alarms::modify::modify).finish());
    const SUBSCRIPTIONS: &str = "/vnffm/v1/subscriptions";
    cfg.service(resource(SUBSCRIPTIONS).get(subscriptions::list::list).post(subscriptions::create::create).finish())
        .service(
            resource(&format!("{SUBSCRIPTIONS}/{{id}}"))
                .get(subscriptions::show::show)
                .delete(subscriptions::delete::delete)
                .finish(),
        );
}

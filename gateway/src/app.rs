//! The application: the route table (every path solgate serves, built in one place) and
//! the middleware around it.

use actix_web::middleware::from_fn;
use actix_web::{App, web};

use crate::route::{self, resource};
use crate::sol013::layer::sol013_layer;
use crate::state::AppState;
use crate::{alerts, api_versions, auth, health, nfvo_notifications, openapi, vims, vnffm, vnflcm, vnfpkgm, vnfpm};

/// Operational routes every process serves.
pub fn configure_operations(cfg: &mut web::ServiceConfig) {
    cfg.service(resource("/healthz").get(health::healthz).finish())
        .service(resource("/readyz").get(health::readyz).finish())
        .service(resource("/metrics").get(health::metrics).finish());
}

/// Registers every API route.
pub fn configure(cfg: &mut web::ServiceConfig) {
    for api in ["vnflcm", "vnfpkgm", "vnffm", "vnfpm"] {
        cfg.service(resource(&format!("/{api}/api_versions")).get(api_versions::show).finish());
        cfg.service(resource(&format!("/{api}/v{{major}}/api_versions")).get(api_versions::show).finish());
        cfg.service(resource(&format!("/{api}/v{{major}}/openapi.json")).get(openapi::show).finish());
    }
    vnflcm::configure(cfg);
    vnfpkgm::configure(cfg);
    vnffm::configure(cfg);
    vnfpm::configure(cfg);
    vims::configure(cfg);
    alerts::configure(cfg);
    cfg.service(resource(auth::endpoint::PATH).post(auth::endpoint::token).finish());
}

/// The whole application: state, SOL013 layer, routes, 404 fallback. `api = false`
/// serves only the operational routes (a conductor process). The NFVO's package
/// notifications are served with the API when they are configured.
pub fn app(
    state: web::Data<AppState>,
    extra: fn(&mut web::ServiceConfig),
    api: bool,
) -> App<
    impl actix_web::dev::ServiceFactory<
        actix_web::dev::ServiceRequest,
        Config = (),
        Response = actix_web::dev::ServiceResponse<actix_web::body::BoxBody>,
        Error = actix_web::Error,
        InitError = (),
    >,
> {
    let notifications = api && state.nfvo_notifications.is_some();
    App::new()
        .app_data(state)
        .configure(configure_operations)
        // Before the API: a route under a scope's prefix (the tests add some under
        // /vnflcm/v2) would never be reached after that scope.
        .configure(extra)
        .configure(if api { configure } else { |_: &mut web::ServiceConfig| {} })
        .configure(if notifications { nfvo_notifications::configure } else { |_: &mut web::ServiceConfig| {} })
        .default_service(web::to(route::not_found))
        .wrap(from_fn(sol013_layer))
}

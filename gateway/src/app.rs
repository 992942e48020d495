//! The application: the routes of the resource tables ([`crate::routes`]) and the
//! middleware around them.

use actix_web::middleware::from_fn;
use actix_web::{App, web};

use crate::nfvo_notifications;
use crate::routes::{self, configure, configure_operations};
use crate::sol013::layer::sol013_layer;
use crate::state::AppState;

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
        .default_service(web::to(routes::not_found))
        .wrap(from_fn(sol013_layer))
}

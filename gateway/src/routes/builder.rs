//! One actix resource: it knows its methods, so a known path with an unsupported method
//! answers 405 ProblemDetails with an `Allow` header (Tacker sends no `Allow`), computed
//! from the same rows that register the handlers; a method whose row the negotiated minor
//! does not have answers 404, as an unknown path does.

use actix_web::http::Method;
use actix_web::{FromRequest, Handler, HttpRequest, Resource, Responder, Route, web};

use actix_web::body::BoxBody;
use actix_web::dev::{ServiceFactory, ServiceRequest, ServiceResponse};
use actix_web::middleware::{Next, from_fn};
use actix_web::{HttpMessage, ResponseError};

use super::endpoint::Endpoint;
use crate::error::{ApiError, ErrorKind};
use crate::sol013::Negotiated;
use crate::sol013::layer::catch_panics;

pub struct RouteBuilder {
    resource: Resource,
    allow: Vec<Method>,
    /// The rows of the resource that only some minors have.
    versioned: Vec<&'static Endpoint>,
}

/// Starts the routes of one resource path.
pub fn resource(path: &str) -> RouteBuilder {
    RouteBuilder { resource: web::resource(path), allow: Vec::new(), versioned: Vec::new() }
}

impl RouteBuilder {
    /// The route of a table row.
    pub fn endpoint(mut self, endpoint: &'static Endpoint) -> Self {
        let route: Route = (endpoint.handler)(web::method(endpoint.method.clone()));
        self.resource = self.resource.route(route);
        self.allow.push(endpoint.method.clone());
        if endpoint.since.is_some() || endpoint.until.is_some() {
            self.versioned.push(endpoint);
        }
        self
    }

    pub fn method<F, Args>(mut self, method: Method, handler: F) -> Self
    where
        F: Handler<Args>,
        Args: FromRequest + 'static,
        F::Output: Responder + 'static,
    {
        self.resource = self.resource.route(web::method(method.clone()).to(handler));
        self.allow.push(method);
        self
    }

    pub fn get<F, Args>(self, handler: F) -> Self
    where
        F: Handler<Args>,
        Args: FromRequest + 'static,
        F::Output: Responder + 'static,
    {
        self.method(Method::GET, handler)
    }

    pub fn post<F, Args>(self, handler: F) -> Self
    where
        F: Handler<Args>,
        Args: FromRequest + 'static,
        F::Output: Responder + 'static,
    {
        self.method(Method::POST, handler)
    }

    pub fn patch<F, Args>(self, handler: F) -> Self
    where
        F: Handler<Args>,
        Args: FromRequest + 'static,
        F::Output: Responder + 'static,
    {
        self.method(Method::PATCH, handler)
    }

    pub fn finish(
        self,
    ) -> Resource<
        impl ServiceFactory<
            ServiceRequest,
            Config = (),
            Response = ServiceResponse<BoxBody>,
            Error = actix_web::Error,
            InitError = (),
        >,
    > {
        let allow = self.allow.iter().map(Method::as_str).collect::<Vec<_>>().join(", ");
        let allowed: std::rc::Rc<[Method]> = self.allow.into();
        let versioned: std::rc::Rc<[&'static Endpoint]> = self.versioned.into();
        self.resource
            .default_service(web::to(move |req: HttpRequest| {
                let allow = allow.clone();
                async move {
                    Err::<&'static str, _>(ApiError::new(
                        ErrorKind::MethodNotAllowed { allow },
                        format!("Method {} is not supported.", req.method()),
                    ))
                }
            }))
            .wrap(from_fn(move |req: ServiceRequest, next: Next<BoxBody>| {
                refuse_unacceptable(allowed.clone(), versioned.clone(), req, next)
            }))
            .wrap(from_fn(catch_panics))
    }
}

/// The 406 the SOL013 layer found for `Accept`, held until routing shows whether the
/// resource supports the method at all: an unsupported method is 405 whatever `Accept` says.
#[derive(Debug, Clone)]
pub struct NotAcceptable(pub String);

/// A row the negotiated minor does not have is no resource (404, before `Accept` is looked
/// at, as for an unknown path).
async fn refuse_unacceptable(
    allowed: std::rc::Rc<[Method]>,
    versioned: std::rc::Rc<[&'static Endpoint]>,
    req: ServiceRequest,
    next: Next<BoxBody>,
) -> Result<ServiceResponse<BoxBody>, actix_web::Error> {
    if let Some(endpoint) = versioned.iter().find(|endpoint| endpoint.method == req.method()) {
        let version = req.extensions().get::<Negotiated>().map(|negotiated| negotiated.entry.version);
        if version.is_some_and(|version| !endpoint.in_version(version)) {
            let response = unknown(req.path()).error_response();
            return Ok(req.into_response(response));
        }
    }
    let refusal = req.extensions().get::<NotAcceptable>().cloned();
    match refusal {
        Some(NotAcceptable(detail)) if allowed.contains(req.method()) => {
            let response = ApiError::not_acceptable(detail).error_response();
            Ok(req.into_response(response))
        }
        _ => next.call(req).await,
    }
}

/// The app's fallback: no route matched the path at all.
pub async fn not_found(req: HttpRequest) -> Result<&'static str, ApiError> {
    Err(unknown(req.path()))
}

fn unknown(path: &str) -> ApiError {
    ApiError::not_found(format!("The resource {path} could not be found."))
}

//! The tenant of a request ([`solgate_core::tenancy`]): the project its principal belongs
//! to, and whether it sees every project (an admin, or no authentication at all).

use std::future::{Ready, ready};

use actix_web::dev::Payload;
use actix_web::{FromRequest, HttpMessage, HttpRequest};
use solgate_core::tenancy::{self, ProjectScope};

use crate::auth::Principal;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tenant {
    project: String,
    sees_all: bool,
}

impl Tenant {
    /// The tenant of a request: its authenticated principal's, or everyone's without one.
    pub fn of(req: &HttpRequest) -> Self {
        match req.extensions().get::<Principal>() {
            Some(principal) => Tenant { project: principal.project.clone(), sees_all: principal.is_admin() },
            None => Tenant { project: String::new(), sees_all: true },
        }
    }

    /// The project a resource this request creates belongs to.
    pub fn project(&self) -> &str {
        &self.project
    }

    /// Whose resources the request sees (`None`: every project's).
    pub fn scope(&self) -> ProjectScope<'_> {
        (!self.sees_all).then_some(self.project.as_str())
    }

    pub fn sees(&self, project: &str) -> bool {
        tenancy::visible(self.scope(), project)
    }

    /// The project of a subscription this request creates: an administrator's hears every
    /// project ([`tenancy::hears`]), anyone else's only its own.
    pub fn subscription_project(&self) -> &str {
        if self.sees_all { "" } else { &self.project }
    }
}

impl FromRequest for Tenant {
    type Error = actix_web::Error;
    type Future = Ready<Result<Self, Self::Error>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        ready(Ok(Tenant::of(req)))
    }
}

//! Prometheus metrics. One registry per application (never global), so tests can run
//! several apps in one process; the conductor registers its own collectors into it.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, PoisonError, RwLock};

use actix_web::HttpRequest;
use prometheus::{Encoder, HistogramOpts, HistogramVec, IntCounterVec, Opts, Registry, TextEncoder};

#[derive(Clone)]
pub struct Metrics {
    registry: Registry,
    requests: IntCounterVec,
    latency: HistogramVec,
    schema_violations: IntCounterVec,
    routes: RouteLabels,
}

/// The `route` label of a request, its route pattern. actix's `match_pattern` matches the
/// path against every resource again, which cost a tenth of a small GET's time; here a
/// path is looked up by its shape (the segments known to be literal in some pattern kept,
/// the others blanked), so all paths of one route share an entry. A hit is used only if
/// the pattern's literal segments are the path's; patterns with a tail or a constrained
/// parameter, and unmatched paths, are matched by actix every time.
#[derive(Clone, Default)]
pub struct RouteLabels(Arc<RwLock<Shapes>>);

#[derive(Default)]
struct Shapes {
    literals: HashSet<String>,
    patterns: HashMap<String, Arc<str>>,
}

/// Entries at most: paths of unknown segments cannot grow it without bound.
const MAX_SHAPES: usize = 2048;

impl Shapes {
    fn shape(&self, path: &str) -> String {
        let mut shape = String::with_capacity(path.len());
        for (i, segment) in path.split('/').enumerate() {
            if i > 0 {
                shape.push('/');
            }
            shape.push_str(if self.literals.contains(segment) { segment } else { "{}" });
        }
        shape
    }
}

/// Whether `pattern` (plain `{name}` parameters only) has `path`'s segments.
fn fits(pattern: &str, path: &str) -> bool {
    let (mut pattern, mut path) = (pattern.split('/'), path.split('/'));
    loop {
        match (pattern.next(), path.next()) {
            (None, None) => return true,
            (Some(expected), Some(segment)) if expected.starts_with('{') => {
                if segment.is_empty() {
                    return false;
                }
            }
            (Some(expected), Some(segment)) if expected == segment => {}
            _ => return false,
        }
    }
}

impl RouteLabels {
    pub fn label(&self, request: &HttpRequest) -> Arc<str> {
        let path = request.path();
        {
            let shapes = self.0.read().unwrap_or_else(PoisonError::into_inner);
            if let Some(pattern) = shapes.patterns.get(&shapes.shape(path))
                && fits(pattern, path)
            {
                return pattern.clone();
            }
        }
        let Some(pattern) = request.match_pattern() else { return Arc::from("unmatched") };
        let pattern: Arc<str> = Arc::from(pattern);
        let plain = !pattern.contains('*') && !pattern.contains(':') && fits(&pattern, path);
        if plain {
            let mut shapes = self.0.write().unwrap_or_else(PoisonError::into_inner);
            for segment in pattern.split('/').filter(|segment| !segment.starts_with('{')) {
                if !shapes.literals.contains(segment) {
                    shapes.literals.insert(segment.to_owned());
                }
            }
            if shapes.patterns.len() < MAX_SHAPES {
                let shape = shapes.shape(path);
                shapes.patterns.insert(shape, pattern.clone());
            }
        }
        pattern
    }
}

impl Metrics {
    pub fn new(registry: Registry) -> Result<Self, prometheus::Error> {
        let requests = IntCounterVec::new(
            Opts::new("solgate_http_requests_total", "HTTP requests by route pattern, method, status and API version"),
            &["route", "method", "status", "version"],
        )?;
        let latency = HistogramVec::new(
            HistogramOpts::new("solgate_http_request_duration_seconds", "HTTP request latency by route pattern")
                .buckets(vec![0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0]),
            &["route", "method"],
        )?;
        let schema_violations = IntCounterVec::new(
            Opts::new(
                "solgate_response_schema_violations_total",
                "Response bodies that violate their version's schema ([http] validate_responses)",
            ),
            &["route", "method", "version"],
        )?;
        registry.register(Box::new(requests.clone()))?;
        registry.register(Box::new(latency.clone()))?;
        registry.register(Box::new(schema_violations.clone()))?;
        Ok(Self { registry, requests, latency, schema_violations, routes: RouteLabels::default() })
    }

    /// The route pattern of a request, for the `route` label.
    pub fn route(&self, request: &HttpRequest) -> Arc<str> {
        self.routes.label(request)
    }

    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    pub fn schema_violation(&self, route: &str, method: &str, version: &str) {
        self.schema_violations.with_label_values(&[route, method, version]).inc();
    }

    pub fn observe(&self, route: &str, method: &str, status: u16, version: &str, seconds: f64) {
        let status = status.to_string();
        self.requests.with_label_values(&[route, method, status.as_str(), version]).inc();
        self.latency.with_label_values(&[route, method]).observe(seconds);
    }

    /// The Prometheus text exposition of every registered collector.
    pub fn render(&self) -> String {
        let mut buffer = Vec::new();
        // Encoding into a Vec only fails on malformed metric families, which
        // `register` already rejected.
        if TextEncoder::new().encode(&self.registry.gather(), &mut buffer).is_err() {
            return String::new();
        }
        String::from_utf8(buffer).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use actix_web::test::{TestRequest, call_service, init_service};
    use actix_web::{App, HttpResponse, web};

    use super::*;

    /// Labels come from the route that matched, whether found by shape or by actix:
    /// identifiers share an entry, a literal route beside a parameter keeps its own, and a
    /// path no route has stays unmatched.
    #[actix_web::test]
    async fn a_request_is_labelled_with_the_pattern_of_its_route() {
        let labels = RouteLabels::default();
        let seen = web::Data::new(std::sync::Mutex::new(Vec::<String>::new()));
        let app = init_service(
            App::new()
                .app_data(seen.clone())
                .app_data(web::Data::new(labels.clone()))
                .route("/vnflcm/v2/vnf_instances/{id}", web::get().to(label))
                .route("/vnflcm/v2/vnf_instances/{id}/scale", web::post().to(label))
                .route("/vnflcm/v{major}/api_versions", web::get().to(label))
                .default_service(web::to(label)),
        )
        .await;
        for (method, path) in [
            ("GET", "/vnflcm/v2/vnf_instances/a1"),
            ("GET", "/vnflcm/v2/vnf_instances/b2"),
            ("POST", "/vnflcm/v2/vnf_instances/b2/scale"),
            ("GET", "/vnflcm/v2/api_versions"),
            ("GET", "/vnflcm/v2/api_versions"),
            ("GET", "/x/y/z/w"),
            ("GET", "/vnflcm/v2/vnf_instances/c3"),
        ] {
            let request = TestRequest::default().method(method.parse().unwrap()).uri(path).to_request();
            call_service(&app, request).await;
        }
        assert_eq!(
            *seen.lock().unwrap(),
            [
                "/vnflcm/v2/vnf_instances/{id}",
                "/vnflcm/v2/vnf_instances/{id}",
                "/vnflcm/v2/vnf_instances/{id}/scale",
                "/vnflcm/v{major}/api_versions",
                "/vnflcm/v{major}/api_versions",
                "unmatched",
                "/vnflcm/v2/vnf_instances/{id}",
            ]
        );
        // The two identifiers and the scale route share shapes; the others are not cached.
        assert_eq!(labels.0.read().unwrap().patterns.len(), 2);

        async fn label(
            request: HttpRequest,
            labels: web::Data<RouteLabels>,
            seen: web::Data<std::sync::Mutex<Vec<String>>>,
        ) -> HttpResponse {
            seen.lock().unwrap().push(labels.label(&request).to_string());
            HttpResponse::Ok().finish()
        }
    }

    #[test]
    fn a_cached_pattern_is_used_only_where_its_literals_are_the_paths() {
        assert!(fits("/vnflcm/v2/vnf_instances/{id}", "/vnflcm/v2/vnf_instances/abc"));
        assert!(!fits("/vnflcm/v2/vnf_instances/{id}", "/vnflcm/v2/vnf_instances/abc/scale"));
        assert!(!fits("/vnflcm/v2/vnf_instances/{id}", "/vnflcm/v2/vnf_instances/"));
        assert!(!fits("/vnflcm/v2/vnf_instances/{id}/scale", "/vnflcm/v2/vnf_instances/abc/heal"));
    }
}

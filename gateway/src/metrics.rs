//! Prometheus metrics. One registry per application (never global), so tests can run
//! several apps in one process; the conductor registers its own collectors into it.

use prometheus::{Encoder, HistogramOpts, HistogramVec, IntCounterVec, Opts, Registry, TextEncoder};

#[derive(Clone)]
pub struct Metrics {
    registry: Registry,
    requests: IntCounterVec,
    latency: HistogramVec,
    schema_violations: IntCounterVec,
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
        Ok(Self { registry, requests, latency, schema_violations })
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

//! Absolute URLs of resources, from the configured public endpoint (one base for every
//! link and `Location`, whatever the major; Tacker used two).

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Links {
    base: String,
}

impl Links {
    pub fn new(public_endpoint: &str) -> Self {
        Self { base: public_endpoint.trim_end_matches('/').to_owned() }
    }

    pub fn base(&self) -> &str {
        &self.base
    }

    pub fn instances(&self, major: u64) -> String {
        format!("{}/vnflcm/v{major}/vnf_instances", self.base)
    }

    pub fn instance(&self, major: u64, id: &str) -> String {
        format!("{}/vnflcm/v{major}/vnf_instances/{id}", self.base)
    }

    pub fn op_occ(&self, major: u64, id: &str) -> String {
        format!("{}/vnflcm/v{major}/vnf_lcm_op_occs/{id}", self.base)
    }

    pub fn subscription(&self, major: u64, id: &str) -> String {
        format!("{}/vnflcm/v{major}/subscriptions/{id}", self.base)
    }

    pub fn package(&self, id: &str) -> String {
        format!("{}/vnfpkgm/v1/vnf_packages/{id}", self.base)
    }

    pub fn pkgm_subscription(&self, id: &str) -> String {
        format!("{}/vnfpkgm/v1/subscriptions/{id}", self.base)
    }

    pub fn alarms(&self) -> String {
        format!("{}/vnffm/v1/alarms", self.base)
    }

    pub fn alarm(&self, id: &str) -> String {
        format!("{}/vnffm/v1/alarms/{id}", self.base)
    }

    pub fn fm_subscription(&self, id: &str) -> String {
        format!("{}/vnffm/v1/subscriptions/{id}", self.base)
    }

    /// A PM job (`/vnfpm/v2`, the only major of the PM API).
    pub fn pm_job(&self, id: &str) -> String {
        format!("{}/vnfpm/v2/pm_jobs/{id}", self.base)
    }

    pub fn pm_report(&self, job_id: &str, id: &str) -> String {
        format!("{}/vnfpm/v2/pm_jobs/{job_id}/reports/{id}", self.base)
    }

    pub fn threshold(&self, id: &str) -> String {
        format!("{}/vnfpm/v2/thresholds/{id}", self.base)
    }
}

/// `{"href": url}`, SOL013 Link.
pub fn href(url: &str) -> serde_json::Value {
    serde_json::json!({ "href": url })
}

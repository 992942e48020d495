//! Absolute URLs of resources, from the configured public endpoint (one base for every
//! link and `Location`, whatever the major; Tacker used two). The URLs are filled in from
//! the path templates of [`paths`], which the gateway's resource tables register too.

use solgate_schemas::Api;

/// The path templates of the resources, relative to their API's major prefix
/// (`/{apiName}/v{major}`, SOL013 clause 4.1): each spelled once, here. `{name}` is one
/// path segment; `{name:.+}` the rest of the path.
pub mod paths {
    /// SOL013 clause 9.3.
    pub const API_VERSIONS: &str = "/api_versions";
    /// This solgate's OpenAPI description of the negotiated version.
    pub const OPENAPI: &str = "/openapi.json";

    // VNF LCM (SOL003 clause 5.4).
    pub const VNF_INSTANCES: &str = "/vnf_instances";
    pub const VNF_INSTANCE: &str = "/vnf_instances/{vnfInstanceId}";
    pub const VNF_LCM_OP_OCCS: &str = "/vnf_lcm_op_occs";
    pub const VNF_LCM_OP_OCC: &str = "/vnf_lcm_op_occs/{vnfLcmOpOccId}";
    pub const VNF_LCM_OP_OCC_RETRY: &str = "/vnf_lcm_op_occs/{vnfLcmOpOccId}/retry";
    pub const VNF_LCM_OP_OCC_ROLLBACK: &str = "/vnf_lcm_op_occs/{vnfLcmOpOccId}/rollback";
    pub const VNF_LCM_OP_OCC_FAIL: &str = "/vnf_lcm_op_occs/{vnfLcmOpOccId}/fail";
    pub const VNF_LCM_OP_OCC_CANCEL: &str = "/vnf_lcm_op_occs/{vnfLcmOpOccId}/cancel";

    /// Subscriptions of the LCM, package management and FM APIs.
    pub const SUBSCRIPTIONS: &str = "/subscriptions";
    pub const SUBSCRIPTION: &str = "/subscriptions/{subscriptionId}";

    // VNF package management (SOL005 clause 9.4).
    pub const VNF_PACKAGES: &str = "/vnf_packages";
    pub const VNF_PACKAGE: &str = "/vnf_packages/{vnfPkgId}";
    pub const PACKAGE_CONTENT: &str = "/vnf_packages/{vnfPkgId}/package_content";
    pub const UPLOAD_FROM_URI: &str = "/vnf_packages/{vnfPkgId}/package_content/upload_from_uri";
    pub const VNFD: &str = "/vnf_packages/{vnfPkgId}/vnfd";
    pub const ARTIFACT: &str = "/vnf_packages/{vnfPkgId}/artifacts/{artifactPath:.+}";

    // VNF FM (SOL003 clause 7.4).
    pub const ALARMS: &str = "/alarms";
    pub const ALARM: &str = "/alarms/{alarmId}";

    // VNF PM (SOL003 clause 6.4).
    pub const PM_JOBS: &str = "/pm_jobs";
    pub const PM_JOB: &str = "/pm_jobs/{pmJobId}";
    pub const PM_REPORT: &str = "/pm_jobs/{pmJobId}/reports/{reportId}";
    pub const THRESHOLDS: &str = "/thresholds";
    pub const THRESHOLD: &str = "/thresholds/{thresholdId}";

    /// Tacker's legacy NFVO API: the VIM registry under [`VIMS_PREFIX`].
    pub const VIMS_PREFIX: &str = "/v1.0";
    pub const VIMS: &str = "/vims";
    pub const VIMS_JSON: &str = "/vims.json";
    pub const VIM: &str = "/vims/{vimId}";

    /// The template with its parameters replaced by `values`, in order, appended to `out`.
    pub fn fill_into(out: &mut String, template: &str, values: &[&str]) {
        let mut values = values.iter();
        let mut rest = template;
        while let Some(open) = rest.find('{') {
            out.push_str(&rest[..open]);
            let close = rest[open..].find('}').map_or(rest.len(), |close| open + close + 1);
            out.push_str(values.next().copied().unwrap_or_default());
            rest = &rest[close..];
        }
        out.push_str(rest);
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Links {
    base: String,
}

/// The PM API has one major (`/vnfpm/v2`), the package management and FM APIs too (v1).
const PKGM_MAJOR: u64 = 1;
const FM_MAJOR: u64 = 1;
const PM_MAJOR: u64 = 2;

impl Links {
    pub fn new(public_endpoint: &str) -> Self {
        Self { base: public_endpoint.trim_end_matches('/').to_owned() }
    }

    pub fn base(&self) -> &str {
        &self.base
    }

    /// `{base}/{api}/v{major}{template}` with the template's parameters filled in.
    fn url(&self, api: Api, major: u64, template: &str, values: &[&str]) -> String {
        use std::fmt::Write;
        let mut url = String::with_capacity(self.base.len() + template.len() + 48);
        let _ = write!(url, "{}/{api}/v{major}", self.base);
        paths::fill_into(&mut url, template, values);
        url
    }

    pub fn instances(&self, major: u64) -> String {
        self.url(Api::Vnflcm, major, paths::VNF_INSTANCES, &[])
    }

    pub fn instance(&self, major: u64, id: &str) -> String {
        self.url(Api::Vnflcm, major, paths::VNF_INSTANCE, &[id])
    }

    pub fn op_occ(&self, major: u64, id: &str) -> String {
        self.url(Api::Vnflcm, major, paths::VNF_LCM_OP_OCC, &[id])
    }

    pub fn subscription(&self, major: u64, id: &str) -> String {
        self.url(Api::Vnflcm, major, paths::SUBSCRIPTION, &[id])
    }

    pub fn package(&self, id: &str) -> String {
        self.url(Api::Vnfpkgm, PKGM_MAJOR, paths::VNF_PACKAGE, &[id])
    }

    pub fn pkgm_subscription(&self, id: &str) -> String {
        self.url(Api::Vnfpkgm, PKGM_MAJOR, paths::SUBSCRIPTION, &[id])
    }

    pub fn alarms(&self) -> String {
        self.url(Api::Vnffm, FM_MAJOR, paths::ALARMS, &[])
    }

    pub fn alarm(&self, id: &str) -> String {
        self.url(Api::Vnffm, FM_MAJOR, paths::ALARM, &[id])
    }

    pub fn fm_subscription(&self, id: &str) -> String {
        self.url(Api::Vnffm, FM_MAJOR, paths::SUBSCRIPTION, &[id])
    }

    pub fn pm_job(&self, id: &str) -> String {
        self.url(Api::Vnfpm, PM_MAJOR, paths::PM_JOB, &[id])
    }

    pub fn pm_report(&self, job_id: &str, id: &str) -> String {
        self.url(Api::Vnfpm, PM_MAJOR, paths::PM_REPORT, &[job_id, id])
    }

    pub fn threshold(&self, id: &str) -> String {
        self.url(Api::Vnfpm, PM_MAJOR, paths::THRESHOLD, &[id])
    }
}

/// `{"href": url}`, SOL013 Link.
pub fn href(url: &str) -> serde_json::Value {
    serde_json::json!({ "href": url })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_fill_the_templates() {
        let links = Links::new("http://vnfm/");
        assert_eq!(links.instances(2), "http://vnfm/vnflcm/v2/vnf_instances");
        assert_eq!(links.instance(1, "i"), "http://vnfm/vnflcm/v1/vnf_instances/i");
        assert_eq!(links.op_occ(2, "o"), "http://vnfm/vnflcm/v2/vnf_lcm_op_occs/o");
        assert_eq!(links.subscription(2, "s"), "http://vnfm/vnflcm/v2/subscriptions/s");
        assert_eq!(links.package("p"), "http://vnfm/vnfpkgm/v1/vnf_packages/p");
        assert_eq!(links.pkgm_subscription("s"), "http://vnfm/vnfpkgm/v1/subscriptions/s");
        assert_eq!(links.alarms(), "http://vnfm/vnffm/v1/alarms");
        assert_eq!(links.alarm("a"), "http://vnfm/vnffm/v1/alarms/a");
        assert_eq!(links.fm_subscription("s"), "http://vnfm/vnffm/v1/subscriptions/s");
        assert_eq!(links.pm_job("j"), "http://vnfm/vnfpm/v2/pm_jobs/j");
        assert_eq!(links.pm_report("j", "r"), "http://vnfm/vnfpm/v2/pm_jobs/j/reports/r");
        assert_eq!(links.threshold("t"), "http://vnfm/vnfpm/v2/thresholds/t");
    }
}

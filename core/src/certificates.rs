//! Certificate configuration of a VNF instance (SOL003 V4.5.1, API 2.12.0): what the NFVO
//! sends as `certificateConfigurationData` (CreateVnfRequest and the change operations) is
//! kept as the instance's `certificateInfo.certificateConfigurationInfo`. solgate issues no
//! certificates itself, so `certificateContents` is never produced.

use serde::Deserialize;
use serde_json::{Value, json};
use solgate_model::lcm_request::CertificateConfigurationData;
use solgate_model::vnf_instance::{CertificateConfigurationInfo, CertificateInfo, CmfInfo};

/// The `certificateInfo` after a request carrying `data`; `previous` keeps its id (the
/// documents' JSON, for the instance a CreateVnfRequest makes).
pub fn certificate_info(data: &Value, previous: Option<&Value>) -> Value {
    let data = CertificateConfigurationData::deserialize(data).unwrap_or_default();
    let previous = previous.and_then(|info| CertificateInfo::deserialize(info).ok());
    serde_json::to_value(configured(&data, previous.as_ref())).unwrap_or_default()
}

/// The `certificateInfo` after a request carrying `data`; `previous` keeps its ids.
pub fn configured(data: &CertificateConfigurationData, previous: Option<&CertificateInfo>) -> CertificateInfo {
    let new_id = || uuid::Uuid::new_v4().to_string();
    let cmf_info = data.cmf_data.as_ref().map(|cmf| {
        let previous_cmf = previous.and_then(|info| info.certificate_configuration_info.cmf_info.as_ref());
        CmfInfo {
            id: previous_cmf.map(|cmf| cmf.id.clone()).filter(|id| !id.is_empty()).unwrap_or_else(new_id),
            end_point: cmf.end_point.clone(),
            supported_protocols: cmf.supported_protocol.clone(),
            extra: Default::default(),
        }
    });
    CertificateInfo {
        id: previous.map(|info| info.id.clone()).filter(|id| !id.is_empty()).unwrap_or_else(new_id),
        certificate_configuration_info: CertificateConfigurationInfo {
            security_policy: data.security_policy.clone().unwrap_or_else(|| json!([])),
            // The profile the NFVO overrides the VNFD's base profile with; the first one
            // applies to the VNF's own certificates.
            certificate_base_profile: data.overriding_certificate_profile.first().cloned(),
            cmf_info,
            extra: Default::default(),
        },
        extra: Default::default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn configuration_data_becomes_the_instances_certificate_info() {
        let data = json!({
            "securityPolicy": [{"id": "p1", "maxValidityPeriod": 90, "minimumKeyLength": 2048}],
            "overridingCertificateProfile": [{"id": "prof", "issuer": "CN=ca"}, {"id": "other"}],
            "cmfData": {"endPoint": {"ipAddress": "192.0.2.10", "link": {"href": "https://cmf.example/est"}},
                "supportedProtocol": ["EST"]}
        });
        let info = certificate_info(&data, None);
        let configuration = &info["certificateConfigurationInfo"];
        assert_eq!(configuration["securityPolicy"], data["securityPolicy"]);
        assert_eq!(configuration["certificateBaseProfile"], json!({"id": "prof", "issuer": "CN=ca"}));
        assert_eq!(configuration["cmfInfo"]["supportedProtocols"], json!(["EST"]));
        assert_eq!(configuration["cmfInfo"]["endPoint"], data["cmfData"]["endPoint"]);
        assert!(info.get("certificateContents").is_none(), "no certificate is issued by solgate");
        // A later change keeps the ids and replaces the configuration.
        let changed = certificate_info(&json!({"securityPolicy": [{"id": "p2"}]}), Some(&info));
        assert_eq!(changed["id"], info["id"]);
        assert_eq!(changed["certificateConfigurationInfo"], json!({"securityPolicy": [{"id": "p2"}]}));
    }
}

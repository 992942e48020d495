//! Certificate configuration of a VNF instance (SOL003 V4.5.1, API 2.12.0): what the NFVO
//! sends as `certificateConfigurationData` (CreateVnfRequest and the change operations) is
//! kept as the instance's `certificateInfo.certificateConfigurationInfo`. solgate issues no
//! certificates itself, so `certificateContents` is never produced.

use serde_json::{Map, Value, json};

/// The `certificateInfo` after a request carrying `data`; `previous` keeps its id.
pub fn certificate_info(data: &Value, previous: Option<&Value>) -> Value {
    let mut configuration = Map::new();
    configuration.insert("securityPolicy".into(), data.get("securityPolicy").cloned().unwrap_or_else(|| json!([])));
    // The profile the NFVO overrides the VNFD's base profile with; the first one applies
    // to the VNF's own certificates.
    if let Some(profile) = data["overridingCertificateProfile"].as_array().and_then(|list| list.first()) {
        configuration.insert("certificateBaseProfile".into(), profile.clone());
    }
    if let Some(cmf) = data.get("cmfData").filter(|cmf| cmf.is_object()) {
        let previous_cmf = previous.and_then(|info| info["certificateConfigurationInfo"]["cmfInfo"]["id"].as_str());
        let mut info = Map::new();
        info.insert("id".into(), json!(previous_cmf.map_or_else(|| uuid::Uuid::new_v4().to_string(), str::to_owned)));
        if let Some(end_point) = cmf.get("endPoint") {
            info.insert("endPoint".into(), end_point.clone());
        }
        if let Some(protocols) = cmf.get("supportedProtocol") {
            info.insert("supportedProtocols".into(), protocols.clone());
        }
        configuration.insert("cmfInfo".into(), Value::Object(info));
    }
    let id =
        previous.and_then(|info| info["id"].as_str()).map_or_else(|| uuid::Uuid::new_v4().to_string(), str::to_owned);
    json!({"id": id, "certificateConfigurationInfo": configuration})
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

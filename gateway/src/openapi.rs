//! `GET /{api}/v{N}/openapi.json`: an OpenAPI 3.0 description of the negotiated version
//! (the `Version` header picks the minor), generated from the version registry: the paths
//! and methods this solgate serves for the major, each request body and response body with
//! the schema of that minor's dictionary, ProblemDetails for every error, and the SOL013
//! headers. Tools (validators, schema-driven fuzzers, client generators) read it.

use actix_web::{HttpResponse, web};
use serde_json::{Map, Value, json};
use solgate_core::operation::LcmOperation;
use solgate_schemas::{Api, VersionEntry};

use crate::error::ApiResult;
use crate::sol013::Negotiated;
use crate::state::AppState;

/// GET /{api}/v{N}/openapi.json
pub async fn show(state: web::Data<AppState>, negotiated: Negotiated) -> ApiResult<HttpResponse> {
    let required = state.registry.major(negotiated.api, negotiated.major).is_some_and(|m| m.version_header_required);
    let body = document(&negotiated.entry, &state.public_endpoint, required);
    Ok(HttpResponse::Ok().content_type("application/json").body(body.to_string()))
}

/// One operation of the description.
struct Operation {
    method: &'static str,
    path: String,
    summary: String,
    request: Option<(&'static str, &'static str)>,
    request_required: bool,
    success: u16,
    response: Option<Body>,
    /// Response headers of the success answer (`Location`, `ETag`).
    headers: &'static [&'static str],
    list: bool,
}

enum Body {
    Schema(&'static str),
    Array(&'static str),
    /// A file: media types and a binary string.
    File(&'static [&'static str]),
}

impl Operation {
    fn new(method: &'static str, path: impl Into<String>, summary: impl Into<String>, success: u16) -> Self {
        Operation {
            method,
            path: path.into(),
            summary: summary.into(),
            request: None,
            request_required: true,
            success,
            response: None,
            headers: &[],
            list: false,
        }
    }

    fn request(mut self, schema: &'static str) -> Self {
        self.request = Some((schema, "application/json"));
        self
    }

    fn returns(mut self, body: Body) -> Self {
        self.list = matches!(body, Body::Array(_));
        self.response = Some(body);
        self
    }

    fn headers(mut self, headers: &'static [&'static str]) -> Self {
        self.headers = headers;
        self
    }
}

fn operations(api: Api, major: u64, version: solgate_schemas::ApiVersionId) -> Vec<Operation> {
    use Body::{Array, File, Schema};
    let mut ops = vec![
        Operation::new("get", "/api_versions", "API version information", 200).returns(Schema("ApiVersionInformation")),
    ];
    match api {
        Api::Vnflcm => {
            ops.extend([
                Operation::new("get", "/vnf_instances", "Query VNF instances", 200).returns(Array("VnfInstance")),
                Operation::new("post", "/vnf_instances", "Create a VNF instance identifier", 201)
                    .request("CreateVnfRequest")
                    .returns(Schema("VnfInstance"))
                    .headers(&["Location"]),
                Operation::new("get", "/vnf_instances/{vnfInstanceId}", "Read a VNF instance", 200)
                    .returns(Schema("VnfInstance"))
                    .headers(&["ETag"]),
                Operation {
                    request: Some(("VnfInfoModificationRequest", "application/merge-patch+json")),
                    ..Operation::new("patch", "/vnf_instances/{vnfInstanceId}", "Modify VNF information", 202)
                        .headers(&["Location"])
                },
                Operation::new("delete", "/vnf_instances/{vnfInstanceId}", "Delete a VNF instance identifier", 204),
            ]);
            // A task a later minor added is described from that minor on.
            for operation in LcmOperation::ALL
                .into_iter()
                .filter(|operation| operation.in_major(major) && operation.since().is_none_or(|since| version >= since))
            {
                let Some(task) = operation.task_path() else { continue };
                ops.push(
                    Operation::new(
                        "post",
                        format!("/vnf_instances/{{vnfInstanceId}}/{task}"),
                        format!("Request {}", operation.name()),
                        202,
                    )
                    .request(operation.request_schema())
                    .headers(&["Location"]),
                );
            }
            ops.extend([
                Operation::new("get", "/vnf_lcm_op_occs", "Query LCM operation occurrences", 200)
                    .returns(Array("VnfLcmOpOcc")),
                Operation::new("get", "/vnf_lcm_op_occs/{vnfLcmOpOccId}", "Read an LCM operation occurrence", 200)
                    .returns(Schema("VnfLcmOpOcc")),
                Operation::new("post", "/vnf_lcm_op_occs/{vnfLcmOpOccId}/retry", "Retry an operation", 202),
                Operation::new("post", "/vnf_lcm_op_occs/{vnfLcmOpOccId}/rollback", "Roll an operation back", 202),
                Operation::new("post", "/vnf_lcm_op_occs/{vnfLcmOpOccId}/fail", "Mark an operation as failed", 200)
                    .returns(Schema("VnfLcmOpOcc")),
                Operation {
                    request_required: false,
                    ..Operation::new("post", "/vnf_lcm_op_occs/{vnfLcmOpOccId}/cancel", "Cancel an operation", 202)
                        .request("CancelMode")
                },
                Operation::new("get", "/subscriptions", "Query subscriptions", 200).returns(Array("LccnSubscription")),
                Operation::new("post", "/subscriptions", "Subscribe (303 to an identical subscription)", 201)
                    .request("LccnSubscriptionRequest")
                    .returns(Schema("LccnSubscription"))
                    .headers(&["Location"]),
                Operation::new("get", "/subscriptions/{subscriptionId}", "Read a subscription", 200)
                    .returns(Schema("LccnSubscription"))
                    .headers(&["ETag"]),
                Operation::new("delete", "/subscriptions/{subscriptionId}", "Terminate a subscription", 204),
            ]);
        }
        Api::Vnfpkgm => {
            ops.extend([
                Operation::new("get", "/vnf_packages", "Query VNF packages", 200).returns(Array("VnfPkgInfo")),
                Operation {
                    request_required: false,
                    ..Operation::new("post", "/vnf_packages", "Create a VNF package", 201)
                        .request("CreateVnfPkgInfoRequest")
                        .returns(Schema("VnfPkgInfo"))
                        .headers(&["Location"])
                },
                Operation::new("get", "/vnf_packages/{vnfPkgId}", "Read a VNF package", 200)
                    .returns(Schema("VnfPkgInfo"))
                    .headers(&["ETag"]),
                Operation {
                    request: Some(("VnfPkgInfoModifications", "application/merge-patch+json")),
                    ..Operation::new("patch", "/vnf_packages/{vnfPkgId}", "Modify a VNF package", 200)
                        .returns(Schema("VnfPkgInfoModifications"))
                },
                Operation::new("delete", "/vnf_packages/{vnfPkgId}", "Delete a VNF package", 204),
                Operation::new("get", "/vnf_packages/{vnfPkgId}/package_content", "Fetch the package content", 200)
                    .returns(File(&["application/zip"])),
                Operation {
                    request: Some(("", "application/zip")),
                    ..Operation::new(
                        "put",
                        "/vnf_packages/{vnfPkgId}/package_content",
                        "Upload the package content",
                        202,
                    )
                },
                Operation::new(
                    "post",
                    "/vnf_packages/{vnfPkgId}/package_content/upload_from_uri",
                    "Upload the package content from a URI",
                    202,
                )
                .request("UploadVnfPackageFromUriRequest"),
                Operation::new("get", "/vnf_packages/{vnfPkgId}/vnfd", "Read the VNFD", 200)
                    .returns(File(&["text/plain", "application/zip"])),
                Operation::new("get", "/vnf_packages/{vnfPkgId}/artifacts/{artifactPath}", "Fetch an artifact", 200)
                    .returns(File(&["application/octet-stream"])),
            ]);
        }
        Api::Vnffm => {
            ops.extend([
                Operation::new("get", "/alarms", "Query alarms", 200).returns(Array("Alarm")),
                Operation::new("get", "/alarms/{alarmId}", "Read an alarm", 200)
                    .returns(Schema("Alarm"))
                    .headers(&["ETag"]),
                Operation {
                    request: Some(("AlarmModifications", "application/merge-patch+json")),
                    ..Operation::new("patch", "/alarms/{alarmId}", "Acknowledge an alarm", 200)
                        .returns(Schema("AlarmModifications"))
                        .headers(&["ETag"])
                },
                Operation::new("get", "/subscriptions", "Query subscriptions", 200).returns(Array("FmSubscription")),
                Operation::new("post", "/subscriptions", "Subscribe (303 to an identical subscription)", 201)
                    .request("FmSubscriptionRequest")
                    .returns(Schema("FmSubscription"))
                    .headers(&["Location"]),
                Operation::new("get", "/subscriptions/{subscriptionId}", "Read a subscription", 200)
                    .returns(Schema("FmSubscription"))
                    .headers(&["ETag"]),
                Operation::new("delete", "/subscriptions/{subscriptionId}", "Terminate a subscription", 204),
            ]);
        }
        Api::Vnfpm => {
            ops.extend([
                Operation::new("get", "/pm_jobs", "Query PM jobs", 200).returns(Array("PmJob")),
                Operation::new("post", "/pm_jobs", "Create a PM job", 201)
                    .request("CreatePmJobRequest")
                    .returns(Schema("PmJob"))
                    .headers(&["Location"]),
                Operation::new("get", "/pm_jobs/{pmJobId}", "Read a PM job", 200).returns(Schema("PmJob")),
                Operation {
                    request: Some(("PmJobModifications", "application/merge-patch+json")),
                    ..Operation::new("patch", "/pm_jobs/{pmJobId}", "Modify a PM job", 200)
                        .returns(Schema("PmJobModifications"))
                },
                Operation::new("delete", "/pm_jobs/{pmJobId}", "Delete a PM job", 204),
                Operation::new("get", "/pm_jobs/{pmJobId}/reports/{reportId}", "Read a performance report", 200)
                    .returns(Schema("PerformanceReport")),
                Operation::new("get", "/thresholds", "Query thresholds", 200).returns(Array("Threshold")),
                Operation::new("post", "/thresholds", "Create a threshold", 201)
                    .request("CreateThresholdRequest")
                    .returns(Schema("Threshold"))
                    .headers(&["Location"]),
                Operation::new("get", "/thresholds/{thresholdId}", "Read a threshold", 200)
                    .returns(Schema("Threshold")),
                Operation {
                    request: Some(("ThresholdModifications", "application/merge-patch+json")),
                    ..Operation::new("patch", "/thresholds/{thresholdId}", "Modify a threshold", 200)
                        .returns(Schema("ThresholdModifications"))
                },
                Operation::new("delete", "/thresholds/{thresholdId}", "Delete a threshold", 204),
            ]);
        }
    }
    ops
}

/// The OpenAPI 3.0 document of one version.
pub fn document(entry: &VersionEntry, public_endpoint: &str, version_required: bool) -> Value {
    let api = entry.api;
    let major = entry.major();
    let mut paths = Map::new();
    for operation in operations(api, major, entry.version) {
        let item = paths.entry(operation.path.clone()).or_insert_with(|| json!({}));
        let mut parameters = vec![json!({"$ref": "#/components/parameters/Version"})];
        for name in path_parameters(&operation.path) {
            parameters.push(json!({"name": name, "in": "path", "required": true, "schema": {"type": "string"}}));
        }
        if operation.list {
            for name in
                ["filter", "all_fields", "fields", "exclude_fields", "exclude_default", "nextpage_opaque_marker"]
            {
                parameters.push(json!({"$ref": format!("#/components/parameters/{name}")}));
            }
        }
        // PM jobs and thresholds have no ETag: their PATCH takes no If-Match.
        if operation.method == "patch" && api != Api::Vnfpm {
            parameters.push(json!({"$ref": "#/components/parameters/If-Match"}));
        }
        let mut responses = Map::new();
        let mut success = json!({"description": operation.summary.clone()});
        if let Some(body) = &operation.response {
            success["content"] = match body {
                Body::Schema(name) => json!({"application/json": {"schema": schema_ref(name)}}),
                Body::Array(name) => {
                    json!({"application/json": {"schema": {"type": "array", "items": schema_ref(name)}}})
                }
                Body::File(types) => Value::Object(
                    types
                        .iter()
                        .map(|kind| ((*kind).to_owned(), json!({"schema": {"type": "string", "format": "binary"}})))
                        .collect(),
                ),
            };
        }
        let mut headers = Map::new();
        headers.insert("Version".into(), json!({"$ref": "#/components/headers/Version"}));
        for header in operation.headers {
            headers.insert((*header).into(), json!({"schema": {"type": "string"}}));
        }
        if operation.list {
            headers.insert(
                "Link".into(),
                json!({"description": "The next page (SOL013 5.4.2.1)", "schema": {"type": "string"}}),
            );
        }
        success["headers"] = Value::Object(headers);
        responses.insert(operation.success.to_string(), success);
        if operation.path == "/subscriptions" && operation.method == "post" {
            responses.insert(
                "303".into(),
                json!({"description": "An identical subscription exists (Location)", "headers": {"Location": {"schema": {"type": "string"}}}}),
            );
        }
        responses.insert("4XX".into(), json!({"$ref": "#/components/responses/ProblemDetails"}));
        responses.insert("5XX".into(), json!({"$ref": "#/components/responses/ProblemDetails"}));
        let mut op = json!({
            "summary": operation.summary,
            "operationId": operation_id(operation.method, &operation.path),
            "parameters": parameters,
            "responses": responses,
        });
        if let Some((schema, media)) = operation.request {
            let schema =
                if schema.is_empty() { json!({"type": "string", "format": "binary"}) } else { schema_ref(schema) };
            op["requestBody"] = json!({"required": operation.request_required, "content": {media: {"schema": schema}}});
        }
        item[operation.method] = op;
    }
    let defs = entry.dictionary.document().map(|document| document.defs_object()).unwrap_or_default();
    let schemas: Map<String, Value> = defs.into_iter().map(|(name, schema)| (name, rewrite_refs(schema))).collect();
    json!({
        "openapi": "3.0.3",
        "info": {
            "title": format!("solgate {} API", api.as_str()),
            "version": entry.version_string(),
            "description": format!("{} as solgate serves it, generated from its version registry.", entry.etsi_document),
        },
        "servers": [{"url": format!("{public_endpoint}/{}/v{major}", api.as_str())}],
        "paths": paths,
        "components": {
            "schemas": schemas,
            "parameters": parameters(entry, version_required),
            "headers": {"Version": {"description": "The API version used (SOL013 9.1)", "schema": {"type": "string"}}},
            "responses": {"ProblemDetails": {
                "description": "An error (SOL013 6.4)",
                "content": {"application/problem+json": {"schema": schema_ref("ProblemDetails")}},
            }},
            "securitySchemes": {"oauth2": {
                "type": "oauth2",
                "description": "With [auth] mode = \"oauth2\" (SOL013 clause 8)",
                "flows": {"clientCredentials": {"tokenUrl": format!("{public_endpoint}/oauth2/token"), "scopes": {}}},
            }},
        },
        "security": [{}, {"oauth2": []}],
    })
}

fn parameters(entry: &VersionEntry, version_required: bool) -> Value {
    let query = |description: &str| json!({"in": "query", "required": false, "description": description, "schema": {"type": "string"}});
    let mut parameters = Map::new();
    parameters.insert(
        "Version".into(),
        json!({"name": "Version", "in": "header", "required": version_required,
            "description": "The API version requested (SOL013 9.1)", "schema": {"type": "string", "example": entry.version_string()}}),
    );
    parameters.insert(
        "If-Match".into(),
        json!({"name": "If-Match", "in": "header", "required": false,
            "description": "Apply only to the representation of this ETag (else 412)", "schema": {"type": "string"}}),
    );
    for (name, description) in [
        ("filter", "Attribute-based filter (SOL013 5.2)"),
        ("all_fields", "Include all complex attributes (SOL013 5.3)"),
        ("fields", "Complex attributes to include"),
        ("exclude_fields", "Complex attributes to exclude"),
        ("exclude_default", "Exclude the default complex attributes"),
        ("nextpage_opaque_marker", "The page to return (SOL013 5.4)"),
    ] {
        let mut parameter = query(description);
        parameter["name"] = json!(name);
        if name == "all_fields" || name == "exclude_default" {
            parameter["allowEmptyValue"] = json!(true);
        }
        parameters.insert(name.into(), parameter);
    }
    Value::Object(parameters)
}

fn schema_ref(name: &str) -> Value {
    json!({"$ref": format!("#/components/schemas/{name}")})
}

/// `#/$defs/X` → `#/components/schemas/X`.
fn rewrite_refs(schema: Value) -> Value {
    match schema {
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(key, value)| match (key.as_str(), &value) {
                    ("$ref", Value::String(target)) => {
                        let name = target.strip_prefix("#/$defs/").unwrap_or(target);
                        (key, json!(format!("#/components/schemas/{name}")))
                    }
                    _ => (key, rewrite_refs(value)),
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(rewrite_refs).collect()),
        other => other,
    }
}

fn path_parameters(path: &str) -> Vec<&str> {
    path.split('/').filter_map(|part| part.strip_prefix('{').and_then(|rest| rest.strip_suffix('}'))).collect()
}

fn operation_id(method: &str, path: &str) -> String {
    let words: Vec<&str> = path
        .split('/')
        .filter(|part| !part.is_empty())
        .map(|part| part.trim_matches(|c| c == '{' || c == '}'))
        .collect();
    format!("{method}_{}", words.join("_"))
}

#[cfg(test)]
mod tests {
    use solgate_schemas::Registry;

    use super::*;

    #[test]
    fn each_version_describes_its_paths_with_its_own_schemas() {
        let registry = Registry::builtin().unwrap();
        let v2 = registry.newest(Api::Vnflcm, 2).unwrap();
        let document = document(v2, "http://vnfm", true);
        assert_eq!(document["openapi"], "3.0.3");
        assert_eq!(document["info"]["version"], v2.version_string());
        let instantiate = &document["paths"]["/vnf_instances/{vnfInstanceId}/instantiate"]["post"];
        assert_eq!(
            instantiate["requestBody"]["content"]["application/json"]["schema"]["$ref"],
            "#/components/schemas/InstantiateVnfRequest"
        );
        assert!(document["paths"]["/vnf_instances/{vnfInstanceId}/change_vnfpkg"].is_object());
        assert!(document["components"]["schemas"]["VnfInstance"].is_object());
        assert!(!document.to_string().contains("#/$defs/"), "every $ref points into components");
        let v1 = document_of(&registry, Api::Vnflcm, 1);
        assert!(v1["paths"]["/vnf_instances/{vnfInstanceId}/change_vnfpkg"].is_null(), "SOL003 v2.6.1 has none");
        let pm = document_of(&registry, Api::Vnfpm, 2);
        assert_eq!(pm["servers"][0]["url"], "http://vnfm/vnfpm/v2");
        assert_eq!(
            pm["paths"]["/pm_jobs/{pmJobId}/reports/{reportId}"]["get"]["responses"]["200"]["content"]["application/json"]
                ["schema"]["$ref"],
            "#/components/schemas/PerformanceReport"
        );
        let patch = &pm["paths"]["/thresholds/{thresholdId}"]["patch"];
        assert!(patch["requestBody"]["content"]["application/merge-patch+json"].is_object());
        assert!(!patch["parameters"].to_string().contains("If-Match"), "PM resources have no ETag");
        let packages = document_of(&registry, Api::Vnfpkgm, 1);
        assert!(packages["paths"]["/vnf_packages/{vnfPkgId}/package_content"]["put"].is_object());
        let faults = super::document(registry.newest(Api::Vnffm, 1).unwrap(), "http://vnfm", true);
        assert_eq!(faults["servers"][0]["url"], "http://vnfm/vnffm/v1");
        assert_eq!(
            faults["paths"]["/alarms/{alarmId}"]["patch"]["requestBody"]["content"]["application/merge-patch+json"]["schema"]
                ["$ref"],
            "#/components/schemas/AlarmModifications"
        );
        assert!(faults["paths"]["/subscriptions"]["post"]["responses"]["303"].is_object());
    }

    fn document_of(registry: &Registry, api: Api, major: u64) -> Value {
        document(registry.newest(api, major).unwrap(), "http://vnfm", false)
    }
}

//! `GET /{api}/v{N}/openapi.json`: an OpenAPI 3.0 description of the negotiated version
//! (the `Version` header picks the minor), generated from the version registry: the paths
//! and methods this solgate serves for the major, each request body and response body with
//! the schema of that minor's dictionary, ProblemDetails for every error, and the SOL013
//! headers. Tools (validators, schema-driven fuzzers, client generators) read it.

use actix_web::http::Method;
use actix_web::{HttpResponse, web};
use serde_json::{Map, Value, json};
use solgate_core::links::paths;
use solgate_schemas::{Api, VersionEntry};

use crate::error::ApiResult;
use crate::routes::endpoint::{Body, Endpoint};
use crate::routes::tables;
use crate::sol013::Negotiated;
use crate::state::AppState;

/// GET /{api}/v{N}/openapi.json
pub async fn show(state: web::Data<AppState>, negotiated: Negotiated) -> ApiResult<HttpResponse> {
    let required = state.registry.major(negotiated.api, negotiated.major).is_some_and(|m| m.version_header_required);
    let body = document(&negotiated.entry, &state.public_endpoint, required);
    Ok(HttpResponse::Ok().content_type("application/json").body(body.to_string()))
}

/// `/{api}/v{major}/openapi.json`, in every major's table (registered once for all), not
/// itself described.
pub fn row() -> Endpoint {
    Endpoint::get(paths::OPENAPI, "index", |route| route.to(show)).shared()
}

/// The OpenAPI 3.0 document of one version: the rows of its major's table that the minor
/// has, in table order.
pub fn document(entry: &VersionEntry, public_endpoint: &str, version_required: bool) -> Value {
    let api = entry.api;
    let major = entry.major();
    let mut paths = Map::new();
    let table = tables::all()
        .apis
        .iter()
        .flat_map(|tables| &tables.majors)
        .find(|table| table.api == Some(api) && table.major == Some(major));
    let rows = table.into_iter().flat_map(|table| &table.endpoints);
    for endpoint in rows.filter(|endpoint| endpoint.documented && endpoint.in_version(entry.version)) {
        let path = openapi_path(&endpoint.path);
        let method = endpoint.method.as_str().to_ascii_lowercase();
        let operation = operation(api, endpoint, &path, &method);
        let item = paths.entry(path).or_insert_with(|| json!({}));
        item[method] = operation;
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

/// The Operation object of a row.
fn operation(api: Api, endpoint: &Endpoint, path: &str, method: &str) -> Value {
    let mut parameters = vec![json!({"$ref": "#/components/parameters/Version"})];
    for name in path_parameters(path) {
        parameters.push(json!({"name": name, "in": "path", "required": true, "schema": {"type": "string"}}));
    }
    if endpoint.is_list() {
        for name in ["filter", "all_fields", "fields", "exclude_fields", "exclude_default", "nextpage_opaque_marker"] {
            parameters.push(json!({"$ref": format!("#/components/parameters/{name}")}));
        }
    }
    // PM jobs and thresholds have no ETag: their PATCH takes no If-Match.
    if endpoint.method == Method::PATCH && api != Api::Vnfpm {
        parameters.push(json!({"$ref": "#/components/parameters/If-Match"}));
    }
    let mut responses = Map::new();
    responses.insert(endpoint.success.to_string(), success(endpoint));
    if endpoint.path == paths::SUBSCRIPTIONS && endpoint.method == Method::POST {
        responses.insert(
            "303".into(),
            json!({"description": "An identical subscription exists (Location)", "headers": {"Location": {"schema": {"type": "string"}}}}),
        );
    }
    responses.insert("4XX".into(), json!({"$ref": "#/components/responses/ProblemDetails"}));
    responses.insert("5XX".into(), json!({"$ref": "#/components/responses/ProblemDetails"}));
    let mut op = json!({
        "summary": endpoint.summary,
        "operationId": operation_id(method, path),
        "parameters": parameters,
        "responses": responses,
    });
    if let Some(request) = endpoint.request {
        let schema = if request.schema.is_empty() {
            json!({"type": "string", "format": "binary"})
        } else {
            schema_ref(request.schema)
        };
        op["requestBody"] = json!({"required": request.required, "content": {request.media: {"schema": schema}}});
    }
    op
}

/// The success Response object: its body and headers.
fn success(endpoint: &Endpoint) -> Value {
    let mut success = json!({"description": endpoint.summary});
    if let Some(body) = &endpoint.returns {
        success["content"] = match body {
            Body::Schema(name) => json!({"application/json": {"schema": schema_ref(name)}}),
            Body::Array(name) => json!({"application/json": {"schema": {"type": "array", "items": schema_ref(name)}}}),
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
    for header in endpoint.headers {
        headers.insert((*header).into(), json!({"schema": {"type": "string"}}));
    }
    if endpoint.is_list() {
        headers.insert(
            "Link".into(),
            json!({"description": "The next page (SOL013 5.4.2.1)", "schema": {"type": "string"}}),
        );
    }
    success["headers"] = Value::Object(headers);
    success
}

/// The template as OpenAPI writes it: `{artifactPath:.+}` is `{artifactPath}`.
fn openapi_path(template: &str) -> String {
    let mut path = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(colon) = rest.find(':') {
        path.push_str(&rest[..colon]);
        rest = &rest[rest[colon..].find('}').map_or(rest.len(), |close| colon + close)..];
    }
    path.push_str(rest);
    path
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

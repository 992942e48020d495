//! Hostile input over real HTTP, on SQLite and PostgreSQL: the classes that once answered
//! 500 (huge filters, NUL characters) with a test each, and a generated run over every route
//! of v1, v2, vnfpkgm and vnfpm (query strings, bodies with control characters and huge arrays,
//! odd headers) that asserts no 5xx and a live server after it.
//!
//! `SOLGATE_FUZZ_CASES` sets the generated requests per backend (default 1,500 in the test
//! command); before a release: `SOLGATE_FUZZ_CASES=100000 cargo test --test integration fuzz::`.

use reqwest::Method;
use serde_json::{Value, json};

use crate::helpers::{Db, TestApp, send};
use crate::lcm_support::v2;

// ---------------------------------------------------------------------------------------
// The classes, one test each, on both backends.

const LISTS: &[(&str, &str)] = &[
    ("/vnflcm/v2/vnf_instances", "2.0.0"),
    ("/vnflcm/v1/vnf_instances", ""),
    ("/vnflcm/v2/vnf_lcm_op_occs", "2.0.0"),
    ("/vnfpkgm/v1/vnf_packages", ""),
    ("/vnfpkgm/v1/subscriptions", ""),
    ("/vnfpm/v2/pm_jobs", "2.1.0"),
    ("/vnfpm/v2/thresholds", "2.1.0"),
];

fn get(app: &TestApp, path: &str, version: &str) -> reqwest::RequestBuilder {
    let request = app.get(path).header("Accept", "application/json");
    if version.is_empty() { request } else { request.header("Version", version) }
}

async fn app_on(db: Db, configure: impl FnOnce(&mut solgate::Settings)) -> Option<TestApp> {
    TestApp::spawn_on(db, |settings| {
        settings.notifications.test_callback_uri = false;
        configure(settings);
    })
    .await
}

async fn query_size(db: Db) {
    let Some(app) = app_on(db, |_| {}).await else { return };
    let terms = (0..2000).map(|i| format!("(eq,id,i{i})")).collect::<Vec<_>>().join(";");
    let values = (0..5000).map(|i| format!("i{i}")).collect::<Vec<_>>().join(",");
    for (path, version) in LISTS {
        let reply = send(get(&app, &format!("{path}?filter={terms}"), version)).await;
        assert!(reply.problem(400).contains("(query.max_filter_terms)"), "{path} on {db:?}");
        let reply = send(get(&app, &format!("{path}?filter=(in,id,{values})"), version)).await;
        assert!(reply.problem(400).contains("(query.max_filter_values)"), "{path} on {db:?}");
    }
    // With the limits raised past them, the same queries run (the SQL stays bounded).
    let Some(roomy) = app_on(db, |settings| {
        settings.query.max_filter_terms = 3000;
        settings.query.max_filter_values = 6000;
    })
    .await
    else {
        return;
    };
    for (path, version) in LISTS {
        let reply = send(get(&roomy, &format!("{path}?filter={terms}"), version)).await;
        assert_eq!(reply.status, 200, "{path} on {db:?}: {}", reply.text);
        let reply = send(get(&roomy, &format!("{path}?filter=(in,id,{values})"), version)).await;
        assert_eq!(reply.status, 200, "{path} on {db:?}: {}", reply.text);
    }
}

async fn nul_and_control_characters(db: Db) {
    let Some(app) = app_on(db, |_| {}).await else { return };
    let (_, vnfd_id) = app.onboard_sample().await;
    for (path, version) in [("/vnflcm/v2/vnf_instances", "2.0.0"), ("/vnflcm/v1/vnf_instances", "")] {
        let mut request = app.request(Method::POST, path).header("Accept", "application/json");
        if !version.is_empty() {
            request = request.header("Version", version);
        }
        let reply = send(request.json(&json!({"vnfdId": vnfd_id, "vnfInstanceName": "a\u{0}b"}))).await;
        assert_eq!(
            reply.problem(400),
            "The request body has a NUL character (U+0000) at /vnfInstanceName; no attribute may contain one.",
            "{path} on {db:?}"
        );
        let reply = send(get(&app, &format!("{path}?filter=(eq,vnfInstanceName,a%00b)"), version)).await;
        assert!(reply.problem(400).contains("NUL character"), "{path} on {db:?}");
        let reply = send(get(&app, &format!("{path}?filter=(cont,vnfInstanceName,%00)"), version)).await;
        assert!(reply.problem(400).contains("NUL character"), "{path} on {db:?}");
        let reply = send(get(&app, &format!("{path}/a%00b"), version)).await;
        reply.problem(404);
    }
    let metadata = json!({"vnfdId": vnfd_id, "vnfInstanceName": "x", "metadata": {"k\u{0}": "v"}});
    let reply = send(v2(&app, Method::POST, "/vnflcm/v2/vnf_instances").json(&metadata)).await;
    assert!(reply.problem(400).contains("/metadata/k\\u0000"), "{}", reply.text);

    // Other control characters are stored and matched alike on both backends.
    let name = "tab\tbell\u{7}del\u{7f}";
    let reply = send(
        v2(&app, Method::POST, "/vnflcm/v2/vnf_instances").json(&json!({"vnfdId": vnfd_id, "vnfInstanceName": name})),
    )
    .await;
    assert_eq!(reply.status, 201, "{}", reply.text);
    for op in ["eq", "cont"] {
        let reply = send(get(
            &app,
            &format!("/vnflcm/v2/vnf_instances?filter=({op},vnfInstanceName,tab%09bell%07del%7F)"),
            "2.0.0",
        ))
        .await;
        assert_eq!(reply.status, 200, "{}", reply.text);
        let names: Vec<Value> =
            reply.json().as_array().unwrap().iter().map(|item| item["vnfInstanceName"].clone()).collect();
        assert_eq!(names, [json!(name)], "{op} on {db:?}");
    }
}

#[tokio::test]
async fn huge_filters_are_400_on_sqlite() {
    query_size(Db::Sqlite).await;
}

#[tokio::test]
async fn huge_filters_are_400_on_postgres() {
    query_size(Db::Postgres).await;
}

#[tokio::test]
async fn nul_is_refused_and_controls_match_on_sqlite() {
    nul_and_control_characters(Db::Sqlite).await;
}

#[tokio::test]
async fn nul_is_refused_and_controls_match_on_postgres() {
    nul_and_control_characters(Db::Postgres).await;
}

// ---------------------------------------------------------------------------------------
// Generated hostile requests.

/// xorshift64*: reproducible from the seed printed with a failure.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, bound: usize) -> usize {
        (self.next() % bound.max(1) as u64) as usize
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

const HOSTILE_TEXT: &[&str] = &[
    "",
    " ",
    "\u{0}",
    "a\u{0}b",
    "\u{1}\u{1f}\u{7f}",
    "\t\r\n",
    "'",
    "''",
    "(",
    ")",
    ",",
    ";",
    "%",
    "%00",
    "%ZZ",
    "/",
    "../../etc/passwd",
    "\\",
    "\"",
    "null",
    "true",
    "-1",
    "1e309",
    "9223372036854775808",
    "NaN",
    "\u{feff}",
    "\u{202e}rtl",
    "\u{fffd}",
    "😀",
    "ｅｑ",
    "<script>",
    "' OR 1=1 --",
    "${jndi:x}",
    "{{7*7}}",
    "@key",
    "~1",
    "2026-13-45T25:61:61Z",
    "http://169.254.169.254/",
    "file:///etc/passwd",
    "http://127.0.0.1:1/x",
];

const ATTRS: &[&str] = &[
    "id",
    "vnfInstanceName",
    "vnfdId",
    "instantiationState",
    "operationState",
    "operation",
    "vnfInstanceId",
    "startTime",
    "isAutomaticInvocation",
    "instantiatedVnfInfo/vnfState",
    "instantiatedVnfInfo/scaleStatus/scaleLevel",
    "metadata/k",
    "metadata/@key",
    "vnfConfigurableProperties",
    "onboardingState",
    "softwareImages/size",
    "userDefinedData/x",
    "_links/self/href",
    "callbackUri",
    "a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p/q/r",
    "",
];

const OPS: &[&str] = &["eq", "neq", "gt", "gte", "lt", "lte", "in", "nin", "cont", "ncont", "like", "EQ", ""];

fn hostile_text(rng: &mut Rng) -> String {
    match rng.below(10) {
        0 => "x".repeat(rng.below(3000)),
        1 => (0..rng.below(40)).map(|_| char::from_u32(rng.below(0x3000) as u32).unwrap_or('?')).collect(),
        _ => (*rng.pick(HOSTILE_TEXT)).to_owned(),
    }
}

fn encode(text: &str) -> String {
    percent_encoding::utf8_percent_encode(text, percent_encoding::NON_ALPHANUMERIC).to_string()
}

fn filter(rng: &mut Rng) -> String {
    let terms = if rng.below(20) == 0 { 60 } else { 1 + rng.below(4) };
    (0..terms)
        .map(|_| {
            let values = if rng.below(15) == 0 { 250 } else { 1 + rng.below(3) };
            let values = (0..values).map(|_| hostile_text(rng).replace([',', ')'], "")).collect::<Vec<_>>().join(",");
            format!("({},{},{values})", rng.pick(OPS), rng.pick(ATTRS))
        })
        .collect::<Vec<_>>()
        .join(";")
}

fn query(rng: &mut Rng) -> String {
    let mut parts = Vec::new();
    for _ in 0..rng.below(4) {
        parts.push(match rng.below(9) {
            0..=2 => format!("filter={}", if rng.below(3) == 0 { filter(rng) } else { encode(&filter(rng)) }),
            3 => format!(
                "fields={}",
                encode(&(0..1 + rng.below(5)).map(|_| *rng.pick(ATTRS)).collect::<Vec<_>>().join(","))
            ),
            4 => format!("exclude_fields={}", encode(rng.pick::<&str>(ATTRS))),
            5 => ["all_fields", "exclude_default", "all_records=yes", "all_fields=false"][rng.below(4)].to_owned(),
            6 => format!("nextpage_opaque_marker={}", encode(&hostile_text(rng))),
            7 => format!("{}={}", encode(&hostile_text(rng)), encode(&hostile_text(rng))),
            _ => hostile_text(rng).replace(['#', ' '], ""),
        });
    }
    parts.join("&")
}

fn json_value(rng: &mut Rng, depth: usize) -> Value {
    match rng.below(if depth > 4 { 5 } else { 8 }) {
        0 => Value::Null,
        1 => json!(rng.below(2) == 0),
        2 => json!(rng.next() as i64),
        3 => json!(f64::from(rng.below(1000) as u32) / 7.0),
        4 => json!(hostile_text(rng)),
        5 => Value::Array(
            (0..if rng.below(10) == 0 { 5000 } else { rng.below(4) }).map(|_| json!(hostile_text(rng))).collect(),
        ),
        _ => {
            let mut map = serde_json::Map::new();
            for _ in 0..rng.below(5) {
                map.insert(hostile_text(rng), json_value(rng, depth + 1));
            }
            Value::Object(map)
        }
    }
}

/// A body: random JSON, or a plausible request with hostile members.
fn body(rng: &mut Rng, ids: &Ids) -> Option<String> {
    let plausible = [
        json!({"vnfdId": ids.vnfd_id, "vnfInstanceName": hostile_text(rng), "metadata": json_value(rng, 3)}),
        json!({"flavourId": hostile_text(rng), "instantiationLevelId": hostile_text(rng), "additionalParams": json_value(rng, 2),
            "vimConnectionInfo": json_value(rng, 2), "extVirtualLinks": [json_value(rng, 3)]}),
        json!({"callbackUri": hostile_text(rng), "filter": json_value(rng, 2), "authentication": json_value(rng, 2)}),
        json!({"addressInformation": hostile_text(rng), "userName": hostile_text(rng), "password": hostile_text(rng)}),
        json!({"type": hostile_text(rng), "aspectId": hostile_text(rng), "numberOfSteps": json_value(rng, 4)}),
        json!({"operationalState": hostile_text(rng), "userDefinedData": json_value(rng, 3)}),
        json!({"objectType": rng.pick(&["Vnf", "VnfIntCp"]), "objectInstanceIds": [ids.instance, hostile_text(rng)],
            "subObjectInstanceIds": [hostile_text(rng)], "callbackUri": hostile_text(rng),
            "criteria": {"performanceMetric": [hostile_text(rng)], "performanceMetricGroup": json_value(rng, 2),
                "collectionPeriod": json_value(rng, 1), "reportingPeriod": json_value(rng, 1), "reportingBoundary": hostile_text(rng)}}),
        json!({"objectType": "Vnf", "objectInstanceId": ids.instance, "callbackUri": hostile_text(rng),
            "criteria": {"performanceMetric": format!("VCpuUsageMeanVnf.{}", ids.instance), "thresholdType": hostile_text(rng),
                "simpleThresholdDetails": {"thresholdValue": json_value(rng, 1), "hysteresis": json_value(rng, 1)}}}),
    ];
    match rng.below(8) {
        0 => None,
        1 => Some(hostile_text(rng)),
        2 => Some(json_value(rng, 0).to_string()),
        _ => Some(rng.pick(&plausible).to_string()),
    }
}

struct Ids {
    vnfd_id: String,
    instance: String,
    package: String,
}

/// Every route (method, path with `{id}`), v1, v2, vnfpkgm and vnfpm.
fn routes() -> Vec<(Method, String)> {
    let mut routes = Vec::new();
    for api in ["vnflcm", "vnfpkgm"] {
        routes.push((Method::GET, format!("/{api}/api_versions")));
    }
    for major in ["v1", "v2"] {
        let base = format!("/vnflcm/{major}");
        routes.push((Method::GET, format!("{base}/api_versions")));
        for (method, path) in [
            (Method::GET, "vnf_instances"),
            (Method::POST, "vnf_instances"),
            (Method::GET, "vnf_instances/{id}"),
            (Method::PATCH, "vnf_instances/{id}"),
            (Method::DELETE, "vnf_instances/{id}"),
            (Method::GET, "vnf_lcm_op_occs"),
            (Method::GET, "vnf_lcm_op_occs/{id}"),
            (Method::GET, "subscriptions"),
            (Method::POST, "subscriptions"),
            (Method::GET, "subscriptions/{id}"),
            (Method::DELETE, "subscriptions/{id}"),
        ] {
            routes.push((method, format!("{base}/{path}")));
        }
        for task in [
            "instantiate",
            "terminate",
            "scale",
            "scale_to_level",
            "heal",
            "change_flavour",
            "operate",
            "change_ext_conn",
            "change_vnfpkg",
        ] {
            routes.push((Method::POST, format!("{base}/vnf_instances/{{id}}/{task}")));
        }
        for task in ["retry", "rollback", "fail", "cancel"] {
            routes.push((Method::POST, format!("{base}/vnf_lcm_op_occs/{{id}}/{task}")));
        }
    }
    let base = "/vnfpkgm/v1/vnf_packages";
    for (method, path) in [
        (Method::GET, ""),
        (Method::POST, ""),
        (Method::GET, "/{id}"),
        (Method::PATCH, "/{id}"),
        (Method::DELETE, "/{id}"),
        (Method::GET, "/{id}/package_content"),
        (Method::PUT, "/{id}/package_content"),
        (Method::POST, "/{id}/package_content/upload_from_uri"),
        (Method::GET, "/{id}/vnfd"),
        (Method::GET, "/{id}/artifacts/{id}"),
        (Method::GET, "/{id}/artifacts/Scripts/{id}"),
    ] {
        routes.push((method, format!("{base}{path}")));
    }
    let base = "/vnfpkgm/v1/subscriptions";
    for (method, path) in [(Method::GET, ""), (Method::POST, ""), (Method::GET, "/{id}"), (Method::DELETE, "/{id}")] {
        routes.push((method, format!("{base}{path}")));
    }
    routes.push((Method::GET, "/vnfpm/api_versions".into()));
    for collection in ["pm_jobs", "thresholds"] {
        let base = format!("/vnfpm/v2/{collection}");
        for (method, path) in [
            (Method::GET, ""),
            (Method::POST, ""),
            (Method::GET, "/{id}"),
            (Method::PATCH, "/{id}"),
            (Method::DELETE, "/{id}"),
        ] {
            routes.push((method, format!("{base}{path}")));
        }
    }
    routes.push((Method::GET, "/vnfpm/v2/pm_jobs/{id}/reports/{id}".into()));
    routes
}

/// Sends `cases` generated requests; returns the ones answered 5xx (or not at all).
async fn fuzz(app: &TestApp, cases: usize, seed: u64, routes: &[(Method, String)], ids: &Ids) -> Vec<String> {
    let mut rng = Rng(seed | 1);
    let mut failures = Vec::new();
    let client = reqwest::Client::builder().timeout(std::time::Duration::from_secs(30)).build().unwrap();
    for case in 0..cases {
        let (method, template) = rng.pick(routes).clone();
        let id = match rng.below(6) {
            0 => ids.instance.clone(),
            1 => ids.package.clone(),
            2 => uuid::Uuid::new_v4().to_string(),
            _ => encode(&hostile_text(&mut rng)),
        };
        let mut path = template.replace("{id}", &id);
        if rng.below(2) == 0 {
            path = format!("{path}?{}", query(&mut rng));
        }
        let mut request = client.request(method.clone(), app.url(&path));
        let version = ["2.0.0", "1.3.0", "2.1.0", "9.9.9", "", "2", "abc", "2.0.0.0"][rng.below(8)];
        if !version.is_empty() {
            request = request.header("Version", version);
        }
        let accept =
            ["application/json", "*/*", "text/html", "application/zip", "", "application/json;q=0"][rng.below(6)];
        if !accept.is_empty() {
            request = request.header("Accept", accept);
        }
        if let Some(body) = body(&mut rng, ids) {
            let content_type =
                ["application/json", "application/merge-patch+json", "text/plain", "application/zip", ""][rng.below(5)];
            if !content_type.is_empty() {
                request = request.header("Content-Type", content_type);
            }
            request = request.body(body);
        }
        let what = format!("case {case} (seed {seed}): {method} {path}");
        match request.send().await {
            Ok(response) if response.status().is_server_error() => {
                let status = response.status();
                failures.push(format!("{what} -> {status}: {}", response.text().await.unwrap_or_default()));
            }
            Ok(response) => {
                let _ = response.bytes().await;
            }
            Err(error) if error.is_builder() => {}
            Err(error) => failures.push(format!("{what} -> no answer: {error}")),
        }
    }
    let alive = send(app.get("/healthz")).await;
    if alive.status != 200 {
        failures.push(format!("the server is not alive after the run: {}", alive.status));
    }
    failures
}

fn cases() -> usize {
    std::env::var("SOLGATE_FUZZ_CASES").ok().and_then(|text| text.parse().ok()).unwrap_or(1500)
}

async fn generated_run(db: Db) {
    let Some(app) = app_on(db, |_| {}).await else { return };
    let (package, vnfd_id) = app.onboard_sample().await;
    let instance = crate::lcm_support::create_instance(&app, &vnfd_id, "fuzz").await;
    let ids = Ids { vnfd_id, instance, package };
    let seed = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as u64;
    let cases = cases();
    let failures = fuzz(&app, cases, seed, &routes(), &ids).await;
    println!("fuzz on {db:?}: {cases} generated requests (seed {seed}), {} 5xx", failures.len());
    assert!(failures.is_empty(), "{} of {cases} requests failed on {db:?}:\n{}", failures.len(), failures.join("\n"));
}

#[tokio::test]
async fn generated_hostile_requests_get_no_5xx_on_sqlite() {
    generated_run(Db::Sqlite).await;
}

#[tokio::test]
async fn generated_hostile_requests_get_no_5xx_on_postgres() {
    generated_run(Db::Postgres).await;
}

/// The run can fail: a route that answers 500 (the test app's panicking handler) is found.
#[tokio::test]
async fn the_generated_run_finds_an_injected_5xx() {
    let app = app_on(Db::Sqlite, |_| {}).await.unwrap();
    let ids = Ids { vnfd_id: "x".into(), instance: "x".into(), package: "x".into() };
    let mut routes = routes();
    routes.push((Method::GET, "/vnflcm/v2/test_panic".to_owned()));
    let failures = fuzz(&app, 400, 7, &routes, &ids).await;
    assert!(!failures.is_empty(), "the injected 500 was not found");
    assert!(failures.iter().all(|failure| failure.contains("/vnflcm/v2/test_panic")), "{failures:#?}");
}

// ---------------------------------------------------------------------------------------
// The query-to-SQL path as a property: any generated filter is refused at parse time or runs
// as SQL on both backends.

#[test]
fn any_accepted_filter_runs_as_sql_on_both_backends() {
    use proptest::prelude::*;
    use solgate_db::repo::lcm::{self, LcmMajor, columns};
    use solgate_db::repo::list::ListSpec;

    let dir = tempfile::tempdir().unwrap();
    let settings = solgate_db::DatabaseSettings { pool_size: 1, ..Default::default() };
    let sqlite =
        solgate_db::Database::connect(&format!("sqlite://{}", dir.path().join("p.db").display()), &settings).unwrap();
    sqlite.migrate().unwrap();
    let postgres = crate::helpers::PgDatabase::create();
    let pg = postgres.as_ref().map(|pg| {
        let database = solgate_db::Database::connect(&pg.url, &settings).unwrap();
        database.migrate().unwrap();
        database
    });
    let registry = solgate_schemas::Registry::builtin().unwrap();
    let entry = registry.newest(solgate_schemas::Api::Vnflcm, 2).unwrap();
    let schema = entry.dictionary.schema("VnfInstance").unwrap().clone();

    let attr = prop_oneof![
        Just("id"),
        Just("vnfInstanceName"),
        Just("vnfdId"),
        Just("vnfProvider"),
        Just("instantiationState"),
        Just("vnfdVersion"),
        Just("metadata/k")
    ];
    let op = prop_oneof![
        Just("eq"),
        Just("neq"),
        Just("gt"),
        Just("gte"),
        Just("lt"),
        Just("lte"),
        Just("in"),
        Just("nin"),
        Just("cont"),
        Just("ncont")
    ];
    let value = prop_oneof!["[a-zA-Z0-9 _.:-]{1,12}", "[\u{1}-\u{7f}]{1,6}", "[\u{80}-\u{10ffff}]{1,4}", "x{300,1100}"]
        .prop_map(|text| encode(&text));
    let expr = (op, attr, proptest::collection::vec(value, 1..260))
        .prop_map(|(op, attr, values)| format!("({op},{attr},{})", values.join(",")));
    let filter = proptest::collection::vec(expr, 1..24).prop_map(|exprs| exprs.join(";"));

    // Limits raised well past the defaults: the SQL must stay bounded by itself.
    let roomy = solgate_sol013::QueryLimits { max_filter_terms: 100, max_filter_values: 500, ..Default::default() };
    let mut runner =
        proptest::test_runner::TestRunner::new(proptest::test_runner::Config { cases: 64, ..Default::default() });
    runner
        .run(&filter, |text| {
            let Ok(query) = solgate_sol013::ListQuery::parse_limited(&format!("filter={text}"), &schema, &roomy) else {
                return Ok(());
            };
            let Some(filter) = query.filter else { return Ok(()) };
            let (predicates, _) = filter.split_for_columns(columns::INSTANCES);
            for database in std::iter::once(&sqlite).chain(pg.as_ref()) {
                let mut conn = database.conn().unwrap();
                let spec = ListSpec { predicates: predicates.clone(), after_id: None, limit: 10, project: None };
                let listed = lcm::list_instances_raw(&mut conn, database.backend(), LcmMajor::V2, &spec);
                prop_assert!(listed.is_ok(), "{:?} refused {}: {:?}", database.backend(), text, listed.err());
            }
            Ok(())
        })
        .unwrap();
}

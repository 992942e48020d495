//! Working beside an external NFVO (`[nfvo] mode = "external"`): a test NFVO on a real
//! socket speaks the SOL003 Grant interface (`POST /grant/v1/grants` → 201 Grant, or 202 +
//! `Location` then GET; 403 with ProblemDetails) and the VNF package management interface
//! (`GET /vnfpkgm/v2/onboarded_vnf_packages/{vnfdId}` and its `package_content`), and records
//! what solgate sends.

use std::sync::{Arc, Mutex};

use actix_web::{App, HttpRequest, HttpResponse, HttpServer, web};
use reqwest::Method;
use serde_json::{Value, json};
use solgate_conductor::nfvo::{NfvoAuthType, NfvoMode, NfvoSettings};

use solgate_vnfpkg::testing::CsarBuilder;

use crate::helpers::{Db, TestApp, send};
use crate::lcm_support::*;

/// How the test NFVO answers a grant request.
#[derive(Clone, Copy)]
pub(crate) enum Decision {
    /// 201 Grant.
    Grant,
    /// 202 + Location; GET answers 202 this many times, then 200 Grant.
    Later(u32),
    /// 403 ProblemDetails.
    Reject,
    /// 202 + Location; GET answers 202 (Retry-After: 1) for ever.
    Never,
    /// 201 with a Grant that also grants a resource nobody asked for.
    Foreign,
}

#[derive(Debug, Clone)]
pub(crate) struct Seen {
    pub(crate) method: String,
    pub(crate) path: String,
    pub(crate) authorization: String,
    pub(crate) version: String,
    pub(crate) body: Value,
}

pub(crate) struct NfvoState {
    decision: Decision,
    seen: Vec<Seen>,
    /// Asynchronous grants: id → (polls left, grant).
    pending: Vec<(String, u32, Value)>,
    /// OAuth 2.0: tokens issued by `/token`; grant requests must carry the last one.
    tokens_issued: u32,
    oauth: bool,
    /// The vimType of the VIM it grants.
    vim_type: String,
    /// The VNF packages it offers.
    pub(crate) packages: Vec<NfvoPackage>,
    /// `GET` and `POST /vnfpkgm/v2/subscriptions` received (not in `seen`).
    pub(crate) subscription_requests: Vec<Seen>,
    /// The PkgmSubscriptions it holds.
    pub(crate) subscriptions: Vec<Value>,
    /// Answer this many more subscription requests with 503.
    pub(crate) refuse_subscriptions: u32,
}

/// A VNF package the test NFVO holds: its VnfPkgInfo and its content.
#[derive(Clone)]
pub(crate) struct NfvoPackage {
    vnfd_id: String,
    info: Value,
    content: Vec<u8>,
}

impl NfvoPackage {
    /// The sample package with VNFD `vnfd_id`, ENABLED, with a true SHA-256 checksum.
    pub(crate) fn sample(vnfd_id: &str) -> Self {
        Self::holding(vnfd_id, vnfd_id)
    }

    /// Offered as the package of `vnfd_id` while its VNFD is `held`.
    fn holding(vnfd_id: &str, held: &str) -> Self {
        use sha2::Digest;
        let csar = CsarBuilder::sample().descriptor_id(held).to_tempfile().unwrap();
        let content = std::fs::read(csar.path()).unwrap();
        let hash: String = sha2::Sha256::digest(&content).iter().map(|byte| format!("{byte:02x}")).collect();
        let id = uuid::Uuid::new_v4().to_string();
        let info = json!({
            "id": id,
            "vnfdId": vnfd_id,
            "vnfProvider": "Solgate",
            "vnfProductName": "Sample VNF",
            "vnfSoftwareVersion": "1.0",
            "vnfdVersion": "1.0",
            "checksum": {"algorithm": "SHA-256", "hash": hash},
            "onboardingState": "ONBOARDED",
            "operationalState": "ENABLED",
            "usageState": "NOT_IN_USE",
            "_links": {"self": {"href": format!("http://nfvo/vnfpkgm/v2/onboarded_vnf_packages/{vnfd_id}")}},
        });
        Self { vnfd_id: vnfd_id.to_owned(), info, content }
    }
}

pub(crate) struct TestNfvo {
    port: u16,
    pub(crate) state: Arc<Mutex<NfvoState>>,
    handle: Mutex<Option<actix_web::dev::ServerHandle>>,
    /// HTTPS with this configuration; plain HTTP without.
    tls: Option<rustls::ServerConfig>,
}

const REJECTION: &str = "No capacity left for VDU1 in zone A.";
const GRANTED_VIM: &str = "nfvo-vim";
const GRANTED_SECRET: &str = "granted-vim-password";

/// The Grant for a request: every requested resource granted on the NFVO's VIM, in zone A.
fn grant_for(request: &Value, vim_type: &str) -> Value {
    let id = uuid::Uuid::new_v4().to_string();
    let infos = |key: &str| -> Vec<Value> {
        request[key]
            .as_array()
            .into_iter()
            .flatten()
            .map(|resource| {
                json!({"resourceDefinitionId": resource["id"], "vimConnectionId": GRANTED_VIM, "zoneId": "zone-a"})
            })
            .collect()
    };
    json!({
        "id": id,
        "vnfInstanceId": request["vnfInstanceId"],
        "vnfLcmOpOccId": request["vnfLcmOpOccId"],
        "vimConnectionInfo": {
            GRANTED_VIM: {
                "vimId": "vim-from-the-nfvo",
                "vimType": vim_type,
                "accessInfo": {"username": "nfv", "password": GRANTED_SECRET},
            }
        },
        "zones": [{"id": "zone-a", "zoneId": "az-1", "vimConnectionId": GRANTED_VIM}],
        // SOL003 V4.3.1: the container registry and the MCIOP repository the VNF may use.
        "cirConnectionInfo": {
            "cir1": {"vimType": "ETSINFV.CIR.V_1", "interfaceInfo": {"endpoint": "https://registry.nfvo.example"},
                "accessInfo": {"username": "puller", "password": GRANTED_SECRET}}
        },
        "mciopRepositoryInfo": {
            "helm1": {"vimType": "ETSINFV.MCIOP_REPOSITORY.V_1",
                "interfaceInfo": {"endpoint": "https://charts.nfvo.example"}}
        },
        "addResources": infos("addResources"),
        "removeResources": infos("removeResources"),
        "_links": {
            "self": {"href": format!("http://nfvo/grant/v1/grants/{id}")},
            "vnfLcmOpOcc": request["_links"]["vnfLcmOpOcc"],
            "vnfInstance": request["_links"]["vnfInstance"],
        },
    })
}

async fn serve_grant(req: HttpRequest, body: web::Bytes, state: web::Data<Mutex<NfvoState>>) -> HttpResponse {
    let header =
        |name: &str| req.headers().get(name).and_then(|value| value.to_str().ok()).unwrap_or_default().to_owned();
    let body: Value =
        serde_json::from_slice(&body).unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&body).into()));
    let mut state = state.lock().unwrap();
    if req.path() == "/token" {
        state.tokens_issued += 1;
        let token = format!("nfvo-token-{}", state.tokens_issued);
        let expected = format!("Basic {}", base64_encode("vnfm-client:vnfm-client-secret"));
        if header("authorization") != expected
            || !String::from_utf8_lossy(&body_text(&body)).contains("client_credentials")
        {
            return HttpResponse::Unauthorized().json(json!({"error": "invalid_client"}));
        }
        return HttpResponse::Ok().json(json!({"access_token": token, "token_type": "Bearer", "expires_in": 3600}));
    }
    if state.oauth && header("authorization") != format!("Bearer nfvo-token-{}", state.tokens_issued) {
        return HttpResponse::Unauthorized().json(json!({"status": 401, "detail": "a valid token is needed"}));
    }
    if req.path() == "/vnfpkgm/v2/subscriptions" {
        state.subscription_requests.push(Seen {
            method: req.method().to_string(),
            path: req.path().to_owned(),
            authorization: header("authorization"),
            version: header("version"),
            body: body.clone(),
        });
        if state.refuse_subscriptions > 0 {
            state.refuse_subscriptions -= 1;
            return HttpResponse::ServiceUnavailable()
                .content_type("application/problem+json")
                .json(json!({"status": 503, "detail": "not now"}));
        }
        if req.method() == actix_web::http::Method::GET {
            return HttpResponse::Ok().json(state.subscriptions.clone());
        }
        // A PkgmSubscription: the request without its authentication (SOL003 clause 10.5.2.4).
        let id = uuid::Uuid::new_v4().to_string();
        let subscription = json!({
            "id": id,
            "filter": body["filter"],
            "callbackUri": body["callbackUri"],
            "_links": {"self": {"href": format!("http://nfvo/vnfpkgm/v2/subscriptions/{id}")}},
        });
        state.subscriptions.push(subscription.clone());
        return HttpResponse::Created()
            .insert_header(("Location", format!("/vnfpkgm/v2/subscriptions/{id}")))
            .json(subscription);
    }
    state.seen.push(Seen {
        method: req.method().to_string(),
        path: req.path().to_owned(),
        authorization: header("authorization"),
        version: header("version"),
        body: body.clone(),
    });
    if req.method() == actix_web::http::Method::GET
        && let Some(rest) = req.path().strip_prefix("/vnfpkgm/v2/onboarded_vnf_packages/")
    {
        let (vnfd_id, content) = match rest.strip_suffix("/package_content") {
            Some(vnfd_id) => (vnfd_id, true),
            None => (rest, false),
        };
        let vnfd_id = percent_encoding::percent_decode_str(vnfd_id).decode_utf8_lossy();
        let Some(package) = state.packages.iter().find(|package| package.vnfd_id == vnfd_id) else {
            return HttpResponse::NotFound()
                .content_type("application/problem+json")
                .json(json!({"status": 404, "detail": format!("No onboarded VNF package has vnfdId {vnfd_id}.")}));
        };
        return if content {
            HttpResponse::Ok().content_type("application/zip").body(package.content.clone())
        } else {
            HttpResponse::Ok().json(package.info.clone())
        };
    }
    if req.method() == actix_web::http::Method::POST && req.path() == "/grant/v1/grants" {
        let grant = grant_for(&body, &state.vim_type);
        let location = format!("/grant/v1/grants/{}", grant["id"].as_str().unwrap());
        return match state.decision {
            Decision::Grant => HttpResponse::Created().insert_header(("Location", location)).json(grant),
            Decision::Later(polls) => {
                state.pending.push((grant["id"].as_str().unwrap().to_owned(), polls, grant));
                HttpResponse::Accepted()
                    .insert_header(("Location", location))
                    .insert_header(("Retry-After", "0"))
                    .finish()
            }
            Decision::Foreign => {
                let mut grant = grant;
                grant["addResources"]
                    .as_array_mut()
                    .unwrap()
                    .push(json!({"resourceDefinitionId": "not-requested", "vimConnectionId": GRANTED_VIM}));
                HttpResponse::Created().insert_header(("Location", location)).json(grant)
            }
            Decision::Never => {
                state.pending.push((grant["id"].as_str().unwrap().to_owned(), u32::MAX, grant));
                HttpResponse::Accepted()
                    .insert_header(("Location", location))
                    .insert_header(("Retry-After", "1"))
                    .finish()
            }
            Decision::Reject => HttpResponse::Forbidden()
                .content_type("application/problem+json")
                .json(json!({"status": 403, "title": "Forbidden", "detail": REJECTION})),
        };
    }
    if req.method() == actix_web::http::Method::GET
        && let Some(id) = req.path().strip_prefix("/grant/v1/grants/")
        && let Some(entry) = state.pending.iter_mut().find(|(pending, _, _)| pending == id)
    {
        if entry.1 == u32::MAX {
            return HttpResponse::Accepted().insert_header(("Retry-After", "1")).finish();
        }
        if entry.1 > 0 {
            entry.1 -= 1;
            return HttpResponse::Accepted().insert_header(("Retry-After", "0")).finish();
        }
        return HttpResponse::Ok().json(entry.2.clone());
    }
    HttpResponse::NotFound().json(json!({"status": 404, "detail": "unknown"}))
}

impl TestNfvo {
    /// Serves HTTPS with `server` (a leaf of a test CA).
    fn start_tls(decision: Decision, server: &crate::tls::Leaf) -> TestNfvo {
        use rustls::pki_types::pem::PemObject;
        use rustls::pki_types::{CertificateDer, PrivateKeyDer};
        let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
        let chain = vec![CertificateDer::from_pem_slice(server.cert_pem.as_bytes()).unwrap()];
        let key = PrivateKeyDer::from_pem_slice(server.key_pem.as_bytes()).unwrap();
        let config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(chain, key)
            .unwrap();
        TestNfvo::start_with(decision, Some(config))
    }

    pub(crate) fn start(decision: Decision) -> TestNfvo {
        TestNfvo::start_with(decision, None)
    }

    fn start_with(decision: Decision, tls: Option<rustls::ServerConfig>) -> TestNfvo {
        let state = Arc::new(Mutex::new(NfvoState {
            decision,
            seen: Vec::new(),
            pending: Vec::new(),
            tokens_issued: 0,
            oauth: false,
            vim_type: "SOLGATE.LOCAL.V_1".into(),
            packages: Vec::new(),
            subscription_requests: Vec::new(),
            subscriptions: Vec::new(),
            refuse_subscriptions: 0,
        }));
        let nfvo = TestNfvo { port: 0, state, handle: Mutex::new(None), tls };
        let port = nfvo.serve(0);
        TestNfvo { port, ..nfvo }
    }

    fn serve(&self, port: u16) -> u16 {
        let data = web::Data::from(self.state.clone());
        let server = HttpServer::new(move || App::new().app_data(data.clone()).default_service(web::to(serve_grant)))
            .workers(1)
            .shutdown_timeout(0);
        let server = match &self.tls {
            Some(config) => server.bind_rustls_0_23(("127.0.0.1", port), config.clone()).unwrap(),
            None => server.bind(("127.0.0.1", port)).unwrap(),
        };
        let port = server.addrs()[0].port();
        let server = server.run();
        *self.handle.lock().unwrap() = Some(server.handle());
        tokio::spawn(server);
        port
    }

    async fn stop(&self) {
        let handle = self.handle.lock().unwrap().take();
        if let Some(handle) = handle {
            handle.stop(false).await;
        }
    }

    pub(crate) fn endpoint(&self) -> String {
        match self.tls {
            Some(_) => format!("https://localhost:{}", self.port),
            None => format!("http://127.0.0.1:{}", self.port),
        }
    }

    fn decide(&self, decision: Decision) {
        self.state.lock().unwrap().decision = decision;
    }

    /// The grant requests received so far (POSTs), and forgets everything seen.
    fn take_requests(&self) -> (Vec<Seen>, Vec<Seen>) {
        let seen = std::mem::take(&mut self.state.lock().unwrap().seen);
        seen.into_iter().partition(|seen| seen.method == "POST")
    }
}

pub(crate) fn base64_encode(text: &str) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(text)
}

fn body_text(body: &Value) -> Vec<u8> {
    body.as_str().map(|text| text.as_bytes().to_vec()).unwrap_or_default()
}

async fn app_with(db: Db, nfvo: &TestNfvo) -> Option<TestApp> {
    app_configured(db, nfvo, |_| {}).await
}

pub(crate) fn external(endpoint: String) -> NfvoSettings {
    NfvoSettings {
        mode: NfvoMode::External,
        endpoint,
        allow_http: true,
        auth_type: NfvoAuthType::Basic,
        user_name: "vnfm".into(),
        password: "vnfm-password".into(),
        timeout_secs: 5,
        grant_timeout_secs: 20,
        ..NfvoSettings::default()
    }
}

pub(crate) async fn app_configured(
    db: Db,
    nfvo: &TestNfvo,
    configure: impl FnOnce(&mut NfvoSettings),
) -> Option<TestApp> {
    let endpoint = nfvo.endpoint();
    TestApp::spawn_on(db, move |settings| {
        settings.nfvo = external(endpoint);
        configure(&mut settings.nfvo);
    })
    .await
}

/// The COMPUTE resources of a grant request, as (vduId, resourceTemplateId) pairs, sorted.
fn computes(request: &Value, key: &str) -> Vec<(String, String)> {
    let mut pairs: Vec<(String, String)> = request[key]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|resource| resource["type"] == "COMPUTE")
        .map(|resource| {
            assert!(resource["id"].as_str().is_some_and(|id| !id.is_empty()), "{resource}");
            (
                resource["vduId"].as_str().unwrap().to_owned(),
                resource["resourceTemplateId"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    pairs.sort();
    pairs
}

fn pairs(list: &[(&str, usize)]) -> Vec<(String, String)> {
    let mut pairs: Vec<(String, String)> = list
        .iter()
        .flat_map(|(vdu, count)| std::iter::repeat_n(((*vdu).to_owned(), (*vdu).to_owned()), *count))
        .collect();
    pairs.sort();
    pairs
}

async fn post_task(app: &TestApp, op_url: &str, task: &str) {
    let path = format!("{}/{task}", op_url.trim_start_matches(&app.address));
    let reply = send(app.request(Method::POST, &path).header("Version", "2.0.0")).await;
    assert_eq!(reply.status, 202, "{}", reply.text);
}

#[tokio::test]
async fn sqlite_grants_for_instantiate_scale_and_terminate() {
    grants_for_instantiate_scale_and_terminate(Db::Sqlite).await;
}

#[tokio::test]
async fn postgres_grants_for_instantiate_scale_and_terminate() {
    grants_for_instantiate_scale_and_terminate(Db::Postgres).await;
}

async fn grants_for_instantiate_scale_and_terminate(db: Db) {
    let nfvo = TestNfvo::start(Decision::Grant);
    let Some(app) = app_with(db, &nfvo).await else { return };
    let vnfd_id = install_sample_package(&app);
    let id = create_instance(&app, &vnfd_id, "granted").await;

    // Instantiate at level 2: one GrantRequest adding VDU1 ×3 and VDU2 ×1.
    let body = json!({"flavourId": "simple", "instantiationLevelId": "instantiation_level_2"});
    let op_url = task(&app, &id, "instantiate", body).await;
    let op = wait_op(&app, &op_url, &["COMPLETED", "FAILED_TEMP", "ROLLED_BACK"]).await;
    assert_eq!(op["operationState"], "COMPLETED", "{op}");
    let (posts, _) = nfvo.take_requests();
    assert_eq!(posts.len(), 1, "one grant request: {posts:?}");
    let request = &posts[0];
    assert_eq!(request.path, "/grant/v1/grants");
    assert_eq!(request.version, "1.4.0");
    assert!(request.authorization.starts_with("Basic "), "HTTP Basic towards the NFVO: {:?}", request.authorization);
    let body = &request.body;
    assert_eq!(body["operation"], "INSTANTIATE");
    assert_eq!(body["vnfInstanceId"], json!(id));
    assert_eq!(body["vnfLcmOpOccId"], op["id"]);
    assert_eq!(body["vnfdId"], json!(vnfd_id));
    assert_eq!(body["flavourId"], "simple");
    assert_eq!(body["instantiationLevelId"], "instantiation_level_2");
    assert_eq!(body["isAutomaticInvocation"], false);
    assert_eq!(body["_links"]["vnfLcmOpOcc"]["href"], json!(op_url));
    assert_eq!(computes(body, "addResources"), pairs(&[("VDU1", 3), ("VDU2", 1)]), "{body}");
    assert!(body.get("removeResources").is_none(), "{body}");
    assert_eq!(op["grantId"].as_str().unwrap().len(), 36, "the NFVO's grant id: {op}");

    // The VIM from the grant is used and recorded; its credentials never leave.
    let reply = send(v2(&app, Method::GET, &format!("/vnflcm/v2/vnf_instances/{id}"))).await;
    assert!(!reply.text.contains(GRANTED_SECRET), "{}", reply.text);
    let instance = reply.json();
    assert_eq!(instance["vimConnectionInfo"][GRANTED_VIM]["vimId"], "vim-from-the-nfvo", "{instance}");
    let stored = {
        let database = app.database();
        let mut conn = database.conn().unwrap();
        solgate_db::repo::lcm::find_instance(&mut conn, solgate_db::repo::lcm::LcmMajor::V2, &id).unwrap().unwrap()
    };
    assert!(!stored.body.to_string().contains(GRANTED_SECRET), "the granted VIM's password is sealed at rest");
    let vnfcs = instance["instantiatedVnfInfo"]["vnfcResourceInfo"].as_array().unwrap().clone();
    assert_eq!(vnfcs.len(), 4);
    for vnfc in &vnfcs {
        assert_eq!(vnfc["computeResource"]["vimConnectionId"], GRANTED_VIM, "{vnfc}");
    }

    // Scale out by one step: one VDU1 added.
    let op_url =
        task(&app, &id, "scale", json!({"type": "SCALE_OUT", "aspectId": "VDU1_scale", "numberOfSteps": 1})).await;
    assert_eq!(
        wait_op(&app, &op_url, &["COMPLETED", "FAILED_TEMP", "ROLLED_BACK"]).await["operationState"],
        "COMPLETED"
    );
    let (posts, _) = nfvo.take_requests();
    assert_eq!(posts.len(), 1);
    assert_eq!(posts[0].body["operation"], "SCALE");
    assert_eq!(computes(&posts[0].body, "addResources"), pairs(&[("VDU1", 1)]));
    let instance = show_instance(&app, &id).await;
    assert_eq!(vnfc_count(&instance, "VDU1"), 4);

    // Scale in by two: two VDU1 removed, each named by its VIM resource.
    let op_url =
        task(&app, &id, "scale", json!({"type": "SCALE_IN", "aspectId": "VDU1_scale", "numberOfSteps": 2})).await;
    assert_eq!(
        wait_op(&app, &op_url, &["COMPLETED", "FAILED_TEMP", "ROLLED_BACK"]).await["operationState"],
        "COMPLETED"
    );
    let (posts, _) = nfvo.take_requests();
    assert_eq!(posts.len(), 1);
    let body = &posts[0].body;
    assert_eq!(computes(body, "removeResources"), pairs(&[("VDU1", 2)]));
    let known: Vec<&Value> = instance["instantiatedVnfInfo"]["vnfcResourceInfo"]
        .as_array()
        .unwrap()
        .iter()
        .map(|vnfc| &vnfc["computeResource"]["resourceId"])
        .collect();
    for removed in body["removeResources"].as_array().unwrap().iter().filter(|removed| removed["type"] == "COMPUTE") {
        assert!(known.contains(&&removed["resource"]["resourceId"]), "a VNFC of the instance: {removed}");
    }
    let after = show_instance(&app, &id).await;
    assert_eq!(vnfc_count(&after, "VDU1"), 2);
    // The VNFCs named in the grant are the ones that went.
    let remaining: Vec<&Value> = after["instantiatedVnfInfo"]["vnfcResourceInfo"]
        .as_array()
        .unwrap()
        .iter()
        .map(|vnfc| &vnfc["computeResource"]["resourceId"])
        .collect();
    for removed in body["removeResources"].as_array().unwrap().iter().filter(|removed| removed["type"] == "COMPUTE") {
        assert!(
            !remaining.contains(&&removed["resource"]["resourceId"]),
            "granted for removal, still there: {removed}"
        );
    }

    // Heal one VNFC: it is removed and added again.
    let instance = show_instance(&app, &id).await;
    let healed = instance["instantiatedVnfInfo"]["vnfcResourceInfo"][0]["id"].as_str().unwrap().to_owned();
    let healed_vdu = instance["instantiatedVnfInfo"]["vnfcResourceInfo"][0]["vduId"].as_str().unwrap().to_owned();
    let op_url = task(&app, &id, "heal", json!({"vnfcInstanceId": [healed]})).await;
    assert_eq!(
        wait_op(&app, &op_url, &["COMPLETED", "FAILED_TEMP", "ROLLED_BACK"]).await["operationState"],
        "COMPLETED"
    );
    let (posts, _) = nfvo.take_requests();
    assert_eq!(posts.len(), 1);
    let body = &posts[0].body;
    assert_eq!(body["operation"], "HEAL");
    assert_eq!(computes(body, "removeResources"), pairs(&[(&healed_vdu, 1)]), "{body}");
    assert_eq!(computes(body, "addResources"), pairs(&[(&healed_vdu, 1)]), "{body}");
    assert_eq!(body["removeResources"][0]["id"], json!(healed));

    // Terminate: every VNFC removed.
    let op_url = task(&app, &id, "terminate", json!({"terminationType": "FORCEFUL"})).await;
    assert_eq!(
        wait_op(&app, &op_url, &["COMPLETED", "FAILED_TEMP", "ROLLED_BACK"]).await["operationState"],
        "COMPLETED"
    );
    let (posts, _) = nfvo.take_requests();
    assert_eq!(posts.len(), 1);
    assert_eq!(posts[0].body["operation"], "TERMINATE");
    assert_eq!(computes(&posts[0].body, "removeResources"), pairs(&[("VDU1", 2), ("VDU2", 1)]));
    assert_eq!(show_instance(&app, &id).await["instantiationState"], "NOT_INSTANTIATED");
}

#[tokio::test]
async fn an_asynchronous_grant_is_polled_until_decided() {
    let nfvo = TestNfvo::start(Decision::Later(2));
    let app = app_with(Db::Sqlite, &nfvo).await.unwrap();
    let vnfd_id = install_sample_package(&app);
    let id = create_instance(&app, &vnfd_id, "async").await;
    let op_url = task(&app, &id, "instantiate", instantiate_body()).await;
    let op = wait_op(&app, &op_url, &["COMPLETED", "FAILED_TEMP", "ROLLED_BACK"]).await;
    assert_eq!(op["operationState"], "COMPLETED", "{op}");
    let (posts, polls) = nfvo.take_requests();
    assert_eq!(posts.len(), 1);
    assert_eq!(polls.len(), 3, "two 202s, then the Grant: {polls:?}");
    let grant_path = format!("/grant/v1/grants/{}", op["grantId"].as_str().unwrap());
    assert!(polls.iter().all(|poll| poll.path == grant_path && poll.authorization.starts_with("Basic ")));
    assert_eq!(show_instance(&app, &id).await["vimConnectionInfo"][GRANTED_VIM]["vimId"], "vim-from-the-nfvo");
}

#[tokio::test]
async fn a_rejected_grant_rolls_back_with_the_nfvo_detail() {
    let nfvo = TestNfvo::start(Decision::Reject);
    let app = app_with(Db::Sqlite, &nfvo).await.unwrap();
    let vnfd_id = install_sample_package(&app);
    let id = create_instance(&app, &vnfd_id, "rejected").await;
    let op_url = task(&app, &id, "instantiate", instantiate_body()).await;
    let op = wait_op(&app, &op_url, &["COMPLETED", "FAILED_TEMP", "ROLLED_BACK"]).await;
    assert_eq!(op["operationState"], "ROLLED_BACK", "{op}");
    assert_eq!(op["error"]["status"], 403, "{op}");
    assert_eq!(op["error"]["detail"], REJECTION, "{op}");
    let instance = show_instance(&app, &id).await;
    assert_eq!(instance["instantiationState"], "NOT_INSTANTIATED");
    assert!(instance.get("instantiatedVnfInfo").is_none(), "nothing was created: {instance}");
    assert_eq!(nfvo.take_requests().0.len(), 1);
}

#[tokio::test]
async fn an_unreachable_nfvo_fails_temporarily_and_retry_completes() {
    let nfvo = TestNfvo::start(Decision::Grant);
    let app = app_with(Db::Sqlite, &nfvo).await.unwrap();
    let vnfd_id = install_sample_package(&app);
    let id = create_instance(&app, &vnfd_id, "unreachable").await;
    nfvo.stop().await;
    let op_url = task(&app, &id, "instantiate", instantiate_body()).await;
    let op = wait_op(&app, &op_url, &["COMPLETED", "FAILED_TEMP", "ROLLED_BACK"]).await;
    assert_eq!(op["operationState"], "FAILED_TEMP", "{op}");
    assert_eq!(op["error"]["status"], 503, "{op}");
    assert!(op["error"]["detail"].as_str().unwrap().contains("The NFVO cannot be reached"), "{op}");
    assert_eq!(show_instance(&app, &id).await["instantiationState"], "NOT_INSTANTIATED");

    // Back on the same port: the retry asks for the grant and completes.
    nfvo.serve(nfvo.port);
    let since = op["stateEnteredTime"].as_str().unwrap().to_owned();
    post_task(&app, &op_url, "retry").await;
    let op = wait_op_after(&app, &op_url, &["COMPLETED", "FAILED_TEMP"], &since).await;
    assert_eq!(op["operationState"], "COMPLETED", "{op}");
    assert!(op.get("error").is_none(), "{op}");
    assert_eq!(nfvo.take_requests().0.len(), 1);
    let instance = show_instance(&app, &id).await;
    assert_eq!(instance["instantiationState"], "INSTANTIATED");
    assert_eq!(instance["vimConnectionInfo"][GRANTED_VIM]["vimId"], "vim-from-the-nfvo");

    // Unreachable again, and this time the client gives up: rollback ends ROLLED_BACK
    // without asking the NFVO.
    nfvo.stop().await;
    let id = create_instance(&app, &vnfd_id, "given-up").await;
    let op_url = task(&app, &id, "instantiate", instantiate_body()).await;
    let op = wait_op(&app, &op_url, &["COMPLETED", "FAILED_TEMP", "ROLLED_BACK"]).await;
    assert_eq!(op["operationState"], "FAILED_TEMP", "{op}");
    let since = op["stateEnteredTime"].as_str().unwrap().to_owned();
    post_task(&app, &op_url, "rollback").await;
    let op = wait_op_after(&app, &op_url, &["ROLLED_BACK", "FAILED_TEMP"], &since).await;
    assert_eq!(op["operationState"], "ROLLED_BACK", "{op}");
    assert_eq!(show_instance(&app, &id).await["instantiationState"], "NOT_INSTANTIATED");
}

#[tokio::test]
async fn a_retried_operation_does_not_ask_twice() {
    let nfvo = TestNfvo::start(Decision::Grant);
    let app = app_with(Db::Sqlite, &nfvo).await.unwrap();
    let vnfd_id = install_sample_package(&app);
    let id = create_instance(&app, &vnfd_id, "retried").await;
    // The VIM fails once after the grant: FAILED_TEMP, then retry → COMPLETED on the stored grant.
    let body =
        json!({"flavourId": "simple", "additionalParams": {"localVim": {"failAt": "create_vnfc", "failAttempts": 1}}});
    let op_url = task(&app, &id, "instantiate", body).await;
    let op = wait_op(&app, &op_url, &["COMPLETED", "FAILED_TEMP", "ROLLED_BACK"]).await;
    assert_eq!(op["operationState"], "FAILED_TEMP", "{op}");
    let stored = {
        let database = app.database();
        let mut conn = database.conn().unwrap();
        let op_id = op["id"].as_str().unwrap();
        solgate_db::repo::lcm::find_grant(&mut conn, solgate_db::repo::lcm::LcmMajor::V2, op_id).unwrap()
    };
    let stored = stored.expect("the grant is stored while the operation is not final");
    assert_eq!(stored["id"], op["grantId"]);
    assert!(!stored.to_string().contains(GRANTED_SECRET), "the grant's VIM password is sealed at rest: {stored}");
    let since = op["stateEnteredTime"].as_str().unwrap().to_owned();
    nfvo.decide(Decision::Reject);
    post_task(&app, &op_url, "retry").await;
    let op = wait_op_after(&app, &op_url, &["COMPLETED", "FAILED_TEMP"], &since).await;
    assert_eq!(op["operationState"], "COMPLETED", "{op}");
    assert_eq!(nfvo.take_requests().0.len(), 1, "the grant was asked once");
    let instance = show_instance(&app, &id).await;
    for vnfc in instance["instantiatedVnfInfo"]["vnfcResourceInfo"].as_array().unwrap() {
        assert_eq!(vnfc["computeResource"]["vimConnectionId"], GRANTED_VIM, "{vnfc}");
    }
    // A final occurrence keeps no grant.
    let database = app.database();
    let mut conn = database.conn().unwrap();
    let op_id = op["id"].as_str().unwrap();
    let kept = solgate_db::repo::lcm::find_grant(&mut conn, solgate_db::repo::lcm::LcmMajor::V2, op_id).unwrap();
    assert!(kept.is_none(), "the grant outlived its COMPLETED occurrence: {kept:?}");
}

#[tokio::test]
async fn oauth2_client_credentials_towards_the_nfvo() {
    let nfvo = TestNfvo::start(Decision::Grant);
    nfvo.state.lock().unwrap().oauth = true;
    let token_endpoint = format!("{}/token", nfvo.endpoint());
    let app = app_configured(Db::Sqlite, &nfvo, move |nfvo| {
        nfvo.auth_type = NfvoAuthType::Oauth2;
        nfvo.token_endpoint = token_endpoint;
        nfvo.client_id = "vnfm-client".into();
        nfvo.client_password = "vnfm-client-secret".into();
    })
    .await
    .unwrap();
    let vnfd_id = install_sample_package(&app);
    for name in ["first", "second"] {
        let id = create_instance(&app, &vnfd_id, name).await;
        let op_url = task(&app, &id, "instantiate", instantiate_body()).await;
        let op = wait_op(&app, &op_url, &["COMPLETED", "FAILED_TEMP", "ROLLED_BACK"]).await;
        assert_eq!(op["operationState"], "COMPLETED", "{op}");
    }
    let (posts, _) = nfvo.take_requests();
    assert_eq!(posts.len(), 2);
    assert!(posts.iter().all(|post| post.authorization == "Bearer nfvo-token-1"), "{posts:?}");
    assert_eq!(nfvo.state.lock().unwrap().tokens_issued, 1, "the token is cached");
}

#[tokio::test]
async fn an_undecided_grant_times_out_into_failed_temp() {
    let nfvo = TestNfvo::start(Decision::Never);
    let app = app_configured(Db::Sqlite, &nfvo, |nfvo| nfvo.grant_timeout_secs = 2).await.unwrap();
    let vnfd_id = install_sample_package(&app);
    let id = create_instance(&app, &vnfd_id, "undecided").await;
    let op_url = task(&app, &id, "instantiate", instantiate_body()).await;
    let op = wait_op(&app, &op_url, &["COMPLETED", "FAILED_TEMP", "ROLLED_BACK"]).await;
    assert_eq!(op["operationState"], "FAILED_TEMP", "{op}");
    assert!(op["error"]["detail"].as_str().unwrap().contains("nfvo.grant_timeout_secs"), "{op}");
}

#[tokio::test]
async fn v1_instantiate_asks_the_nfvo_and_records_its_vim_as_an_array() {
    let nfvo = TestNfvo::start(Decision::Grant);
    let app = app_with(Db::Sqlite, &nfvo).await.unwrap();
    let vnfd_id = install_sample_package(&app);
    let v1 = |method: Method, path: &str| {
        app.request(method, &format!("/vnflcm/v1{path}")).header("Accept", "application/json")
    };
    let reply =
        send(v1(Method::POST, "/vnf_instances").json(&json!({"vnfdId": vnfd_id, "vnfInstanceName": "r2"}))).await;
    assert_eq!(reply.status, 201, "{}", reply.text);
    let id = reply.json()["id"].as_str().unwrap().to_owned();
    let reply = send(v1(Method::POST, &format!("/vnf_instances/{id}/instantiate")).json(&instantiate_body())).await;
    assert_eq!(reply.status, 202, "{}", reply.text);
    let op_url = reply.header("location").unwrap().to_owned();
    let op = wait_op(&app, &op_url, &["COMPLETED", "FAILED_TEMP", "ROLLED_BACK"]).await;
    assert_eq!(op["operationState"], "COMPLETED", "{op}");
    let (posts, _) = nfvo.take_requests();
    assert_eq!(posts.len(), 1);
    assert_eq!(posts[0].body["operation"], "INSTANTIATE");
    assert!(posts[0].body["_links"]["vnfLcmOpOcc"]["href"].as_str().unwrap().contains("/vnflcm/v1/vnf_lcm_op_occs/"));
    assert_eq!(computes(&posts[0].body, "addResources"), pairs(&[("VDU1", 1), ("VDU2", 1)]));
    let reply = send(v1(Method::GET, &format!("/vnf_instances/{id}"))).await;
    assert!(!reply.text.contains(GRANTED_SECRET), "{}", reply.text);
    let instance = reply.json();
    assert_eq!(instance["vimConnectionInfo"][0]["id"], GRANTED_VIM, "{instance}");
    assert_eq!(instance["vimConnectionInfo"][0]["vimId"], "vim-from-the-nfvo", "{instance}");
}

#[tokio::test]
async fn the_grant_survives_a_conductor_restart() {
    let nfvo = TestNfvo::start(Decision::Grant);
    let first = app_with(Db::Sqlite, &nfvo).await.unwrap();
    let vnfd_id = install_sample_package(&first);
    let id = create_instance(&first, &vnfd_id, "restarted").await;
    let body =
        json!({"flavourId": "simple", "additionalParams": {"localVim": {"failAt": "create_vnfc", "failAttempts": 1}}});
    let op_url = task(&first, &id, "instantiate", body).await;
    let op = wait_op(&first, &op_url, &["COMPLETED", "FAILED_TEMP", "ROLLED_BACK"]).await;
    assert_eq!(op["operationState"], "FAILED_TEMP", "{op}");
    assert_eq!(nfvo.take_requests().0.len(), 1);

    // Another solgate (another conductor) on the same data resumes it on the stored grant.
    let endpoint = nfvo.endpoint();
    let second =
        TestApp::spawn_with_data_dir(&first.data_dir, move |settings| settings.nfvo = external(endpoint)).await;
    let op_url = op_url.replace(&first.address, &second.address);
    let since = op["stateEnteredTime"].as_str().unwrap().to_owned();
    post_task(&second, &op_url, "retry").await;
    let op = wait_op_after(&second, &op_url, &["COMPLETED", "FAILED_TEMP"], &since).await;
    assert_eq!(op["operationState"], "COMPLETED", "{op}");
    assert_eq!(nfvo.take_requests().0.len(), 0, "the resumed operation did not ask again");
    let instance = show_instance(&second, &id).await;
    assert_eq!(instance["vimConnectionInfo"][GRANTED_VIM]["vimId"], "vim-from-the-nfvo");
    for vnfc in instance["instantiatedVnfInfo"]["vnfcResourceInfo"].as_array().unwrap() {
        assert_eq!(vnfc["computeResource"]["vimConnectionId"], GRANTED_VIM, "{vnfc}");
    }
}

#[tokio::test]
async fn a_grant_for_resources_not_requested_is_refused() {
    let nfvo = TestNfvo::start(Decision::Foreign);
    let app = app_with(Db::Sqlite, &nfvo).await.unwrap();
    let vnfd_id = install_sample_package(&app);
    let id = create_instance(&app, &vnfd_id, "foreign").await;
    let op_url = task(&app, &id, "instantiate", instantiate_body()).await;
    let op = wait_op(&app, &op_url, &["COMPLETED", "FAILED_TEMP", "ROLLED_BACK"]).await;
    assert_eq!(op["operationState"], "FAILED_TEMP", "{op}");
    assert_eq!(op["error"]["status"], 503, "{op}");
    assert!(op["error"]["detail"].as_str().unwrap().contains("\"not-requested\", which was not requested"), "{op}");
    assert_eq!(show_instance(&app, &id).await["instantiationState"], "NOT_INSTANTIATED");
}

#[tokio::test]
async fn without_a_local_vim_the_vim_comes_from_the_grant() {
    let nfvo = TestNfvo::start(Decision::Grant);
    nfvo.state.lock().unwrap().vim_type = "EXAMPLE.NFVO_VIM.V_1".into();
    let endpoint = nfvo.endpoint();
    let app = TestApp::spawn_with(move |settings| {
        settings.nfvo = external(endpoint);
        settings.conductor.local_vim = Some(false);
    })
    .await;
    let vnfd_id = install_sample_package(&app);
    let id = create_instance(&app, &vnfd_id, "no-local-vim").await;
    // No vimConnectionInfo and no local VIM: accepted, since the grant brings the VIM.
    let op_url = task(&app, &id, "instantiate", instantiate_body()).await;
    let op = wait_op(&app, &op_url, &["COMPLETED", "FAILED_TEMP", "ROLLED_BACK"]).await;
    assert_eq!(nfvo.take_requests().0.len(), 1);
    // The granted VIM (of a type this solgate has no driver for) was the one tried.
    assert_eq!(op["operationState"], "FAILED_TEMP", "{op}");
    assert_eq!(op["error"]["detail"], "vimType EXAMPLE.NFVO_VIM.V_1 is not supported.", "{op}");
    // A request may not name the marker as its VIM type.
    let id = create_instance(&app, &vnfd_id, "marker").await;
    let body = json!({"flavourId": "simple", "vimConnectionInfo": {"v": {"vimType": "SOLGATE.NFVO_GRANT"}}});
    let reply = send(v2(&app, Method::POST, &format!("/vnflcm/v2/vnf_instances/{id}/instantiate")).json(&body)).await;
    assert_eq!(reply.status, 422, "{}", reply.text);
    assert!(!reply.problem(422).contains("supported: SOLGATE.NFVO_GRANT"), "{}", reply.text);
}

#[tokio::test]
async fn scale_to_level_and_change_flavour_send_their_grants() {
    let nfvo = TestNfvo::start(Decision::Grant);
    let app = app_with(Db::Sqlite, &nfvo).await.unwrap();
    let vnfd_id = install_sample_package(&app);
    let id = create_instance(&app, &vnfd_id, "levels").await;
    let op_url = task(&app, &id, "instantiate", instantiate_body()).await;
    assert_eq!(
        wait_op(&app, &op_url, &["COMPLETED", "FAILED_TEMP", "ROLLED_BACK"]).await["operationState"],
        "COMPLETED"
    );
    nfvo.take_requests();

    // Level 1 → level 2: two more VDU1.
    let op_url = task(&app, &id, "scale_to_level", json!({"instantiationLevelId": "instantiation_level_2"})).await;
    let op = wait_op(&app, &op_url, &["COMPLETED", "FAILED_TEMP", "ROLLED_BACK"]).await;
    assert_eq!(op["operationState"], "COMPLETED", "{op}");
    let (posts, _) = nfvo.take_requests();
    assert_eq!(posts.len(), 1);
    assert_eq!(posts[0].body["operation"], "SCALE_TO_LEVEL");
    assert_eq!(computes(&posts[0].body, "addResources"), pairs(&[("VDU1", 2)]), "{}", posts[0].body);
    assert_eq!(vnfc_count(&show_instance(&app, &id).await, "VDU1"), 3);

    // To flavour `small` (VDU1 only): the NFVO is told what goes and what stays granted.
    let op_url = task(&app, &id, "change_flavour", json!({"newFlavourId": "small"})).await;
    let op = wait_op(&app, &op_url, &["COMPLETED", "FAILED_TEMP", "ROLLED_BACK"]).await;
    assert_eq!(op["operationState"], "COMPLETED", "{op}");
    let (posts, _) = nfvo.take_requests();
    assert_eq!(posts.len(), 1);
    let body = &posts[0].body;
    assert_eq!(body["operation"], "CHANGE_FLAVOUR");
    assert_eq!(body["flavourId"], "small", "{body}");
    let instance = show_instance(&app, &id).await;
    let removed_vdu2 = computes(body, "removeResources").iter().filter(|(vdu, _)| vdu == "VDU2").count();
    assert_eq!(removed_vdu2, 1, "VDU2 is not in flavour small: {body}");
    assert_eq!(vnfc_count(&instance, "VDU2"), 0);
}

#[tokio::test]
async fn an_https_nfvo_is_trusted_through_the_ca_file_only() {
    let dir = tempfile::tempdir().unwrap();
    let ca = crate::tls::TestCa::new("nfvo-ca");
    let nfvo = TestNfvo::start_tls(Decision::Grant, &ca.leaf(dir.path(), "nfvo", false));
    let ca_file = ca.write(dir.path(), "nfvo-ca.pem");

    // Trusted through `[tls] ca_file`, and no plain HTTP allowed: the grant arrives.
    let endpoint = nfvo.endpoint();
    let app = TestApp::spawn_with(move |settings| {
        settings.nfvo = NfvoSettings { allow_http: false, ..external(endpoint) };
        settings.tls.ca_file = ca_file;
    })
    .await;
    let vnfd_id = install_sample_package(&app);
    let id = create_instance(&app, &vnfd_id, "https").await;
    let op_url = task(&app, &id, "instantiate", instantiate_body()).await;
    let op = wait_op(&app, &op_url, &["COMPLETED", "FAILED_TEMP", "ROLLED_BACK"]).await;
    assert_eq!(op["operationState"], "COMPLETED", "{op}");
    let (posts, _) = nfvo.take_requests();
    assert_eq!(posts.len(), 1);
    assert!(posts[0].authorization.starts_with("Basic "));

    // Without the CA the NFVO's certificate is not trusted: nothing is sent.
    let endpoint = nfvo.endpoint();
    let untrusting =
        TestApp::spawn_with(move |settings| settings.nfvo = NfvoSettings { allow_http: false, ..external(endpoint) })
            .await;
    let vnfd_id = install_sample_package(&untrusting);
    let id = create_instance(&untrusting, &vnfd_id, "untrusted").await;
    let op_url = task(&untrusting, &id, "instantiate", instantiate_body()).await;
    let op = wait_op(&untrusting, &op_url, &["COMPLETED", "FAILED_TEMP", "ROLLED_BACK"]).await;
    assert_eq!(op["operationState"], "FAILED_TEMP", "{op}");
    assert!(op["error"]["detail"].as_str().unwrap().contains("The NFVO cannot be reached"), "{op}");
    assert!(nfvo.take_requests().0.is_empty());
}

/// The packages of the instances solgate holds for `vnfd_id` (SOL005 filter on vnfdId).
pub(crate) async fn local_packages(app: &TestApp, vnfd_id: &str) -> Vec<Value> {
    let path = format!("/vnfpkgm/v1/vnf_packages?filter=(eq,vnfdId,{})", urlencode(vnfd_id));
    let reply = send(app.request(Method::GET, &path)).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    reply.json().as_array().unwrap().clone()
}

fn urlencode(text: &str) -> String {
    percent_encoding::utf8_percent_encode(text, percent_encoding::NON_ALPHANUMERIC).to_string()
}

/// `POST vnf_instances` for `vnfd_id`, whatever the answer.
pub(crate) async fn try_create(app: &TestApp, vnfd_id: &str) -> crate::helpers::Reply {
    send(v2(app, Method::POST, "/vnflcm/v2/vnf_instances").json(&json!({"vnfdId": vnfd_id}))).await
}

#[tokio::test]
async fn sqlite_a_package_known_only_to_the_nfvo_is_fetched_and_instantiated() {
    a_package_known_only_to_the_nfvo_is_fetched_and_instantiated(Db::Sqlite).await;
}

#[tokio::test]
async fn postgres_a_package_known_only_to_the_nfvo_is_fetched_and_instantiated() {
    a_package_known_only_to_the_nfvo_is_fetched_and_instantiated(Db::Postgres).await;
}

async fn a_package_known_only_to_the_nfvo_is_fetched_and_instantiated(db: Db) {
    let nfvo = TestNfvo::start(Decision::Grant);
    let vnfd_id = uuid::Uuid::new_v4().to_string();
    let package = NfvoPackage::sample(&vnfd_id);
    nfvo.state.lock().unwrap().packages.push(package.clone());
    let Some(app) = app_with(db, &nfvo).await else { return };
    assert!(local_packages(&app, &vnfd_id).await.is_empty());

    let id = create_instance(&app, &vnfd_id, "from-the-nfvo").await;
    let instance = show_instance(&app, &id).await;
    assert_eq!(instance["vnfdId"], vnfd_id.as_str());
    assert_eq!(instance["vnfProvider"], "Solgate", "{instance}");
    let (_, gets) = nfvo.take_requests();
    let paths: Vec<&str> = gets.iter().map(|seen| seen.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            format!("/vnfpkgm/v2/onboarded_vnf_packages/{vnfd_id}"),
            format!("/vnfpkgm/v2/onboarded_vnf_packages/{vnfd_id}/package_content")
        ],
        "the VnfPkgInfo, then the content"
    );
    for seen in &gets {
        assert_eq!(seen.version, "2.1.0", "SOL003 v3.3.1 VNF package management: {seen:?}");
        assert!(seen.authorization.starts_with("Basic "), "{seen:?}");
    }
    // Cached here as an onboarded package, with the NFVO's checksum.
    let local = local_packages(&app, &vnfd_id).await;
    assert_eq!(local.len(), 1, "{local:?}");
    assert_eq!(local[0]["onboardingState"], "ONBOARDED");
    assert_eq!(local[0]["operationalState"], "ENABLED");
    assert_eq!(local[0]["usageState"], "IN_USE");
    // The content served here is the NFVO's, byte for byte.
    let path = format!("/vnfpkgm/v1/vnf_packages/{}/package_content", local[0]["id"].as_str().unwrap());
    let response = app.request(Method::GET, &path).header("Accept", "application/zip").send().await.unwrap();
    assert_eq!(response.status(), 200);
    assert!(response.bytes().await.unwrap() == package.content, "the cached content differs from the NFVO's");

    let op_url = task(&app, &id, "instantiate", instantiate_body()).await;
    let op = wait_op(&app, &op_url, &["COMPLETED", "FAILED_TEMP", "ROLLED_BACK"]).await;
    assert_eq!(op["operationState"], "COMPLETED", "{op}");
    assert_eq!(show_instance(&app, &id).await["instantiationState"], "INSTANTIATED");
    let (posts, gets) = nfvo.take_requests();
    assert_eq!(posts.len(), 1, "one grant");
    assert!(gets.is_empty(), "the package is not fetched again: {gets:?}");

    // A second instance of the VNFD uses the cached package.
    create_instance(&app, &vnfd_id, "second").await;
    assert!(nfvo.take_requests().1.is_empty());
    assert_eq!(local_packages(&app, &vnfd_id).await.len(), 1);
}

#[tokio::test]
async fn sqlite_a_package_from_the_nfvo_is_checked_before_use() {
    a_package_from_the_nfvo_is_checked_before_use(Db::Sqlite).await;
}

#[tokio::test]
async fn postgres_a_package_from_the_nfvo_is_checked_before_use() {
    a_package_from_the_nfvo_is_checked_before_use(Db::Postgres).await;
}

async fn a_package_from_the_nfvo_is_checked_before_use(db: Db) {
    let nfvo = TestNfvo::start(Decision::Grant);
    let Some(app) = app_with(db, &nfvo).await else { return };

    // Unknown to the NFVO too: 422 with the NFVO's words; nothing is left behind.
    let unknown = uuid::Uuid::new_v4().to_string();
    let detail = try_create(&app, &unknown).await.problem(422);
    assert!(detail.contains("was not taken from the NFVO") && detail.contains("No onboarded VNF package"), "{detail}");
    // A hostile vnfdId stays one path segment at the NFVO and gets the same clear answer.
    let hostile = "../../grant/v1/grants?x=1#'\"; DROP TABLE vnf_packages; --\u{1F600}";
    let detail = try_create(&app, hostile).await.problem(422);
    assert!(detail.contains("No onboarded VNF package"), "{detail}");
    let (posts, gets) = nfvo.take_requests();
    assert!(posts.is_empty(), "{posts:?}");
    assert_eq!(gets.len(), 2, "{gets:?}");
    assert!(gets[1].path.starts_with("/vnfpkgm/v2/onboarded_vnf_packages/..%2F..%2Fgrant"), "{gets:?}");

    // Content that does not match the checksum the NFVO states.
    let tampered = uuid::Uuid::new_v4().to_string();
    let mut package = NfvoPackage::sample(&tampered);
    package.info["checksum"]["hash"] = json!("00".repeat(32));
    nfvo.state.lock().unwrap().packages.push(package);
    let detail = try_create(&app, &tampered).await.problem(422);
    assert!(detail.contains("does not match the checksum"), "{detail}");
    assert!(local_packages(&app, &tampered).await.is_empty());

    // DISABLED at the NFVO.
    let disabled = uuid::Uuid::new_v4().to_string();
    let mut package = NfvoPackage::sample(&disabled);
    package.info["operationalState"] = json!("DISABLED");
    nfvo.state.lock().unwrap().packages.push(package);
    let detail = try_create(&app, &disabled).await.problem(422);
    assert!(detail.contains("is DISABLED, not ENABLED"), "{detail}");

    // A package that holds another VNFD than the one asked for.
    let asked = uuid::Uuid::new_v4().to_string();
    let other = uuid::Uuid::new_v4().to_string();
    nfvo.state.lock().unwrap().packages.push(NfvoPackage::holding(&asked, &other));
    let detail = try_create(&app, &asked).await.problem(422);
    assert!(detail.contains(&format!("holds the VNFD {other}")), "{detail}");
    assert!(local_packages(&app, &other).await.is_empty());

    // Unreachable: 503, and it works once the NFVO is back (failures are not cached).
    let later = uuid::Uuid::new_v4().to_string();
    nfvo.state.lock().unwrap().packages.push(NfvoPackage::sample(&later));
    nfvo.stop().await;
    let reply = try_create(&app, &later).await;
    let detail = reply.problem(503);
    assert!(detail.contains("The NFVO cannot be reached"), "{detail}");
    assert!(local_packages(&app, &later).await.is_empty());
    nfvo.serve(nfvo.port);
    create_instance(&app, &later, "once-back").await;
    assert_eq!(local_packages(&app, &later).await.len(), 1);
}

#[tokio::test]
async fn in_local_mode_an_unknown_vnfd_is_not_looked_for_elsewhere() {
    let nfvo = TestNfvo::start(Decision::Grant);
    let vnfd_id = uuid::Uuid::new_v4().to_string();
    nfvo.state.lock().unwrap().packages.push(NfvoPackage::sample(&vnfd_id));
    let app = TestApp::spawn().await;
    let detail = try_create(&app, &vnfd_id).await.problem(422);
    assert_eq!(detail, format!("VnfPackage of vnfdId {vnfd_id} is not found or not operational."));
    let (posts, gets) = nfvo.take_requests();
    assert!(posts.is_empty() && gets.is_empty());
}

#[tokio::test]
async fn change_vnfpkg_names_the_destination_vnfd_in_its_grant() {
    let nfvo = TestNfvo::start(Decision::Grant);
    let app = app_with(Db::Sqlite, &nfvo).await.unwrap();
    let current = install_sample_package(&app);
    let destination = install_sample_package(&app);
    let id = create_instance(&app, &current, "change-vnfpkg").await;
    let op_url = task(&app, &id, "instantiate", instantiate_body()).await;
    assert_eq!(
        wait_op(&app, &op_url, &["COMPLETED", "FAILED_TEMP", "ROLLED_BACK"]).await["operationState"],
        "COMPLETED"
    );
    let (posts, _) = nfvo.take_requests();
    assert!(posts[0].body.get("dstVnfdId").is_none(), "only CHANGE_VNFPKG names one: {:?}", posts[0].body);

    let op_url = task(&app, &id, "change_vnfpkg", json!({"vnfdId": destination})).await;
    let op = wait_op(&app, &op_url, &["COMPLETED", "FAILED_TEMP", "ROLLED_BACK"]).await;
    assert_eq!(op["operationState"], "COMPLETED", "{op}");
    let (posts, _) = nfvo.take_requests();
    assert_eq!(posts.len(), 1, "{posts:?}");
    assert_eq!(posts[0].body["operation"], "CHANGE_VNFPKG");
    assert_eq!(posts[0].body["vnfdId"], current.as_str(), "the VNFD before the change");
    assert_eq!(posts[0].body["dstVnfdId"], destination.as_str(), "{}", posts[0].body);
    assert_eq!(show_instance(&app, &id).await["vnfdId"], destination.as_str());
}

/// The resources of `key` of a grant request of one type, as (vduId, resourceTemplateId).
fn of_type(request: &Value, key: &str, kind: &str) -> Vec<(String, String)> {
    let mut found: Vec<(String, String)> = request[key]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|resource| resource["type"] == kind)
        .map(|resource| {
            (
                resource["vduId"].as_str().unwrap_or_default().to_owned(),
                resource["resourceTemplateId"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    found.sort();
    found
}

fn repeated(list: &[(&str, &str, usize)]) -> Vec<(String, String)> {
    let mut found: Vec<(String, String)> = list
        .iter()
        .flat_map(|(vdu, template, count)| std::iter::repeat_n(((*vdu).to_owned(), (*template).to_owned()), *count))
        .collect();
    found.sort();
    found
}

#[tokio::test]
async fn the_grant_request_asks_for_ports_storage_and_placement_and_the_granted_zone_is_used() {
    let nfvo = TestNfvo::start(Decision::Grant);
    let app = app_with(Db::Sqlite, &nfvo).await.unwrap();
    let vnfd_id = install_package(&app, CsarBuilder::sample().vdu1_anti_affinity("zone"));
    let id = create_instance(&app, &vnfd_id, "placed").await;
    let body = json!({"flavourId": "simple", "instantiationLevelId": "instantiation_level_2",
        "additionalParams": {"site": "north", "nfv": {"VDU": {"VDU1": {"note": "x"}}}}});
    let op_url = task(&app, &id, "instantiate", body).await;
    let op = wait_op(&app, &op_url, &["COMPLETED", "FAILED_TEMP", "ROLLED_BACK"]).await;
    assert_eq!(op["operationState"], "COMPLETED", "{op}");
    let (posts, _) = nfvo.take_requests();
    let request = &posts[0].body;
    assert_eq!(of_type(request, "addResources", "COMPUTE"), repeated(&[("VDU1", "VDU1", 3), ("VDU2", "VDU2", 1)]));
    // Every VDU CP a port, every virtual storage a volume, named after their VNFC's COMPUTE.
    assert_eq!(
        of_type(request, "addResources", "LINKPORT"),
        repeated(&[("VDU1", "VDU1_CP1", 3), ("VDU1", "VDU1_CP2", 3), ("VDU2", "VDU2_CP1", 1)]),
        "{request}"
    );
    assert_eq!(of_type(request, "addResources", "STORAGE"), repeated(&[("VDU2", "VirtualStorage", 1)]));
    let added = request["addResources"].as_array().unwrap();
    let computes_of = |vdu: &str| -> Vec<String> {
        added
            .iter()
            .filter(|resource| resource["type"] == "COMPUTE" && resource["vduId"] == vdu)
            .map(|resource| resource["id"].as_str().unwrap().to_owned())
            .collect()
    };
    let vdu2 = computes_of("VDU2");
    assert!(added.iter().any(|resource| resource["id"] == format!("VirtualStorage-{}", vdu2[0])), "{request}");
    // The anti-affinity rule relates VDU1's three new VNFCs.
    let mut vdu1 = computes_of("VDU1");
    vdu1.sort();
    let constraints = request["placementConstraints"].as_array().expect("placementConstraints");
    assert_eq!(constraints.len(), 1, "{request}");
    assert_eq!(constraints[0]["affinityOrAntiAffinity"], "ANTI_AFFINITY");
    assert_eq!(constraints[0]["scope"], "ZONE");
    let mut granted: Vec<String> = constraints[0]["resource"]
        .as_array()
        .unwrap()
        .iter()
        .map(|reference| {
            assert_eq!(reference["idType"], "GRANT", "{reference}");
            reference["resourceId"].as_str().unwrap().to_owned()
        })
        .collect();
    granted.sort();
    assert_eq!(granted, vdu1);
    assert_eq!(request["additionalParams"], json!({"site": "north", "nfv": {"VDU": {"VDU1": {"note": "x"}}}}));
    // The Grant put every VNFC in zone-a, the VIM's az-1: the instance and the occurrence say so.
    let instance = show_instance(&app, &id).await;
    let vnfcs = instance["instantiatedVnfInfo"]["vnfcResourceInfo"].as_array().unwrap();
    assert_eq!(vnfcs.len(), 4);
    assert!(vnfcs.iter().all(|vnfc| vnfc["zoneId"] == "az-1"), "{instance}");
    let affected = op["resourceChanges"]["affectedVnfcs"].as_array().unwrap();
    assert!(affected.iter().all(|vnfc| vnfc["zoneId"] == "az-1"), "{op}");

    // Scale out: the new VNFC is placed apart from the three that exist (RES_MGMT).
    let op_url = task(&app, &id, "scale", json!({"type": "SCALE_OUT", "aspectId": "VDU1_scale"})).await;
    assert_eq!(
        wait_op(&app, &op_url, &["COMPLETED", "FAILED_TEMP", "ROLLED_BACK"]).await["operationState"],
        "COMPLETED"
    );
    let (posts, _) = nfvo.take_requests();
    let request = &posts[0].body;
    assert_eq!(of_type(request, "addResources", "COMPUTE"), repeated(&[("VDU1", "VDU1", 1)]));
    assert_eq!(of_type(request, "addResources", "LINKPORT").len(), 2);
    assert!(request.get("additionalParams").is_none(), "the scale request had none: {request}");
    let references = request["placementConstraints"][0]["resource"].as_array().unwrap();
    let existing: Vec<&Value> = vnfcs
        .iter()
        .filter(|vnfc| vnfc["vduId"] == "VDU1")
        .map(|vnfc| &vnfc["computeResource"]["resourceId"])
        .collect();
    assert_eq!(references.iter().filter(|reference| reference["idType"] == "GRANT").count(), 1);
    let managed: Vec<&Value> =
        references.iter().filter(|reference| reference["idType"] == "RES_MGMT").map(|r| &r["resourceId"]).collect();
    assert_eq!(managed.len(), 3, "{request}");
    assert!(managed.iter().all(|id| existing.contains(id)), "{request}");

    // Terminate gives back VDU2's volume with its handle.
    let instance = show_instance(&app, &id).await;
    let storage = &instance["instantiatedVnfInfo"]["virtualStorageResourceInfo"][0];
    let op_url = task(&app, &id, "terminate", json!({"terminationType": "FORCEFUL"})).await;
    assert_eq!(
        wait_op(&app, &op_url, &["COMPLETED", "FAILED_TEMP", "ROLLED_BACK"]).await["operationState"],
        "COMPLETED"
    );
    let (posts, _) = nfvo.take_requests();
    let removed: Vec<&Value> = posts[0].body["removeResources"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|resource| resource["type"] == "STORAGE")
        .collect();
    assert_eq!(removed.len(), 1, "{}", posts[0].body);
    assert_eq!(removed[0]["vduId"], "VDU2");
    assert_eq!(removed[0]["resource"], storage["storageResource"]);
    assert!(posts[0].body.get("placementConstraints").is_none(), "nothing is added");
}

#[tokio::test]
async fn a_rule_over_one_new_vnfc_and_nothing_else_is_not_sent() {
    let nfvo = TestNfvo::start(Decision::Grant);
    let app = app_with(Db::Sqlite, &nfvo).await.unwrap();
    let vnfd_id = install_package(&app, CsarBuilder::sample().vdu1_anti_affinity("nfvi_node"));
    let id = create_instance(&app, &vnfd_id, "alone").await;
    let op_url = task(&app, &id, "instantiate", instantiate_body()).await;
    assert_eq!(
        wait_op(&app, &op_url, &["COMPLETED", "FAILED_TEMP", "ROLLED_BACK"]).await["operationState"],
        "COMPLETED"
    );
    let (posts, _) = nfvo.take_requests();
    // instantiation_level_1: one VDU1 VNFC, so nothing to keep apart.
    assert_eq!(
        of_type(&posts[0].body, "addResources", "COMPUTE"),
        repeated(&[("VDU1", "VDU1", 1), ("VDU2", "VDU2", 1)])
    );
    assert!(posts[0].body.get("placementConstraints").is_none(), "{}", posts[0].body);
    // A second one is placed apart from the first, on another compute host.
    let op_url = task(&app, &id, "scale", json!({"type": "SCALE_OUT", "aspectId": "VDU1_scale"})).await;
    assert_eq!(
        wait_op(&app, &op_url, &["COMPLETED", "FAILED_TEMP", "ROLLED_BACK"]).await["operationState"],
        "COMPLETED"
    );
    let (posts, _) = nfvo.take_requests();
    assert_eq!(posts[0].body["placementConstraints"][0]["scope"], "NFVI_NODE", "{}", posts[0].body);
    assert_eq!(posts[0].body["placementConstraints"][0]["resource"].as_array().unwrap().len(), 2);
}

/// A conductor that stopped while the NFVO was deciding an asynchronous grant left the
/// occurrence STARTING with the grant's request and `Location`: the conductor that resumes
/// it waits at that `Location` and does not ask the NFVO a second time.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resumed_operation_waits_for_the_grant_asked_before_its_conductor_stopped() {
    use solgate_db::repo::lcm::{self, LcmMajor};

    let nfvo = TestNfvo::start(Decision::Grant);
    let endpoint = nfvo.endpoint();
    let app = TestApp::spawn_with(move |settings| {
        settings.nfvo = external(endpoint);
        settings.conductor.heartbeat_interval_secs = 1;
        settings.conductor.lease_timeout_secs = 2;
    })
    .await;
    let vnfd_id = install_sample_package(&app);
    let instance_id = create_instance(&app, &vnfd_id, "asked-before").await;

    // Accepted straight in the database (no work message), claimed by a conductor that is
    // gone, which had asked for the grant and been told 202 + Location.
    let mut grant_id = String::new();
    let mut op_id = String::new();
    let url = orphaned_instantiate_of(&app, &instance_id, |op| {
        let request = json!({
            "vnfInstanceId": instance_id, "vnfLcmOpOccId": op.id, "vnfdId": vnfd_id, "operation": "INSTANTIATE",
            "flavourId": "simple",
            "addResources": [
                {"id": "c-1", "type": "COMPUTE", "vduId": "VDU1", "resourceTemplateId": "VDU1"},
                {"id": "c-2", "type": "COMPUTE", "vduId": "VDU2", "resourceTemplateId": "VDU2"},
            ],
        });
        let grant = grant_for(&request, "SOLGATE.LOCAL.V_1");
        grant_id = grant["id"].as_str().unwrap().to_owned();
        nfvo.state.lock().unwrap().pending.push((grant_id.clone(), 1, grant));
        let location = format!("{}/grant/v1/grants/{grant_id}", nfvo.endpoint());
        op.body["_solgate"]["pendingGrant"] = json!({"location": location, "request": request});
        op_id = op.id.clone();
    });
    let done = tokio::time::timeout(
        std::time::Duration::from_secs(30),
        wait_op(&app, &url, &["COMPLETED", "ROLLED_BACK", "FAILED_TEMP"]),
    )
    .await
    .expect("the operation is resumed within 30 s");
    assert_eq!(done["operationState"], "COMPLETED", "{done}");
    assert_eq!(done["grantId"], grant_id.as_str(), "{done}");
    let (posts, polls) = nfvo.take_requests();
    assert!(posts.is_empty(), "no second grant request: {posts:?}");
    assert!(!polls.is_empty() && polls.iter().all(|poll| poll.path == format!("/grant/v1/grants/{grant_id}")));
    let instance = show_instance(&app, &instance_id).await;
    assert_eq!(instance["vimConnectionInfo"][GRANTED_VIM]["vimId"], "vim-from-the-nfvo");
    // The pending grant is not kept once the Grant is stored.
    let database = app.database();
    let mut conn = database.conn().unwrap();
    let stored = lcm::find_op(&mut conn, LcmMajor::V2, &op_id).unwrap().unwrap();
    assert!(stored.body["_solgate"].get("pendingGrant").is_none(), "{}", stored.body);
}

/// A 202 grant's request and Location are recorded while the NFVO decides.
#[tokio::test]
async fn an_undecided_grant_is_recorded_with_its_location() {
    use solgate_db::repo::lcm::{self, LcmMajor};
    let nfvo = TestNfvo::start(Decision::Never);
    let app = app_with(Db::Sqlite, &nfvo).await.unwrap();
    let vnfd_id = install_sample_package(&app);
    let id = create_instance(&app, &vnfd_id, "recorded").await;
    let op_url = task(&app, &id, "instantiate", instantiate_body()).await;
    let op_id = op_url.rsplit('/').next().unwrap().to_owned();
    let database = app.database();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let pending = loop {
        let mut conn = database.conn().unwrap();
        let op = lcm::find_op(&mut conn, LcmMajor::V2, &op_id).unwrap().unwrap();
        if let Some(pending) = op.body["_solgate"].get("pendingGrant") {
            break pending.clone();
        }
        assert!(std::time::Instant::now() < deadline, "no pending grant recorded: {}", op.body);
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    };
    let (posts, _) = nfvo.take_requests();
    assert_eq!(posts.len(), 1);
    assert_eq!(pending["request"]["vnfLcmOpOccId"], op_id.as_str());
    assert_eq!(pending["request"]["addResources"], posts[0].body["addResources"]);
    let location = pending["location"].as_str().unwrap();
    assert!(location.starts_with(&format!("{}/grant/v1/grants/", nfvo.endpoint())), "{location}");
    // It is never shown to clients.
    let shown = send(v2(&app, Method::GET, op_url.trim_start_matches(&app.address))).await;
    assert!(!shown.text.contains("pendingGrant"), "{}", shown.text);
}

fn ext_link(id: &str, network: &str) -> Value {
    json!({
        "id": id, "resourceId": network,
        "extCps": [{"cpdId": "VDU1_CP1", "cpConfig": {"c1": {"cpProtocolData": [{
            "layerProtocol": "IP_OVER_ETHERNET",
            "ipOverEthernet": {"ipAddresses": [{"type": "IPV4", "numDynamicAddresses": 1}]}}]}}}]
    })
}

#[tokio::test]
async fn change_ext_conn_asks_to_update_the_vnfcs_on_the_changed_links() {
    let nfvo = TestNfvo::start(Decision::Grant);
    let app = app_with(Db::Sqlite, &nfvo).await.unwrap();
    let vnfd_id = install_sample_package(&app);
    let id = create_instance(&app, &vnfd_id, "reconnected").await;
    let body = json!({"flavourId": "simple", "extVirtualLinks": [ext_link("ext-vl-1", "net-1")]});
    let op_url = task(&app, &id, "instantiate", body).await;
    assert_eq!(
        wait_op(&app, &op_url, &["COMPLETED", "FAILED_TEMP", "ROLLED_BACK"]).await["operationState"],
        "COMPLETED"
    );
    nfvo.take_requests();
    let instance = show_instance(&app, &id).await;
    let vdu1: Vec<&Value> = instance["instantiatedVnfInfo"]["vnfcResourceInfo"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|vnfc| vnfc["vduId"] == "VDU1")
        .collect();

    let body = json!({"extVirtualLinks": [ext_link("ext-vl-1", "net-2")], "additionalParams": {"reason": "move"}});
    let op_url = task(&app, &id, "change_ext_conn", body).await;
    let op = wait_op(&app, &op_url, &["COMPLETED", "FAILED_TEMP", "ROLLED_BACK"]).await;
    assert_eq!(op["operationState"], "COMPLETED", "{op}");
    let (posts, _) = nfvo.take_requests();
    let request = &posts[0].body;
    assert_eq!(request["operation"], "CHANGE_EXT_CONN");
    // Only VDU1 has a CP on the changed link: its VNFC is updated, not VDU2's.
    let updated = request["updateResources"].as_array().expect("updateResources");
    assert_eq!(updated.len(), vdu1.len(), "{request}");
    for (resource, vnfc) in updated.iter().zip(&vdu1) {
        assert_eq!(resource["type"], "COMPUTE");
        assert_eq!(resource["vduId"], "VDU1");
        assert_eq!(resource["resource"], vnfc["computeResource"], "{request}");
    }
    // A new port for VDU1_CP1 per VNFC, named after the updated COMPUTE.
    let added = request["addResources"].as_array().expect("addResources");
    assert_eq!(of_type(request, "addResources", "LINKPORT"), repeated(&[("VDU1", "VDU1_CP1", vdu1.len())]));
    for (port, compute) in added.iter().zip(updated) {
        assert_eq!(port["id"], format!("VDU1_CP1-{}", compute["id"].as_str().unwrap()));
    }
    assert_eq!(request["additionalParams"], json!({"reason": "move"}));
}

#[tokio::test]
async fn a_rolling_update_asks_to_recreate_the_named_vdus() {
    let nfvo = TestNfvo::start(Decision::Grant);
    let app = app_with(Db::Sqlite, &nfvo).await.unwrap();
    let current = install_sample_package(&app);
    let destination = install_sample_package(&app);
    let id = create_instance(&app, &current, "rolling").await;
    let op_url = task(&app, &id, "instantiate", instantiate_body()).await;
    assert_eq!(
        wait_op(&app, &op_url, &["COMPLETED", "FAILED_TEMP", "ROLLED_BACK"]).await["operationState"],
        "COMPLETED"
    );
    nfvo.take_requests();
    let instance = show_instance(&app, &id).await;
    let vdu2 = instance["instantiatedVnfInfo"]["vnfcResourceInfo"]
        .as_array()
        .unwrap()
        .iter()
        .find(|vnfc| vnfc["vduId"] == "VDU2")
        .unwrap()
        .clone();
    let body = json!({"vnfdId": destination,
        "additionalParams": {"upgrade_type": "RollingUpdate", "vdu_params": [{"vdu_id": "VDU2"}]}});
    let op_url = task(&app, &id, "change_vnfpkg", body).await;
    let op = wait_op(&app, &op_url, &["COMPLETED", "FAILED_TEMP", "ROLLED_BACK"]).await;
    assert_eq!(op["operationState"], "COMPLETED", "{op}");
    let (posts, _) = nfvo.take_requests();
    let request = &posts[0].body;
    assert_eq!(request["dstVnfdId"], destination.as_str());
    assert_eq!(
        of_type(request, "removeResources", "COMPUTE"),
        repeated(&[("VDU2", "VDU2", 1)]),
        "only the named VDU's VNFCs: {request}"
    );
    assert_eq!(of_type(request, "removeResources", "STORAGE"), repeated(&[("VDU2", "VirtualStorage", 1)]));
    assert_eq!(of_type(request, "addResources", "COMPUTE"), repeated(&[("VDU2", "VDU2", 1)]));
    assert_eq!(of_type(request, "addResources", "STORAGE"), repeated(&[("VDU2", "VirtualStorage", 1)]));
    let removed = request["removeResources"].as_array().unwrap();
    assert_eq!(removed[0]["resource"], vdu2["computeResource"], "{request}");
}

/// SOL003 V4.3.1: the cluster registry and MCIOP repository a Grant names are recorded on the
/// instance (credentials sealed, never shown) and shown from VNF LCM 2.10.0 on.
#[tokio::test]
async fn the_grants_container_registries_and_mciop_repositories_are_recorded_from_2_10_0() {
    let nfvo = TestNfvo::start(Decision::Grant);
    let app = app_with(Db::Sqlite, &nfvo).await.unwrap();
    let vnfd_id = install_sample_package(&app);
    let id = create_instance(&app, &vnfd_id, "cnf").await;
    let op =
        wait_op(&app, &task(&app, &id, "instantiate", instantiate_body()).await, &["COMPLETED", "FAILED_TEMP"]).await;
    assert_eq!(op["operationState"], "COMPLETED", "{op}");
    let at = |version: &'static str| {
        send(
            app.request(Method::GET, &format!("/vnflcm/v2/vnf_instances/{id}"))
                .header("Version", version)
                .header("Accept", "application/json"),
        )
    };
    let newer = at("2.10.0").await;
    let instance = newer.json();
    assert_eq!(instance["cirConnectionInfo"]["cir1"]["interfaceInfo"]["endpoint"], "https://registry.nfvo.example");
    assert_eq!(instance["mciopRepositoryInfo"]["helm1"]["vimType"], "ETSINFV.MCIOP_REPOSITORY.V_1", "{instance}");
    assert!(!newer.text.contains(GRANTED_SECRET), "credentials are never shown: {}", newer.text);
    let older = at("2.0.0").await.json();
    assert!(older.get("cirConnectionInfo").is_none() && older.get("mciopRepositoryInfo").is_none(), "{older}");
    // Stored sealed.
    let database = app.database();
    let mut conn = database.conn().unwrap();
    let stored = solgate_db::repo::lcm::find_instance(&mut conn, solgate_db::repo::lcm::LcmMajor::V2, &id)
        .unwrap()
        .unwrap()
        .body;
    assert!(!stored.to_string().contains(GRANTED_SECRET), "{stored}");
}

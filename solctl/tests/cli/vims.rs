//! `vim register/list/show/set/delete` against the real server's VIM registry. The VIM is a
//! stand-in Kubernetes API server (a real cluster cannot run here) that answers `GET
//! /version` as Kubernetes does (200, `gitVersion`), and 401 without the bearer token.

use actix_web::{App, HttpRequest, HttpResponse, HttpServer, web};

use crate::helpers::Server;

const TOKEN: &str = "k8s-token-1";

fn kubernetes_stand_in() -> String {
    let server = HttpServer::new(|| {
        App::new().route(
            "/version",
            web::get().to(|req: HttpRequest| async move {
                let authorised = req.headers().get("authorization").and_then(|value| value.to_str().ok())
                    == Some(&format!("Bearer {TOKEN}"));
                if authorised {
                    HttpResponse::Ok().json(serde_json::json!({"major": "1", "minor": "30", "gitVersion": "v1.30.2"}))
                } else {
                    HttpResponse::Unauthorized().finish()
                }
            }),
        )
    })
    .workers(1)
    .bind(("127.0.0.1", 0))
    .unwrap();
    let port = server.addrs()[0].port();
    tokio::spawn(server.run());
    format!("http://127.0.0.1:{port}")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_vim_command() {
    let server = Server::start().await;
    let api = kubernetes_stand_in();
    let config = server
        .file("vim.yaml", format!("type: kubernetes\nauth_url: {api}\nbearer_token: {TOKEN}\nproject_name: default\n"));
    let registered = server
        .ok(&["vim", "register", "k8s-lab", "--config-file", config.to_str().unwrap(), "--is-default", "-f", "json"])
        .await
        .json();
    assert_eq!(registered["name"], "k8s-lab", "{registered}");
    assert_eq!(registered["type"], "kubernetes");
    assert_eq!(registered["is_default"], true);
    assert!(!registered.to_string().contains(TOKEN), "the token never comes back: {registered}");
    let id = registered["ID"].as_str().expect("the VIM has an id").to_owned();

    let list = server.ok(&["vim", "list"]).await;
    for heading in ["| ID ", "Name", "Tenant_id", "Type", "Is Default", "Status"] {
        assert!(list.stdout.contains(heading), "{heading}: {list:?}");
    }
    assert!(list.stdout.contains(&id) && list.stdout.contains("k8s-lab"), "{list:?}");
    let shown = server.ok(&["vim", "show", &id, "-f", "json"]).await.json();
    assert_eq!(shown["status"], "ACTIVE");

    let set =
        server.ok(&["vim", "set", &id, "--description", "lab cluster", "--is-default", "false", "-f", "json"]).await;
    assert_eq!(set.json()["description"], "lab cluster");
    assert_eq!(set.json()["is_default"], false);

    // A wrong token is refused by the registration check: exit 1 with the ProblemDetails.
    let wrong = server.file("wrong.yaml", format!("type: kubernetes\nauth_url: {api}\nbearer_token: not-the-token\n"));
    let refused = server.solctl(&["vim", "register", "bad", "--config-file", wrong.to_str().unwrap()]).await;
    assert_eq!(refused.code, 1, "{refused:?}");
    assert!(refused.stderr.contains("422"), "{refused:?}");
    let usage = server.solctl(&["vim", "set", &id]).await;
    assert_eq!(usage.code, 2, "nothing to change is a usage error: {usage:?}");

    let deleted = server.ok(&["vim", "delete", &id]).await;
    assert!(deleted.stdout.contains("is deleted successfully"), "{deleted:?}");
    let gone = server.solctl(&["vim", "show", &id]).await;
    assert_eq!(gone.code, 1, "{gone:?}");
    assert!(gone.stderr.contains("404"), "{gone:?}");
}

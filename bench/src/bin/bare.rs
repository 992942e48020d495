//! The yardstick for `GET /vnflcm/api_versions`: a bare actix-web server with one JSON
//! handler that builds and serialises the same document per request, on as many workers
//! as solgate's default. `solgate-bench versions --bare URL` drives both in one run.
//!
//! ```text
//! solgate-bare 127.0.0.1:0    # prints {"address":"127.0.0.1:PORT"} once listening
//! ```
#![allow(clippy::print_stdout)]

use actix_web::{App, HttpResponse, HttpServer, web};
use serde_json::json;

async fn api_versions() -> HttpResponse {
    let body = json!({
        "uriPrefix": "/vnflcm/v2",
        "apiVersions": [
            {"version": "2.0.0", "isDeprecated": false},
            {"version": "2.1.0", "isDeprecated": false},
            {"version": "2.2.0", "isDeprecated": false},
            {"version": "2.3.0", "isDeprecated": false},
            {"version": "2.10.0", "isDeprecated": false},
            {"version": "2.12.0", "isDeprecated": false}
        ]
    });
    HttpResponse::Ok().json(body)
}

#[actix_web::main]
async fn main() -> std::io::Result<()> {
    let listen = std::env::args().nth(1).unwrap_or_else(|| "127.0.0.1:0".to_owned());
    let server =
        HttpServer::new(|| App::new().route("/vnflcm/api_versions", web::get().to(api_versions))).bind(&listen)?;
    for address in server.addrs() {
        println!("{{\"address\":\"{address}\"}}");
    }
    server.run().await
}

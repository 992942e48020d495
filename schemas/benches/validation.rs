//! Validations per second of the compiled dictionaries (criterion reports them as elem/s):
//! the lookup of the negotiated version's dictionary plus one validation, as a handler does it;
//! and the one-off start-up cost of building the registry.
//!
//!     cargo bench -p solgate-schemas --bench validation

#![allow(clippy::expect_used, reason = "a benchmark should stop loudly when its setup is broken")]

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use serde_json::{Value, json};
use solgate_schemas::{Api, Registry};

fn instantiate_body() -> Value {
    json!({
        "flavourId": "simple",
        "instantiationLevelId": "instantiation_level_1",
        "extVirtualLinks": [{
            "id": "ext-vl-1",
            "vimConnectionId": "vim1",
            "resourceId": "6a1b5c0e-net-0001",
            "extCps": [{
                "cpdId": "VDU1_CP1",
                "cpConfig": {"VDU1_CP1_1": {"cpProtocolData": [{
                    "layerProtocol": "IP_OVER_ETHERNET",
                    "ipOverEthernet": {
                        "macAddress": "fa:16:3e:11:22:33",
                        "ipAddresses": [{"type": "IPV4", "fixedAddresses": ["10.10.0.5"], "subnetId": "subnet-0001"}]
                    }
                }]}}
            }],
            "extLinkPorts": [{"id": "port-1", "resourceHandle": {"vimConnectionId": "vim1", "resourceId": "port-0001"}}]
        }],
        "vimConnectionInfo": {"vim1": {
            "vimId": "4c8bd1b9-5d64-4f0a-9a8e-6a0f27f1bb39",
            "vimType": "ETSINFV.OPENSTACK_KEYSTONE.V_3",
            "interfaceInfo": {"endpoint": "http://keystone.example.com:5000/v3"},
            "accessInfo": {"username": "nfv_user", "region": "RegionOne", "project": "nfv"}
        }},
        "additionalParams": {"lcm-operation-user-data": "./UserData/lcm_user_data.py"}
    })
}

fn create_body() -> Value {
    json!({
        "vnfdId": "b1bb0ce7-ebca-4fa7-95ed-4840d70a1177",
        "vnfInstanceName": "vnf-1",
        "vnfInstanceDescription": "first instance",
        "metadata": {"tenant": "t1"}
    })
}

fn validation(c: &mut Criterion) {
    let registry = Registry::builtin().expect("builtin registry compiles");
    let mut group = c.benchmark_group("validate");
    group.throughput(Throughput::Elements(1));
    for (name, body) in [("InstantiateVnfRequest", instantiate_body()), ("CreateVnfRequest", create_body())] {
        group.bench_function(format!("vnflcm 2.0.0 {name}"), |b| {
            b.iter(|| {
                let entry = registry.negotiate(Api::Vnflcm, 2, Some("2.0.0")).expect("supported");
                entry.dictionary.validate(name, std::hint::black_box(&body)).expect("valid")
            })
        });
    }
    // A failing body: every failure is collected and formatted (the 400 path).
    let bad = json!({"vnfdId": 123, "vnfInstanceName": ["x"]});
    group.bench_function("vnflcm 2.0.0 CreateVnfRequest invalid", |b| {
        b.iter(|| {
            let entry = registry.negotiate(Api::Vnflcm, 2, Some("2.0.0")).expect("supported");
            entry.dictionary.validate("CreateVnfRequest", std::hint::black_box(&bad)).expect_err("invalid").to_string()
        })
    });
    group.finish();
}

/// Start-up cost: parsing every version document, applying the deltas, compiling every validator.
fn startup(c: &mut Criterion) {
    let mut group = c.benchmark_group("startup");
    group.sample_size(10);
    group.bench_function("Registry::builtin", |b| b.iter(|| Registry::builtin().expect("builtin registry compiles")));
    group.finish();
}

criterion_group!(benches, validation, startup);
criterion_main!(benches);

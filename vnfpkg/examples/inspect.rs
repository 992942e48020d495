//! Prints the onboarding summary of a VNF package as JSON, or the reason it is refused:
//! `cargo run -p solgate-vnfpkg --example inspect -- sample-vnf.zip`
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::process::ExitCode;

fn main() -> ExitCode {
    let Some(path) = std::env::args_os().nth(1) else {
        eprintln!("usage: inspect <package.zip>");
        return ExitCode::from(2);
    };
    match solgate_vnfpkg::inspect(path.as_ref(), &solgate_vnfpkg::Limits::default()) {
        Ok(contents) => match serde_json::to_string_pretty(&contents) {
            Ok(json) => {
                println!("{json}");
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("{e}");
                ExitCode::FAILURE
            }
        },
        Err(e) => {
            eprintln!("{e}");
            ExitCode::FAILURE
        }
    }
}

//! `solctl`, a command line for solgate in the manner of python-tackerclient's
//! `openstack vnflcm …` and `openstack vnf package …`, over [`solgate_client`].
//!
//! Exit codes: 0 done; 1 the API refused (its ProblemDetails is printed), the server could
//! not be reached, or an awaited operation did not complete; 2 a usage error (bad options,
//! an unreadable or invalid request file, an unknown column or cloud).
#![allow(clippy::print_stdout, clippy::print_stderr)]

pub mod cli;
mod commands;
pub mod config;
pub mod output;

use std::process::ExitCode;

use clap::Parser;

/// Why a command failed, which decides the exit code.
#[derive(Debug)]
pub enum Failure {
    /// Exit 2.
    Usage(String),
    /// Exit 1: an API or transport error.
    Client(solgate_client::Error),
    /// Exit 1: something the command checked (an operation that ended FAILED_TEMP, …).
    Failed(String),
}

impl From<solgate_client::Error> for Failure {
    fn from(error: solgate_client::Error) -> Self {
        match error {
            solgate_client::Error::Config(message) => Failure::Usage(message),
            other => Failure::Client(other),
        }
    }
}

impl Failure {
    pub fn exit_code(&self) -> u8 {
        match self {
            Failure::Usage(_) => 2,
            Failure::Client(_) | Failure::Failed(_) => 1,
        }
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Usage(message) => write!(f, "usage: {message}"),
            Failure::Client(solgate_client::Error::Api(problem)) => {
                write!(f, "{problem}")?;
                if let Some(kind) = problem.type_.as_deref().filter(|kind| !kind.is_empty() && *kind != "about:blank") {
                    write!(f, " [{kind}]")?;
                }
                Ok(())
            }
            Failure::Client(error) => write!(f, "{error}"),
            Failure::Failed(message) => f.write_str(message),
        }
    }
}

/// Parses the process arguments, runs the command, returns its exit code.
pub fn main() -> ExitCode {
    let cli = match cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) => {
            let _ = error.print();
            // clap: 0 for --help/--version, 2 for usage errors.
            return ExitCode::from(u8::try_from(error.exit_code()).unwrap_or(2));
        }
    };
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("solctl: {error}");
            return ExitCode::from(1);
        }
    };
    match runtime.block_on(commands::run(cli)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => {
            eprintln!("ERROR: {failure}");
            ExitCode::from(failure.exit_code())
        }
    }
}

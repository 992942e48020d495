//! What each command does: one module per command group over a shared [`context`].

mod context;
mod op;
mod package;
mod subsc;
mod versions;
mod vim;
mod vnffm;
mod vnflcm;
mod vnfpm;

use solgate_client::Client;

use crate::Failure;
use crate::cli::{Cli, Command, Vnf};
use crate::output::Printer;
use context::{Context, Outcome};

pub async fn run(cli: Cli) -> Outcome {
    let printer = Printer { format: cli.global.format, selected: cli.global.columns.clone() };
    if let Command::Completion { shell } = cli.command {
        let mut command = <Cli as clap::CommandFactory>::command();
        clap_complete::generate(shell, &mut command, "solctl", &mut std::io::stdout());
        return Ok(());
    }
    let config = crate::config::client_config(&cli.global).map_err(Failure::Usage)?;
    let client = Client::new(config)?;
    let context = Context { client, printer };
    let result = match cli.command {
        Command::Versions => context.versions().await,
        Command::Vnflcm { command } => context.vnflcm(command).await,
        Command::Vnf { command: Vnf::Package { command } } | Command::Package { command } => {
            context.package(command).await
        }
        Command::Vim { command } => context.vim(command).await,
        Command::Vnffm { command } => context.vnffm(command).await,
        Command::Vnfpm { command } => context.vnfpm(command).await,
        Command::Completion { .. } => Ok(()),
    };
    for deprecation in context.client.deprecations() {
        let sunset = deprecation.sunset.map(|date| format!(", to be retired {date}")).unwrap_or_default();
        eprintln!("WARNING: the server deprecates API version {}{sunset}", deprecation.version);
    }
    result
}

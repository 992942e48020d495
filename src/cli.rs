//! The `solgate` command line: role subcommands over one settings struct.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::settings::Settings;
use crate::startup::{Application, Role};
use crate::telemetry;

#[derive(Debug, Parser)]
#[command(name = "solgate", version, about = "ETSI NFV-SOL multi-version API gateway and VNF manager")]
pub struct Cli {
    /// Settings file (TOML). Without one, defaults apply; see deploy/solgate.sample.toml.
    #[arg(long, global = true, env = "SOLGATE_CONFIG")]
    pub config: Option<PathBuf>,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Args, Clone, Default)]
pub struct ServerFlags {
    /// Address to listen on, HOST:PORT (port 0 picks a free one). Overrides SOLGATE_LISTEN.
    #[arg(long)]
    pub listen: Option<String>,
    /// Data directory (SQLite file, package store). Overrides SOLGATE_DATA_DIR.
    #[arg(long)]
    pub data_dir: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run everything in one process: HTTP gateway, conductor, in-process RPC, local VIM.
    Serve(ServerFlags),
    /// Run the HTTP gateway only (scale-out: PostgreSQL + RabbitMQ).
    Gateway(ServerFlags),
    /// Run a conductor only (scale-out); serves /healthz, /readyz and /metrics.
    Conductor(ServerFlags),
    /// Apply pending database migrations and exit.
    Migrate(ServerFlags),
    /// Copy v1 VNF instances (not in flight) and their operation history into the v2 tables.
    MigrateV1ToV2 {
        /// Report what would be copied; change nothing.
        #[arg(long)]
        dry_run: bool,
        #[command(flatten)]
        flags: ServerFlags,
    },
    /// Seal every stored credential with the current secret key (after a key rotation,
    /// with the old key in `[secrets] previous_key_files`).
    Reseal(ServerFlags),
    /// Read a client secret from standard input and print its hash for `[[auth.clients]] secret`.
    HashSecret,
    /// Print the effective settings (secrets masked) and exit; non-zero on a bad file.
    CheckConfig {
        /// Print the defaults as a commented sample file instead.
        #[arg(long)]
        defaults: bool,
    },
}

impl ServerFlags {
    fn apply(&self, settings: &mut Settings) {
        if let Some(listen) = &self.listen {
            settings.http.listen = listen.clone();
        }
        if let Some(dir) = &self.data_dir {
            settings.data.dir = dir.clone();
        }
    }
}

/// Runs the command with `settings` (loaded by the caller from `cli.config` and the
/// environment); the exit code is non-zero on any error.
pub async fn run(cli: Cli, settings: Settings) -> anyhow::Result<()> {
    match cli.command {
        Command::CheckConfig { defaults } => check_config(&settings, defaults),
        Command::Migrate(flags) => migrate(prepared(settings, &flags)?).await,
        Command::MigrateV1ToV2 { dry_run, flags } => migrate_v1_to_v2(prepared(settings, &flags)?, dry_run).await,
        Command::HashSecret => hash_secret(),
        Command::Reseal(flags) => reseal(prepared(settings, &flags)?).await,
        Command::Serve(flags) => serve(settings, &flags, Role::Serve).await,
        Command::Gateway(flags) => serve(settings, &flags, Role::Gateway).await,
        Command::Conductor(flags) => serve(settings, &flags, Role::Conductor).await,
    }
}

/// The settings with the command line's flags, validated, and logging started.
fn prepared(mut settings: Settings, flags: &ServerFlags) -> anyhow::Result<Settings> {
    flags.apply(&mut settings);
    settings.validate()?;
    telemetry::init_subscriber(&settings.log);
    Ok(settings)
}

fn check_config(settings: &Settings, defaults: bool) -> anyhow::Result<()> {
    let text = if defaults { Settings::defaults_toml() } else { settings.to_masked_toml() };
    #[allow(clippy::print_stdout)]
    {
        print!("{text}");
    }
    let problems = if defaults {
        Vec::new()
    } else {
        let mut problems = settings.file_problems();
        problems.extend(settings.auth_problems());
        problems
    };
    if problems.is_empty() {
        return Ok(());
    }
    for problem in &problems {
        #[allow(clippy::print_stderr)]
        {
            eprintln!("error: {problem}");
        }
    }
    anyhow::bail!("{} problem(s) with the settings or the files they name", problems.len())
}

async fn migrate(settings: Settings) -> anyhow::Result<()> {
    let database = tokio::task::spawn_blocking(move || crate::startup::open_database(&settings)).await??;
    tracing::info!(backend = ?database.backend(), "database is up to date");
    Ok(())
}

async fn migrate_v1_to_v2(settings: Settings, dry_run: bool) -> anyhow::Result<()> {
    let lines = tokio::task::spawn_blocking(move || {
        let database = crate::startup::open_database(&settings)?;
        crate::migrate_v1_to_v2::run(&database, dry_run).map_err(anyhow::Error::from)
    })
    .await??;
    #[allow(clippy::print_stdout)]
    {
        println!("{} v1 VNF instance(s){}:", lines.len(), if dry_run { " (dry run, nothing changed)" } else { "" });
        for line in &lines {
            println!("  {line}");
        }
    }
    Ok(())
}

fn hash_secret() -> anyhow::Result<()> {
    let mut secret = String::new();
    std::io::stdin().read_line(&mut secret)?;
    let secret = secret.trim_end_matches(['\r', '\n']);
    if secret.is_empty() {
        anyhow::bail!("no secret on standard input");
    }
    let hash = solgate_gateway::auth::secret::hash(secret).ok_or_else(|| anyhow::anyhow!("no random bytes"))?;
    #[allow(clippy::print_stdout)]
    {
        println!("{hash}");
    }
    Ok(())
}

async fn reseal(settings: Settings) -> anyhow::Result<()> {
    let done = tokio::task::spawn_blocking(move || {
        let database = crate::startup::open_database(&settings)?;
        let secrets = crate::startup::secret_box(&settings)?;
        crate::reseal::run(&database, &secrets).map_err(anyhow::Error::from)
    })
    .await??;
    #[allow(clippy::print_stdout)]
    {
        println!(
            "resealed: {} VNF instance(s), {} operation occurrence(s), {} subscription(s), {} VNF package(s), \
             {} VIM(s)",
            done.instances, done.operations, done.subscriptions, done.packages, done.vims
        );
    }
    if done.raced > 0 {
        anyhow::bail!("{} row(s) changed while resealing; run `solgate reseal` again", done.raced);
    }
    Ok(())
}

async fn serve(settings: Settings, flags: &ServerFlags, role: Role) -> anyhow::Result<()> {
    let settings = prepared(settings, flags)?;
    let release_startup_pages = settings.memory.release_startup_pages;
    let application = Application::build(settings, role).await?;
    if release_startup_pages {
        crate::startup_pages::release_once_started();
    }
    application.run_until_stopped().await
}

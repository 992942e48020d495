use clap::Parser;

// JSON documents are built and dropped per request; glibc's allocator spent a third of the
// list endpoint's time in malloc/free (perf), mimalloc far less.
#[cfg(feature = "mimalloc")]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    solgate::allocator::tune_for_low_peak_memory();
    let cli = solgate::cli::Cli::parse();
    let settings = match solgate::settings::Settings::load(cli.config.as_deref(), std::env::vars()) {
        Ok(settings) => settings,
        Err(error) => {
            eprintln!("solgate: {error:#}");
            return std::process::ExitCode::FAILURE;
        }
    };
    // The runtime is sized from the settings (`database.blocking_threads`), so they are
    // read before it starts.
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .max_blocking_threads(settings.database.blocking_pool_size())
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("solgate: cannot start the runtime: {error}");
            return std::process::ExitCode::FAILURE;
        }
    };
    match runtime.block_on(solgate::cli::run(cli, settings)) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("solgate: {error:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

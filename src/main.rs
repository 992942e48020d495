use clap::Parser;

// JSON documents are built and dropped per request; glibc's allocator spent a third of the
// list endpoint's time in malloc/free (perf), mimalloc far less.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let cli = solgate::cli::Cli::parse();
    match solgate::cli::run(cli).await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("solgate: {error:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

//! `solctl`: see the library.

fn main() -> std::process::ExitCode {
    solctl::main()
}

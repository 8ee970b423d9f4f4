use std::process::ExitCode;

fn main() -> ExitCode {
    kco::cli::run(kco::cli::parse())
}

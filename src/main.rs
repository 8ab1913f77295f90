use std::process::ExitCode;

fn main() -> ExitCode {
    let code = kubectl_ksm::cli::main(std::env::args_os());
    ExitCode::from(code)
}

use std::process::ExitCode;

/// The binary's allocator; the library leaves the choice to whoever links it.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let code = kubectl_ksm::cli::main(std::env::args_os());
    ExitCode::from(code)
}

//! The kubectl-ksm binary the process benchmarks run: `KSM_BENCH_BIN`, or this tree's
//! release build (built first).

use std::path::{Path, PathBuf};
use std::process::Command;

pub fn binary() -> PathBuf {
    if let Some(bin) = std::env::var_os("KSM_BENCH_BIN") {
        return PathBuf::from(bin);
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = Command::new(cargo)
        .args(["build", "--release", "--bin", "kubectl-ksm", "--quiet"])
        .current_dir(root)
        .status()
        .expect("cargo build");
    assert!(status.success(), "cargo build --release failed");
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"));
    let bin = target.join("release/kubectl-ksm");
    assert!(bin.is_file(), "{} missing", bin.display());
    bin
}

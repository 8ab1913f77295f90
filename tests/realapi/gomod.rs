//! Real CRDs the repository does not carry, taken from their Go modules at pinned releases
//! (`go mod download`, the Go module cache): never written by hand.

use std::path::PathBuf;
use std::process::Command;
use std::sync::{Mutex, OnceLock};

use serde_json::Value;

/// Cluster API at the release kcm's go.mod requires at the commit crds/kcm comes from
/// (k0rdent/kcm 8373a24: sigs.k8s.io/cluster-api v1.13.4): its Cluster CRD serves v1beta1
/// and stores v1beta2, the version kcm and Sveltos read.
pub const CLUSTER_API: (&str, &str) = ("sigs.k8s.io/cluster-api", "v1.13.4");

/// The CRD files of Cluster API's Cluster.
pub const CAPI_CLUSTER_CRDS: &[&str] = &["config/crd/bases/cluster.x-k8s.io_clusters.yaml"];

/// Go on PATH, else the toolchain's usual home (as scripts/kube-test-server finds it).
fn go_binary() -> Option<PathBuf> {
    let on_path = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|p| p.join("go"))
            .find(|p| p.is_file())
    });
    on_path.or_else(|| {
        let usual = PathBuf::from("/usr/local/go/bin/go");
        usual.is_file().then_some(usual)
    })
}

/// The directory of module@version in the Go module cache, downloaded once per test binary;
/// Err says why it cannot be had here.
pub fn module_dir(module: &str, version: &str) -> Result<PathBuf, String> {
    /// module@version and its directory, or why it cannot be had.
    type Downloads = Mutex<Vec<(String, Result<PathBuf, String>)>>;
    static DIRS: OnceLock<Downloads> = OnceLock::new();
    let key = format!("{module}@{version}");
    let mut dirs = DIRS.get_or_init(Default::default).lock().unwrap();
    if let Some((_, dir)) = dirs.iter().find(|(k, _)| *k == key) {
        return dir.clone();
    }
    let dir = download(&key);
    dirs.push((key, dir.clone()));
    dir
}

fn download(key: &str) -> Result<PathBuf, String> {
    let go = go_binary().ok_or("Go is not on PATH (nor in /usr/local/go/bin)")?;
    // Outside any module (the repository has none), with the local toolchain.
    let out = Command::new(&go)
        .args(["mod", "download", "-json", key])
        .env("GOTOOLCHAIN", "local")
        .env("GOFLAGS", "-mod=mod")
        .current_dir(std::env::temp_dir())
        .output()
        .map_err(|e| format!("{}: {e}", go.display()))?;
    let info: Value = serde_json::from_slice(&out.stdout).map_err(|e| {
        format!(
            "`go mod download -json {key}`: {e}: {}",
            String::from_utf8_lossy(&out.stderr)
        )
    })?;
    if let Some(err) = info["Error"].as_str() {
        return Err(format!("`go mod download {key}`: {err}"));
    }
    match info["Dir"].as_str() {
        Some(dir) if out.status.success() => Ok(PathBuf::from(dir)),
        _ => Err(format!(
            "`go mod download -json {key}` failed: {}",
            String::from_utf8_lossy(&out.stderr)
        )),
    }
}

/// Files of a module's directory, for `RealApi::install_crds`; None (after saying on stderr
/// that the test is SKIPPED, or failing it where the server is required) when the module
/// cannot be had here.
pub fn crds(module: (&str, &str), files: &[&str]) -> Option<Vec<PathBuf>> {
    match module_files(module, files) {
        Ok(paths) => Some(paths),
        Err(reason) => super::skip(&reason),
    }
}

fn module_files((module, version): (&str, &str), files: &[&str]) -> Result<Vec<PathBuf>, String> {
    let dir = module_dir(module, version)?;
    let paths: Vec<PathBuf> = files.iter().map(|f| dir.join(f)).collect();
    match paths.iter().find(|p| !p.is_file()) {
        Some(missing) => Err(format!("{module}@{version} has no {}", missing.display())),
        None => Ok(paths),
    }
}

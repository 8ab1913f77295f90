//! `kubectl ksm ...` as users run it: the real kubectl finds `kubectl-ksm` on PATH through its
//! plugin mechanism and runs it against a real API server (tests/realrun: deploy/ applied, the
//! adapter converged), and `kubectl ksm <TAB>` is completed by kubectl through the
//! `kubectl_complete-ksm` script of completions/.
//!
//! What goes through kubectl is compared with the binary run directly with the same arguments
//! and environment: the same output and the same exit code (kubectl hands its process over to
//! the plugin), so that `kubectl ksm diff` exits 1 on drift as `kubectl diff` does.

mod realapi;
mod realrun;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use kubectl_ksm::api::kinds::HELM_RELEASE;
use realrun::*;
use serde_json::json;

/// A directory for PATH holding `kubectl-ksm` (this build's) and, with `complete`, the
/// repository's `completions/kubectl_complete-ksm`, as the README installs them.
fn plugin_dir(c: &Cluster, name: &str, complete: bool) -> PathBuf {
    let dir = c.dir.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_kubectl-ksm"), dir.join("kubectl-ksm")).unwrap();
    if complete {
        let script = dir.join("kubectl_complete-ksm");
        std::fs::copy(root().join("completions/kubectl_complete-ksm"), &script).unwrap();
    }
    dir
}

/// PATH with `dir` first: kubectl, sh and the rest as the test runs them.
fn path_with(dir: &Path) -> String {
    let rest = std::env::var("PATH").unwrap_or_default();
    format!("{}:{rest}", dir.display())
}

/// `PROGRAM ARGS` with PATH and KUBECONFIG (the admin's; its context is current) as a user's
/// shell has them, in the repository.
fn run(c: &Cluster, path: &str, program: &str, args: &[&str]) -> Output {
    Command::new(program)
        .args(args)
        .env_clear()
        .env("PATH", path)
        .env("HOME", &c.dir)
        .env("KUBECONFIG", c.api.kubeconfig())
        .current_dir(root())
        .output()
        .unwrap_or_else(|e| panic!("{program} {args:?}: {e}"))
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// `kubectl ksm ARGS` gives what `kubectl-ksm ARGS` gives: stdout, stderr and exit code. The
/// exit code.
fn same_through_kubectl(c: &Cluster, path: &str, args: &[&str]) -> Option<i32> {
    let mut through = vec!["ksm"];
    through.extend(args);
    let plugin = run(c, path, "kubectl", &through);
    let direct = run(c, path, "kubectl-ksm", args);
    assert_eq!(
        text(&plugin.stdout),
        text(&direct.stdout),
        "kubectl ksm {args:?}: stderr {}",
        text(&plugin.stderr)
    );
    assert_eq!(text(&plugin.stderr), text(&direct.stderr), "{args:?}");
    assert_eq!(plugin.status.code(), direct.status.code(), "{args:?}");
    plugin.status.code()
}

#[test]
fn kubectl_runs_the_plugin_against_the_server_and_completes_it() {
    if !realapi::have_kubectl() {
        return;
    }
    let Some(c) = Cluster::start("plugin", &[]) else {
        return;
    };
    let deployment = c.apply_kustomization("deploy/").remove(0);
    c.seed();
    let a = c.adapter(&deployment, "0", &c.service_account(), &[]);
    c.converged(SET, 5, &a);
    c.wait_reconciled(&a, SET, rv_of(&c.set(SET).unwrap()));
    c.wait_answered(&a);

    let dir = plugin_dir(&c, "bin", true);
    let path = path_with(&dir);
    // kubectl sees the plugin where the README puts it.
    let list = run(&c, &path, "kubectl", &["plugin", "list"]);
    assert!(
        text(&list.stdout).contains(&dir.join("kubectl-ksm").display().to_string()),
        "{}{}",
        text(&list.stdout),
        text(&list.stderr)
    );

    // doctor: the ServiceSet's services, diagnosed live.
    let doctor = run(&c, &path, "kubectl", &["ksm", "doctor", "-n", NS, SET]);
    assert!(
        text(&doctor.stdout).contains(SET),
        "{}",
        text(&doctor.stdout)
    );
    // Healthy or problems found (the Flux objects have no status yet), never "could not run".
    let code = same_through_kubectl(&c, &path, &["doctor", "-n", NS, SET]);
    assert!(matches!(code, Some(0 | 1)), "{}", text(&doctor.stderr));
    let code = same_through_kubectl(&c, &path, &["doctor", "-A", "-o", "json"]);
    assert!(matches!(code, Some(0 | 1)));
    // check: the provider deploy/ registers, as kcm would judge it live.
    let check = run(&c, &path, "kubectl", &["ksm", "check", PROVIDER]);
    assert!(
        text(&check.stdout).contains(PROVIDER),
        "{}",
        text(&check.stdout)
    );
    let code = same_through_kubectl(&c, &path, &["check", PROVIDER]);
    assert!(matches!(code, Some(0 | 1)), "{}", text(&check.stderr));
    // diff: none right after the adapter applied; drift after another manager's edit, with
    // `kubectl diff`'s exit code 1 through kubectl.
    assert_eq!(
        same_through_kubectl(&c, &path, &["diff", "--live", "-n", NS, SET]),
        Some(0)
    );
    let release = format!("{SET}-podinfo-oci");
    c.kube.merge(
        &HELM_RELEASE,
        NS,
        &release,
        &json!({"spec": {"interval": "42m"}}),
        "someone-else",
    );
    assert_eq!(
        same_through_kubectl(&c, &path, &["diff", "--live", "-n", NS, SET]),
        Some(1)
    );
    // An unknown subcommand: the plugin's usage error, exit 2, through kubectl too.
    assert_eq!(
        same_through_kubectl(&c, &path, &["no-such-command"]),
        Some(2)
    );

    // `kubectl ksm <TAB>`: kubectl asks kubectl_complete-ksm (Cobra's protocol).
    let complete = |path: &str, words: &[&str]| {
        let mut args = vec!["__complete", "ksm"];
        args.extend(words);
        text(&run(&c, path, "kubectl", &args).stdout)
    };
    let subcommands = complete(&path, &[""]);
    let offered: Vec<&str> = subcommands
        .lines()
        .map(|l| l.split('\t').next().unwrap())
        .collect();
    for sub in ["lint", "check", "render", "diff", "doctor", "run"] {
        assert!(offered.contains(&sub), "{sub} not offered: {subcommands}");
    }
    assert_eq!(subcommands.lines().last(), Some(":4"), "{subcommands}");
    let flags = complete(&path, &["doctor", "--all"]);
    assert!(
        flags.lines().any(|l| l.starts_with("--all-namespaces\t")),
        "{flags}"
    );
    // Without the script on PATH kubectl has nothing to offer: it is the script that answers.
    let bare = path_with(&plugin_dir(&c, "bare", false));
    let without = complete(&bare, &[""]);
    assert!(
        !without.lines().any(|l| l.starts_with("doctor")),
        "{without}"
    );
}

//! `kubectl ksm doctor` live, against the stateful fake API server: every situation of
//! testdata/doctor gives the same findings live as from its dump, and the request log shows
//! that doctor only reads (get, list), lists each kind once, and gets no object one by one
//! except the few an SMP references.

mod fakeapi;

use std::path::{Path, PathBuf};
use std::process::Command;

use fakeapi::FakeApiServer;
use serde_json::Value;

const NOW: &str = "2026-11-21T12:00:00Z";

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn cases() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root().join("testdata/doctor"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("dump.yaml").is_file())
        .collect();
    dirs.sort();
    dirs
}

/// A fake API server holding the real kcm, Flux and Sveltos CRDs and the objects of a dump.
fn serve(dump: &Path) -> FakeApiServer {
    let server = FakeApiServer::start();
    server.load_crds_dir(root().join("crds/kcm"));
    server.load_crds_dir(root().join("crds/flux"));
    server.load_crds_dir(root().join("crds/sveltos"));
    server.load_objects_yaml(&std::fs::read_to_string(dump).unwrap());
    server
}

fn doctor(args: &[&str], kubeconfig: Option<&Path>) -> (Option<i32>, Value) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kubectl-ksm"));
    cmd.args(["doctor", "--now", NOW, "-o", "json"])
        .args(args)
        .env_clear();
    if let Some(k) = kubeconfig {
        cmd.arg("--kubeconfig").arg(k);
    }
    let out = cmd.current_dir(root()).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let report = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("{e}: {stdout}{}", String::from_utf8_lossy(&out.stderr)));
    (out.status.code(), report)
}

/// Findings without the volatile parts (none are volatile today; kept for clarity).
fn findings(report: &Value) -> Vec<(String, String, String)> {
    let mut f: Vec<_> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["code"].as_str().unwrap().to_string(),
                f["object"].to_string(),
                f["message"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    f.sort();
    f
}

#[test]
fn live_and_dump_runs_find_the_same() {
    let dir = std::env::temp_dir().join(format!("ksm-live-doctor-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for case in cases() {
        let dump = case.join("dump.yaml");
        let server = serve(&dump);
        let kubeconfig = dir.join("kubeconfig");
        server.write_kubeconfig(&kubeconfig);
        let (code_live, live) = doctor(&["-A"], Some(&kubeconfig));
        let (code_dump, from_dump) = doctor(&["--from", dump.to_str().unwrap()], None);
        assert_eq!(code_live, code_dump, "{}", case.display());
        assert_eq!(
            findings(&live),
            findings(&from_dump),
            "{}: live and dump differ",
            case.display()
        );

        // Read-only, one list per kind, no per-object reads beyond SMP references.
        let requests = server.requests();
        let mut lists = std::collections::BTreeMap::new();
        for r in &requests {
            assert!(
                matches!(r.verb.as_str(), "get" | "list" | "watch"),
                "{}: doctor sent {} {}",
                case.display(),
                r.verb,
                r.path
            );
            if r.verb == "list" {
                *lists.entry(format!("{:?}", r.resource)).or_insert(0) += 1;
            }
        }
        for (resource, n) in &lists {
            assert_eq!(*n, 1, "{}: {resource} listed {n} times", case.display());
        }
        let object_gets = requests
            .iter()
            .filter(|r| r.verb == "get" && r.name.as_deref().is_some_and(|n| !n.is_empty()))
            .count();
        assert!(
            object_gets <= 12,
            "{}: {object_gets} gets of single objects",
            case.display()
        );
        drop(server);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn unreachable_server_is_one_clear_line_and_exit_two() {
    let dir = std::env::temp_dir().join(format!("ksm-live-doctor-down-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let kubeconfig = dir.join("kubeconfig");
    // A server that was there and is gone: its port is closed.
    let server = FakeApiServer::start();
    server.write_kubeconfig(&kubeconfig);
    drop(server);
    let out = Command::new(env!("CARGO_BIN_EXE_kubectl-ksm"))
        .args(["doctor", "-A", "--request-timeout", "5s", "--kubeconfig"])
        .arg(&kubeconfig)
        .env_clear()
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with("error: The connection to the server 127.0.0.1:")
            && stderr.contains("was refused - did you specify the right host or port?"),
        "{stderr}"
    );
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_cluster_without_k0rdent_says_so() {
    let dir = std::env::temp_dir().join(format!("ksm-live-doctor-nokcm-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let kubeconfig = dir.join("kubeconfig");
    let server = FakeApiServer::start();
    server.write_kubeconfig(&kubeconfig);
    let out = Command::new(env!("CARGO_BIN_EXE_kubectl-ksm"))
        .args(["doctor", "-A", "--kubeconfig"])
        .arg(&kubeconfig)
        .env_clear()
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("serves no k0rdent.mirantis.com API: is k0rdent (kcm) installed?"),
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Runs doctor in human form against a server; (exit code, stdout, stderr).
fn doctor_human(server: &FakeApiServer, name: &str) -> (Option<i32>, String, String) {
    let dir = std::env::temp_dir().join(format!("ksm-live-doctor-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let kubeconfig = dir.join("kubeconfig");
    server.write_kubeconfig(&kubeconfig);
    let out = Command::new(env!("CARGO_BIN_EXE_kubectl-ksm"))
        .args(["doctor", "-A", "--now", NOW, "--kubeconfig"])
        .arg(&kubeconfig)
        .env_clear()
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_cluster_with_sveltos_and_no_flux_is_diagnosed() {
    let server = FakeApiServer::start();
    server.load_crds_dir(root().join("crds/kcm"));
    server.load_crds_dir(root().join("crds/sveltos"));
    // kcm runs Flux's source-controller for its templates, not the helm/kustomize ones.
    for f in std::fs::read_dir(root().join("crds/flux")).unwrap() {
        let p = f.unwrap().path();
        if p.file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("source.")
        {
            server.load_crd_yaml(&std::fs::read_to_string(&p).unwrap());
        }
    }
    server.load_objects_yaml(
        &std::fs::read_to_string(root().join("testdata/doctor/sveltos-healthy-profile/dump.yaml"))
            .unwrap(),
    );
    let (code, stdout, stderr) = doctor_human(&server, "noflux");
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    assert!(stdout.contains("2 services: 2 healthy"), "{stdout}");
    assert!(stderr.contains("serves no Flux CRDs"), "{stderr}");
}

#[test]
fn a_cluster_without_sveltos_crds_says_so() {
    let server = serve_flux_only(&root().join("testdata/doctor/healthy/dump.yaml"));
    let (code, _, stderr) = doctor_human(&server, "nosveltos");
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stderr.contains("serves no Sveltos CRDs (config.projectsveltos.io)"),
        "{stderr}"
    );
}

fn serve_flux_only(dump: &Path) -> FakeApiServer {
    let server = FakeApiServer::start();
    server.load_crds_dir(root().join("crds/kcm"));
    server.load_crds_dir(root().join("crds/flux"));
    server.load_objects_yaml(&std::fs::read_to_string(dump).unwrap());
    server
}

#[test]
fn an_empty_namespace_is_named_with_a_hint() {
    let server = serve(&root().join("testdata/doctor/sveltos-healthy-profile/dump.yaml"));
    let dir = std::env::temp_dir().join(format!("ksm-live-doctor-empty-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let kubeconfig = dir.join("kubeconfig");
    server.write_kubeconfig(&kubeconfig);
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_kubectl-ksm"))
            .arg("doctor")
            .args(args)
            .arg("--kubeconfig")
            .arg(&kubeconfig)
            .env_clear()
            .output()
            .unwrap()
    };
    let out = run(&["-n", "team-empty"]);
    assert_eq!(out.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("no ServiceSets in namespace team-empty (-A looks in every namespace)"),
        "{stderr}"
    );
    let out = run(&["dev-cluster", "-n", "team-empty"]);
    assert_eq!(out.status.code(), Some(2));
    let out = run(&["dev-cluster", "-n", "kcm-system"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A server that refuses (403) to list `resources` to this user, once each.
fn refusing(dump: &str, resources: &[&str]) -> FakeApiServer {
    let server = serve(&root().join(dump));
    for r in resources {
        server.inject(fakeapi::Fault::Status {
            verb: Some("list".into()),
            resource: Some((*r).into()),
            code: 403,
            times: 1,
        });
    }
    server
}

#[test]
fn a_kind_it_may_not_list_is_named_and_the_rest_is_diagnosed() {
    // Flux adapter: HelmReleases refused. The Kustomization chain is still followed; no
    // HelmRelease is called missing.
    let server = refusing("testdata/doctor/healthy/dump.yaml", &["helmreleases"]);
    let (code, stdout, stderr) = doctor_human(&server, "forbidden-hr");
    assert_eq!(code, Some(1), "incomplete is not healthy: {stdout}{stderr}");
    assert!(
        stderr.contains("note: forbidden to list helmreleases: injected: forbidden")
            && stderr.contains(": not followed"),
        "{stderr}"
    );
    assert!(stdout.contains("KSM637"), "{stdout}");
    assert!(
        !stdout.contains("KSM609"),
        "nothing reported missing: {stdout}"
    );
    insta::assert_snapshot!("forbidden_helmreleases", stdout);

    // kcm's default provider: providers and ClusterSummaries refused. No "no such provider"
    // (KSM601) and no missing ClusterSummary (KSM621): two findings about the kinds.
    let server = refusing(
        "testdata/doctor/sveltos-healthy-profile/dump.yaml",
        &["statemanagementproviders", "clustersummaries"],
    );
    let (code, stdout, stderr) = doctor_human(&server, "forbidden-sveltos");
    assert_eq!(code, Some(1), "{stdout}{stderr}");
    for kind in ["StateManagementProvider", "ClusterSummary"] {
        let line = format!("! KSM637 {kind} could not be read (injected: forbidden)");
        assert!(stdout.contains(&line), "{line}: {stdout}");
    }
    for absent in ["KSM601", "KSM621"] {
        assert!(!stdout.contains(absent), "{absent}: {stdout}");
    }

    // ServiceSets refused: nothing to diagnose, an error naming them.
    let server = refusing("testdata/doctor/healthy/dump.yaml", &["servicesets"]);
    let (code, _, stderr) = doctor_human(&server, "forbidden-sets");
    assert_eq!(code, Some(2));
    assert!(
        stderr.starts_with("error: forbidden to list servicesets"),
        "{stderr}"
    );
}

/// `wait` against the fake server, through several changes of the ServiceSet's status:
/// each kind is listed once, then watched; no list (and no get of a watched kind) per
/// change.
#[test]
fn wait_lists_each_kind_once_and_then_only_watches() {
    use std::io::{BufRead, BufReader};
    let server = serve(&root().join("testdata/doctor/service-stuck-provisioning/dump.yaml"));
    let dir = std::env::temp_dir().join(format!("ksm-live-wait-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let kc = dir.join("kubeconfig");
    server.write_kubeconfig(&kc);
    let mut child = Command::new(env!("CARGO_BIN_EXE_kubectl-ksm"))
        .args([
            "wait",
            "serviceset/dev-cluster",
            "-n",
            "kcm-system",
            "--timeout",
            "120s",
        ])
        .arg("--kubeconfig")
        .arg(&kc)
        .env_clear()
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut printed = String::new();
    let mut read_until = |want: &str, printed: &mut String| {
        while !printed.contains(want) {
            let mut line = String::new();
            assert!(
                out.read_line(&mut line).unwrap() > 0,
                "ended early: {printed}"
            );
            printed.push_str(&line);
        }
    };
    read_until("ingress-nginx/ingress-nginx: Provisioning", &mut printed);
    let listed_first = server.requests().len();
    // Three changes: podinfo Provisioning, then back, then every service Deployed.
    let set_state = |name: Option<&str>, state: &str| {
        let mut set = server
            .get(
                "k0rdent.mirantis.com/v1beta1",
                "ServiceSet",
                "kcm-system",
                "dev-cluster",
            )
            .unwrap();
        for s in set["status"]["services"].as_array_mut().unwrap() {
            if name.is_none_or(|n| s["name"] == n) {
                s["state"] = state.into();
            }
        }
        server.update_status(set);
    };
    set_state(Some("podinfo"), "Provisioning");
    read_until("podinfo/podinfo: Provisioning", &mut printed);
    set_state(Some("podinfo"), "Deployed");
    read_until("podinfo/podinfo: Deployed", &mut printed);
    set_state(None, "Deployed");
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0), "{printed}");
    let requests = server.requests();
    let mut lists = std::collections::BTreeMap::<String, usize>::new();
    for r in &requests {
        if r.verb == "list" {
            *lists
                .entry(r.resource.clone().unwrap_or_default())
                .or_default() += 1;
        }
    }
    assert!(
        lists.values().all(|n| *n == 1),
        "each kind listed once: {lists:?}"
    );
    assert!(lists.contains_key("servicesets") && lists.contains_key("helmreleases"));
    let after: Vec<_> = requests[listed_first..]
        .iter()
        .filter(|r| r.verb != "watch")
        .map(|r| format!("{} {:?}", r.verb, r.resource))
        .collect();
    assert!(
        after.is_empty(),
        "requests after the first judgement besides watches: {after:?}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

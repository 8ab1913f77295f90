//! The real `kubectl` against the fake server (tests/fakeapi), with the real Flux HelmRelease
//! CRD. Skipped, with a note, when kubectl is absent, except under CI (`CI` set and not
//! `false`/`0`), where a missing kubectl fails.

mod fakeapi;
mod fakeapi_client;

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use fakeapi::FakeApiServer;
use fakeapi_client::*;
use serde_json::{Value, json};

/// How long a kubectl command may take before the test calls it hung: a guard, not a measure
/// (each takes well under a second on an idle machine).
const PATIENCE: Duration = Duration::from_secs(120);

/// Whether the tests run on CI (`CI` set, as GitHub Actions and most CI systems do).
fn on_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0")
}

struct Kubectl {
    dir: PathBuf,
}

struct Out {
    ok: bool,
    stdout: String,
    stderr: String,
}

impl Kubectl {
    fn new(api: &FakeApiServer, tag: &str) -> Option<Self> {
        if Command::new("kubectl")
            .arg("version")
            .arg("--client")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_err()
        {
            // The CI machine has kubectl: there a missing one is a failure, not a skip.
            assert!(
                !on_ci(),
                "kubectl not found, and CI is set: the kubectl tests must run on CI"
            );
            // Straight to stderr, past the test harness's capture: a skip is seen.
            let _ = std::io::Write::write_all(
                &mut std::io::stderr(),
                format!("SKIPPED {tag}: kubectl not found (install it to run the kubectl tests)\n")
                    .as_bytes(),
            );
            return None;
        }
        let dir =
            std::env::temp_dir().join(format!("fakeapi-kubectl-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        api.write_kubeconfig(dir.join("kubeconfig"));
        Some(Kubectl { dir })
    }

    fn file(&self, name: &str, text: &str) -> String {
        let p = self.dir.join(name);
        std::fs::write(&p, text).unwrap();
        p.to_string_lossy().into_owned()
    }

    fn spawn(&self, args: &[&str]) -> std::process::Child {
        Command::new("kubectl")
            .args(args)
            .env("KUBECONFIG", self.dir.join("kubeconfig"))
            .env("KUBECACHEDIR", self.dir.join("cache"))
            .env("HOME", &self.dir)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn kubectl")
    }

    /// Runs kubectl, killed after `limit`.
    fn run_for(&self, args: &[&str], limit: Duration) -> Out {
        let mut child = self.spawn(args);
        let start = Instant::now();
        while child.try_wait().unwrap().is_none() {
            if start.elapsed() > limit {
                let _ = child.kill();
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let o = child.wait_with_output().unwrap();
        Out {
            ok: o.status.success(),
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        }
    }

    fn run(&self, args: &[&str]) -> Out {
        let o = self.run_for(args, PATIENCE);
        assert!(o.ok, "kubectl {args:?} failed:\n{}\n{}", o.stdout, o.stderr);
        o
    }
}

impl Drop for Kubectl {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

const HR_YAML: &str = "apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: podinfo
  namespace: default
  labels:
    app: podinfo
spec:
  interval: 5m
  chart:
    spec:
      chart: podinfo
      version: \"6.x\"
      sourceRef:
        kind: HelmRepository
        name: podinfo
  values:
    replicaCount: 2
";

#[test]
fn kubectl_get_namespaces_and_api_resources() {
    let api = FakeApiServer::start();
    api.load_crd(&helmrelease_crd());
    let Some(k) = Kubectl::new(&api, "ns") else {
        return;
    };
    let ns = k.run(&["get", "ns"]).stdout;
    for n in ["default", "kube-system", "kube-public", "kube-node-lease"] {
        assert!(ns.contains(n), "{ns}");
    }
    let ar = k.run(&["api-resources"]).stdout;
    assert!(
        ar.lines().any(|l| l.starts_with("helmreleases")
            && l.contains("hr")
            && l.contains("helm.toolkit.fluxcd.io/v2")
            && l.contains("HelmRelease")),
        "{ar}"
    );
    assert!(
        ar.lines()
            .any(|l| l.starts_with("deployments") && l.contains("apps/v1")),
        "{ar}"
    );
    let ver = k.run(&["version", "-o", "json"]).stdout;
    assert!(ver.contains("v1.32.0-fakeapi"), "{ver}");
}

#[test]
fn kubectl_apply_get_patch_delete() {
    let api = FakeApiServer::start();
    api.load_crd(&helmrelease_crd());
    let Some(k) = Kubectl::new(&api, "crud") else {
        return;
    };
    let f = k.file("hr.yaml", HR_YAML);

    // server-side apply: creates, then no-op
    let o = k.run(&["apply", "--server-side", "-f", &f]);
    assert!(
        o.stdout
            .contains("helmrelease.helm.toolkit.fluxcd.io/podinfo serverside-applied"),
        "{}",
        o.stdout
    );
    let hr = api
        .get(
            "helm.toolkit.fluxcd.io/v2",
            "HelmRelease",
            "default",
            "podinfo",
        )
        .unwrap();
    assert_eq!(hr["metadata"]["managedFields"][0]["manager"], "kubectl");
    assert_eq!(hr["metadata"]["managedFields"][0]["operation"], "Apply");
    let patches: Vec<_> = api
        .requests()
        .into_iter()
        .filter(|r| r.verb == "patch")
        .collect();
    assert_eq!(
        patches.last().unwrap().content_type.as_deref(),
        Some("application/apply-patch+yaml")
    );

    // get -A -o json
    let out = k.run(&["get", "helmreleases", "-A", "-o", "json"]).stdout;
    let list: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(list["items"][0]["metadata"]["name"], "podinfo");
    assert_eq!(list["items"][0]["spec"]["values"]["replicaCount"], 2);
    // short name and the human table
    let table = k.run(&["get", "hr"]).stdout;
    assert!(
        table.starts_with("NAME") && table.contains("podinfo"),
        "{table}"
    );

    // patch --type merge
    k.run(&[
        "patch",
        "helmrelease",
        "podinfo",
        "--type",
        "merge",
        "-p",
        r#"{"spec":{"interval":"10m"}}"#,
    ]);
    let hr = api
        .get(
            "helm.toolkit.fluxcd.io/v2",
            "HelmRelease",
            "default",
            "podinfo",
        )
        .unwrap();
    assert_eq!(hr["spec"]["interval"], "10m");
    assert_eq!(hr["metadata"]["generation"], 2);

    // SSA conflict: kubectl-patch now owns .spec.interval
    let changed = k.file("hr2.yaml", &HR_YAML.replace("interval: 5m", "interval: 7m"));
    let c = k.run_for(&["apply", "--server-side", "-f", &changed], PATIENCE);
    assert!(!c.ok);
    assert!(
        c.stderr.contains("conflict with \"kubectl-patch\""),
        "{}",
        c.stderr
    );
    k.run(&[
        "apply",
        "--server-side",
        "--force-conflicts",
        "-f",
        &changed,
    ]);
    assert_eq!(
        api.get(
            "helm.toolkit.fluxcd.io/v2",
            "HelmRelease",
            "default",
            "podinfo"
        )
        .unwrap()["spec"]["interval"],
        "7m"
    );

    // client-side apply (JSON merge patch for a custom resource), with validation on
    let other = k.file(
        "hr3.yaml",
        &HR_YAML.replace("name: podinfo\n  namespace", "name: other\n  namespace"),
    );
    assert!(k.run(&["apply", "-f", &other]).stdout.contains("created"));
    assert!(k.run(&["apply", "-f", &other]).stdout.contains("unchanged"));
    let o = api
        .get(
            "helm.toolkit.fluxcd.io/v2",
            "HelmRelease",
            "default",
            "other",
        )
        .unwrap();
    assert!(
        o["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"]
            .is_string()
    );
    let edited = k.file(
        "hr4.yaml",
        &HR_YAML
            .replace("name: podinfo\n  namespace", "name: other\n  namespace")
            .replace("replicaCount: 2", "replicaCount: 3"),
    );
    assert!(
        k.run(&["apply", "-f", &edited])
            .stdout
            .contains("configured")
    );
    assert_eq!(
        api.get(
            "helm.toolkit.fluxcd.io/v2",
            "HelmRelease",
            "default",
            "other"
        )
        .unwrap()["spec"]["values"]["replicaCount"],
        3
    );

    // delete without finalizers
    assert!(k.run(&["delete", "hr", "other"]).stdout.contains("deleted"));
    assert!(
        api.get(
            "helm.toolkit.fluxcd.io/v2",
            "HelmRelease",
            "default",
            "other"
        )
        .is_none()
    );

    // delete with a finalizer: waits (bounded) until a "controller" removes it
    k.run(&[
        "patch",
        "hr",
        "podinfo",
        "--type",
        "merge",
        "-p",
        r#"{"metadata":{"finalizers":["finalizers.fluxcd.io"]}}"#,
    ]);
    let nowait = k.run(&["delete", "hr", "podinfo", "--wait=false"]);
    assert!(nowait.stdout.contains("deleted"), "{}", nowait.stdout);
    let hr = api
        .get(
            "helm.toolkit.fluxcd.io/v2",
            "HelmRelease",
            "default",
            "podinfo",
        )
        .unwrap();
    assert!(hr["metadata"]["deletionTimestamp"].is_string());
    let waiting = k.spawn(&["delete", "hr", "podinfo", "--timeout=120s"]);
    // kubectl deletes, then watches until the object is gone: the finalizer goes once it does.
    let start = Instant::now();
    while api.watch_count() == 0 {
        assert!(
            start.elapsed() < PATIENCE,
            "kubectl never waited for the deletion"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut hr = api
        .get(
            "helm.toolkit.fluxcd.io/v2",
            "HelmRelease",
            "default",
            "podinfo",
        )
        .unwrap();
    hr["metadata"]["finalizers"] = json!([]);
    api.update(hr).unwrap();
    let o = waiting.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        api.get(
            "helm.toolkit.fluxcd.io/v2",
            "HelmRelease",
            "default",
            "podinfo"
        )
        .is_none()
    );
    let gone = k.run_for(&["get", "hr", "podinfo"], PATIENCE);
    assert!(
        !gone.ok && gone.stderr.contains("NotFound") || gone.stderr.contains("not found"),
        "{}",
        gone.stderr
    );

    // built-ins: create -f (JSON body), strategic merge patch, delete
    let cmf = k.file(
        "cm.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  a: \"1\"\n",
    );
    k.run(&["create", "-f", &cmf]);
    k.run(&["patch", "cm", "c", "-p", r#"{"data":{"b":"2"}}"#]);
    assert_eq!(
        api.get("v1", "ConfigMap", "default", "c").unwrap()["data"],
        json!({"a": "1", "b": "2"})
    );
    k.run(&["apply", "-f", &cmf]);
    k.run(&["delete", "-f", &cmf]);
    assert!(api.get("v1", "ConfigMap", "default", "c").is_none());
}

#[test]
fn kubectl_get_watch_receives_events() {
    let api = FakeApiServer::start();
    api.load_crd(&helmrelease_crd());
    let Some(k) = Kubectl::new(&api, "watch") else {
        return;
    };
    let watcher = k.spawn(&[
        "get",
        "helmreleases",
        "-w",
        "-o",
        "json",
        "--request-timeout=120s",
    ]);
    // wait until the watch is open
    let start = Instant::now();
    while api.watch_count() == 0 && start.elapsed() < PATIENCE {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(api.watch_count(), 1, "kubectl opened a watch");
    api.create(hr("default", "watched"));
    let mut modified = api
        .get(
            "helm.toolkit.fluxcd.io/v2",
            "HelmRelease",
            "default",
            "watched",
        )
        .unwrap();
    modified["metadata"]["labels"] = json!({"seen": "yes"});
    api.update(modified).unwrap();
    // Read what kubectl prints until both events are there (or it ends), then stop it.
    let mut child = watcher;
    let mut stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel::<Vec<u8>>();
    std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n @ 1..) = std::io::Read::read(&mut stdout, &mut buf) {
            if tx.send(buf[..n].to_vec()).is_err() {
                break;
            }
        }
    });
    let mut out = String::new();
    let start = Instant::now();
    while !(out.contains("\"seen\": \"yes\"") && out.contains("\"name\": \"watched\"")) {
        match rx.recv_timeout(Duration::from_millis(50)) {
            Ok(bytes) => out.push_str(&String::from_utf8_lossy(&bytes)),
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break,
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                assert!(start.elapsed() < PATIENCE, "{out}")
            }
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    assert!(out.contains("\"name\": \"watched\""), "{out}");
    assert!(
        out.contains("\"seen\": \"yes\""),
        "the MODIFIED event arrived: {out}"
    );
    let watches: Vec<_> = api
        .requests()
        .into_iter()
        .filter(|r| r.verb == "watch")
        .collect();
    assert_eq!(watches.len(), 1);
    assert_eq!(watches[0].resource.as_deref(), Some("helmreleases"));
    assert!(
        watches[0]
            .user_agent
            .as_deref()
            .unwrap_or("")
            .starts_with("kubectl")
    );
}

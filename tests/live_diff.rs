//! `kubectl ksm diff` against the stateful fake API server: no drift (exit 0), a changed field
//! and a missing object (exit 1), an unreachable cluster (exit 2), and only reads.

mod fakeapi;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use fakeapi::FakeApiServer;
use serde_json::Value;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

const INPUT: &str = "testdata/render/helm-chartref/input.yaml";

struct Live {
    server: FakeApiServer,
    kubeconfig: PathBuf,
    dir: PathBuf,
}

impl Drop for Live {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn ksm(kubeconfig: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kubectl-ksm"))
        .args(args)
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .current_dir(root())
        .env_clear()
        .output()
        .unwrap()
}

/// A fake cluster holding what `render` produces for INPUT.
fn live(tag: &str) -> Live {
    let server = FakeApiServer::start();
    server.load_crds_dir(root().join("crds/flux"));
    let rendered = Command::new(env!("CARGO_BIN_EXE_kubectl-ksm"))
        .args(["render", INPUT])
        .current_dir(root())
        .output()
        .unwrap();
    assert!(rendered.status.success());
    let n = server.load_objects_yaml(&String::from_utf8(rendered.stdout).unwrap());
    assert!(n > 0);
    let dir = std::env::temp_dir().join(format!("ksm-diff-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let kubeconfig = dir.join("kubeconfig");
    server.write_kubeconfig(&kubeconfig);
    Live {
        server,
        kubeconfig,
        dir,
    }
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn no_drift_when_the_cluster_holds_the_rendered_objects() {
    let l = live("same");
    let out = ksm(&l.kubeconfig, &["diff", INPUT]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(
        stdout(&out).ends_with(": 0 drifted, 0 missing, 1 unchanged\n"),
        "{}",
        stdout(&out)
    );
    for r in l.server.requests() {
        assert!(
            matches!(r.verb.as_str(), "get" | "list"),
            "sent {} {}",
            r.verb,
            r.path
        );
    }
}

#[test]
fn a_changed_field_and_a_missing_object_are_drift() {
    let l = live("changed");
    let mut hr = l
        .server
        .get(
            "helm.toolkit.fluxcd.io/v2",
            "HelmRelease",
            "kcm-system",
            "dev-cluster-ingress-nginx",
        )
        .unwrap();
    hr["spec"]["interval"] = Value::from("1h");
    hr["spec"]["suspend"] = Value::from(true); // not set by the adapter: not drift
    l.server.update(hr).unwrap();
    let out = ksm(&l.kubeconfig, &["diff", INPUT]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let text = stdout(&out);
    assert!(
        text.contains("► HelmRelease/kcm-system/dev-cluster-ingress-nginx drifted\n    spec.interval\n      - 1h  (live)\n      + 10m  (rendered)\n"),
        "{text}"
    );
    assert!(!text.contains("suspend"), "{text}");
    let out = ksm(&l.kubeconfig, &["diff", INPUT, "-o", "json"]);
    assert_eq!(out.status.code(), Some(1));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["kind"], "DiffReport");
    assert_eq!(v["objects"][0]["status"], "drifted");
    assert_eq!(v["objects"][0]["differences"][0]["path"], "spec.interval");
    assert_eq!(v["summary"]["drifted"], 1);

    l.server
        .delete(
            "helm.toolkit.fluxcd.io/v2",
            "HelmRelease",
            "kcm-system",
            "dev-cluster-ingress-nginx",
        )
        .unwrap();
    let out = ksm(&l.kubeconfig, &["diff", INPUT]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(
        stdout(&out).contains("missing: not in the cluster"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn an_unreachable_cluster_is_exit_2() {
    let l = live("down");
    // A port nothing listens on.
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let kubeconfig = l.dir.join("closed");
    std::fs::write(
        &kubeconfig,
        l.server
            .kubeconfig_yaml("default")
            .replace(&l.server.url(), &format!("http://{closed}")),
    )
    .unwrap();
    let out = ksm(&kubeconfig, &["diff", INPUT]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("refused"),
        "{out:?}"
    );
}

//! `kubectl ksm run` under faults, each injected by the fake API server: bursts of 5xx, a 409
//! on the first write of every object, a watch that can only resume from a compacted history
//! (410 Expired), lists cut mid-body, the process killed (SIGKILL) mid-reconcile, and an API
//! server that is not there yet at start-up. After each, the adapter converges to exactly what
//! `render` gives: no orphaned and no duplicated Flux object, and objects it does not own are
//! left as they were.

mod fakeapi;
mod run_env;

use std::process::Command;
use std::time::Duration;

use fakeapi::{FakeApiServer, Fault};
use run_env::*;
use serde_json::{Value, json};

/// A HelmRelease of the namespace that the adapter does not own, though its name starts like
/// the ServiceSet's objects: it must never be written or deleted.
fn stranger() -> Value {
    json!({"apiVersion": HR, "kind": "HelmRelease",
        "metadata": {"name": format!("{SET}-stranger"), "namespace": NS,
            "labels": {"ksm.k0rdent.mirantis.com/managed": "true"}},
        "spec": {"interval": "5m", "chart": {"spec": {"chart": "x",
            "sourceRef": {"kind": "HelmRepository", "name": "y"}}}}})
}

/// Converged, as render says, each object once and controlled by the set; the stranger is
/// untouched (same resourceVersion) and nothing wrote to it.
fn assert_clean(env: &Env, stranger_rv: &str) {
    env.wait("5 owned Flux objects and 5 service states", |e| {
        e.flux()
            .iter()
            .filter(|o| !s(o, "/metadata/name").ends_with("-stranger"))
            .count()
            == 5
            && e.set().is_some_and(|x| {
                x.pointer("/status/services")
                    .and_then(Value::as_array)
                    .is_some_and(|a| a.len() == 5)
            })
    });
    let uid = s(&env.set().unwrap(), "/metadata/uid").to_string();
    let mut names = Vec::new();
    for o in env.flux() {
        if s(&o, "/metadata/name").ends_with("-stranger") {
            assert_eq!(s(&o, "/metadata/resourceVersion"), stranger_rv);
            continue;
        }
        assert_eq!(
            s(&o, "/metadata/ownerReferences/0/uid"),
            uid,
            "{}",
            name_of(&o)
        );
        names.push(name_of(&o));
    }
    let n = names.len();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), n, "duplicates: {names:?}");
    let stranger_path = format!("{SET}-stranger");
    assert!(
        !env.writes().iter().any(|w| w.contains(&stranger_path)),
        "{:?}",
        env.writes()
    );
}

fn seeded_with_stranger(name: &str) -> (Env, String) {
    let env = Env::seeded(name);
    let st = env.server.create(stranger());
    let rv = s(&st, "/metadata/resourceVersion").to_string();
    (env, rv)
}

#[test]
fn server_error_bursts_and_a_conflict_on_every_first_write() {
    let (mut env, stranger_rv) = seeded_with_stranger("bursts");
    for (verb, resource, code, times) in [
        ("patch", "servicesets", 503, 3),
        ("patch", "servicesets/status", 500, 4),
        ("patch", "helmreleases", 500, 6),
        ("patch", "kustomizations", 502, 3),
        ("list", "helmreleases", 503, 2),
        ("watch", "servicesets", 500, 2),
    ] {
        env.inject(Fault::Status {
            verb: Some(verb.into()),
            resource: Some(resource.into()),
            code,
            times,
        });
    }
    env.inject(Fault::ConflictOnFirstWrite { resource: None });
    env.start(&[]);
    assert_clean(&env, &stranger_rv);
    assert_matches_render(&env);
    let conflicts = env
        .server
        .requests()
        .iter()
        .filter(|r| r.status == 409)
        .count();
    assert!(
        conflicts >= 7,
        "every object's first write was refused: {conflicts}"
    );
    env.server.clear_faults();
    env.still_serves();
    env.stop();
}

#[test]
fn an_expired_watch_relists_and_a_list_cut_mid_body_is_retried() {
    let (mut env, stranger_rv) = seeded_with_stranger("expired");
    // The first lists of the ServiceSets and the HelmReleases are cut in the middle.
    for resource in ["servicesets", "helmreleases"] {
        env.inject(Fault::DropList {
            resource: Some(resource.into()),
            times: 1,
        });
    }
    env.start(&[]);
    assert_clean(&env, &stranger_rv);
    let cut_lists = |env: &Env| {
        env.server
            .requests()
            .iter()
            .filter(|r| r.verb == "list" && r.resource.as_deref() == Some("servicesets"))
            .count()
    };
    assert!(cut_lists(&env) >= 2, "the cut list was retried");

    // Watches end while the history is compacted past them: they cannot resume (410) and
    // must list again, which shows a change made meanwhile.
    env.inject(Fault::Delay {
        verb: Some("watch".into()),
        resource: None,
        delay: Duration::from_millis(1500),
        times: 10,
    });
    env.server.clear_requests();
    // Every watch (five kinds) ends and must list again.
    env.delays.watch_failures += 5;
    env.server.drop_watches();
    let mut set = env.set().unwrap();
    let removed = format!("{SET}-{}", s(&set, "/spec/services/4/name"));
    set["spec"]["services"].as_array_mut().unwrap().pop();
    env.server.update(set).unwrap();
    env.server.compact();
    env.wait("the dropped service pruned after a relist", |e| {
        e.flux()
            .iter()
            .filter(|o| !s(o, "/metadata/name").ends_with("-stranger"))
            .count()
            == 4
    });
    assert!(!env.flux().iter().any(|o| s(o, "/metadata/name") == removed));
    assert!(cut_lists(&env) >= 1, "the ServiceSets were listed again");
    env.still_serves();
    env.stop();
}

#[test]
fn killed_mid_reconcile_then_restarted_converges_without_orphans_or_duplicates() {
    let (mut env, stranger_rv) = seeded_with_stranger("sigkill");
    // Slow applies, so that the kill lands between the objects of one reconcile.
    env.inject(Fault::Delay {
        verb: Some("patch".into()),
        resource: Some("helmreleases".into()),
        delay: Duration::from_millis(400),
        times: 3,
    });
    env.start(&[]);
    env.wait("a first HelmRelease", |e| {
        e.flux()
            .iter()
            .any(|o| !s(o, "/metadata/name").ends_with("-stranger"))
    });
    env.kill(); // SIGKILL: no shutdown, no lease release, writes in flight lost
    let before = env.flux().len();
    assert!(before < 6, "killed mid-reconcile: {before} objects");
    env.start(&[]);
    assert_clean(&env, &stranger_rv);
    assert_matches_render(&env);
    env.still_serves();
    env.stop();
}

#[test]
fn an_unreachable_server_at_start_is_retried_with_backoff_and_not_ready_meanwhile() {
    let port = free_port();
    let mut env = Env::new("unreachable");
    // The kubeconfig points at a port where nothing listens yet.
    let kubeconfig = env
        .server
        .kubeconfig_yaml("default")
        .replace(&env.server.url(), &format!("http://127.0.0.1:{port}"));
    std::fs::write(env.dir.join("kubeconfig"), kubeconfig).unwrap();
    env.start(&[]);
    // It backs off 1 s, 2 s, 4 s ... (what it decided, as it logs it: not how fast it went).
    env.wait("two attempts", |e| {
        e.log().matches("retry_in_ms").count() >= 2
    });
    assert_eq!(env.get("/readyz").0, 503);
    assert_eq!(env.get("/healthz").0, 200, "alive: it is retrying");
    let child = &mut env.adapter.as_mut().unwrap().child;
    assert!(child.try_wait().unwrap().is_none(), "still running");
    let waits: Vec<u64> = env
        .log()
        .split("retry_in_ms=")
        .skip(1)
        .filter_map(|t| t.split(|c: char| !c.is_ascii_digit()).next()?.parse().ok())
        .collect();
    assert_eq!(waits[..2], [1000, 2000], "{}", env.log());

    // The server comes up where the adapter waits: it connects and converges.
    let server = FakeApiServer::builder().port(port).start();
    server.load_crds_dir(root().join("crds/kcm"));
    server.load_crds_dir(root().join("crds/flux"));
    let (set, templates) = fixture();
    server.create(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}}));
    server.create(smp(true, false));
    for t in templates {
        server.create(t);
    }
    server.create(set);
    let old = std::mem::replace(&mut env.server, server);
    drop(old);
    env.converged();
    env.wait("ready", |e| e.get("/readyz").0 == 200);
    assert_eq!(env.stop(), Some(0));
}

#[test]
fn no_kubeconfig_exits_2_at_once() {
    let dir = std::env::temp_dir().join(format!("ksm-run-nocfg-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_kubectl-ksm"))
        .args([
            "run",
            "--provider",
            "ksm-flux",
            "--bind-address",
            "127.0.0.1:0",
        ])
        .arg("--kubeconfig")
        .arg(dir.join("missing"))
        .env_clear()
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_retry_floor_above_its_ceiling_exits_2_at_once() {
    let out = Command::new(env!("CARGO_BIN_EXE_kubectl-ksm"))
        .args(["run", "--provider", "ksm-flux"])
        .args(["--min-retry-delay", "10s", "--max-retry-delay", "1s"])
        .env_clear()
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--min-retry-delay (10s) is longer than --max-retry-delay (1s)"),
        "{err}"
    );
}

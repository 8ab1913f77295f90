//! `kubectl ksm wait`: the delay from a status change on the server to wait's exit, on the
//! real API server (kube-apiserver and etcd of tests/realapi, built by
//! `scripts/kube-test-server build`). Issue 29's figure: at most 1 s.
//!
//! Each run: the stuck case of testdata/doctor (ingress-nginx Provisioning) on the server,
//! `wait serviceset/dev-cluster` started and its first judgement read, then every service's
//! state set to Deployed with `kubectl patch --subresource=status`; the delay is from
//! kubectl's return (the change is on the server) to wait's exit, and from before kubectl
//! started (an upper bound).
//!
//! - `KSM_BENCH_RUNS` (default 10): runs; the median and the maximum are reported.
//! - `KSM_BENCH_BIN`: a kubectl-ksm binary to use instead of building the release one.

#[path = "support/real.rs"]
mod real;
#[path = "../tests/realapi/mod.rs"]
mod realapi;
#[path = "support/release.rs"]
mod release;

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

const CASE: &str = "testdata/doctor/service-stuck-provisioning/dump.yaml";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The stuck service (ingress-nginx) in `state`, or every service when it is Deployed.
fn set_states(kubeconfig: &std::path::Path, state: &str) {
    let kubectl = |args: &[&str]| -> String {
        let out = Command::new("kubectl")
            .arg("--kubeconfig")
            .arg(kubeconfig)
            .args(args)
            .output()
            .expect("kubectl");
        assert!(
            out.status.success(),
            "kubectl {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let only = (state != "Deployed").then_some("ingress-nginx");
    realapi::dump::set_service_states(&kubectl, "kcm-system", "dev-cluster", only, state);
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let runs: usize = std::env::var("KSM_BENCH_RUNS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(10)
        .max(1);
    let bin = release::binary();
    // Cluster API's Cluster CRD: doctor lists Clusters wherever the kind is served.
    let extra = realapi::gomod::crds(
        realapi::gomod::CLUSTER_API,
        realapi::gomod::CAPI_CLUSTER_CRDS,
    )
    .expect("Cluster API's CRDs from the Go module proxy");
    let server = real::Real::start(&extra);
    let text = std::fs::read_to_string(root().join(CASE)).unwrap();
    let dump: Value = serde_saphyr::from_str(&text).unwrap();
    server.create_all(dump["items"].as_array().unwrap(), 4);
    let kubeconfig = server.kubeconfig().to_path_buf();

    let (mut after, mut before) = (Vec::new(), Vec::new());
    for run in 0..runs {
        set_states(&kubeconfig, "Provisioning");
        let mut child = Command::new(&bin)
            .args([
                "wait",
                "serviceset/dev-cluster",
                "-n",
                "kcm-system",
                "--timeout",
                "60s",
            ])
            .arg("--kubeconfig")
            .arg(&kubeconfig)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut out = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        while !line.contains("ingress-nginx/ingress-nginx: Provisioning") {
            line.clear();
            assert!(out.read_line(&mut line).unwrap() > 0, "wait ended early");
        }
        let start = Instant::now();
        set_states(&kubeconfig, "Deployed");
        let changed = Instant::now();
        let status = child.wait().unwrap();
        let exited = Instant::now();
        assert_eq!(
            status.code(),
            Some(0),
            "run {run}: wait did not see Deployed"
        );
        after.push(exited - changed);
        before.push(exited - start);
        eprintln!(
            "[{run}] exit {:.3} s after the change ({:.3} s after kubectl started)",
            (exited - changed).as_secs_f64(),
            (exited - start).as_secs_f64()
        );
    }
    let max = |v: &[Duration]| v.iter().max().copied().unwrap_or_default();
    println!();
    println!("## `wait`: from a status change on the real API server to its exit ({runs} runs)");
    println!();
    println!("| measured from | median | max |");
    println!("|---|---:|---:|");
    println!(
        "| kubectl patch returned | {:.3} s | {:.3} s |",
        median(after.clone()).as_secs_f64(),
        max(&after).as_secs_f64()
    );
    println!(
        "| kubectl patch started | {:.3} s | {:.3} s |",
        median(before.clone()).as_secs_f64(),
        max(&before).as_secs_f64()
    );
    let worst = max(&after);
    println!(
        "target ≤ 1 s from the change: {}",
        if worst <= Duration::from_secs(1) {
            "met"
        } else {
            "NOT met"
        }
    );
}

//! `kubectl ksm run` at scale against the stateful fake API server (tests/fakeapi):
//! 1,000 ServiceSets × 3 services (2 HelmReleases and a Kustomization each) from empty to
//! converged, against the bare minimum: the same writes (finalizer, applies, status) issued
//! back to back by a plain HTTP client on one keep-alive connection. Then the writes per minute
//! at steady state (with `--resync 30s`, so that every ServiceSet is reconciled again during
//! the window), the adapter's CPU over that window and its peak RSS (VmHWM).
//!
//! Run with `cargo bench --bench run_converge`. It builds the release binary itself and runs it
//! as a separate process. Settings (environment):
//!
//! - `KSM_BENCH_SETS` (default 1000): ServiceSets.
//! - `KSM_BENCH_SERVICES` (3 or 5, default 3): services per ServiceSet (the 4th and 5th are
//!   a second HelmRelease and a second Kustomization of the same templates).
//! - `KSM_BENCH_STEADY_SECS` (default 60): the steady-state window.
//! - `KSM_BENCH_CONCURRENCY` (default 8): the adapter's `--concurrency`.
//! - `KSM_BENCH_VERBOSE`: print the steady-state requests by verb, resource and code.
//! - `KSM_BENCH_LOG`: the adapter's `KSM_LOG` (default `warn`).
//! - `KSM_BENCH_KEEP_LOG`: a path to copy the adapter's log (warnings and errors) to.
//! - `KSM_BENCH_BIN`: the adapter binary to run instead of building the release one.
//! - `KSM_BENCH_WRAP`: a program to run the adapter under, e.g. `heaptrack` (the RSS figure is
//!   then the wrapper's).
//! - `KSM_BENCH_SERVER=real`: the real kube-apiserver and etcd of tests/realapi (built by
//!   `scripts/kube-test-server build`) instead of the fake server: seeded over HTTP, converged
//!   seen through watches, writes counted from the server's `apiserver_request_total` (those
//!   on ServiceSets, HelmReleases, Kustomizations and Events: nothing else writes them).
//!
//! The plain client sends the writes of a ServiceSet in order, on as many connections as the
//! adapter's `--concurrency` (each takes the next ServiceSet).
//!
//! Converged means: every ServiceSet has the finalizer and a status with its 3 services, and
//! every Flux object exists. No Flux controller runs, so every service stays Pending, which
//! is what the status says.

#[path = "../tests/fakeapi/mod.rs"]
mod fakeapi;
#[path = "support/real.rs"]
mod real;
#[path = "../tests/realapi/mod.rs"]
mod realapi;
#[path = "support/release.rs"]
mod release;
#[path = "support/server.rs"]
mod server;

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use fakeapi::FakeApiServer;
use kubectl_ksm::api::kinds;
use kubectl_ksm::core::adapter;
use serde_json::{Value, json};
use server::Server;

const NS: &str = "kcm-system";

/// The string at a JSON pointer of an object the fake server holds, or "".
fn s<'a>(v: &'a Value, pointer: &str) -> &'a str {
    v.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The namespace, the provider (ready), three templates and `sets` ServiceSets of `services`
/// services each (3 or 5).
fn seed(sets: usize, services: usize) -> Vec<Value> {
    let mut out = vec![
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}}),
        json!({"apiVersion": "k0rdent.mirantis.com/v1beta1", "kind": "StateManagementProvider",
            "metadata": {"name": "ksm-flux"},
            "spec": {"selector": {"matchLabels": {"ksm.k0rdent.mirantis.com/adapter": "kubectl-ksm"}},
                "adapter": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "kubectl-ksm",
                    "namespace": NS, "readinessRule": "has(self.status.readyReplicas)"},
                "provisioner": [{"apiVersion": "apps/v1", "kind": "Deployment",
                    "name": "helm-controller", "namespace": "flux-system",
                    "readinessRule": "has(self.status.readyReplicas)"}],
                "provisionerCRDs": [{"group": "helm.toolkit.fluxcd.io", "version": "v2",
                    "resources": ["helmreleases"]}]},
            "status": {"ready": true}}),
    ];
    for (name, spec, status) in [
        (
            "ingress-nginx-4-13-0",
            json!({"helm": {"chartSpec": {"chart": "ingress-nginx", "version": "4.13.0", "interval": "10m0s",
                "sourceRef": {"kind": "HelmRepository", "name": "k0rdent-catalog"}}}}),
            json!({"valid": true, "chartRef": {"kind": "HelmChart", "name": "ingress-nginx-4-13-0", "namespace": NS}}),
        ),
        (
            "cert-manager-1-18-2",
            json!({"helm": {"chartSpec": {"chart": "cert-manager", "version": "v1.18.2", "interval": "10m0s",
                "sourceRef": {"kind": "HelmRepository", "name": "k0rdent-catalog"}}}}),
            json!({"valid": true, "chartRef": {"kind": "HelmChart", "name": "cert-manager-1-18-2", "namespace": NS}}),
        ),
        (
            "policies-1-0-0",
            json!({"kustomize": {"localSourceRef": {"kind": "GitRepository", "name": "policies"},
                "deploymentType": "Remote", "path": "./policies"}}),
            json!({"valid": true, "sourceStatus": {"kind": "GitRepository", "name": "policies", "namespace": NS}}),
        ),
    ] {
        out.push(
            json!({"apiVersion": "k0rdent.mirantis.com/v1beta1", "kind": "ServiceTemplate",
            "metadata": {"name": name, "namespace": NS}, "spec": spec, "status": status}),
        );
    }
    for i in 0..sets {
        let mut list = vec![
            json!({"name": "ingress-nginx", "namespace": "ingress-nginx", "template": "ingress-nginx-4-13-0",
                "values": format!("controller:\n  replicaCount: {}\n", 1 + i % 3)}),
            json!({"name": "cert-manager", "namespace": "cert-manager", "template": "cert-manager-1-18-2"}),
            json!({"name": "policies", "namespace": "kyverno", "template": "policies-1-0-0"}),
            json!({"name": "cert-manager-b", "namespace": "cert-manager-b", "template": "cert-manager-1-18-2"}),
            json!({"name": "policies-b", "namespace": "kyverno-b", "template": "policies-1-0-0"}),
        ];
        list.truncate(services);
        out.push(
            json!({"apiVersion": "k0rdent.mirantis.com/v1beta1", "kind": "ServiceSet",
            "metadata": {"name": format!("cluster-{i:05}"), "namespace": NS,
                "labels": {"ksm.k0rdent.mirantis.com/adapter": "kubectl-ksm"}},
            "spec": {"cluster": format!("cluster-{i:05}"), "provider": {"name": "ksm-flux"},
                "services": list}}),
        );
    }
    out
}

/// What the adapter writes (on the real server, nothing else writes these).
const WRITTEN: [&str; 4] = ["servicesets", "helmreleases", "kustomizations", "events"];

fn server(seed: &[Value]) -> Server {
    if real::wanted() {
        let r = real::Real::start(&[]);
        r.create_all(seed, 4);
        r.clear_requests();
        return Server::Real(Box::new(r));
    }
    let server = FakeApiServer::builder().history_window(100_000).start();
    server.load_crds_dir(root().join("crds/kcm"));
    server.load_crds_dir(root().join("crds/flux"));
    for o in seed {
        server.create(o.clone());
    }
    Server::Fake(server)
}

impl Server {
    /// Writes since the last clear (leases left out), and how many were refused.
    fn write_count(&self) -> (usize, usize) {
        match self {
            Server::Fake(s) => write_count(s),
            Server::Real(r) => r.requests().writes(&WRITTEN),
        }
    }

    fn list(&self, kind: &kinds::Kind) -> Vec<Value> {
        match self {
            Server::Fake(s) => s.list(kind.api_version, kind.kind),
            Server::Real(r) => r.list(kind),
        }
    }

    fn url(&self) -> String {
        match self {
            Server::Fake(s) => s.url(),
            Server::Real(r) => r.url().to_string(),
        }
    }

    /// A way to tell, cheaply and as often as wanted, whether the adapter has converged.
    fn convergence(&self, sets: usize, services: usize) -> Convergence<'_> {
        match self {
            Server::Fake(s) => Convergence::Fake(s, sets, services),
            Server::Real(r) => Convergence::Real {
                want: (sets, sets * services),
                sets: r.count_while(&kinds::SERVICE_SET, move |x| set_converged(x, services)),
                helm: r.count_while(&kinds::HELM_RELEASE, |_| true),
                kustomize: r.count_while(&kinds::KUSTOMIZATION, |_| true),
            },
        }
    }

    /// Sends `writes` (per ServiceSet, in order) on `connections` connections.
    fn send_all(&self, writes: &[Vec<(String, &'static str, String)>], connections: usize) {
        let next = std::sync::atomic::AtomicUsize::new(0);
        std::thread::scope(|scope| {
            for _ in 0..connections.max(1) {
                scope.spawn(|| {
                    let agent = match self {
                        Server::Fake(_) => ureq::Agent::new_with_defaults(),
                        Server::Real(r) => r.agent(Some(Duration::from_secs(120))),
                    };
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(set) = writes.get(i) else { break };
                        for (url, ctype, body) in set {
                            match self {
                                Server::Fake(_) => {
                                    if let Err(e) = agent
                                        .patch(url)
                                        .header("Content-Type", *ctype)
                                        .send(body.as_str())
                                    {
                                        panic!("{url}: {e}");
                                    }
                                }
                                Server::Real(r) => {
                                    let a = r.send(&agent, "PATCH", url, ctype, Some(body));
                                    assert!(a.status < 300, "{url}: {} {}", a.status, a.body);
                                }
                            }
                        }
                    }
                });
            }
        });
    }
}

fn set_converged(x: &Value, services: usize) -> bool {
    x.pointer("/metadata/finalizers").is_some()
        && x.pointer("/status/services")
            .and_then(Value::as_array)
            .is_some_and(|a| a.len() == services)
}

enum Convergence<'a> {
    Fake(&'a FakeApiServer, usize, usize),
    Real {
        want: (usize, usize),
        sets: real::Counter,
        helm: real::Counter,
        kustomize: real::Counter,
    },
}

impl Convergence<'_> {
    /// How far it is (the real server's counts; the fake one says only whether it is done).
    fn progress(&self) -> String {
        match self {
            Convergence::Fake(..) => "not yet converged".to_string(),
            Convergence::Real {
                want,
                sets,
                helm,
                kustomize,
            } => format!(
                "{} of {} ServiceSets converged, {} of {} Flux objects",
                sets.get(),
                want.0,
                helm.get() + kustomize.get(),
                want.1
            ),
        }
    }

    fn done(&self) -> bool {
        match self {
            Convergence::Fake(server, sets, services) => converged(server, *sets, *services),
            Convergence::Real {
                want,
                sets,
                helm,
                kustomize,
            } => sets.get() == want.0 && helm.get() + kustomize.get() == want.1,
        }
    }
}

fn write_count(server: &FakeApiServer) -> (usize, usize) {
    let reqs = server.requests();
    let writes: Vec<_> = reqs
        .iter()
        .filter(|r| ["create", "update", "patch", "delete"].contains(&r.verb.as_str()))
        .filter(|r| r.resource.as_deref() != Some("leases"))
        .collect();
    let failed = writes.iter().filter(|r| r.status >= 400).count();
    (writes.len(), failed)
}

fn converged(server: &FakeApiServer, sets: usize, services: usize) -> bool {
    let all = |_: &Value| true;
    let flux = server.count("helm.toolkit.fluxcd.io/v2", "HelmRelease", all)
        + server.count("kustomize.toolkit.fluxcd.io/v1", "Kustomization", all);
    flux == sets * services
        && server.count("k0rdent.mirantis.com/v1beta1", "ServiceSet", |x| {
            set_converged(x, services)
        }) == sets
}

fn vm_kib(pid: u32, field: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find(|l| l.starts_with(field))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

/// CPU time (user + system) the process has used so far.
fn cpu_time(pid: u32) -> Option<Duration> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the command name (which may hold spaces) in parentheses.
    let rest = stat.rsplit_once(')')?.1;
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: u64 = f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?;
    // SAFETY: sysconf reads a constant of the system.
    let per_sec = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as u64;
    Some(Duration::from_millis(ticks * 1000 / per_sec))
}

struct AdapterRun {
    wall: Duration,
    /// The adapter's CPU time from start to converged (its own, not a wrapper's).
    cpu: Option<Duration>,
    /// Its CPU time from converged to the end of the steady state (the writes still in
    /// flight, then the resyncs).
    steady_cpu: Option<Duration>,
    writes: usize,
    failed: usize,
    steady_writes: usize,
    steady: Duration,
    rss_kib: u64,
    steady_rss_kib: u64,
}

/// `limit`: how long the adapter may take to converge before the bench gives up.
fn run_adapter(
    bin: &Path,
    seed: &[Value],
    sets: usize,
    services: usize,
    limit: Duration,
) -> AdapterRun {
    let server = server(seed);
    let dir = std::env::temp_dir().join(format!("ksm-bench-run-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let kubeconfig = server.kubeconfig(&dir.join("kubeconfig"));
    let convergence = server.convergence(sets, services);
    server.clear_requests();
    let concurrency = env_usize("KSM_BENCH_CONCURRENCY", 8).to_string();
    let started = Instant::now();
    // KSM_BENCH_WRAP: a program to run the adapter under (e.g. `heaptrack`); its pid is
    // then the one whose RSS is read, so leave the RSS figure aside in that case.
    let mut cmd = match std::env::var("KSM_BENCH_WRAP") {
        Ok(w) if !w.is_empty() => {
            let mut c = Command::new(w);
            c.arg(bin);
            c
        }
        _ => Command::new(bin),
    };
    let child = cmd
        .args([
            "run",
            "--provider",
            "ksm-flux",
            "--bind-address",
            "127.0.0.1:0",
        ])
        .args(["--resync", "30s", "--concurrency", &concurrency])
        .arg("--kubeconfig")
        .arg(&kubeconfig)
        .env(
            "KSM_LOG",
            std::env::var("KSM_BENCH_LOG").unwrap_or_else(|_| "warn".into()),
        )
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(dir.join("adapter.log")).unwrap())
        // A group of its own: a wrapper (heaptrack is a shell script) runs the adapter as
        // its child, and a signal to the wrapper alone left the adapter running.
        .process_group(0)
        .spawn()
        .expect("start the adapter");
    let mut child = Group(child);
    let child_id = child.0.id();
    let mut said = Instant::now();
    while !convergence.done() {
        assert!(
            started.elapsed() < limit,
            "not converged after {limit:?} ({}); see {}",
            convergence.progress(),
            dir.join("adapter.log").display()
        );
        if said.elapsed() >= Duration::from_secs(30) {
            eprintln!(
                "{:.0} s: {}",
                started.elapsed().as_secs_f64(),
                convergence.progress()
            );
            said = Instant::now();
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let wall = started.elapsed();
    let cpu = cpu_time(child_id);
    // Writes may still be in flight for the last sets: let them land.
    std::thread::sleep(Duration::from_secs(2));
    let (writes, failed) = server.write_count();
    if let (Server::Fake(fake), Some(_)) = (&server, std::env::var_os("KSM_BENCH_VERBOSE")) {
        print_first_conflicts(fake);
    }

    server.clear_requests();
    let steady = Duration::from_secs(env_usize("KSM_BENCH_STEADY_SECS", 60) as u64);
    std::thread::sleep(steady);
    let (steady_writes, _) = server.write_count();
    if let (Server::Fake(server), Some(_)) = (&server, std::env::var_os("KSM_BENCH_VERBOSE")) {
        let mut by: std::collections::BTreeMap<String, usize> = Default::default();
        for r in server.requests() {
            let k = format!(
                "{} {} {:?} {}",
                r.verb,
                r.resource.clone().unwrap_or_default(),
                r.subresource,
                r.status
            );
            *by.entry(k).or_default() += 1;
        }
        eprintln!("steady-state requests: {by:#?}");
    }
    let steady_cpu = cpu_time(child_id)
        .zip(cpu)
        .map(|(end, converged)| end.saturating_sub(converged));
    let rss_kib = vm_kib(child_id, "VmHWM:").unwrap_or(0);
    let steady_rss_kib = vm_kib(child_id, "VmRSS:").unwrap_or(0);
    child.stop();
    if let Ok(keep) = std::env::var("KSM_BENCH_KEEP_LOG") {
        let _ = std::fs::copy(dir.join("adapter.log"), keep);
    }
    let _ = std::fs::remove_dir_all(&dir);
    AdapterRun {
        wall,
        cpu,
        steady_cpu,
        writes,
        failed,
        steady_writes,
        steady,
        rss_kib,
        steady_rss_kib,
    }
}

/// The adapter's process group (the adapter, or its wrapper and the adapter): SIGTERM to all of
/// it, and a wait for the wrapper, which ends once the adapter has (heaptrack then writes its
/// data); on an early end of the benchmark (a panic), SIGKILL.
struct Group(std::process::Child);

impl Group {
    fn signal(&self, sig: i32) {
        // SAFETY: kill(2) on the group this process started; no memory is touched.
        unsafe {
            libc::kill(-(self.0.id() as i32), sig);
        }
    }

    fn stop(&mut self) {
        self.signal(libc::SIGTERM);
        let _ = self.0.wait();
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        if matches!(self.0.try_wait(), Ok(None)) {
            self.signal(libc::SIGKILL);
            let _ = self.0.wait();
        }
    }
}

/// The requests on the first ServiceSets whose writes were answered 409, in order: who wrote
/// in between, and which version each write was made against.
fn print_first_conflicts(server: &FakeApiServer) {
    let reqs = server.requests();
    let mut shown = Vec::new();
    for r in &reqs {
        if r.status == 409 && r.resource.as_deref() == Some("servicesets") {
            let name = r.name.clone().unwrap_or_default();
            if !shown.contains(&name) {
                shown.push(name);
            }
        }
        if shown.len() >= 3 {
            break;
        }
    }
    let t0 = reqs.first().map(|r| r.time);
    let at = |r: &fakeapi::RequestRecord| {
        t0.and_then(|t| r.time.duration_since(t).ok())
            .unwrap_or_default()
            .as_secs_f64()
    };
    // The adapter's lists and watches (a watch is logged when it ends), and the writes per
    // second: when the caches were filled, and whether the writes ever stalled.
    for r in reqs
        .iter()
        .filter(|r| matches!(r.verb.as_str(), "list" | "watch"))
    {
        eprintln!(
            "  {:>9.3}s {} {} {} {}",
            at(r),
            r.verb,
            r.resource.as_deref().unwrap_or(""),
            r.status,
            r.query
        );
    }
    let mut per_sec: std::collections::BTreeMap<u64, (usize, usize)> = Default::default();
    for r in &reqs {
        let e = per_sec.entry(at(r) as u64).or_default();
        if ["create", "update", "patch", "delete"].contains(&r.verb.as_str()) {
            e.0 += 1;
        } else {
            e.1 += 1;
        }
    }
    eprintln!("second: writes, other requests: {per_sec:?}");
    for name in shown {
        eprintln!("requests on ServiceSet {name}:");
        for r in reqs
            .iter()
            .filter(|r| r.name.as_deref() == Some(name.as_str()))
        {
            let at = t0
                .and_then(|t| r.time.duration_since(t).ok())
                .unwrap_or_default();
            eprintln!(
                "  {:>9.3}s {} {:?} {} {}",
                at.as_secs_f64(),
                r.verb,
                r.subresource,
                r.status,
                r.query
            );
        }
    }
}

/// The same writes by a plain client: per ServiceSet the finalizer patch, the server-side
/// applies of what render gives, and the status patch the adapter writes, in that order; the
/// ServiceSets on `connections` connections.
fn run_plain(seed: &[Value], services: usize, connections: usize) -> (Duration, usize) {
    let server = server(seed);
    let base = server.url();
    let sets = server.list(&kinds::SERVICE_SET);
    let templates = server.list(&kinds::SERVICE_TEMPLATE);
    let smp = server
        .list(&kinds::STATE_MANAGEMENT_PROVIDER)
        .into_iter()
        .find(|p| p["metadata"]["name"] == "ksm-flux");
    // Bodies first: the client's time is the writes only.
    let mut all: Vec<Vec<(String, &'static str, String)>> = Vec::new();
    for set in &sets {
        let mut writes: Vec<(String, &'static str, String)> = Vec::new();
        let name = s(set, "/metadata/name");
        let set_path =
            format!("{base}/apis/k0rdent.mirantis.com/v1beta1/namespaces/{NS}/servicesets/{name}");
        writes.push((
            set_path.clone(),
            "application/merge-patch+json",
            json!({"metadata": {"finalizers": [adapter::FINALIZER],
                "resourceVersion": s(set, "/metadata/resourceVersion")}})
            .to_string(),
        ));
        let desired = adapter::Desired::of(set, &templates);
        let plan = adapter::plan(&adapter::Inputs {
            service_set: set,
            desired: &desired,
            live: &[],
            sources: &[],
            provider: adapter::Provider::of(smp.as_ref()),
            previous_status: None,
            now: chrono::Utc::now(),
            source_timeout: Duration::from_secs(300),
            rivals: &[],
        });
        for o in plan.to_apply(&desired.rendered) {
            let (group, plural) = if s(o, "/kind") == "HelmRelease" {
                ("helm.toolkit.fluxcd.io/v2", "helmreleases")
            } else {
                ("kustomize.toolkit.fluxcd.io/v1", "kustomizations")
            };
            writes.push((
                format!(
                    "{base}/apis/{group}/namespaces/{NS}/{plural}/{}?fieldManager={}&force=true",
                    s(o, "/metadata/name"),
                    adapter::FIELD_MANAGER
                ),
                "application/apply-patch+yaml",
                o.to_string(),
            ));
        }
        writes.push((
            format!("{set_path}/status"),
            "application/merge-patch+json",
            json!({"status": plan.status}).to_string(),
        ));
        assert_eq!(plan.applied.len(), services);
        all.push(writes);
    }
    server.clear_requests();
    let started = Instant::now();
    server.send_all(&all, connections);
    let wall = started.elapsed();
    let (n, failed) = server.write_count();
    assert_eq!(failed, 0);
    (wall, n)
}

fn main() {
    // `cargo bench` passes --bench; nothing else is taken.
    let sets = env_usize("KSM_BENCH_SETS", 1000);
    let services = env_usize("KSM_BENCH_SERVICES", 3).clamp(3, 5);
    let bin = release::binary();
    let seed = seed(sets, services);
    eprintln!("seeded {sets} ServiceSets x {services} services");

    let concurrency = env_usize("KSM_BENCH_CONCURRENCY", 8);
    let (plain_wall, plain_writes) = run_plain(&seed, services, concurrency);
    eprintln!(
        "plain client: {:.2} s, {plain_writes} writes",
        plain_wall.as_secs_f64()
    );
    // The adapter may take ten times the plain client (at least ten minutes) before the bench
    // gives up on it.
    let limit = (plain_wall * 10).max(Duration::from_secs(600));
    let run = run_adapter(&bin, &seed, sets, services, limit);

    let per_min = run.steady_writes as f64 * 60.0 / run.steady.as_secs_f64();
    println!(
        "kubectl ksm run, {sets} ServiceSets x {services} services, --concurrency {}, empty -> converged",
        env_usize("KSM_BENCH_CONCURRENCY", 8)
    );
    println!(
        "  adapter:       {:>8.2} s   {:>6} writes ({} answered with an error and retried)",
        run.wall.as_secs_f64(),
        run.writes,
        run.failed
    );
    if let Some(cpu) = run.cpu {
        println!(
            "  adapter CPU:   {:>8.2} s   (user + system, start to converged)",
            cpu.as_secs_f64()
        );
    }
    println!(
        "  plain client:  {:>8.2} s   {:>6} writes (the same writes, {concurrency} connections)",
        plain_wall.as_secs_f64(),
        plain_writes
    );
    println!(
        "  ratio:         {:>8.2}x time, {:.2}x writes",
        run.wall.as_secs_f64() / plain_wall.as_secs_f64(),
        run.writes as f64 / plain_writes as f64
    );
    println!(
        "  steady state:  {} writes in {} s ({per_min:.1} writes/min; resync 30 s)",
        run.steady_writes,
        run.steady.as_secs()
    );
    if let Some(cpu) = run.steady_cpu {
        println!(
            "  steady CPU:    {:>8.2} s   (user + system, converged to the end of the steady state)",
            cpu.as_secs_f64()
        );
    }
    println!(
        "  peak RSS:      {:.1} MiB (VmHWM); {:.1} MiB at steady state (VmRSS)",
        run.rss_kib as f64 / 1024.0,
        run.steady_rss_kib as f64 / 1024.0
    );
}

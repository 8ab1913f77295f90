//! Live `kubectl ksm doctor` against the stateful fake API server (tests/fakeapi), at scale:
//! 2,000 ServiceSets × 5 services (10,000 HelmReleases) in 20 namespaces, all healthy, compared
//! with `kubectl get <the same kinds> -A -o json` against the same server; then the request
//! counts of doctor at 200 ServiceSets × 5 beside those at 2,000, to show that requests grow
//! with kinds and pages, not with objects.
//!
//! Run with `cargo bench --bench doctor_live`. It builds the release binary itself
//! (`cargo build --release --bin kubectl-ksm`) and runs it as a separate process, as a user
//! would. Settings (environment):
//!
//! - `KSM_BENCH_RUNS` (default 5): timed runs per command; the median is reported.
//! - `KSM_BENCH_KUBECTL` (default `kubectl`): the kubectl to compare with.
//! - `KSM_BENCH_SETS` (default 2000) and `KSM_BENCH_SMALL_SETS` (default 200).
//! - `KSM_BENCH_HOLD=1`: after the runs, print the kubeconfig path and keep the server up until
//!   stdin closes (for profiling the binary by hand, e.g. with `perf record`).
//! - `KSM_BENCH_PROVIDER=sveltos`: the default-provider variant (doctor_live/sveltos.rs): the
//!   ServiceSets are kcm's `ksm-projectsveltos` ones, each with its Profile, ClusterSummary,
//!   ClusterConfiguration, CAPI Cluster and kubeconfig Secret, and kubectl gets those kinds.
//! - `KSM_BENCH_BIN`: a kubectl-ksm binary to use instead of building the release one.
//! - `KSM_BENCH_SERVER=real`: the real kube-apiserver and etcd of tests/realapi (built by
//!   `scripts/kube-test-server build`) instead of the fake server, with the real CRDs (and, for
//!   the default provider, Cluster API's Cluster CRD); the objects are created over HTTP (their
//!   status through the status subresource) and the requests of a run are counted from the
//!   server's `apiserver_request_total`. The phases of a run are the fake server's only.
//!
//! The objects are generated from those of testdata/doctor/healthy/dump.yaml (the SMP ksm-flux
//! with its Deployments and CRDs, seeded once; a ServiceSet, a ServiceTemplate with its
//! HelmChart, a HelmRelease, a HelmRepository and a kubeconfig Secret used as templates).

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
#[path = "doctor_live/sveltos.rs"]
mod sveltos;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime};

use fakeapi::FakeApiServer;
use serde_json::{Value, json};
use server::Server;

const NOW: &str = "2026-11-21T12:00:00Z";
const NAMESPACES: usize = 20;
const SERVICES: usize = 5;
/// The kinds doctor lists (core::provider::doctor_kinds), plus Secrets (doctor lists their metadata).
const KUBECTL_KINDS: &str = "statemanagementproviders,servicesets,servicetemplates,helmreleases,kustomizations,helmcharts,helmrepositories,gitrepositories,ocirepositories,buckets,secrets";

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The objects of the healthy dump, by (kind, name).
struct Templates {
    seed: Vec<Value>,
    service_set: Value,
    template: Value,
    helm_chart: Value,
    helm_release: Value,
    helm_repository: Value,
    secret: Value,
}

impl Templates {
    fn load() -> Templates {
        let text = std::fs::read_to_string(root().join("testdata/doctor/healthy/dump.yaml"))
            .expect("healthy dump");
        let list: Value = serde_saphyr::from_str(&text).expect("healthy dump YAML");
        let items = list["items"].as_array().expect("a List").clone();
        let pick = |kind: &str, name: &str| -> Value {
            items
                .iter()
                .find(|o| o["kind"] == kind && o["metadata"]["name"] == name)
                .unwrap_or_else(|| panic!("healthy dump has no {kind} {name}"))
                .clone()
        };
        let seed = items
            .iter()
            .filter(|o| {
                matches!(
                    o["kind"].as_str(),
                    Some("CustomResourceDefinition" | "StateManagementProvider" | "Deployment")
                )
            })
            .cloned()
            .collect();
        Templates {
            seed,
            service_set: pick("ServiceSet", "dev-cluster"),
            template: pick("ServiceTemplate", "ingress-nginx-4-13-0"),
            helm_chart: pick("HelmChart", "ingress-nginx-4-13-0"),
            helm_release: pick("HelmRelease", "dev-cluster-ingress-nginx"),
            helm_repository: pick("HelmRepository", "ingress-nginx"),
            secret: pick("Secret", "dev-cluster-kubeconfig"),
        }
    }
}

/// A fresh copy of a template object with a new name and namespace (server-assigned fields
/// dropped; a deterministic uid so owner references can point at it).
fn instance(t: &Value, namespace: &str, name: &str, uid: &str) -> Value {
    let mut o = t.clone();
    let m = &mut o["metadata"];
    m["name"] = name.into();
    m["namespace"] = namespace.into();
    m["uid"] = uid.into();
    if let Some(m) = m.as_object_mut() {
        m.remove("resourceVersion");
    }
    o
}

fn uid(n: usize) -> String {
    format!("00000000-0000-4000-8000-{n:012x}")
}

fn service_name(k: usize) -> String {
    format!("app-{k}")
}

fn template_name(k: usize) -> String {
    format!("app-{k}-1-0-{k}")
}

/// Loads the CRD folders (relative to the project root) and the objects (CRDs among them
/// loaded as CRDs) into the fake server.
fn seed(server: &FakeApiServer, crd_dirs: &[&str], objects: &[Value]) {
    for dir in crd_dirs {
        server.load_crds_dir(root().join(dir));
    }
    for o in objects {
        if o["kind"] == "CustomResourceDefinition" {
            server.load_crd(o);
        } else {
            server.create(o.clone());
        }
    }
}

/// The SMP with its Deployments and CRDs, then `sets` ServiceSets of 5 Helm services spread
/// over 20 namespaces, every object healthy.
fn populate(t: &Templates, sets: usize) -> Vec<Value> {
    let mut out = t.seed.clone();
    let mut next_uid = 1usize;
    let mut new_uid = || {
        next_uid += 1;
        uid(next_uid)
    };
    for i in 0..NAMESPACES {
        let ns = format!("team-{i:02}");
        // One HelmRepository per namespace, one ServiceTemplate + HelmChart per service.
        let mut repo = instance(&t.helm_repository, &ns, "charts", &new_uid());
        repo["spec"]["url"] = format!("https://charts.example.invalid/{ns}").into();
        out.push(repo);
        for k in 0..SERVICES {
            let name = template_name(k);
            let version = format!("1.0.{k}");
            let tuid = new_uid();
            let mut st = instance(&t.template, &ns, &name, &tuid);
            st["spec"]["helm"]["chartSpec"]["chart"] = service_name(k).into();
            st["spec"]["helm"]["chartSpec"]["sourceRef"]["name"] = "charts".into();
            st["spec"]["helm"]["chartSpec"]["version"] = version.clone().into();
            st["spec"]["version"] = version.clone().into();
            st["status"]["chartRef"]["name"] = name.clone().into();
            st["status"]["chartRef"]["namespace"] = ns.clone().into();
            st["status"]["chartVersion"] = version.clone().into();
            out.push(st);
            let mut hc = instance(&t.helm_chart, &ns, &name, &new_uid());
            hc["metadata"]["ownerReferences"][0]["name"] = name.clone().into();
            hc["metadata"]["ownerReferences"][0]["uid"] = tuid.into();
            hc["spec"]["chart"] = service_name(k).into();
            hc["spec"]["sourceRef"]["name"] = "charts".into();
            hc["spec"]["version"] = version.clone().into();
            hc["status"]["artifact"]["revision"] = version.into();
            out.push(hc);
        }
    }
    for s in 0..sets {
        let ns = format!("team-{:02}", s % NAMESPACES);
        let set = format!("cluster-{s:05}");
        let set_uid = new_uid();
        let mut ss = instance(&t.service_set, &ns, &set, &set_uid);
        ss["spec"]["cluster"] = set.clone().into();
        ss["metadata"]["ownerReferences"][0]["name"] = set.clone().into();
        let status_tpl = t.service_set["status"]["services"][1].clone();
        let mut services = Vec::new();
        let mut statuses = Vec::new();
        for k in 0..SERVICES {
            let version = format!("1.0.{k}");
            services.push(json!({
                "name": service_name(k),
                "namespace": service_name(k),
                "template": template_name(k),
                "version": version,
            }));
            let mut st = status_tpl.clone();
            st["name"] = service_name(k).into();
            st["namespace"] = service_name(k).into();
            st["template"] = template_name(k).into();
            st["version"] = version.into();
            statuses.push(st);
        }
        ss["spec"]["services"] = services.into();
        ss["status"]["services"] = statuses.into();
        ss["status"]["conditions"][0]["message"] = format!("{SERVICES}/{SERVICES}").into();
        ss["status"]["cluster"]["name"] = set.clone().into();
        ss["status"]["cluster"]["namespace"] = ns.clone().into();
        out.push(ss);

        let secret_name = format!("{set}-kubeconfig");
        let mut sec = instance(&t.secret, &ns, &secret_name, &new_uid());
        sec["metadata"]["labels"]["cluster.x-k8s.io/cluster-name"] = set.clone().into();
        sec["metadata"]["ownerReferences"][0]["name"] = set.clone().into();
        out.push(sec);

        for k in 0..SERVICES {
            let svc = service_name(k);
            let version = format!("1.0.{k}");
            let mut hr = instance(&t.helm_release, &ns, &format!("{set}-{svc}"), &new_uid());
            let labels = &mut hr["metadata"]["labels"];
            labels["ksm.k0rdent.mirantis.com/service"] = svc.clone().into();
            labels["ksm.k0rdent.mirantis.com/serviceset"] = set.clone().into();
            hr["metadata"]["ownerReferences"][0]["name"] = set.clone().into();
            hr["metadata"]["ownerReferences"][0]["uid"] = set_uid.clone().into();
            hr["spec"]["chartRef"]["name"] = template_name(k).into();
            hr["spec"]["chartRef"]["namespace"] = ns.clone().into();
            hr["spec"]["kubeConfig"]["secretRef"]["name"] = secret_name.clone().into();
            hr["spec"]["releaseName"] = svc.clone().into();
            hr["spec"]["storageNamespace"] = svc.clone().into();
            hr["spec"]["targetNamespace"] = svc.clone().into();
            let msg = format!(
                "Helm install succeeded for release {svc}/{svc}.v1 with chart {svc}@{version}"
            );
            for c in hr["status"]["conditions"].as_array_mut().unwrap() {
                c["message"] = msg.clone().into();
            }
            let h = &mut hr["status"]["history"][0];
            h["appVersion"] = version.clone().into();
            h["chartName"] = svc.clone().into();
            h["chartVersion"] = version.clone().into();
            h["name"] = svc.clone().into();
            h["namespace"] = svc.clone().into();
            hr["status"]["lastAttemptedRevision"] = version.into();
            hr["status"]["storageNamespace"] = svc.into();
            out.push(hr);
        }
    }
    out
}

struct Run {
    wall: Duration,
    stdout: Vec<u8>,
    started: SystemTime,
    ended: SystemTime,
}

/// Where the wall time of a run went, from the server's request log: before the first request
/// (start-up, kubeconfig), first → last request answered (discovery and lists, with the
/// client's decoding of all but the last response), and after the last request (decoding the
/// last response, the diagnosis and the output).
#[derive(Clone, Copy, Default)]
struct Phases {
    before: Duration,
    requests: Duration,
    after: Duration,
}

/// The resources whose requests are counted on the real server (its own background requests
/// on other resources, leases for instance, are no one's here): what doctor and kubectl read.
fn counted() -> Vec<&'static str> {
    use kubectl_ksm::api::kinds::{CONFIG_MAP, CRD, DEPLOYMENT, SECRET};
    kubectl_ksm::core::provider::doctor_kinds()
        .iter()
        .map(|l| l.kind.plural)
        .chain([SECRET, CONFIG_MAP, DEPLOYMENT, CRD].map(|k| k.plural))
        .collect()
}

impl Server {
    /// A server with the CRDs of `crd_dirs` and `objects` in it.
    fn start(crd_dirs: &[&str], objects: &[Value]) -> Server {
        if real::wanted() {
            // Cluster API's Cluster CRD for both providers: doctor lists Clusters wherever
            // the kind is served.
            let extra = realapi::gomod::crds(
                realapi::gomod::CLUSTER_API,
                realapi::gomod::CAPI_CLUSTER_CRDS,
            )
            .expect("Cluster API's CRDs from the Go module proxy");
            let r = real::Real::start(&extra);
            r.create_all(objects, 4);
            r.clear_requests();
            Server::Real(Box::new(r))
        } else {
            let server = FakeApiServer::start();
            seed(&server, crd_dirs, objects);
            Server::Fake(server)
        }
    }

    /// Requests since the last clear, by "verb resource".
    fn request_counts(&self) -> BTreeMap<String, usize> {
        match self {
            Server::Fake(s) => request_counts(s),
            Server::Real(r) => r.requests().on(&counted()),
        }
    }

    fn phases(&self, r: &Run) -> Option<Phases> {
        match self {
            Server::Fake(s) => Some(fake_phases(s, r)),
            Server::Real(_) => None,
        }
    }
}

fn fake_phases(server: &FakeApiServer, r: &Run) -> Phases {
    let log = server.requests();
    let (Some(first), Some(last)) = (
        log.iter().map(|q| q.time).min(),
        log.iter().map(|q| q.time).max(),
    ) else {
        return Phases::default();
    };
    let d = |a: SystemTime, b: SystemTime| b.duration_since(a).unwrap_or_default();
    Phases {
        before: d(r.started, first),
        requests: d(first, last),
        after: d(last, r.ended),
    }
}

fn run(cmd: &mut Command) -> Run {
    let started = SystemTime::now();
    let start = Instant::now();
    let out = cmd.stdin(Stdio::null()).output().expect("spawn");
    let wall = start.elapsed();
    let ended = SystemTime::now();
    if !out.status.success() {
        panic!(
            "{cmd:?} exited with {}: {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Run {
        wall,
        stdout: out.stdout,
        started,
        ended,
    }
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn secs(d: Duration) -> String {
    format!("{:.3} s", d.as_secs_f64())
}

fn list_secs(v: &[Duration]) -> String {
    v.iter()
        .map(|d| format!("{:.2}", d.as_secs_f64()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Requests of the server's log since the last clear, by "verb resource".
fn request_counts(server: &FakeApiServer) -> BTreeMap<String, usize> {
    let mut m = BTreeMap::new();
    for r in server.requests() {
        let key = match &r.resource {
            Some(res) => format!("{} {res}", r.verb),
            // Discovery and /version: the path tells which.
            None => format!("{} {}", r.verb, r.path),
        };
        *m.entry(key).or_insert(0) += 1;
    }
    m
}

fn doctor_cmd(bin: &Path, kubeconfig: &Path) -> Command {
    let mut cmd = Command::new(bin);
    cmd.args(["doctor", "-A", "-o", "json", "--now", NOW, "--kubeconfig"])
        .arg(kubeconfig)
        .env_clear();
    cmd
}

/// Which ServiceSets the bench generates.
fn default_provider() -> bool {
    std::env::var("KSM_BENCH_PROVIDER").is_ok_and(|v| v == "sveltos")
}

fn kubectl_cmd(kubectl: &str, kubeconfig: &Path, home: &Path) -> Command {
    let mut cmd = Command::new(kubectl);
    // The real server has every CRD doctor reads installed: kubectl gets them all, as doctor.
    let kinds = if default_provider() || real::wanted() {
        sveltos::KUBECTL_KINDS
    } else {
        KUBECTL_KINDS
    };
    cmd.args([
        "get",
        kinds,
        "-A",
        "-o",
        "json",
        "--request-timeout",
        "300s",
    ])
    .arg("--kubeconfig")
    .arg(kubeconfig)
    .env_clear()
    .env("PATH", std::env::var_os("PATH").unwrap_or_default())
    .env("HOME", home)
    .env("KUBECACHEDIR", home.join("cache"))
    .stdout(Stdio::null());
    cmd
}

/// Checks the doctor report: `sets` ServiceSets, `sets × 5` services, all healthy.
fn check_report(stdout: &[u8], sets: usize) {
    let report: Value = serde_json::from_slice(stdout).expect("doctor JSON");
    let sum = &report["summary"];
    let findings = report["findings"].as_array().map_or(0, Vec::len);
    assert_eq!(sum["serviceSets"], sets, "{sum}");
    assert_eq!(sum["services"], sets * SERVICES, "{sum}");
    assert_eq!(sum["healthyServices"], sets * SERVICES, "{sum}");
    assert_eq!(findings, 0, "findings: {}", report["findings"]);
}

struct Sized {
    sets: usize,
    objects: usize,
    seed_time: Duration,
    doctor: Vec<Duration>,
    doctor_phases: Vec<Phases>,
    doctor_requests: BTreeMap<String, usize>,
    doctor_bytes: usize,
    kubectl: Vec<Duration>,
    kubectl_phases: Vec<Phases>,
    kubectl_requests: BTreeMap<String, usize>,
}

fn measure(
    t: &Templates,
    sets: usize,
    runs: usize,
    bin: &Path,
    kubectl: &str,
    dir: &Path,
) -> (Sized, Server, PathBuf, Vec<Value>) {
    let (objects, crd_dirs) = if default_provider() {
        (
            sveltos::populate(sets),
            &["crds/kcm", "crds/flux", "crds/sveltos"][..],
        )
    } else {
        (populate(t, sets), &["crds/kcm", "crds/flux"][..])
    };
    let start = Instant::now();
    let server = Server::start(crd_dirs, &objects);
    let seed_time = start.elapsed();
    let seeded = objects;
    let objects = seeded.len();
    eprintln!(
        "[{sets}] seeded {objects} objects in {:.1} s",
        seed_time.as_secs_f64()
    );
    let kubeconfig = server.kubeconfig(&dir.join(format!("kubeconfig-{sets}")));

    // One untimed run of each (page cache, the server's first lists; kubectl's discovery
    // cache in a fresh HOME), then `runs` pairs, doctor then kubectl, so that both meet the
    // machine in the same state; the request counts are those of the last pair.
    let home = dir.join(format!("home-{sets}"));
    std::fs::create_dir_all(&home).unwrap();
    let first = run(&mut doctor_cmd(bin, &kubeconfig));
    check_report(&first.stdout, sets);
    run(&mut kubectl_cmd(kubectl, &kubeconfig, &home));
    let mut doctor = Vec::new();
    let mut doctor_phases = Vec::new();
    let mut doctor_bytes = 0;
    let mut doctor_requests = BTreeMap::new();
    let mut kubectl_times = Vec::new();
    let mut kubectl_phases = Vec::new();
    let mut kubectl_requests = BTreeMap::new();
    let say = |what: &str, r: &Run, p: Option<Phases>| match p {
        Some(p) => eprintln!(
            "[{sets}] {what} {} (before the first request {}, requests {}, after the last {})",
            secs(r.wall),
            secs(p.before),
            secs(p.requests),
            secs(p.after)
        ),
        None => eprintln!("[{sets}] {what} {}", secs(r.wall)),
    };
    for _ in 0..runs {
        server.clear_requests();
        let r = run(&mut doctor_cmd(bin, &kubeconfig));
        doctor_requests = server.request_counts();
        check_report(&r.stdout, sets);
        doctor_bytes = r.stdout.len();
        let p = server.phases(&r);
        say("doctor", &r, p);
        doctor_phases.extend(p);
        doctor.push(r.wall);

        server.clear_requests();
        let r = run(&mut kubectl_cmd(kubectl, &kubeconfig, &home));
        kubectl_requests = server.request_counts();
        let p = server.phases(&r);
        say("kubectl", &r, p);
        kubectl_phases.extend(p);
        kubectl_times.push(r.wall);
    }
    (
        Sized {
            sets,
            objects,
            seed_time,
            doctor,
            doctor_phases,
            doctor_requests,
            doctor_bytes,
            kubectl: kubectl_times,
            kubectl_phases,
            kubectl_requests,
        },
        server,
        kubeconfig,
        seeded,
    )
}

/// Times what reads a dump of the fleet instead of the server (`--from`, the objects as one
/// JSON List): doctor, tree, and trace from a ServiceSet and from a release (which looks at
/// every ServiceSet). `runs` timed runs each after an untimed one; each output is checked.
fn from_dump(objects: &[Value], sets: usize, bin: &Path, runs: usize, dir: &Path) {
    // The objects as saved files of 1,000 objects each (one bundle of them all is more YAML
    // nodes than one file may hold).
    let dump = dir.join(format!("dump-{sets}"));
    std::fs::create_dir_all(&dump).unwrap();
    for (i, chunk) in objects.chunks(1000).enumerate() {
        let list = serde_json::json!({"apiVersion": "v1", "kind": "List", "items": chunk});
        let file = dump.join(format!("{i:03}.json"));
        std::fs::write(file, serde_json::to_vec(&list).unwrap()).unwrap();
    }
    let bytes: u64 = std::fs::read_dir(&dump)
        .unwrap()
        .filter_map(|e| e.ok()?.metadata().ok())
        .map(|m| m.len())
        .sum();
    let first = &objects
        .iter()
        .find(|o| o["kind"] == "ServiceSet")
        .expect("a ServiceSet")["metadata"];
    let set = format!("serviceset/{}", first["name"].as_str().unwrap());
    let ns = first["namespace"].as_str().unwrap().to_string();
    let release = format!("{}/{}", service_name(0), service_name(0));
    let commands: Vec<(&str, Vec<String>, usize)> = vec![
        (
            "doctor -A -o json",
            vec!["doctor".into(), "-A".into(), "-o".into(), "json".into()],
            0,
        ),
        ("tree -A", vec!["tree".into(), "-A".into()], 0),
        (
            "tree -A -o json",
            vec!["tree".into(), "-A".into(), "-o".into(), "json".into()],
            0,
        ),
        (
            "trace serviceset/NAME -n NS -o json",
            vec![
                "trace".into(),
                set,
                "-n".into(),
                ns,
                "-o".into(),
                "json".into(),
            ],
            SERVICES,
        ),
        (
            "trace --release NS/NAME -o json",
            vec![
                "trace".into(),
                "--release".into(),
                release,
                "-o".into(),
                "json".into(),
            ],
            sets,
        ),
    ];
    println!();
    println!(
        "## From a dump of {sets} ServiceSets × {SERVICES} ({} objects, {:.1} MB of JSON in files of 1,000): {runs} timed runs each, median (all runs in s)",
        objects.len(),
        bytes as f64 / 1e6
    );
    println!();
    println!("| command | wall |");
    println!("|---|---:|");
    for (label, args, traced) in commands {
        let mut cmd = Command::new(bin);
        cmd.args(&args).arg("--from").arg(&dump).env_clear();
        let out = run(&mut cmd);
        if traced > 0 {
            let doc: Value = serde_json::from_slice(&out.stdout).expect("trace JSON");
            let n = doc["services"].as_array().map_or(0, Vec::len);
            assert_eq!(n, traced, "{label}: services traced");
        }
        let times: Vec<Duration> = (0..runs).map(|_| run(&mut cmd).wall).collect();
        println!(
            "| `{label}` | {} ({}) |",
            secs(median(times.clone())),
            list_secs(&times)
        );
    }
}

fn print_counts(big: &Sized, small: &Sized, pick: fn(&Sized) -> &BTreeMap<String, usize>) {
    let keys: std::collections::BTreeSet<&String> =
        pick(big).keys().chain(pick(small).keys()).collect();
    println!(
        "| request | {} ServiceSets | {} ServiceSets |",
        small.sets, big.sets
    );
    println!("|---|---:|---:|");
    for k in keys {
        println!(
            "| {k} | {} | {} |",
            pick(small).get(k).copied().unwrap_or(0),
            pick(big).get(k).copied().unwrap_or(0)
        );
    }
    let total = |s: &Sized| pick(s).values().sum::<usize>();
    println!("| **total** | {} | {} |", total(small), total(big));
}

fn main() {
    // `cargo bench` passes `--bench`; a filter argument is accepted and ignored.
    let runs = env_usize("KSM_BENCH_RUNS", 5).max(1);
    let big_sets = env_usize("KSM_BENCH_SETS", 2000);
    let small_sets = env_usize("KSM_BENCH_SMALL_SETS", 200);
    let kubectl = std::env::var("KSM_BENCH_KUBECTL").unwrap_or_else(|_| "kubectl".into());

    let bin = release::binary();
    let t = Templates::load();
    let dir = std::env::temp_dir().join(format!("ksm-bench-doctor-live-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();

    let (small, small_server, _, _) = measure(&t, small_sets, runs, &bin, &kubectl, &dir);
    drop(small_server);
    let (big, big_server, big_kubeconfig, big_objects) =
        measure(&t, big_sets, runs, &bin, &kubectl, &dir);

    println!();
    println!(
        "## Live doctor ({}): {runs} timed runs each, median (all runs in s)",
        if default_provider() {
            "ksm-projectsveltos: Profiles, ClusterSummaries"
        } else {
            "ksm-flux: HelmReleases"
        }
    );
    println!();
    println!("| size | objects | doctor | kubectl get | doctor ÷ kubectl | doctor JSON bytes |");
    println!("|---|---:|---:|---:|---:|---:|");
    for s in [&small, &big] {
        let d = median(s.doctor.clone());
        let k = median(s.kubectl.clone());
        println!(
            "| {} ServiceSets × {SERVICES} | {} (seeded in {:.1} s) | {} ({}) | {} ({}) | {:.2}× | {} |",
            s.sets,
            s.objects,
            s.seed_time.as_secs_f64(),
            secs(d),
            list_secs(&s.doctor),
            secs(k),
            list_secs(&s.kubectl),
            d.as_secs_f64() / k.as_secs_f64(),
            s.doctor_bytes,
        );
    }
    let fake = !big.doctor_phases.is_empty();
    if fake {
        println!();
        println!("### Where the time goes (median of each phase, from the server's request log)");
        println!();
        println!(
            "| size | program | before the first request | first → last request | after the last request |"
        );
        println!("|---|---|---:|---:|---:|");
    }
    for s in [&small, &big] {
        for (name, ph) in [("doctor", &s.doctor_phases), ("kubectl", &s.kubectl_phases)] {
            if ph.is_empty() {
                continue;
            }
            let m = |f: fn(&Phases) -> Duration| secs(median(ph.iter().map(f).collect()));
            println!(
                "| {} | {name} | {} | {} | {} |",
                s.sets,
                m(|p| p.before),
                m(|p| p.requests),
                m(|p| p.after)
            );
        }
    }
    println!();
    println!("### doctor requests (one run)");
    println!();
    print_counts(&big, &small, |s| &s.doctor_requests);
    println!();
    println!("### kubectl requests (one run, discovery cache warm)");
    println!();
    print_counts(&big, &small, |s| &s.kubectl_requests);
    // Pages of 500 are requests of their own: one list of a kind is as many LIST requests as
    // kubectl's list of the same kind.
    for s in [&small, &big] {
        let more: Vec<String> = s
            .doctor_requests
            .iter()
            .filter(|(k, _)| k.starts_with("LIST ") || k.starts_with("list "))
            .filter_map(|(k, n)| {
                let theirs = s.kubectl_requests.get(k).copied().unwrap_or(0);
                (*n > theirs.max(1)).then(|| format!("{k}: {n} against kubectl's {theirs}"))
            })
            .collect();
        println!(
            "one list per kind at {} ServiceSets: {}",
            s.sets,
            if more.is_empty() {
                "yes".to_string()
            } else {
                format!("NO ({})", more.join("; "))
            }
        );
    }
    // The goal: issue 13 on the fake server, issue 26 on the real one.
    let goal = if fake { 1.5 } else { 0.5 };
    for s in [&small, &big] {
        let ratio =
            median(s.doctor.clone()).as_secs_f64() / median(s.kubectl.clone()).as_secs_f64();
        println!(
            "target doctor ≤ {goal}× kubectl at {} ServiceSets: {:.2}× → {}",
            s.sets,
            ratio,
            if ratio <= goal { "met" } else { "NOT met" }
        );
    }

    from_dump(&big_objects, big_sets, &bin, runs, &dir);
    drop(big_objects);

    if std::env::var("KSM_BENCH_HOLD").is_ok_and(|v| v == "1") {
        eprintln!(
            "holding the server; kubeconfig: {} (close stdin to stop)",
            big_kubeconfig.display()
        );
        let mut s = String::new();
        while std::io::stdin().read_line(&mut s).is_ok_and(|n| n > 0) {}
    }
    drop(big_server);
    let _ = std::fs::remove_dir_all(&dir);
}

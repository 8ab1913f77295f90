//! What the `kubectl ksm run` end-to-end tests share: a fake API server seeded with the
//! multi-service render case, the adapter binary as a child process, and ways to look at both.
#![allow(dead_code)]

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::fakeapi::{FakeApiServer, Fault};
use kubectl_ksm::core::render;
use serde_json::{Value, json};
pub const SS: &str = "k0rdent.mirantis.com/v1beta1";
pub const HR: &str = "helm.toolkit.fluxcd.io/v2";
pub const KS: &str = "kustomize.toolkit.fluxcd.io/v1";
pub const NS: &str = "kcm-system";
pub const SET: &str = "dev-cluster";

pub fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

pub fn s<'a>(v: &'a Value, p: &str) -> &'a str {
    v.pointer(p).and_then(Value::as_str).unwrap_or("")
}

/// The multi-service render case: one ServiceSet (3 HelmReleases, 2 Kustomizations) and its
/// templates; the ServiceSet without status and finalizer, as kcm creates it.
pub fn fixture() -> (Value, Vec<Value>) {
    let text =
        std::fs::read_to_string(root().join("testdata/render/multi-service/input.yaml")).unwrap();
    let docs: Vec<Value> = serde_saphyr::from_multiple(&text).unwrap();
    let mut set = None;
    let mut others = Vec::new();
    for d in docs {
        if s(&d, "/kind") == "ServiceSet" {
            set = Some(d);
        } else {
            others.push(d);
        }
    }
    let mut set = set.unwrap();
    let m = set["metadata"].as_object_mut().unwrap();
    for k in [
        "finalizers",
        "resourceVersion",
        "uid",
        "creationTimestamp",
        "ownerReferences",
    ] {
        m.remove(k);
    }
    set.as_object_mut().unwrap().remove("status");
    (set, others)
}

pub fn smp(ready: bool, suspend: bool) -> Value {
    json!({"apiVersion": SS, "kind": "StateManagementProvider",
        "metadata": {"name": "ksm-flux"},
        "spec": {"selector": {"matchLabels": {"ksm.k0rdent.mirantis.com/adapter": "flux-adapter"}},
            "suspend": suspend},
        "status": {"ready": ready}})
}

/// The longest wait between two retries of a failing reconcile: every adapter of these tests
/// runs with `--max-retry-delay` at this (the default, 5 minutes, would make a test's time a
/// matter of how many failures happened to come in a row).
pub const RETRY_CAP: Duration = Duration::from_secs(1);
/// How long the adapter's reconciles wait for the events that follow one another
/// (`RECONCILE_DEBOUNCE` in src/controller/mod.rs): added to every reconcile, retries included.
pub const DEBOUNCE: Duration = Duration::from_secs(1);
/// The longest backoff of a watch that failed (kube-runtime's default backoff: 0.8 s doubling
/// up to 30 s).
pub const WATCH_BACKOFF_CAP: Duration = Duration::from_secs(30);
/// How long the adapter may take over its graceful stop (it gives its work 25 s, then exits).
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(25);
/// What a wait allows for the work itself, whatever the delays a test sets up: a step of these
/// tests takes well under a few seconds on an idle machine, so this only tells a hang (or an
/// adapter that never converges) from a machine loaded many times over. A wait ends as soon
/// as what it waits for is true: no test waits this long unless it fails.
pub const WORK_ALLOWANCE: Duration = Duration::from_secs(120);

/// What a test has set up that may delay the adapter, from which every wait's deadline is
/// derived: each injected failure costs at most one retry (the retry cap and the debounce),
/// a failed watch or list its backoff, an injected delay its length.
#[derive(Debug, Default, Clone, Copy)]
pub struct Delays {
    pub failures: u32,
    pub watch_failures: u32,
    pub injected: Duration,
}

impl Delays {
    /// Counts what `fault` may cost; `writes` bounds the faults that hit every object once.
    pub fn add(&mut self, fault: &Fault, writes: u32) {
        let n = |times: usize| u32::try_from(times).unwrap_or(u32::MAX);
        match fault {
            Fault::Status {
                verb: Some(v),
                times,
                ..
            } if v == "watch" || v == "list" => self.watch_failures += n(*times),
            Fault::Status { times, .. } => self.failures += n(*times),
            Fault::Delay { delay, times, .. } => self.injected += *delay * n(*times),
            Fault::DropWatch { .. } => self.watch_failures += 1,
            Fault::DropList { times, .. } => self.watch_failures += n(*times),
            Fault::ConflictOnFirstWrite { .. } => self.failures += writes,
        }
    }

    /// The deadline of one wait.
    pub fn patience(&self) -> Duration {
        WORK_ALLOWANCE
            + (RETRY_CAP + DEBOUNCE) * self.failures
            + WATCH_BACKOFF_CAP * self.watch_failures
            + self.injected
    }
}

pub struct Env {
    pub server: FakeApiServer,
    pub dir: PathBuf,
    pub adapter: Option<Adapter>,
    pub last_log: Option<PathBuf>,
    /// What the test injected, from which its waits' deadlines follow.
    pub delays: Delays,
}

pub struct Adapter {
    pub child: Child,
    pub port: u16,
    pub log: PathBuf,
}

impl Adapter {
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// The resourceVersions at which this adapter reconciled ServiceSet `name`.
    pub fn reconciled_versions(&self, name: &str) -> Vec<u64> {
        versions(&self.log(), " reconciled ", name)
    }

    /// The resourceVersions at which this adapter saw ServiceSet `name` outside its shard.
    pub fn outside_shard_versions(&self, name: &str) -> Vec<u64> {
        versions(&self.log(), " not in this replica's shard", name)
    }
}

/// The `resource_version` of the debug log lines about ServiceSet `name` that contain
/// `message`, in order.
pub fn versions(log: &str, message: &str, name: &str) -> Vec<u64> {
    let set = format!("serviceset={NS}/{name} ");
    log.lines()
        .filter(|l| l.contains(message) && l.contains(&set))
        .filter_map(|l| {
            let rv = l.split_once("resource_version=")?.1;
            rv.split(' ').next()?.parse().ok()
        })
        .collect()
}

/// The resourceVersion of an object as a number (the fake server counts them).
pub fn rv_of(o: &Value) -> u64 {
    s(o, "/metadata/resourceVersion").parse().unwrap()
}

impl Drop for Adapter {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

impl Env {
    pub fn new(name: &str) -> Env {
        let server = FakeApiServer::start();
        server.load_crds_dir(root().join("crds/kcm"));
        server.load_crds_dir(root().join("crds/flux"));
        let dir = std::env::temp_dir().join(format!("ksm-run-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        server.write_kubeconfig(dir.join("kubeconfig"));
        Env {
            server,
            dir,
            adapter: None,
            last_log: None,
            delays: Delays::default(),
        }
    }

    /// Injects a fault into the server, counting what it may delay.
    pub fn inject(&mut self, fault: Fault) {
        // The writes of the seeded ServiceSet: its finalizer, five objects, its status.
        self.delays.add(&fault, 7);
        self.server.inject(fault);
    }

    /// SMP (ready), templates and the ServiceSet.
    pub fn seeded(name: &str) -> Env {
        let env = Env::new(name);
        let (set, templates) = fixture();
        env.server
            .create(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}}));
        env.server.create(smp(true, false));
        for t in templates {
            env.server.create(t);
        }
        env.server.create(set);
        env
    }

    pub fn start(&mut self, extra: &[&str]) {
        let adapter = self.spawn(extra);
        self.last_log = Some(adapter.log.clone());
        self.adapter = Some(adapter);
    }

    /// Another adapter process against the same server, kept by the caller (several replicas
    /// or shards at once).
    pub fn spawn(&self, extra: &[&str]) -> Adapter {
        let port = free_port();
        let log = self.dir.join(format!("adapter-{port}.log"));
        let child = Command::new(env!("CARGO_BIN_EXE_kubectl-ksm"))
            .args(["run", "--provider", "ksm-flux", "--log-format", "text"])
            .arg("--max-retry-delay")
            .arg(format!("{}ms", RETRY_CAP.as_millis()))
            .arg("--bind-address")
            .arg(format!("127.0.0.1:{port}"))
            .arg("--kubeconfig")
            .arg(self.dir.join("kubeconfig"))
            .args(extra)
            .env_clear()
            .env(
                "KSM_LOG",
                "debug,kube_client=warn,kube_runtime=info,hyper=warn,tower=warn,hyper_util=warn",
            )
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap();
        Adapter { child, port, log }
    }

    pub fn log(&self) -> String {
        self.last_log
            .as_ref()
            .map(|l| std::fs::read_to_string(l).unwrap_or_default())
            .unwrap_or_default()
    }

    /// SIGTERM, and the exit code.
    pub fn stop(&mut self) -> Option<i32> {
        let mut a = self.adapter.take()?;
        unsafe {
            libc::kill(a.child.id() as i32, libc::SIGTERM);
        }
        let deadline = Instant::now() + SHUTDOWN_GRACE + WORK_ALLOWANCE;
        loop {
            if let Some(st) = a.child.try_wait().unwrap() {
                return st.code();
            }
            assert!(Instant::now() < deadline, "adapter did not stop on SIGTERM");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    pub fn kill(&mut self) {
        self.adapter.take();
    }

    pub fn set(&self) -> Option<Value> {
        self.server.get(SS, "ServiceSet", NS, SET)
    }

    pub fn flux(&self) -> Vec<Value> {
        let mut v = self.server.list(HR, "HelmRelease");
        v.extend(self.server.list(KS, "Kustomization"));
        v
    }

    /// Waits until `ok`, for at most what the test set up may take ([`Delays::patience`]).
    pub fn wait(&self, what: &str, mut ok: impl FnMut(&Env) -> bool) {
        let deadline = Instant::now() + self.delays.patience();
        while !ok(self) {
            if Instant::now() > deadline {
                let requests: Vec<String> = self
                    .server
                    .requests()
                    .iter()
                    .map(|r| format!("{} {}?{} {}", r.verb, r.path, r.query, r.status))
                    .collect();
                panic!(
                    "timed out waiting for {what}\nServiceSet: {:#}\nrequests:\n{}\nlog:\n{}",
                    self.set().unwrap_or(Value::Null),
                    requests.join("\n"),
                    self.log()
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The resourceVersions at which the adapter (the last one started) reconciled ServiceSet
    /// `name`, from its debug log's `reconciled` lines, in order.
    pub fn reconciled_versions(&self, name: &str) -> Vec<u64> {
        versions(&self.log(), " reconciled ", name)
    }

    /// Waits until the adapter has finished a reconcile of ServiceSet `name` that saw it at
    /// `resource_version` or later: whatever it does about a change written at that version is
    /// then done and its writes answered (the server records a request before answering it).
    pub fn wait_reconciled(&self, name: &str, resource_version: &str) {
        let rv: u64 = resource_version.parse().expect("a numeric resourceVersion");
        self.wait(
            &format!("a reconcile of {name} at version {rv} or later"),
            |e| e.reconciled_versions(name).iter().any(|v| *v >= rv),
        );
    }

    /// Writes `set` (an update of the ServiceSet) and waits until the adapter reconciled it.
    pub fn update_set_and_wait(&self, set: Value) -> Value {
        let name = s(&set, "/metadata/name").to_string();
        let written = self.server.update(set).unwrap();
        self.wait_reconciled(&name, s(&written, "/metadata/resourceVersion"));
        written
    }

    pub fn state(&self, service: &str) -> Option<Value> {
        self.set()?
            .pointer("/status/services")?
            .as_array()?
            .iter()
            .find(|x| s(x, "/name") == service)
            .cloned()
    }

    pub fn wait_state(&self, service: &str, state: &str) -> Value {
        self.wait(&format!("{service} {state}"), |e| {
            e.state(service).is_some_and(|x| s(&x, "/state") == state)
        });
        self.state(service).unwrap()
    }

    pub fn converged(&self) {
        self.wait("5 Flux objects and 5 service states", |e| {
            e.flux().len() == 5
                && e.set().is_some_and(|x| {
                    x.pointer("/status/services")
                        .and_then(Value::as_array)
                        .is_some_and(|a| a.len() == 5)
                })
        });
    }

    /// The adapter still follows changes: a HelmRelease turning ready shows in the status.
    pub fn still_serves(&self) {
        let ready = ("True", "InstallSucceeded", "ok");
        self.flux_status("HelmRelease", "dev-cluster-cert-manager", ready, false);
        self.wait_state("cert-manager", "Deployed");
    }

    /// Write requests the adapter sent (not the test's own, which do not go over HTTP).
    pub fn writes(&self) -> Vec<String> {
        self.server
            .requests()
            .iter()
            .filter(|r| ["create", "update", "patch", "delete"].contains(&r.verb.as_str()))
            .filter(|r| r.resource.as_deref() != Some("leases"))
            .map(|r| format!("{} {} {}", r.verb, r.path, r.status))
            .collect()
    }

    pub fn get(&self, path: &str) -> (u16, String) {
        let port = self.adapter.as_ref().unwrap().port;
        match ureq::get(&format!("http://127.0.0.1:{port}{path}")).call() {
            Ok(mut r) => (
                r.status().as_u16(),
                r.body_mut().read_to_string().unwrap_or_default(),
            ),
            Err(ureq::Error::StatusCode(c)) => (c, String::new()),
            Err(e) => panic!("GET {path}: {e}"),
        }
    }

    /// Sets a Flux object's Ready (and optionally Stalled) condition at its generation, as
    /// helm- or kustomize-controller would.
    pub fn flux_status(&self, kind: &str, name: &str, ready: (&str, &str, &str), stalled: bool) {
        let av = if kind == "HelmRelease" { HR } else { KS };
        let mut o = self.server.get(av, kind, NS, name).unwrap();
        let generation = o["metadata"]["generation"].clone();
        let mut conditions = vec![
            json!({"type": "Ready", "status": ready.0, "reason": ready.1,
            "message": ready.2, "observedGeneration": generation,
            "lastTransitionTime": chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true)}),
        ];
        if stalled {
            conditions.push(
                json!({"type": "Stalled", "status": "True", "reason": "RetriesExceeded",
                "message": ready.2, "observedGeneration": generation,
                "lastTransitionTime": "2026-11-21T12:00:00Z"}),
            );
        }
        o["status"] = json!({"observedGeneration": generation, "conditions": conditions,
            "lastAttemptedRevision": "1.0.0"});
        self.server.update_status(o);
    }
}

impl Drop for Env {
    fn drop(&mut self) {
        self.adapter.take();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

pub fn name_of(v: &Value) -> String {
    format!("{}/{}", s(v, "/kind"), s(v, "/metadata/name"))
}

pub fn canonical(v: &Value) -> String {
    fn sort(v: &Value) -> Value {
        match v {
            Value::Object(m) => {
                let mut keys: Vec<&String> = m.keys().collect();
                keys.sort();
                Value::Object(keys.into_iter().map(|k| (k.clone(), sort(&m[k]))).collect())
            }
            Value::Array(a) => Value::Array(a.iter().map(sort).collect()),
            other => other.clone(),
        }
    }
    serde_json::to_string(&sort(v)).unwrap()
}

/// The live objects are what `render` gives for the live ServiceSet, as the API server stores
/// it (with the CRD's defaults): specs byte for byte, labels and the controller reference.
pub fn assert_matches_render(env: &Env) {
    let set = env.set().unwrap();
    let templates = env.server.list(SS, "ServiceTemplate");
    let rendered = render::render(&render::Inputs {
        service_set: &set,
        templates: &templates,
    });
    let mut live = env.flux();
    live.retain(|o| o.pointer("/metadata/deletionTimestamp").is_none());
    // Objects nobody controls (a test's stranger) are not the adapter's.
    live.retain(|o| o.pointer("/metadata/ownerReferences/0").is_some());
    assert_eq!(live.len(), rendered.objects.len());
    for want in &rendered.objects {
        // As the API server stores it: with its CRD's defaults.
        let mut want = want.clone();
        kubectl_ksm::core::crds::default_and_prune(&mut want);
        let want = &want;
        let got = live
            .iter()
            .find(|o| name_of(o) == name_of(want))
            .unwrap_or_else(|| panic!("{} not applied", name_of(want)));
        // Byte for byte in the API server's canonical form (keys sorted, as the API
        // server serializes unstructured objects).
        assert_eq!(
            canonical(&got["spec"]),
            canonical(&want["spec"]),
            "{}",
            name_of(want)
        );
        assert_eq!(got["metadata"]["labels"], want["metadata"]["labels"]);
        assert_eq!(
            got["metadata"]["ownerReferences"],
            want["metadata"]["ownerReferences"]
        );
    }
}

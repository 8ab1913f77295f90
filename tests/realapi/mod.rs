//! A real Kubernetes API server for the tests: kube-apiserver and etcd, built from their Go
//! modules and started by `scripts/kube-test-server`, with the real kcm, Flux and Sveltos CRDs
//! installed (the server evaluates their schemas and CEL rules).
//!
//! A test binary says `mod realapi;` (that line is how `scripts/kube-test-server test` finds
//! the real-server tests) and each test starts with
//!
//! ```ignore
//! let Some(api) = realapi::shared() else { return };  // or realapi::dedicated()
//! ```
//!
//! `shared()` is one server per test binary, started on first use and stopped when the binary
//! exits; `dedicated()` is a server of the test's own, stopped when it is dropped (at the end
//! of the test, or while a failed test unwinds), for tests whose cluster-scoped objects must
//! not meet another test's. A server that is not there is no pass: the test says loudly on
//! stderr that it was SKIPPED and why, and with CI=true (or KSM_REAL_API=require, which
//! `scripts/kube-test-server test` sets) it fails instead.
//!
//! The binaries are the script's: cached under target/kube-test-server/ by `scripts/
//! kube-test-server build` (or found in KSM_KUBE_BIN_DIR). The tests never build them.
//! KSM_REAL_API_KEEP=1 keeps each server's directory (kubeconfig, logs) after the run.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

use serde_json::{Value, json};

pub mod dump;
pub mod gomod;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// The CRDs every server gets: the ones the binary embeds.
pub const CRD_DIRS: [&str; 3] = ["crds/kcm", "crds/flux", "crds/sveltos"];

/// The field manager of the harness's own writes.
pub const FIELD_MANAGER: &str = "ksm-test";

/// kubectl's arguments for a server-side apply by the harness. Only the server validates
/// (`--validate=false`: kubectl's own client-side check, which it falls back to while a new
/// CRD's OpenAPI is not yet published, says nothing; a server-side apply refuses unknown
/// fields whatever the setting).
const SERVER_SIDE_APPLY: [&str; 5] = [
    "apply",
    "--server-side",
    "--field-manager",
    FIELD_MANAGER,
    "--validate=false",
];

/// Users of the static token file with no group but system:authenticated, handed out one per
/// `fresh_user()` call: nothing is bound to them until a test grants it.
const POOL: usize = 32;

pub fn root() -> &'static Path {
    Path::new(ROOT)
}

/// Whether a missing server fails the test instead of skipping it.
pub fn required() -> bool {
    let ci = std::env::var("CI").is_ok_and(|v| v.eq_ignore_ascii_case("true") || v == "1");
    ci || std::env::var("KSM_REAL_API").is_ok_and(|v| v == "require")
}

/// The one server of this test binary, started on first use; None (after saying so on
/// stderr) when it cannot be had here and the run does not require it.
pub fn shared() -> Option<&'static RealApi> {
    static SHARED: OnceLock<Result<RealApi, String>> = OnceLock::new();
    let server = SHARED.get_or_init(|| {
        let started = RealApi::start("shared");
        if started.is_ok() {
            extern "C" fn stop_shared() {
                if let Some(Ok(server)) = SHARED.get() {
                    server.stop();
                }
            }
            // Statics are never dropped: the server stops when the test binary exits. Were
            // the binary killed instead, the script sees its standard input close and stops.
            // SAFETY: registering a plain function with no captured state.
            unsafe { libc::atexit(stop_shared) };
        }
        started
    });
    match server {
        Ok(server) => Some(server),
        Err(reason) => skip(reason),
    }
}

/// A server of the caller's own, stopped when dropped; None as for `shared()`.
pub fn dedicated() -> Option<RealApi> {
    dedicated_with(&Options::default())
}

/// What a dedicated server is started with beyond the defaults.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// kube-apiserver writes an audit log of every request (`RealApi::audit`).
    pub audit: bool,
    /// More kube-apiserver flags (`--name=value`), kept across `restart_apiserver()`.
    pub apiserver_args: Vec<String>,
}

/// A server of the caller's own with these options, stopped when dropped; None as for
/// `shared()`.
pub fn dedicated_with(options: &Options) -> Option<RealApi> {
    match RealApi::start_with("dedicated", options) {
        Ok(server) => Some(server),
        Err(reason) => skip(&reason),
    }
}

/// Whether kubectl runs here; where it does not, the calling test says it is SKIPPED (and
/// fails with CI=true) and the caller returns.
pub fn have_kubectl() -> bool {
    match kubectl_missing() {
        None => true,
        Some(reason) => skip::<()>(&reason).is_some(),
    }
}

fn kubectl_missing() -> Option<String> {
    static MISSING: OnceLock<Option<String>> = OnceLock::new();
    MISSING
        .get_or_init(|| {
            match Command::new("kubectl")
                .args(["version", "--client"])
                .output()
            {
                Ok(out) if out.status.success() => None,
                Ok(out) => Some(format!(
                    "`kubectl version --client` failed: {}",
                    String::from_utf8_lossy(&out.stderr)
                )),
                Err(e) => Some(format!("kubectl cannot be run: {e}")),
            }
        })
        .clone()
}

/// The helm binary `scripts/kube-test-server build` cached (or KSM_KUBE_BIN_DIR's); where it
/// is missing, the calling test says it is SKIPPED (and fails with CI=true) and gets None.
pub fn helm() -> Option<Helm> {
    static FOUND: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    let found = FOUND.get_or_init(|| {
        let out = Command::new("python3")
            .arg(root().join("scripts/kube-test-server"))
            .args(["paths", "--json"])
            .output()
            .map_err(|e| format!("python3 cannot be run: {e}"))?;
        if !out.status.success() {
            let stderr = String::from_utf8_lossy(&out.stderr);
            let why = stderr.lines().last().unwrap_or("binaries missing");
            return Err(why.trim_start_matches("kube-test-server: ").to_string());
        }
        let paths: Value = serde_json::from_slice(&out.stdout).map_err(|e| e.to_string())?;
        Ok(PathBuf::from(paths["paths"]["helm"].as_str().unwrap()))
    });
    match found {
        Ok(bin) => Some(Helm {
            bin: bin.clone(),
            home: Path::new(env!("CARGO_TARGET_TMPDIR")).join("helm-home"),
        }),
        Err(reason) => skip(reason),
    }
}

/// The real helm, with its cache, config and data under the build directory (never the
/// user's).
pub struct Helm {
    pub bin: PathBuf,
    home: PathBuf,
}

impl Helm {
    /// `helm` in the repository; as `user` on a server when given.
    pub fn command(&self, user: Option<&User>) -> Command {
        let mut cmd = Command::new(&self.bin);
        for (var, dir) in [
            ("HELM_CACHE_HOME", "cache"),
            ("HELM_CONFIG_HOME", "config"),
            ("HELM_DATA_HOME", "data"),
        ] {
            cmd.env(var, self.home.join(dir));
        }
        if let Some(user) = user {
            cmd.arg("--kubeconfig")
                .arg(&user.kubeconfig)
                .arg("--kube-context")
                .arg(&user.context);
        }
        cmd.current_dir(ROOT);
        cmd
    }

    /// Runs `helm ARGS` (as `user` when given) and returns its stdout; panics with helm's
    /// stderr when it fails.
    pub fn run(&self, user: Option<&User>, args: &[&str]) -> String {
        checked(
            self.command(user).args(args),
            &format!("helm {}", args.join(" ")),
        )
    }
}

static SKIPPED: AtomicUsize = AtomicUsize::new(0);

fn skip<T>(reason: &str) -> Option<T> {
    let test = std::thread::current()
        .name()
        .unwrap_or("a real-server test")
        .to_string();
    if required() {
        panic!(
            "{test}: the real API server is required here (CI=true or KSM_REAL_API=require) \
             and is not available: {reason}"
        );
    }
    // Straight to the process's stderr: the test harness captures eprintln! of a test that
    // passes, and a skip must never look like a pass.
    let _ = writeln!(
        std::io::stderr(),
        "\n*** SKIPPED {test}: no real API server: {reason}\n\
         *** (run the real-server tests with `scripts/kube-test-server test`; CI=true fails instead)"
    );
    if SKIPPED.fetch_add(1, Ordering::SeqCst) == 0 {
        extern "C" fn summary() {
            let n = SKIPPED.load(Ordering::SeqCst);
            let _ = writeln!(
                std::io::stderr(),
                "*** {n} real-server test(s) SKIPPED: no real API server (see above)"
            );
        }
        // SAFETY: registering a plain function with no captured state.
        unsafe { libc::atexit(summary) };
    }
    None
}

/// One running server: kube-apiserver and etcd under the script, with the CRDs installed.
pub struct RealApi {
    env: Value,
    dir: PathBuf,
    kubeconfig: PathBuf,
    admin: User,
    process: Mutex<Process>,
    script_log: Arc<Mutex<String>>,
    names: AtomicUsize,
    fresh_users: AtomicUsize,
    /// Seconds from spawning the script to kube-apiserver's /readyz, then to the CRDs being
    /// Established.
    pub ready_seconds: f64,
    pub crds_seconds: f64,
}

struct Process {
    child: Child,
    /// The lifeline: the script stops when this closes (dropped here, or the process dies).
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
}

/// An identity on the server: a kubeconfig and context to act as it.
#[derive(Clone, Debug)]
pub struct User {
    /// The user name the server authenticates (`system:serviceaccount:NS:NAME` for a
    /// service account).
    pub name: String,
    /// The RBAC subject that grants it permissions.
    pub subject: Value,
    pub kubeconfig: PathBuf,
    pub context: String,
}

impl User {
    /// `kubectl` as this user.
    pub fn kubectl(&self) -> Command {
        let mut cmd = Command::new("kubectl");
        cmd.arg("--kubeconfig")
            .arg(&self.kubeconfig)
            .arg("--context")
            .arg(&self.context);
        cmd
    }

    /// `kubectl-ksm` (this build's) as this user; KUBECONFIG is the user's kubeconfig too.
    pub fn ksm(&self) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_kubectl-ksm"));
        cmd.env("KUBECONFIG", &self.kubeconfig)
            .arg("--kubeconfig")
            .arg(&self.kubeconfig)
            .arg("--context")
            .arg(&self.context)
            .current_dir(ROOT);
        cmd
    }

    /// Runs `kubectl ARGS` as this user and returns its stdout; panics with kubectl's stderr
    /// when it fails.
    pub fn run_kubectl(&self, args: &[&str]) -> String {
        checked(
            self.kubectl().args(args),
            &format!("kubectl {}", args.join(" ")),
        )
    }
}

impl RealApi {
    fn start(kind: &str) -> Result<RealApi, String> {
        Self::start_with(kind, &Options::default())
    }

    fn start_with(kind: &str, options: &Options) -> Result<RealApi, String> {
        if let Some(reason) = kubectl_missing() {
            return Err(reason);
        }
        let started = Instant::now();
        let mut cmd = Command::new("python3");
        cmd.arg(root().join("scripts/kube-test-server"))
            .args(["start", "--no-build", "--stop-on-stdin-eof"])
            .arg(format!(
                "--users=alice,bob,carol,{}",
                (1..=POOL)
                    .map(|i| format!("user-{i}"))
                    .collect::<Vec<_>>()
                    .join(",")
            ))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if std::env::var_os("KSM_REAL_API_KEEP").is_some() {
            cmd.arg("--keep");
        }
        if options.audit {
            cmd.arg("--audit");
        }
        for flag in &options.apiserver_args {
            cmd.arg(format!("--apiserver-arg={flag}"));
        }
        let mut child = match cmd.spawn() {
            Ok(child) => child,
            Err(e) => return Err(format!("python3 cannot be run: {e}")),
        };
        // The script's log, kept for a failure's message; the pipe is drained to the end so
        // that the script never blocks on it.
        let script_log = Arc::new(Mutex::new(String::new()));
        let stderr = child.stderr.take().unwrap();
        let sink = Arc::clone(&script_log);
        let drain = std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                let mut log = sink.lock().unwrap();
                log.push_str(&line);
                log.push('\n');
            }
        });
        let stdin = child.stdin.take();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        let env_path = loop {
            line.clear();
            if stdout.read_line(&mut line).unwrap_or(0) == 0 {
                drop(stdin);
                let status = child.wait().expect("wait for the script");
                let _ = drain.join(); // the whole log: the pipe closed with the script
                let log = script_log.lock().unwrap().clone();
                if status.code() == Some(3) {
                    let why = log.lines().last().unwrap_or("binaries missing");
                    return Err(why.trim_start_matches("kube-test-server: ").to_string());
                }
                panic!("scripts/kube-test-server start failed ({status}):\n{log}");
            }
            if let Some(path) = line.trim().strip_prefix("ready ") {
                break PathBuf::from(path);
            }
        };
        let ready_seconds = started.elapsed().as_secs_f64();
        let env: Value = serde_json::from_str(&std::fs::read_to_string(&env_path).unwrap())
            .unwrap_or_else(|e| panic!("{}: {e}", env_path.display()));
        let kubeconfig = PathBuf::from(env["kubeconfig"].as_str().unwrap());
        let dir = PathBuf::from(env["dir"].as_str().unwrap());
        let admin = User {
            name: "admin".into(),
            subject: json!({"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": "admin"}),
            kubeconfig: kubeconfig.clone(),
            context: "admin".into(),
        };
        let mut server = RealApi {
            env,
            dir,
            kubeconfig,
            admin,
            process: Mutex::new(Process {
                child,
                stdin,
                stdout,
            }),
            script_log,
            names: AtomicUsize::new(0),
            fresh_users: AtomicUsize::new(0),
            ready_seconds,
            crds_seconds: 0.0,
        };
        let crds = Instant::now();
        let dirs: Vec<PathBuf> = CRD_DIRS.iter().map(|d| root().join(d)).collect();
        server.install_crds(&dirs);
        server.crds_seconds = crds.elapsed().as_secs_f64();
        eprintln!(
            "real API server ({kind}) at {}: ready in {:.1}s, CRDs established in {:.1}s",
            server.url(),
            server.ready_seconds,
            server.crds_seconds
        );
        Ok(server)
    }

    /// Stops the server and waits for the script, which stops kube-apiserver and etcd and
    /// removes their data. Idempotent.
    fn stop(&self) {
        let mut p = self.process.lock().unwrap_or_else(|e| e.into_inner());
        if p.stdin.take().is_some() {
            let _ = p.child.wait();
        }
    }

    /// The server's URL (https://127.0.0.1:PORT).
    pub fn url(&self) -> &str {
        self.env["server"].as_str().unwrap()
    }

    /// The kubeconfig: a context per user, `admin` current.
    pub fn kubeconfig(&self) -> &Path {
        &self.kubeconfig
    }

    /// The server's directory: kubeconfig, env.json, pki/, the logs.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The CA certificate that signed the server's certificate.
    pub fn ca(&self) -> &Path {
        Path::new(self.env["ca"].as_str().unwrap())
    }

    /// The admin's bearer token.
    pub fn admin_token(&self) -> &str {
        self.env["users"]["admin"]["token"].as_str().unwrap()
    }

    /// A plain HTTP client that trusts the server's CA and leaves status codes to the caller;
    /// `timeout` bounds each request (None: unbounded, for watches).
    pub fn http_agent(&self, timeout: Option<std::time::Duration>) -> ureq::Agent {
        let pem = std::fs::read(self.ca()).unwrap();
        let ca = ureq::tls::Certificate::from_pem(&pem).unwrap().to_owned();
        let roots = ureq::tls::RootCerts::new_with_certs(&[ca]);
        ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(timeout)
            .tls_config(ureq::tls::TlsConfig::builder().root_certs(roots).build())
            .build()
            .into()
    }

    /// etcd's client URL (plain HTTP on loopback), for tests that act on the store itself.
    pub fn etcd_url(&self) -> &str {
        self.env["etcd"].as_str().unwrap()
    }

    /// What the script wrote: versions, pids, log paths (scripts/kube-test-server).
    pub fn env(&self) -> &Value {
        &self.env
    }

    /// The audit log so far (`Options::audit`): one JSON event per request and stage
    /// (RequestReceived, then ResponseComplete with `responseStatus.code`), in the order
    /// kube-apiserver wrote them. Panics when the server was started without `audit`.
    pub fn audit(&self) -> Vec<Value> {
        let path = self.env["logs"]["audit"]
            .as_str()
            .expect("a server started with Options { audit: true, .. }");
        let text = std::fs::read_to_string(path).unwrap_or_default();
        // The last line may be in the middle of being written.
        text.lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }

    /// The last lines of kube-apiserver's log.
    pub fn apiserver_log_tail(&self, lines: usize) -> String {
        let path = self.env["logs"]["kube-apiserver"].as_str().unwrap();
        let text = std::fs::read_to_string(path).unwrap_or_default();
        let all: Vec<&str> = text.lines().collect();
        all[all.len().saturating_sub(lines)..].join("\n")
    }

    /// The admin (system:masters).
    pub fn admin(&self) -> &User {
        &self.admin
    }

    /// A user of the token file by name (alice, bob, carol): no group but
    /// system:authenticated. On a shared server, other tests see the same user: prefer
    /// `fresh_user()` there.
    pub fn user(&self, name: &str) -> User {
        assert!(
            self.env["users"][name].is_object() && name != "admin",
            "no restricted user {name} in the token file"
        );
        User {
            name: name.into(),
            subject: json!({"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": name}),
            kubeconfig: self.kubeconfig.clone(),
            context: name.into(),
        }
    }

    /// A user no other test of this server gets: no group but system:authenticated, no
    /// permission until granted.
    pub fn fresh_user(&self) -> User {
        let n = self.fresh_users.fetch_add(1, Ordering::SeqCst) + 1;
        assert!(
            n <= POOL,
            "more than {POOL} fresh users: raise POOL in tests/realapi"
        );
        self.user(&format!("user-{n}"))
    }

    /// A ServiceAccount (created if missing) and a kubeconfig with a token the server issued
    /// for it (TokenRequest). Its groups are the service accounts' ones.
    pub fn service_account(&self, namespace: &str, name: &str) -> User {
        self.apply(&json!({
            "apiVersion": "v1", "kind": "ServiceAccount",
            "metadata": {"name": name, "namespace": namespace}
        }));
        let token = self
            .admin
            .run_kubectl(&["create", "token", "-n", namespace, name, "--duration=24h"])
            .trim()
            .to_string();
        let ca = std::fs::read(self.ca()).unwrap();
        // A kubeconfig per call: each holds a token of its own (two replicas of one service
        // account are told apart by their tokens' credential ids).
        let path = self.dir.join(format!(
            "{}.kubeconfig",
            self.unique(&format!("sa-{namespace}-{name}"))
        ));
        let config = json!({
            "apiVersion": "v1", "kind": "Config",
            "clusters": [{"name": "real", "cluster": {
                "server": self.url(),
                "certificate-authority-data": base64_encode(&ca),
            }}],
            "users": [{"name": name, "user": {"token": token}}],
            "contexts": [{"name": name, "context": {"cluster": "real", "user": name, "namespace": namespace}}],
            "current-context": name,
        });
        std::fs::write(&path, serde_json::to_vec_pretty(&config).unwrap()).unwrap();
        User {
            name: format!("system:serviceaccount:{namespace}:{name}"),
            subject: json!({"kind": "ServiceAccount", "name": name, "namespace": namespace}),
            kubeconfig: path,
            context: name.into(),
        }
    }

    /// `kubectl ARGS` as the admin: its stdout; panics with kubectl's stderr on failure.
    pub fn kubectl(&self, args: &[&str]) -> String {
        self.admin.run_kubectl(args)
    }

    /// A name no other call on this server returns: `PREFIX-N`.
    pub fn unique(&self, prefix: &str) -> String {
        format!("{prefix}-{}", self.names.fetch_add(1, Ordering::SeqCst) + 1)
    }

    /// A new namespace, `PREFIX-N`. (Namespaces are never deleted: no namespace controller.)
    pub fn namespace(&self, prefix: &str) -> String {
        let name = self.unique(prefix);
        self.kubectl(&["create", "namespace", &name]);
        name
    }

    /// Creates the namespace if it does not exist.
    pub fn ensure_namespace(&self, name: &str) {
        self.apply(&json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}));
    }

    /// Server-side applies objects (a JSON object, or an array of them) as the admin, as
    /// field manager `ksm-test`; returns the objects the server stored, in order.
    pub fn apply(&self, objects: &Value) -> Vec<Value> {
        self.apply_as(&self.admin, objects)
    }

    /// `apply` as another user; panics with the server's message when it refuses.
    pub fn apply_as(&self, user: &User, objects: &Value) -> Vec<Value> {
        let out = self.try_apply_as(user, objects);
        assert!(
            out.status.success(),
            "server-side apply as {} refused: {}",
            user.name,
            String::from_utf8_lossy(&out.stderr)
        );
        let stored: Value = serde_json::from_slice(&out.stdout).unwrap();
        match stored["kind"].as_str() {
            Some("List") => stored["items"].as_array().cloned().unwrap_or_default(),
            _ => vec![stored],
        }
    }

    /// Server-side apply as a user, the outcome as kubectl gives it (for tests of refusals).
    pub fn try_apply_as(&self, user: &User, objects: &Value) -> Output {
        let items = match objects {
            Value::Array(items) => items.clone(),
            one => vec![one.clone()],
        };
        let list = json!({"apiVersion": "v1", "kind": "List", "items": items});
        let mut cmd = user.kubectl();
        cmd.args(SERVER_SIDE_APPLY).args(["-o", "json", "-f", "-"]);
        run_with_stdin(&mut cmd, &serde_json::to_vec(&list).unwrap())
    }

    /// Applies YAML (one or more documents) as the admin, server-side.
    pub fn apply_yaml(&self, yaml: &str) -> Output {
        let mut cmd = self.admin.kubectl();
        cmd.args(SERVER_SIDE_APPLY).args(["-f", "-"]);
        run_with_stdin(&mut cmd, yaml.as_bytes())
    }

    /// An object as the server has it (`kubectl get RESOURCE NAME -o json`, managedFields
    /// included), None if absent.
    /// RESOURCE as kubectl takes it: `servicesets.k0rdent.mirantis.com`, `configmap`, ...
    pub fn get(&self, resource: &str, namespace: Option<&str>, name: &str) -> Option<Value> {
        let mut args = vec![
            "get",
            resource,
            name,
            "-o",
            "json",
            "--ignore-not-found",
            "--show-managed-fields",
        ];
        if let Some(ns) = namespace {
            args.extend(["-n", ns]);
        }
        let out = self.kubectl(&args);
        (!out.trim().is_empty()).then(|| serde_json::from_str(&out).unwrap())
    }

    /// Gives a user the rules (a JSON array of RBAC PolicyRules) across the cluster: a
    /// ClusterRole and a ClusterRoleBinding of their own. Returns the ClusterRole's name.
    pub fn grant_cluster(&self, user: &User, rules: Value) -> String {
        let name = self.unique("ksm-test-grant");
        self.apply(&json!([
            {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
             "metadata": {"name": name}, "rules": rules},
            {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
             "metadata": {"name": name},
             "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
             "subjects": [user.subject]},
        ]));
        name
    }

    /// Gives a user the rules in one namespace: a Role and a RoleBinding there.
    pub fn grant(&self, namespace: &str, user: &User, rules: Value) -> String {
        let name = self.unique("ksm-test-grant");
        self.apply(&json!([
            {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
             "metadata": {"name": name, "namespace": namespace}, "rules": rules},
            {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
             "metadata": {"name": name, "namespace": namespace},
             "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name},
             "subjects": [user.subject]},
        ]));
        name
    }

    /// Installs every CRD of the directories (server-side apply) and waits until each is
    /// Established, so that its kinds are served.
    pub fn install_crds(&self, dirs: &[PathBuf]) {
        let mut args: Vec<String> = [
            "apply",
            "--server-side",
            "--force-conflicts",
            "--field-manager",
            FIELD_MANAGER,
            "-o",
            "name",
        ]
        .map(String::from)
        .to_vec();
        for d in dirs {
            args.push("-f".into());
            args.push(d.display().to_string());
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let names = self.kubectl(&args);
        // Polled rather than `kubectl wait --for=condition=Established`, which fails outright
        // ("accessor error") on a CRD the server has not yet given any condition.
        let mut get = vec!["get", "-o", "json"];
        get.extend(names.lines().filter(|l| !l.is_empty()));
        let deadline = Instant::now() + std::time::Duration::from_secs(120);
        loop {
            let got: Value = serde_json::from_str(&self.kubectl(&get)).unwrap();
            let crds = match got["kind"].as_str() {
                Some("List") => got["items"].as_array().cloned().unwrap_or_default(),
                _ => vec![got],
            };
            let pending: Vec<&str> = crds
                .iter()
                .filter(|crd| {
                    !crd["status"]["conditions"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .any(|c| c["type"] == "Established" && c["status"] == "True")
                })
                .map(|crd| crd["metadata"]["name"].as_str().unwrap_or("?"))
                .collect();
            if pending.is_empty() {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "CRDs not Established within two minutes: {pending:?}"
            );
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    }

    /// Restarts kube-apiserver on the same port (etcd keeps the data), or starts it again after
    /// `stop_apiserver()`, and waits until it is ready.
    pub fn restart_apiserver(&self) {
        self.signal_script(libc::SIGUSR1, "restarted");
    }

    /// Stops kube-apiserver (etcd keeps running) and waits until it has exited: the server is
    /// down until `restart_apiserver()`.
    pub fn stop_apiserver(&self) {
        self.signal_script(libc::SIGUSR2, "stopped");
    }

    /// Sends the script a signal and waits for the line it prints when it has acted on it.
    fn signal_script(&self, signal: libc::c_int, done: &str) {
        let mut p = self.process.lock().unwrap();
        // SAFETY: kill(2) on the script's pid, which is alive while we hold its stdin.
        let pid = p.child.id() as libc::pid_t;
        assert_eq!(unsafe { libc::kill(pid, signal) }, 0);
        let mut line = String::new();
        loop {
            line.clear();
            let n = p.stdout.read_line(&mut line).unwrap_or(0);
            assert!(
                n > 0,
                "the script exited before it printed `{done}`:\n{}",
                self.script_log.lock().unwrap()
            );
            if line.trim() == done {
                break;
            }
        }
    }
}

impl Drop for RealApi {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Runs a command with bytes on its stdin, collecting its output.
pub fn run_with_stdin(cmd: &mut Command, input: &[u8]) -> Output {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_vec();
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    out
}

/// Runs a command and returns its stdout; panics with its stderr when it fails.
pub fn checked(cmd: &mut Command, what: &str) -> String {
    let out = cmd.output().unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(
        out.status.success(),
        "{what}: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn base64_encode(bytes: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

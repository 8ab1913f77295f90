//! `kubectl ksm run` against a real kube-apiserver (tests/realapi), deployed the way deploy/
//! says: `kubectl apply -k deploy/` (or `helm install` of charts/kubectl-ksm) as the admin,
//! then the adapter started as a local process (there is no kubelet) with the arguments and
//! environment of the Deployment the server stored, as the Deployment's ServiceAccount (a
//! kubeconfig holding a token the server issued for it), so that the server's RBAC decides
//! every request.
//!
//! The servers run with an audit log: every request the adapter sent, with its verb, its
//! answer and the token it came with (two replicas of one ServiceAccount are told apart by
//! their tokens' credential ids), is what the tests count writes and permissions from. And
//! with the OwnerReferencesPermissionEnforcement admission plugin, which many clusters turn on,
//! so that the ClusterRole's rule for it is put to the test.
//!
//! Waits are derived from what the test set up, as in tests/run_env: the adapter logs, at
//! debug level, `reconciled` with the ServiceSet and the resourceVersion it saw, so a test
//! waits for a reconcile at or after the version it wrote, never for a time.
#![allow(dead_code)]

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use kube::api::{Api, DeleteParams, DynamicObject, Patch, PatchParams};
use kubectl_ksm::api::Kind;
use kubectl_ksm::api::kinds;
use kubectl_ksm::cluster::{api_resource, with_type};
use kubectl_ksm::core::render;
use serde_json::{Value, json};

use super::realapi::{self, RealApi, User};

pub const NS: &str = "kcm-system";
/// The Deployment, its ServiceAccount and the ClusterRole of deploy/base.
pub const NAME: &str = "kubectl-ksm";
pub const PROVIDER: &str = "ksm-flux";
pub const SET: &str = "dev-cluster";
/// The label of deploy/'s StateManagementProvider selector.
pub const ADAPTER_LABEL: (&str, &str) = ("ksm.k0rdent.mirantis.com/adapter", "kubectl-ksm");

/// The longest wait between two retries of a failing reconcile: every adapter of these tests
/// runs with `--max-retry-delay` at this.
pub const RETRY_CAP: Duration = Duration::from_secs(1);
/// The adapter's reconcile debounce (`RECONCILE_DEBOUNCE` in src/controller/mod.rs).
pub const DEBOUNCE: Duration = Duration::from_secs(1);
/// The longest backoff of a failed watch (kube-runtime's default: 0.8 s doubling to 30 s).
pub const WATCH_BACKOFF_CAP: Duration = Duration::from_secs(30);
/// Leader election (src/controller/leader.rs): a Lease not renewed for this long is free.
pub const LEASE_DURATION: Duration = Duration::from_secs(15);
/// ... and a standby tries to take it this often.
pub const LEASE_RETRY: Duration = Duration::from_secs(2);
/// How long the adapter may take over its graceful stop.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(25);
/// What a wait allows for the work itself: a step takes well under a few seconds on an idle
/// machine, so this only tells a hang from a machine loaded many times over. A wait ends as
/// soon as what it waits for is true.
pub const WORK_ALLOWANCE: Duration = Duration::from_secs(120);

/// The kube-apiserver flags of every server of these tests.
pub fn server_options(more: &[&str]) -> realapi::Options {
    let mut apiserver_args = vec![
        // Setting blockOwnerDeletion (the rendered objects do) needs `update` on the owner's
        // finalizers subresource: the ClusterRole's rule for it is exercised.
        "--enable-admission-plugins=OwnerReferencesPermissionEnforcement".to_string(),
    ];
    apiserver_args.extend(more.iter().map(|s| s.to_string()));
    realapi::Options {
        audit: true,
        apiserver_args,
    }
}

pub fn root() -> &'static Path {
    realapi::root()
}

pub fn s<'a>(v: &'a Value, p: &str) -> &'a str {
    v.pointer(p).and_then(Value::as_str).unwrap_or("")
}

/// A resourceVersion as a number. Clients must not compare resourceVersions; the tests do,
/// knowing that this server's are etcd's revisions, which only grow.
pub fn rv_of(o: &Value) -> u64 {
    s(o, "/metadata/resourceVersion").parse().unwrap_or(0)
}

pub fn name_of(v: &Value) -> String {
    format!("{}/{}", s(v, "/kind"), s(v, "/metadata/name"))
}

/// Waits until `ok`, at most `patience`; panics with `what` and `context()` after.
pub fn wait_for(
    what: &str,
    patience: Duration,
    mut ok: impl FnMut() -> bool,
    context: impl Fn() -> String,
) {
    let deadline = Instant::now() + patience;
    while !ok() {
        if Instant::now() > deadline {
            panic!(
                "timed out after {patience:?} waiting for {what}\n{}",
                context()
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

// ---------------------------------------------------------------------------------------------
// A blocking client for the tests' own reads and writes (kubectl would spawn a process per
// poll).

pub struct Kube {
    rt: tokio::runtime::Runtime,
    client: kube::Client,
}

impl Kube {
    pub fn new(user: &User) -> Kube {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let client = rt.block_on(async {
            let kc = kube::config::Kubeconfig::read_from(&user.kubeconfig).unwrap();
            let options = kube::config::KubeConfigOptions {
                context: Some(user.context.clone()),
                ..Default::default()
            };
            let config = kube::Config::from_custom_kubeconfig(kc, &options)
                .await
                .unwrap();
            kube::Client::try_from(config).unwrap()
        });
        Kube { rt, client }
    }

    fn api(&self, kind: &Kind, ns: &str) -> Api<DynamicObject> {
        let ar = api_resource(kind);
        if kind.namespaced {
            Api::namespaced_with(self.client.clone(), ns, &ar)
        } else {
            Api::all_with(self.client.clone(), &ar)
        }
    }

    /// The object as the server has it (managedFields included), None when absent.
    pub fn get(&self, kind: &Kind, ns: &str, name: &str) -> Option<Value> {
        let api = self.api(kind, ns);
        self.rt
            .block_on(api.get_opt(name))
            .unwrap_or_else(|e| panic!("get {} {ns}/{name}: {e}", kind.kind))
            .map(|o| with_type(&o, &api_resource(kind)))
    }

    pub fn list(&self, kind: &Kind, ns: &str) -> Vec<Value> {
        let api = self.api(kind, ns);
        let list = self
            .rt
            .block_on(api.list(&Default::default()))
            .unwrap_or_else(|e| panic!("list {}: {e}", kind.plural));
        let ar = api_resource(kind);
        list.items.iter().map(|o| with_type(o, &ar)).collect()
    }

    /// A server-side apply of `obj` as `manager`; the server's error as it is.
    pub fn try_apply(
        &self,
        kind: &Kind,
        obj: &Value,
        manager: &str,
        force: bool,
    ) -> Result<Value, kube::Error> {
        let api = self.api(kind, s(obj, "/metadata/namespace"));
        let mut params = PatchParams::apply(manager);
        params.force = force;
        self.rt
            .block_on(api.patch(s(obj, "/metadata/name"), &params, &Patch::Apply(obj)))
            .map(|o| with_type(&o, &api_resource(kind)))
    }

    pub fn apply(&self, kind: &Kind, obj: &Value, manager: &str) -> Value {
        self.try_apply(kind, obj, manager, false)
            .unwrap_or_else(|e| panic!("apply {}: {e}", name_of(obj)))
    }

    /// A JSON merge patch of the object as `manager` (an Update in managedFields).
    pub fn merge(&self, kind: &Kind, ns: &str, name: &str, patch: &Value, manager: &str) -> Value {
        let api = self.api(kind, ns);
        let params = PatchParams {
            field_manager: Some(manager.into()),
            ..Default::default()
        };
        self.rt
            .block_on(api.patch(name, &params, &Patch::Merge(patch)))
            .map(|o| with_type(&o, &api_resource(kind)))
            .unwrap_or_else(|e| panic!("patch {} {ns}/{name}: {e}", kind.kind))
    }

    /// A JSON merge patch of the status subresource as `manager`, as the controller that owns
    /// the status (kcm, helm-controller, kustomize-controller) would write it.
    pub fn merge_status(
        &self,
        kind: &Kind,
        ns: &str,
        name: &str,
        status: &Value,
        manager: &str,
    ) -> Value {
        let api = self.api(kind, ns);
        let params = PatchParams {
            field_manager: Some(manager.into()),
            ..Default::default()
        };
        let patch = json!({ "status": status });
        self.rt
            .block_on(api.patch_status(name, &params, &Patch::Merge(&patch)))
            .map(|o| with_type(&o, &api_resource(kind)))
            .unwrap_or_else(|e| panic!("patch {} {ns}/{name} status: {e}", kind.kind))
    }

    pub fn delete(&self, kind: &Kind, ns: &str, name: &str) {
        let api = self.api(kind, ns);
        self.rt
            .block_on(api.delete(name, &DeleteParams::default()))
            .unwrap_or_else(|e| panic!("delete {} {ns}/{name}: {e}", kind.kind));
    }
}

// ---------------------------------------------------------------------------------------------
// The audit log: what the adapter sent.

/// One request as the audit log tells it.
#[derive(Debug, Clone)]
pub struct Request {
    pub id: String,
    pub verb: String,
    pub group: String,
    pub resource: String,
    pub subresource: String,
    pub namespace: String,
    pub name: String,
    pub uri: String,
    pub user: String,
    /// The credential id of the token (`JTI=...`), which tells two tokens of one
    /// ServiceAccount apart.
    pub credential: String,
    /// The answer's code; None while the request has not been answered (or, for a watch,
    /// not yet ended).
    pub code: Option<u16>,
}

impl Request {
    /// `resource` or `resource/subresource`.
    pub fn resource_path(&self) -> String {
        if self.subresource.is_empty() {
            self.resource.clone()
        } else {
            format!("{}/{}", self.resource, self.subresource)
        }
    }

    pub fn is_write(&self) -> bool {
        matches!(
            self.verb.as_str(),
            "create" | "update" | "patch" | "delete" | "deletecollection"
        )
    }

    /// A write of the adapter's work: not its Lease, not an Event.
    pub fn is_work_write(&self) -> bool {
        self.is_write() && !matches!(self.resource.as_str(), "leases" | "events")
    }

    pub fn describe(&self) -> String {
        format!(
            "{} {} {}/{} {}",
            self.verb,
            self.resource_path(),
            self.namespace,
            self.name,
            self.code.map(|c| c.to_string()).unwrap_or("-".into())
        )
    }
}

/// Every request of the audit log, in the order they arrived, each with its answer's code
/// once answered.
pub fn requests(api: &RealApi) -> Vec<Request> {
    let mut out: Vec<Request> = Vec::new();
    let mut index = std::collections::HashMap::new();
    for e in api.audit() {
        let id = s(&e, "/auditID").to_string();
        let stage = s(&e, "/stage");
        if stage == "RequestReceived" || !index.contains_key(&id) {
            let o = &e["objectRef"];
            let credential = e["user"]["extra"]["authentication.kubernetes.io/credential-id"][0]
                .as_str()
                .unwrap_or("")
                .to_string();
            index.insert(id.clone(), out.len());
            out.push(Request {
                id: id.clone(),
                verb: s(&e, "/verb").to_string(),
                group: s(o, "/apiGroup").to_string(),
                resource: s(o, "/resource").to_string(),
                subresource: s(o, "/subresource").to_string(),
                namespace: s(o, "/namespace").to_string(),
                name: s(o, "/name").to_string(),
                uri: s(&e, "/requestURI").to_string(),
                user: s(&e, "/user/username").to_string(),
                credential,
                code: None,
            });
        }
        if stage == "ResponseComplete" || stage == "Panic" {
            let code = e["responseStatus"]["code"].as_u64().map(|c| c as u16);
            out[index[&id]].code = code;
        }
    }
    out
}

/// The credential id the server gives the token of `user`'s kubeconfig (its `jti` claim).
pub fn credential_id(user: &User) -> String {
    let kc: Value = serde_json::from_slice(&std::fs::read(&user.kubeconfig).unwrap()).unwrap();
    let token = kc["users"][0]["user"]["token"].as_str().unwrap();
    let payload = token.split('.').nth(1).unwrap();
    use base64::Engine;
    let claims = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(payload.trim_end_matches('='))
        .unwrap();
    let claims: Value = serde_json::from_slice(&claims).unwrap();
    format!("JTI={}", s(&claims, "/jti"))
}

// ---------------------------------------------------------------------------------------------
// The cluster: a dedicated server, the adapter deployed into it, the fixture.

pub struct Cluster {
    pub api: RealApi,
    pub kube: Kube,
    pub dir: PathBuf,
}

/// The multi-service render case: one ServiceSet (3 HelmReleases, 2 Kustomizations) and its
/// templates, the ServiceSet as kcm creates it (no status, no finalizer), labelled for
/// deploy/'s StateManagementProvider.
pub fn fixture() -> (Value, Vec<Value>) {
    let text =
        std::fs::read_to_string(root().join("testdata/render/multi-service/input.yaml")).unwrap();
    let docs: Vec<Value> = serde_saphyr::from_multiple(&text).unwrap();
    let mut set = None;
    let mut templates = Vec::new();
    for mut d in docs {
        let m = d["metadata"].as_object_mut().unwrap();
        for k in [
            "finalizers",
            "resourceVersion",
            "uid",
            "creationTimestamp",
            "ownerReferences",
            "generation",
        ] {
            m.remove(k);
        }
        if s(&d, "/kind") == "ServiceSet" {
            d.as_object_mut().unwrap().remove("status");
            d["metadata"]["labels"] = json!({ ADAPTER_LABEL.0: ADAPTER_LABEL.1 });
            set = Some(d);
        } else {
            templates.push(d);
        }
    }
    (set.unwrap(), templates)
}

/// A ServiceSet of the fixture under another name, for another cluster (so that its releases
/// are its own), with the services its caller keeps.
pub fn another_set(name: &str, cluster: &str) -> Value {
    let (mut set, _) = fixture();
    set["metadata"]["name"] = name.into();
    set["spec"]["cluster"] = cluster.into();
    // Its Resources service deploys to the management cluster: another namespace, or the two
    // would claim the same path.
    set["spec"]["services"][1]["namespace"] = format!("kyverno-{cluster}").into();
    set
}

impl Cluster {
    /// A dedicated server (audit log, owner-reference enforcement, `more` kube-apiserver
    /// flags), kcm-system created as kcm would; None when skipped.
    pub fn start(tag: &str, more: &[&str]) -> Option<Cluster> {
        let api = realapi::dedicated_with(&server_options(more))?;
        api.ensure_namespace(NS);
        let kube = Kube::new(api.admin());
        let dir = api.dir().join(format!("run-{tag}"));
        std::fs::create_dir_all(&dir).unwrap();
        Some(Cluster { api, kube, dir })
    }

    /// `kubectl apply -k DIR` (relative to the repository), as the README says; the
    /// Deployments as the server stored them, by name.
    pub fn apply_kustomization(&self, dir: &str) -> Vec<Value> {
        realapi::checked(
            self.api
                .admin()
                .kubectl()
                .args(["apply", "-k", dir])
                .current_dir(root()),
            &format!("kubectl apply -k {dir}"),
        );
        self.deployments()
    }

    /// `helm install kubectl-ksm charts/kubectl-ksm -n kcm-system` as the admin, with the
    /// chart's default values; the Deployment as the server stored it. (No `--wait`: with no
    /// kubelet, no pod ever becomes ready.)
    pub fn install_chart(&self, helm: &realapi::Helm) -> Value {
        helm.run(
            Some(self.api.admin()),
            &["install", NAME, "charts/kubectl-ksm", "--namespace", NS],
        );
        self.deployment(NAME)
    }

    /// The adapter's Deployments on the server, by name.
    pub fn deployments(&self) -> Vec<Value> {
        let mut d = self.kube.list(&kinds::DEPLOYMENT, NS);
        d.sort_by_key(|d| s(d, "/metadata/name").to_string());
        d
    }

    pub fn deployment(&self, name: &str) -> Value {
        self.kube
            .get(&kinds::DEPLOYMENT, NS, name)
            .unwrap_or_else(|| panic!("no Deployment {NS}/{name}"))
    }

    /// kcm's part: the SMP ready (its status, as kcm's StateManagementProvider controller
    /// writes it), the templates with their status, the ServiceSet.
    pub fn seed(&self) {
        self.provider_ready(true);
        let (set, templates) = fixture();
        for t in templates {
            let status = t["status"].clone();
            let mut spec = t.clone();
            spec.as_object_mut().unwrap().remove("status");
            self.kube.apply(&kinds::SERVICE_TEMPLATE, &spec, "manager");
            self.kube.merge_status(
                &kinds::SERVICE_TEMPLATE,
                NS,
                s(&t, "/metadata/name"),
                &status,
                "manager",
            );
        }
        self.kube.apply(&kinds::SERVICE_SET, &set, "manager");
    }

    /// Removes the last service (podinfo-oci, a HelmRelease) from ServiceSet `SET`, as another
    /// field manager; the ServiceSet as written.
    pub fn remove_last_service(&self) -> Value {
        let mut set = self.set(SET).unwrap();
        set["spec"]["services"].as_array_mut().unwrap().pop();
        self.kube.merge(
            &kinds::SERVICE_SET,
            NS,
            SET,
            &json!({"spec": {"services": set["spec"]["services"]}}),
            "manager",
        )
    }

    pub fn provider_ready(&self, ready: bool) -> Value {
        self.kube.merge_status(
            &kinds::STATE_MANAGEMENT_PROVIDER,
            "",
            PROVIDER,
            &json!({"ready": ready}),
            "manager",
        )
    }

    /// The adapter's ServiceAccount with a token of its own (a kubeconfig per replica).
    pub fn service_account(&self) -> User {
        self.api.service_account(NS, NAME)
    }

    /// The adapter, as the Deployment `deployment` (as stored on the server) runs it: its
    /// container's arguments and environment, as `user`, replica `replica` (the pod's name,
    /// `<deployment>-<replica>`). The tests change only what a local process needs: the
    /// metrics port (a free one on loopback), the kubeconfig (no in-cluster service account
    /// here), the debug log filter their waits read, and `extra` arguments.
    pub fn adapter(
        &self,
        deployment: &Value,
        replica: &str,
        user: &User,
        extra: &[&str],
    ) -> Adapter {
        let container = &deployment["spec"]["template"]["spec"]["containers"][0];
        let mut args: Vec<String> = container["args"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap().to_string())
            .collect();
        let port = free_port();
        let bind = args
            .iter()
            .position(|a| a == "--bind-address")
            .expect("the Deployment binds its metrics address");
        args[bind + 1] = format!("127.0.0.1:{port}");
        let pod = format!("{}-{replica}", s(deployment, "/metadata/name"));
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_kubectl-ksm"));
        cmd.args(&args)
            .arg("--max-retry-delay")
            .arg(format!("{}ms", RETRY_CAP.as_millis()))
            .args(extra)
            .arg("--kubeconfig")
            .arg(&user.kubeconfig)
            .env_clear()
            .env(
                "KSM_LOG",
                "debug,kube_client=warn,kube_runtime=info,hyper=warn,tower=warn,hyper_util=warn,rustls=warn",
            );
        // The environment as the kubelet resolves it for the pod.
        for e in container["env"].as_array().into_iter().flatten() {
            let value = match s(e, "/valueFrom/fieldRef/fieldPath") {
                "metadata.namespace" => s(deployment, "/metadata/namespace").to_string(),
                "metadata.name" => pod.clone(),
                "" => s(e, "/value").to_string(),
                other => panic!("a fieldRef the tests do not resolve: {other}"),
            };
            cmd.env(s(e, "/name"), value);
        }
        let log = self.dir.join(format!("{pod}-{port}.log"));
        let child = cmd
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap();
        Adapter {
            child: Some(child),
            port,
            log,
            pod,
            credential: credential_id(user),
        }
    }

    /// The requests `adapter` sent, in order.
    pub fn requests_of(&self, adapter: &Adapter) -> Vec<Request> {
        requests(&self.api)
            .into_iter()
            .filter(|r| r.credential == adapter.credential)
            .collect()
    }

    /// The writes of the adapter's work (not its Lease, not Events) it sent, as
    /// `verb resource ns/name code`.
    pub fn writes_of(&self, adapter: &Adapter) -> Vec<String> {
        self.requests_of(adapter)
            .iter()
            .filter(|r| r.is_work_write())
            .map(Request::describe)
            .collect()
    }

    /// Waits until every request `adapter` sent but its open watches is answered in the audit
    /// log (kube-apiserver writes a request's last stage right after its answer).
    pub fn wait_answered(&self, adapter: &Adapter) {
        wait_for(
            "every request of the adapter answered in the audit log",
            WORK_ALLOWANCE,
            || {
                self.requests_of(adapter)
                    .iter()
                    .all(|r| r.code.is_some() || r.verb == "watch")
            },
            || adapter.log_text(),
        );
    }

    pub fn set(&self, name: &str) -> Option<Value> {
        self.kube.get(&kinds::SERVICE_SET, NS, name)
    }

    /// The Flux objects of the namespace.
    pub fn flux(&self) -> Vec<Value> {
        let mut v = self.kube.list(&kinds::HELM_RELEASE, NS);
        v.extend(self.kube.list(&kinds::KUSTOMIZATION, NS));
        v
    }

    /// The Flux objects whose name starts with `<set>-`.
    pub fn flux_of(&self, set: &str) -> Vec<Value> {
        let prefix = format!("{set}-");
        let mut v: Vec<Value> = self
            .flux()
            .into_iter()
            .filter(|o| s(o, "/metadata/name").starts_with(&prefix))
            .collect();
        v.sort_by_key(name_of);
        v
    }

    pub fn states(&self, set: &str) -> Vec<Value> {
        self.set(set)
            .and_then(|x| x.pointer("/status/services").cloned())
            .and_then(|a| a.as_array().cloned())
            .unwrap_or_default()
    }

    pub fn state(&self, set: &str, service: &str) -> Option<Value> {
        self.states(set)
            .into_iter()
            .find(|x| s(x, "/name") == service)
    }

    /// Sets a Flux object's Ready (and optionally Stalled) condition at its generation,
    /// through the status subresource, as helm- or kustomize-controller would.
    pub fn flux_status(&self, kind: &Kind, name: &str, ready: (&str, &str, &str), stalled: bool) {
        let o = self.kube.get(kind, NS, name).unwrap();
        let generation = o["metadata"]["generation"].clone();
        let now = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
        let mut conditions = vec![
            json!({"type": "Ready", "status": ready.0, "reason": ready.1,
            "message": ready.2, "observedGeneration": generation, "lastTransitionTime": now}),
        ];
        if stalled {
            conditions.push(json!({"type": "Stalled", "status": "True",
                "reason": "RetriesExceeded", "message": ready.2,
                "observedGeneration": generation, "lastTransitionTime": now}));
        }
        let manager = if kind.kind == "HelmRelease" {
            "helm-controller"
        } else {
            "kustomize-controller"
        };
        self.kube.merge_status(
            kind,
            NS,
            name,
            &json!({"observedGeneration": generation, "conditions": conditions,
                "lastAttemptedRevision": "1.0.0"}),
            manager,
        );
    }

    /// Waits until `ok`, for at most what `delays` allow, saying what the adapter logged.
    pub fn wait(&self, what: &str, adapter: &Adapter, delays: Delays, ok: impl FnMut() -> bool) {
        wait_for(what, delays.patience(), ok, || {
            format!(
                "ServiceSets: {:#}\nadapter {} log:\n{}",
                Value::Array(self.kube.list(&kinds::SERVICE_SET, NS)),
                adapter.pod,
                adapter.log_text()
            )
        });
    }

    /// Waits until ServiceSet `set` has `n` Flux objects and `n` service states.
    pub fn converged(&self, set: &str, n: usize, adapter: &Adapter) {
        self.wait(
            &format!("{set}: {n} Flux objects and {n} service states"),
            adapter,
            Delays::default(),
            || self.flux_of(set).len() == n && self.states(set).len() == n,
        );
    }

    /// Waits until `adapter` finished a reconcile of `set` that saw it at `rv` or later: what
    /// it does about a change written at that version is then done.
    pub fn wait_reconciled(&self, adapter: &Adapter, set: &str, rv: u64) {
        self.wait(
            &format!("a reconcile of {set} at version {rv} or later"),
            adapter,
            Delays::default(),
            || adapter.reconciled_versions(set).iter().any(|v| *v >= rv),
        );
    }

    /// The live Flux objects of `set` are what `render` gives for the live ServiceSet and
    /// templates: specs, labels and the controller reference.
    pub fn assert_matches_render(&self, set: &str) {
        let live_set = self.set(set).unwrap();
        let templates = self.kube.list(&kinds::SERVICE_TEMPLATE, NS);
        let rendered = render::render(&render::Inputs {
            service_set: &live_set,
            templates: &templates,
        });
        let live: Vec<Value> = self
            .flux_of(set)
            .into_iter()
            .filter(|o| o.pointer("/metadata/deletionTimestamp").is_none())
            .collect();
        assert_eq!(live.len(), rendered.objects.len(), "{set}");
        for want in &rendered.objects {
            let got = live
                .iter()
                .find(|o| name_of(o) == name_of(want))
                .unwrap_or_else(|| panic!("{} not applied", name_of(want)));
            // The server may add defaults; every rendered field is there with its value.
            assert!(
                kubectl_ksm::core::adapter::sync::subset(&want["spec"], &got["spec"]),
                "{}: rendered {:#}\nlive {:#}",
                name_of(want),
                want["spec"],
                got["spec"]
            );
            assert_eq!(got["metadata"]["labels"], want["metadata"]["labels"]);
            assert_eq!(
                got["metadata"]["ownerReferences"],
                want["metadata"]["ownerReferences"]
            );
        }
    }
}

/// etcd's current revision (its v3 JSON gateway).
pub fn etcd_revision(api: &RealApi) -> u64 {
    // A range over one key that need not exist: the answer's header carries the revision.
    let reply = etcd_post(api, "/v3/kv/range", &json!({"key": "a3NtLXRlc3Q="}));
    reply["header"]["revision"]
        .as_str()
        .and_then(|r| r.parse().ok())
        .unwrap_or_else(|| panic!("no revision in {reply}"))
}

/// Compacts etcd's history up to `revision` (physically: the old revisions are gone once it
/// answers), so that a watch from an older version gets 410 Gone.
pub fn etcd_compact(api: &RealApi, revision: u64) {
    etcd_post(
        api,
        "/v3/kv/compaction",
        &json!({"revision": revision.to_string(), "physical": true}),
    );
}

fn etcd_post(api: &RealApi, path: &str, body: &Value) -> Value {
    let url = format!("{}{path}", api.etcd_url());
    let mut reply = ureq::post(&url)
        .header("content-type", "application/json")
        .send(body.to_string())
        .unwrap_or_else(|e| panic!("POST {url}: {e}"));
    let text = reply.body_mut().read_to_string().unwrap();
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("POST {url}: {e}: {text}"))
}

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// What a test set up that may delay the adapter, from which a wait's deadline follows.
#[derive(Debug, Default, Clone, Copy)]
pub struct Delays {
    /// Failed reconciles (each retried within the retry cap and the debounce).
    pub failures: u32,
    /// Watches that failed and back off.
    pub watch_failures: u32,
    /// Lease hand-overs that wait for a Lease to expire.
    pub lease_expiries: u32,
    /// kube-apiserver restarts (the adapter's requests fail until it is back).
    pub restarts: u32,
}

impl Delays {
    pub fn patience(&self) -> Duration {
        WORK_ALLOWANCE
            + (RETRY_CAP + DEBOUNCE) * self.failures
            + WATCH_BACKOFF_CAP * (self.watch_failures + self.restarts)
            + (LEASE_DURATION + LEASE_RETRY) * self.lease_expiries
    }
}

/// One adapter process.
pub struct Adapter {
    pub child: Option<Child>,
    pub port: u16,
    pub log: PathBuf,
    /// The pod name it runs as (POD_NAME), which its Lease holder identity starts with.
    pub pod: String,
    /// The credential id of its token: its requests in the audit log.
    pub credential: String,
}

/// The debug log lines (JSON) of an adapter with `message`, about ServiceSet `name` (the
/// `serviceset` field), their `resource_version` fields in order.
pub fn versions(log: &str, message: &str, name: &str) -> Vec<u64> {
    let set = format!("{NS}/{name}");
    log.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|l| s(l, "/message") == message && s(l, "/serviceset") == set)
        .filter_map(|l| s(&l, "/resource_version").parse().ok())
        .collect()
}

impl Adapter {
    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// The log's JSON lines.
    pub fn log_lines(&self) -> Vec<Value> {
        self.log_text()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }

    /// Whether a line of its log has this message.
    pub fn logged(&self, message: &str) -> bool {
        self.log_lines().iter().any(|l| s(l, "/message") == message)
    }

    pub fn reconciled_versions(&self, set: &str) -> Vec<u64> {
        versions(&self.log_text(), "reconciled", set)
    }

    pub fn outside_shard_versions(&self, set: &str) -> Vec<u64> {
        versions(
            &self.log_text(),
            "not in this replica's shard: no reconcile of its own",
            set,
        )
    }

    pub fn get(&self, path: &str) -> (u16, String) {
        match ureq::get(&format!("http://127.0.0.1:{}{path}", self.port)).call() {
            Ok(mut r) => (
                r.status().as_u16(),
                r.body_mut().read_to_string().unwrap_or_default(),
            ),
            Err(ureq::Error::StatusCode(c)) => (c, String::new()),
            Err(e) => panic!("GET {path}: {e}"),
        }
    }

    /// SIGTERM, then waits for the exit; its exit code.
    pub fn stop(&mut self) -> Option<i32> {
        let mut child = self.child.take()?;
        // SAFETY: kill(2) on our own child's pid.
        unsafe {
            libc::kill(child.id() as i32, libc::SIGTERM);
        }
        let deadline = Instant::now() + SHUTDOWN_GRACE + WORK_ALLOWANCE;
        loop {
            if let Some(st) = child.try_wait().unwrap() {
                return st.code();
            }
            assert!(
                Instant::now() < deadline,
                "adapter {} did not stop on SIGTERM",
                self.pod
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// SIGKILL: no shutdown, no Lease released.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for Adapter {
    fn drop(&mut self) {
        self.kill();
    }
}

//! A saved dump (`kubectl get ... -A -o yaml`, as testdata/doctor holds them) loaded into the
//! real server, so that a live read gives what the dump says, and removed again.
//!
//! What a client cannot write is reproduced the way a cluster came to it:
//! - uids: each object gets the server's; an ownerReference to an object of the dump names
//!   the owner's new uid (owners are created first), one to an object outside the dump keeps
//!   its uid (the server does not check it, and no garbage collector runs);
//! - `metadata.generation`: the server sets 1 on create and adds 1 on each change of the
//!   spec, so an object the dump has at generation N goes through N-1 real spec changes (a
//!   field toggled and back, `SPEC_TOGGLES`) and ends with the dump's spec;
//! - status: written through the status subresource after the spec (it is dropped on create);
//! - creationTimestamp, resourceVersion and managedFields are the server's: objects are
//!   created in the dump's creationTimestamp order (owners first), so that their order holds.
//!
//! The dump's CustomResourceDefinitions are not written (a dump's copy is kubectl's list
//! output of a real CRD): each must be installed on the server already, from crds/ or from
//! its Go module (`super::gomod`). An object the server rejects is a bug of the dump, and
//! the panic says which object and the server's reason.

use std::collections::HashMap;
use std::sync::Arc;

use kube::api::{Api, DeleteParams, DynamicObject, Patch, PatchParams, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::core::{ApiResource, GroupVersionKind};
use kube::discovery::{ApiCapabilities, Scope};
use kube::{Client, Config};
use serde_json::{Value, json};

use super::RealApi;

/// For each kind a dump has at a generation above 1: a spec field whose change the server
/// accepts and counts as a spec change, and whether it is a boolean (else an integer). The
/// loader sets it to another value and back.
const SPEC_TOGGLES: &[(&str, &str, bool)] = &[
    ("Deployment", "/spec/minReadySeconds", false),
    ("ServiceSet", "/spec/provider/selfManagement", true),
    ("StateManagementProvider", "/spec/suspend", true),
    ("HelmRelease", "/spec/suspend", true),
    ("Kustomization", "/spec/suspend", true),
    ("HelmChart", "/spec/suspend", true),
    ("HelmRepository", "/spec/suspend", true),
    ("GitRepository", "/spec/suspend", true),
    ("OCIRepository", "/spec/suspend", true),
    ("Bucket", "/spec/suspend", true),
];

/// The case directories of testdata/DIR that hold FILE, sorted.
pub fn cases(dir: &str, file: &str) -> Vec<std::path::PathBuf> {
    let mut dirs: Vec<std::path::PathBuf> =
        std::fs::read_dir(super::root().join("testdata").join(dir))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.join(file).is_file())
            .collect();
    dirs.sort();
    dirs
}

/// The objects of a dump, as JSON, in the dump's order (Lists flattened).
pub fn objects(text: &str) -> Vec<Value> {
    fn flatten(v: Value, out: &mut Vec<Value>) {
        if v["kind"] == "List" {
            for item in v["items"].as_array().cloned().unwrap_or_default() {
                flatten(item, out);
            }
        } else if v.is_object() {
            out.push(v);
        }
    }
    let docs: Vec<Value> = serde_saphyr::from_multiple(text).expect("a YAML dump");
    let mut out = Vec::new();
    for d in docs {
        flatten(d, &mut out);
    }
    out
}

/// What `load` created; dropping it deletes them (also while a failed test unwinds, so
/// that the next test finds the server as it was).
pub struct Loaded {
    connection: Arc<Connection>,
    created: Vec<Created>,
}

impl Drop for Loaded {
    fn drop(&mut self) {
        let unwinding = std::thread::panicking();
        for c in self.created.drain(..).rev() {
            if let Err(e) = c.delete(&self.connection) {
                assert!(unwinding, "{e}");
            }
        }
    }
}

struct Created {
    ar: ApiResource,
    namespace: Option<String>,
    name: String,
    finalizers: bool,
}

/// A client of the server as the admin, with its own runtime.
pub struct AdminClient {
    connection: Arc<Connection>,
    resources: HashMap<(String, String), (ApiResource, ApiCapabilities)>,
}

struct Connection {
    runtime: tokio::runtime::Runtime,
    client: Client,
}

impl Created {
    /// Deletes the object, its finalizers removed first (no controller runs to do it).
    fn delete(&self, c: &Connection) -> Result<(), String> {
        let api: Api<DynamicObject> = match &self.namespace {
            Some(ns) => Api::namespaced_with(c.client.clone(), ns, &self.ar),
            None => Api::all_with(c.client.clone(), &self.ar),
        };
        let what = format!("{} {}", self.ar.kind, self.name);
        if self.finalizers {
            let patch = json!({"metadata": {"finalizers": null}});
            let patched = c.runtime.block_on(api.patch(
                &self.name,
                &PatchParams::default(),
                &Patch::Merge(&patch),
            ));
            match patched {
                Ok(_) => {}
                Err(kube::Error::Api(e)) if e.code == 404 => return Ok(()),
                Err(e) => return Err(format!("{what}: {}", reason(&e))),
            }
        }
        match c
            .runtime
            .block_on(api.delete(&self.name, &DeleteParams::default()))
        {
            Ok(_) => Ok(()),
            Err(kube::Error::Api(e)) if e.code == 404 => Ok(()),
            Err(e) => Err(format!("delete {what}: {}", reason(&e))),
        }
    }
}

impl AdminClient {
    pub fn new(api: &RealApi) -> AdminClient {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let kubeconfig = Kubeconfig::read_from(api.kubeconfig()).unwrap();
        let options = KubeConfigOptions {
            context: Some("admin".into()),
            ..KubeConfigOptions::default()
        };
        let client = runtime.block_on(async {
            let config = Config::from_custom_kubeconfig(kubeconfig, &options)
                .await
                .unwrap();
            Client::try_from(config).unwrap()
        });
        AdminClient {
            connection: Arc::new(Connection { runtime, client }),
            resources: HashMap::new(),
        }
    }

    fn block_on<F: std::future::Future>(&self, f: F) -> F::Output {
        self.connection.runtime.block_on(f)
    }

    /// The resource of an apiVersion and kind, as the server serves it (discovery, cached).
    fn resource(&mut self, api_version: &str, kind: &str) -> (ApiResource, ApiCapabilities) {
        let key = (api_version.to_string(), kind.to_string());
        if let Some(r) = self.resources.get(&key) {
            return r.clone();
        }
        let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
        let gvk = GroupVersionKind::gvk(group, version, kind);
        let found = self
            .block_on(kube::discovery::pinned_kind(&self.connection.client, &gvk))
            .unwrap_or_else(|e| panic!("the server does not serve {kind} {api_version}: {e}"));
        self.resources.insert(key, found.clone());
        found
    }

    fn api(
        &self,
        ar: &ApiResource,
        caps: &ApiCapabilities,
        ns: Option<&str>,
    ) -> Api<DynamicObject> {
        match (&caps.scope, ns) {
            (Scope::Namespaced, Some(ns)) => {
                Api::namespaced_with(self.connection.client.clone(), ns, ar)
            }
            _ => Api::all_with(self.connection.client.clone(), ar),
        }
    }

    /// Loads the dump's objects (see the module's documentation); panics with the server's
    /// reason when it rejects one.
    pub fn load(&mut self, case: &str, text: &str) -> Loaded {
        let all = objects(text);
        let (crds, objects): (Vec<Value>, Vec<Value>) = all
            .into_iter()
            .partition(|o| o["kind"] == "CustomResourceDefinition");
        for crd in &crds {
            let name = crd["metadata"]["name"].as_str().unwrap();
            let (ar, caps) = self.resource("apiextensions.k8s.io/v1", "CustomResourceDefinition");
            let got = self
                .block_on(self.api(&ar, &caps, None).get_opt(name))
                .unwrap();
            assert!(
                got.is_some(),
                "{case}: the dump holds CRD {name}, which the server lacks: install the real one (crds/, or its Go module with realapi::gomod)"
            );
        }
        let mut namespaces: Vec<&str> = objects
            .iter()
            .filter_map(|o| o["metadata"]["namespace"].as_str())
            .collect();
        namespaces.sort();
        namespaces.dedup();
        for ns in namespaces {
            self.ensure_namespace(ns);
        }
        let mut loaded = Loaded {
            connection: Arc::clone(&self.connection),
            created: Vec::new(),
        };
        let mut uids: HashMap<String, String> = HashMap::new();
        for i in creation_order(&objects) {
            let o = &objects[i];
            let new_uid = self.create(case, o, &uids, &mut loaded);
            if let Some(old) = o["metadata"]["uid"].as_str() {
                uids.insert(old.to_string(), new_uid);
            }
        }
        loaded
    }

    fn ensure_namespace(&mut self, name: &str) {
        let (ar, caps) = self.resource("v1", "Namespace");
        let api = self.api(&ar, &caps, None);
        let ns: DynamicObject = serde_json::from_value(
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}),
        )
        .unwrap();
        match self.block_on(api.create(&PostParams::default(), &ns)) {
            Ok(_) => {}
            Err(kube::Error::Api(e)) if e.code == 409 => {}
            Err(e) => panic!("namespace {name}: {e}"),
        }
    }

    /// Creates one object of the dump with its generation and status; returns its new uid.
    fn create(
        &mut self,
        case: &str,
        o: &Value,
        uids: &HashMap<String, String>,
        loaded: &mut Loaded,
    ) -> String {
        let api_version = o["apiVersion"].as_str().unwrap();
        let kind = o["kind"].as_str().unwrap();
        let (ar, caps) = self.resource(api_version, kind);
        let ns = o["metadata"]["namespace"].as_str();
        let name = o["metadata"]["name"].as_str().unwrap().to_string();
        let what = format!(
            "{kind} {}{name} of {case}",
            ns.map(|n| format!("{n}/")).unwrap_or_default()
        );
        let api = self.api(&ar, &caps, ns);
        let has_status_subresource = caps.subresources.iter().any(|(s, _)| s.plural == "status");

        let mut body = o.clone();
        let meta = body["metadata"].as_object_mut().unwrap();
        for k in [
            "uid",
            "resourceVersion",
            "creationTimestamp",
            "generation",
            "managedFields",
            "selfLink",
        ] {
            meta.remove(k);
        }
        if let Some(Value::Array(refs)) = meta.get_mut("ownerReferences") {
            for r in refs {
                if let Some(new) = r["uid"].as_str().and_then(|u| uids.get(u)) {
                    r["uid"] = Value::from(new.clone());
                }
            }
        }
        let status = if has_status_subresource {
            body.as_object_mut().unwrap().remove("status")
        } else {
            None
        };

        // generation N: N-1 spec changes after the create, the last one back to the dump's
        // spec; an odd number of them starts from the toggled spec.
        let generation = o["metadata"]["generation"].as_i64().unwrap_or(1);
        let changes = (generation - 1).max(0);
        let toggle = (changes > 0).then(|| {
            let (_, pointer, boolean) = SPEC_TOGGLES
                .iter()
                .find(|(k, ..)| *k == kind)
                .unwrap_or_else(|| {
                    panic!("{what} is at generation {generation}: add a spec field of {kind} to SPEC_TOGGLES")
                });
            (*pointer, *boolean)
        });
        let real_value = toggle.and_then(|(p, _)| body.pointer(p).cloned());
        let other_value = toggle.map(|(p, b)| toggled(&what, p, b, real_value.as_ref()));
        let toggle = toggle.map(|(p, _)| p);
        if changes % 2 == 1 {
            set_pointer(&mut body, toggle.unwrap(), other_value.clone());
        }

        let obj: DynamicObject = serde_json::from_value(body).unwrap();
        let mut stored = self
            .block_on(api.create(&PostParams::default(), &obj))
            .unwrap_or_else(|e| panic!("the server rejects {what}: {}", reason(&e)));
        loaded.created.push(Created {
            ar: ar.clone(),
            namespace: ns.map(str::to_string),
            name: name.clone(),
            finalizers: o["metadata"]["finalizers"]
                .as_array()
                .is_some_and(|f| !f.is_empty()),
        });
        for i in 0..changes {
            // The last change (i == changes - 1) restores the dump's value.
            let back = (changes - 1 - i) % 2 == 0;
            let value = if back { &real_value } else { &other_value };
            let mut patch = json!({});
            set_pointer(
                &mut patch,
                toggle.unwrap(),
                Some(value.clone().unwrap_or(Value::Null)),
            );
            stored = self
                .block_on(api.patch(&name, &PatchParams::default(), &Patch::Merge(&patch)))
                .unwrap_or_else(|e| {
                    panic!("the server rejects a spec change of {what}: {}", reason(&e))
                });
        }
        let got = stored.metadata.generation.unwrap_or(0);
        assert!(
            got == generation || (generation == 1 && !has_generation(kind)),
            "{what}: generation {got} on the server, {generation} in the dump"
        );
        if let Some(status) = status {
            stored.data["status"] = status;
            stored = self
                .block_on(api.replace_status(&name, &PostParams::default(), &stored))
                .unwrap_or_else(|e| {
                    panic!("the server rejects the status of {what}: {}", reason(&e))
                });
        }
        stored.metadata.uid.unwrap_or_default()
    }

    /// Deletes what `load` created (as dropping it does).
    pub fn unload(&mut self, loaded: Loaded) {
        drop(loaded);
    }
}

/// The server's message for a refusal, the error itself otherwise.
fn reason(e: &kube::Error) -> String {
    match e {
        kube::Error::Api(s) => format!("{} ({})", s.message, s.code),
        e => e.to_string(),
    }
}

/// Whether the server keeps a generation for the kind (Secrets and ConfigMaps have none).
fn has_generation(kind: &str) -> bool {
    !matches!(kind, "Secret" | "ConfigMap" | "Namespace")
}

/// Another value for a toggled field: a boolean negated (absent is false), an integer plus
/// one (absent is 0).
fn toggled(what: &str, pointer: &str, boolean: bool, value: Option<&Value>) -> Value {
    match (boolean, value) {
        (true, None) => true.into(),
        (true, Some(Value::Bool(b))) => (!b).into(),
        (false, None) => 1.into(),
        (false, Some(Value::Number(n))) if n.is_i64() => (n.as_i64().unwrap() + 1).into(),
        (_, Some(v)) => panic!("{what}: cannot toggle {pointer} = {v}"),
    }
}

/// Sets (or with None, removes) the value at a JSON pointer, creating the objects on the way.
fn set_pointer(v: &mut Value, pointer: &str, value: Option<Value>) {
    let keys: Vec<&str> = pointer.trim_start_matches('/').split('/').collect();
    let (last, path) = keys.split_last().unwrap();
    let mut at = v;
    for k in path {
        if !at[*k].is_object() {
            at[*k] = json!({});
        }
        at = &mut at[*k];
    }
    let m = at.as_object_mut().unwrap();
    match value {
        Some(x) => {
            m.insert(last.to_string(), x);
        }
        None => {
            m.remove(*last);
        }
    }
}

/// Indices of the objects, owners (within the dump) before what they own, then by the dump's
/// creationTimestamp, then as the dump lists them.
fn creation_order(objects: &[Value]) -> Vec<usize> {
    let by_uid: HashMap<&str, usize> = objects
        .iter()
        .enumerate()
        .filter_map(|(i, o)| o["metadata"]["uid"].as_str().map(|u| (u, i)))
        .collect();
    fn depth(i: usize, objects: &[Value], by_uid: &HashMap<&str, usize>, seen: usize) -> usize {
        assert!(seen <= objects.len(), "ownerReferences form a cycle");
        objects[i]["metadata"]["ownerReferences"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|r| r["uid"].as_str().and_then(|u| by_uid.get(u)))
            .map(|&owner| 1 + depth(owner, objects, by_uid, seen + 1))
            .max()
            .unwrap_or(0)
    }
    let mut order: Vec<usize> = (0..objects.len()).collect();
    order.sort_by_key(|&i| {
        (
            depth(i, objects, &by_uid, 0),
            objects[i]["metadata"]["creationTimestamp"]
                .as_str()
                .unwrap_or("")
                .to_string(),
            i,
        )
    });
    order
}

/// Sets the state of a ServiceSet's services in its status (the one named, or every one) as
/// kcm's adapter would write it: a merge patch of the status subresource, through `kubectl`
/// (a kubectl of the caller's, given its arguments, returning its output).
pub fn set_service_states(
    kubectl: &dyn Fn(&[&str]) -> String,
    namespace: &str,
    service_set: &str,
    service: Option<&str>,
    state: &str,
) {
    let set: serde_json::Value = serde_json::from_str(&kubectl(&[
        "get",
        "servicesets.k0rdent.mirantis.com",
        service_set,
        "-n",
        namespace,
        "-o",
        "json",
    ]))
    .expect("the ServiceSet as JSON");
    let mut services = set["status"]["services"].clone();
    for s in services.as_array_mut().into_iter().flatten() {
        if service.is_none_or(|n| s["name"] == n) {
            s["state"] = state.into();
        }
    }
    let patch = serde_json::json!({"status": {"services": services}}).to_string();
    kubectl(&[
        "patch",
        "servicesets.k0rdent.mirantis.com",
        service_set,
        "-n",
        namespace,
        "--subresource=status",
        "--type=merge",
        "-p",
        &patch,
    ]);
}

#![allow(dead_code)]
//! A stateful fake Kubernetes API server, for tests that run real clients (kubectl, a kube-rs
//! binary) against it over plain HTTP on 127.0.0.1.
//!
//! ```text
//! let api = FakeApiServer::start();
//! api.load_crd(&crd);
//! api.write_kubeconfig(&dir.join("kubeconfig"));
//! // run the binary with KUBECONFIG=…, then:
//! assert!(api.requests().iter().all(|r| ["get", "list", "watch"].contains(&r.verb.as_str())));
//! ```
//!
//! Test support, not part of the crate: test files include it with `mod fakeapi;`, the example
//! (examples/fakeapi.rs) with `#[path]`. Each uses only part of it, hence `allow(dead_code)`.
//!
//! It runs on its own tokio runtime in a background thread, so it serves sync `#[test]`s and
//! async ones alike.

// `ApiError` is a whole `metav1.Status`; boxing it buys nothing in a test server.
#![allow(clippy::result_large_err)]

mod fields;
mod http;
mod registry;
mod selector;
mod status;
mod store;

use std::net::SocketAddr;
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, SystemTime};

use serde_json::Value;
use tokio::sync::watch;

pub use registry::ResourceType;
pub use selector::{FieldSelector, LabelSelector};
pub use status::ApiError;

use store::{State, WriteCtx};

/// One request the server answered, for assertions.
#[derive(Debug, Clone, PartialEq)]
pub struct RequestRecord {
    pub method: String,
    pub path: String,
    /// The raw query string (still percent-encoded), empty when none.
    pub query: String,
    /// get, list, watch, create, update, patch, delete, deletecollection for resource requests;
    /// the lower-cased method for others (discovery, /version, /openapi).
    pub verb: String,
    /// The plural resource name (`helmreleases`), for resource requests.
    pub resource: Option<String>,
    pub subresource: Option<String>,
    pub group: Option<String>,
    pub version: Option<String>,
    pub namespace: Option<String>,
    pub name: Option<String>,
    /// The status code answered (200 for a watch that started).
    pub status: u16,
    pub user_agent: Option<String>,
    /// The Impersonate-User header (`kubectl --as`), recorded, not enforced.
    pub impersonate_user: Option<String>,
    /// The Impersonate-Group headers (`kubectl --as-group`).
    pub impersonate_groups: Vec<String>,
    pub content_type: Option<String>,
    pub time: SystemTime,
}

impl RequestRecord {
    /// `(verb, resource)`, e.g. `("list", "helmreleases")`.
    pub fn verb_resource(&self) -> (&str, &str) {
        (self.verb.as_str(), self.resource.as_deref().unwrap_or(""))
    }
}

/// A fault to inject into matching resource requests (`None` matches any verb or resource).
#[derive(Debug, Clone, PartialEq)]
pub enum Fault {
    /// Answer the next `times` matching requests with a `Status` of this code (429 carries
    /// `Retry-After: 1`).
    Status {
        verb: Option<String>,
        resource: Option<String>,
        code: u16,
        times: usize,
    },
    /// Delay the next `times` matching requests.
    Delay {
        verb: Option<String>,
        resource: Option<String>,
        delay: Duration,
        times: usize,
    },
    /// End the next matching watch after it sent `after_events` events (one-shot).
    DropWatch {
        resource: Option<String>,
        after_events: usize,
    },
    /// Cut the connection in the middle of the body of the next `times` matching lists (the
    /// client reads a truncated response).
    DropList {
        resource: Option<String>,
        times: usize,
    },
    /// Answer the first write (create, update, patch, delete) of every matching object with
    /// 409 Conflict, as if someone else had written it just before; later writes go through.
    /// Stays until [`FakeApiServer::clear_faults`].
    ConflictOnFirstWrite { resource: Option<String> },
}

/// Settings for [`FakeApiServer::builder`].
#[derive(Debug, Clone)]
pub struct Builder {
    history_window: usize,
    bookmark_interval: Duration,
    port: u16,
}

impl Default for Builder {
    fn default() -> Self {
        Builder {
            history_window: 1000,
            bookmark_interval: Duration::from_secs(1),
            port: 0,
        }
    }
}

impl Builder {
    /// How many events the server keeps for watches that resume from a resourceVersion; a
    /// watch from before that answers 410 Expired. Default 1000.
    pub fn history_window(mut self, events: usize) -> Self {
        self.history_window = events;
        self
    }

    /// How often a watch with `allowWatchBookmarks=true` gets a BOOKMARK. Default 1 s.
    pub fn bookmark_interval(mut self, every: Duration) -> Self {
        self.bookmark_interval = every;
        self
    }

    /// Listen on this port of 127.0.0.1 (default: any free port), e.g. to come up where a
    /// client already waits.
    pub fn port(mut self, port: u16) -> Self {
        self.port = port;
        self
    }

    pub fn start(self) -> FakeApiServer {
        FakeApiServer::start_with(self)
    }
}

struct Shared {
    state: Mutex<State>,
    addr: SocketAddr,
    bookmark_interval: Duration,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The running server. Dropping it shuts it down.
pub struct FakeApiServer {
    shared: Arc<Shared>,
    stop: Option<watch::Sender<bool>>,
    thread: Option<JoinHandle<()>>,
}

impl FakeApiServer {
    /// Starts with the default settings; answers once the port is bound.
    pub fn start() -> Self {
        Builder::default().start()
    }

    pub fn builder() -> Builder {
        Builder::default()
    }

    fn start_with(b: Builder) -> Self {
        let listener = std::net::TcpListener::bind(("127.0.0.1", b.port))
            .unwrap_or_else(|e| panic!("bind 127.0.0.1:{}: {e}", b.port));
        listener
            .set_nonblocking(true)
            .expect("nonblocking listener");
        let addr = listener.local_addr().expect("local addr");
        let shared = Arc::new(Shared {
            state: Mutex::new(State::new(b.history_window)),
            addr,
            bookmark_interval: b.bookmark_interval,
        });
        let (stop, stop_rx) = watch::channel(false);
        let s2 = shared.clone();
        let thread = std::thread::Builder::new()
            .name(format!("fakeapi-{}", addr.port()))
            .spawn(move || {
                let rt = tokio::runtime::Builder::new_multi_thread()
                    .worker_threads(2)
                    .enable_all()
                    .build()
                    .expect("tokio runtime");
                rt.block_on(http::serve(s2, listener, stop_rx));
                rt.shutdown_timeout(Duration::from_millis(200));
            })
            .expect("spawn server thread");
        FakeApiServer {
            shared,
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    /// `http://127.0.0.1:PORT`
    pub fn url(&self) -> String {
        format!("http://{}", self.shared.addr)
    }

    pub fn addr(&self) -> SocketAddr {
        self.shared.addr
    }

    /// A kubeconfig for this server, with `namespace` as the context's namespace.
    pub fn kubeconfig_yaml(&self, namespace: &str) -> String {
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: fakeapi\n  cluster:\n    server: {url}\nusers:\n- name: fakeapi\n  user: {{}}\ncontexts:\n- name: fakeapi\n  context:\n    cluster: fakeapi\n    user: fakeapi\n    namespace: {namespace}\ncurrent-context: fakeapi\npreferences: {{}}\n",
            url = self.url()
        )
    }

    /// Writes [`Self::kubeconfig_yaml`] for the `default` namespace.
    pub fn write_kubeconfig(&self, path: impl AsRef<Path>) {
        std::fs::write(path.as_ref(), self.kubeconfig_yaml("default")).expect("write kubeconfig");
    }

    /// Stops serving: open connections and watches are cut.
    pub fn shutdown(mut self) {
        self.stop_now();
    }

    fn stop_now(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(true);
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }

    /// Loads (or replaces) a CustomResourceDefinition: serves its resource and stores the CRD.
    /// Panics on a CRD the server cannot use.
    pub fn load_crd(&self, crd: &Value) {
        let mut st = self.shared.lock();
        let crd_t = st
            .type_by_key(store::CRD_KEY.0, store::CRD_KEY.1)
            .expect("crd type");
        let name = store::meta_str(crd, "name").unwrap_or("").to_string();
        let ctx = WriteCtx::seed();
        let res = match st.get(&crd_t, "v1", "", &name) {
            Ok(old) => {
                let mut new = crd.clone();
                new["metadata"]["resourceVersion"] = old["metadata"]["resourceVersion"].clone();
                st.update(&crd_t, "v1", "", &name, None, new, &ctx)
            }
            Err(_) => st.create(&crd_t, "v1", None, crd.clone(), &ctx, None),
        };
        if let Err(e) = res {
            panic!("load_crd {name}: {}", e.message);
        }
    }

    /// Loads every CRD of a (multi-document) YAML text.
    pub fn load_crd_yaml(&self, yaml: &str) {
        let docs: Vec<Value> = serde_saphyr::from_multiple(yaml).expect("CRD YAML");
        for d in docs
            .iter()
            .filter(|d| d.get("kind").and_then(Value::as_str) == Some("CustomResourceDefinition"))
        {
            self.load_crd(d);
        }
    }

    /// Loads every CRD YAML file (`*.yaml`, `*.yml`) of a directory, such as
    /// crds/flux; other documents in them are ignored. Panics on an unreadable
    /// directory or file.
    pub fn load_crds_dir(&self, dir: impl AsRef<Path>) {
        let dir = dir.as_ref();
        let mut paths: Vec<_> = std::fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|e| e.expect("directory entry").path())
            .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == "yaml" || x == "yml"))
            .collect();
        paths.sort();
        for p in paths {
            let text =
                std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            self.load_crd_yaml(&text);
        }
    }

    /// Seeds every object of a YAML text: several documents, `kind: List`s (as `kubectl get
    /// -o yaml` saves them) or both. CustomResourceDefinitions among them are loaded first (as
    /// [`Self::load_crd`]: a new one keeps a saved status with conditions, one already loaded
    /// is replaced), so the text may hold the CRDs of its custom resources; the other objects
    /// are then seeded as [`Self::create`] does (status, uid, creationTimestamp and generation
    /// kept; a new resourceVersion). Returns the number of objects loaded. Panics on bad YAML,
    /// an unknown kind or a clash.
    pub fn load_objects_yaml(&self, text: &str) -> usize {
        fn flatten(v: Value, out: &mut Vec<Value>) {
            let is_list = v.get("kind").and_then(Value::as_str).is_some_and(|k| {
                k == "List" || (k.ends_with("List") && v.get("items").is_some_and(Value::is_array))
            });
            if is_list {
                if let Some(Value::Array(items)) = v.get("items").cloned() {
                    for i in items {
                        flatten(i, out);
                    }
                }
            } else if v.is_object() {
                out.push(v);
            }
        }
        let docs: Vec<Value> = serde_saphyr::from_multiple(text).expect("objects YAML");
        let mut objs = Vec::new();
        for d in docs {
            flatten(d, &mut objs);
        }
        let is_crd =
            |o: &Value| o.get("kind").and_then(Value::as_str) == Some("CustomResourceDefinition");
        let (crds, others): (Vec<Value>, Vec<Value>) = objs.into_iter().partition(is_crd);
        for c in &crds {
            self.load_crd(c);
        }
        for o in &others {
            if let Err(e) = self.try_create(o.clone()) {
                panic!(
                    "load_objects_yaml: {} {}/{}: {}",
                    o.get("kind").and_then(Value::as_str).unwrap_or("?"),
                    store::meta_str(o, "namespace").unwrap_or(""),
                    store::meta_str(o, "name").unwrap_or("?"),
                    e.message
                );
            }
        }
        crds.len() + others.len()
    }

    /// Seeds an object as given (status kept; uid, creationTimestamp and generation filled in
    /// when missing; the namespace need not exist). Panics on an unknown kind or a clash.
    pub fn create(&self, obj: Value) -> Value {
        self.try_create(obj)
            .unwrap_or_else(|e| panic!("create: {}", e.message))
    }

    pub fn try_create(&self, obj: Value) -> Result<Value, ApiError> {
        let mut st = self.shared.lock();
        let (rt, version) = type_of(&st, &obj)?;
        st.create(&rt, &version, None, obj, &WriteCtx::seed(), None)
    }

    pub fn get(&self, api_version: &str, kind: &str, namespace: &str, name: &str) -> Option<Value> {
        let st = self.shared.lock();
        let (rt, version) = st.type_by_kind(api_version, kind)?;
        st.get(&rt, &version, namespace, name).ok()
    }

    /// Every object of a kind, in all namespaces.
    pub fn list(&self, api_version: &str, kind: &str) -> Vec<Value> {
        let st = self.shared.lock();
        let Some((rt, version)) = st.type_by_kind(api_version, kind) else {
            return Vec::new();
        };
        st.select(
            &rt,
            &version,
            None,
            &LabelSelector::default(),
            &FieldSelector::default(),
        )
    }

    /// How many objects of a kind satisfy `pred` (without copying them out: for polling).
    pub fn count(&self, api_version: &str, kind: &str, pred: impl Fn(&Value) -> bool) -> usize {
        let st = self.shared.lock();
        let Some((rt, _)) = st.type_by_kind(api_version, kind) else {
            return 0;
        };
        st.count(&rt, pred)
    }

    /// Replaces an object as a PUT would (no resourceVersion precondition unless set).
    pub fn update(&self, obj: Value) -> Result<Value, ApiError> {
        self.write(obj, None)
    }

    /// Writes `.status` through the status subresource, as a controller would.
    pub fn update_status(&self, obj: Value) -> Value {
        self.write(obj, Some("status"))
            .unwrap_or_else(|e| panic!("update_status: {}", e.message))
    }

    fn write(&self, mut obj: Value, sub: Option<&str>) -> Result<Value, ApiError> {
        let mut st = self.shared.lock();
        let (rt, version) = type_of(&st, &obj)?;
        let ns = store::meta_str(&obj, "namespace").unwrap_or("").to_string();
        let name = store::meta_str(&obj, "name").unwrap_or("").to_string();
        if let Some(m) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
            m.remove("resourceVersion");
        }
        let sub = sub.filter(|_| rt.status_subresource);
        st.update(&rt, &version, &ns, &name, sub, obj, &WriteCtx::seed())
    }

    /// Deletes as a DELETE with default options would (finalizers respected).
    pub fn delete(
        &self,
        api_version: &str,
        kind: &str,
        namespace: &str,
        name: &str,
    ) -> Result<Value, ApiError> {
        let mut st = self.shared.lock();
        let (rt, version) = st
            .type_by_kind(api_version, kind)
            .ok_or_else(|| ApiError::bad_request(format!("no kind {kind} in {api_version}")))?;
        st.delete(
            &rt,
            &version,
            namespace,
            name,
            &store::DeleteOpts::default(),
        )
    }

    /// The current (global) resourceVersion.
    pub fn resource_version(&self) -> u64 {
        self.shared.lock().rv
    }

    /// The number of open watches.
    pub fn watch_count(&self) -> usize {
        self.shared.lock().watcher_count()
    }

    pub fn requests(&self) -> Vec<RequestRecord> {
        self.shared.lock().requests.clone()
    }

    pub fn clear_requests(&self) {
        self.shared.lock().requests.clear();
    }

    pub fn inject(&self, fault: Fault) {
        self.shared.lock().faults.push(fault);
    }

    /// Faults injected and not yet spent (one-shot and counted faults go once spent).
    pub fn faults_left(&self) -> usize {
        self.shared.lock().faults.len()
    }

    pub fn clear_faults(&self) {
        let mut st = self.shared.lock();
        st.faults.clear();
        st.first_writes.clear();
    }

    /// Compacts the history as etcd does: a watch (or list) from any resourceVersion before
    /// the current one is answered 410 Expired ("too old resource version").
    pub fn compact(&self) {
        self.shared.lock().compact();
    }

    /// Ends every open watch (the server side closes the streams), as an API server restart
    /// or a load balancer's idle timeout does.
    pub fn drop_watches(&self) {
        self.shared.lock().drop_watches();
    }
}

fn type_of(st: &State, obj: &Value) -> Result<(ResourceType, String), ApiError> {
    let av = obj.get("apiVersion").and_then(Value::as_str).unwrap_or("");
    let kind = obj.get("kind").and_then(Value::as_str).unwrap_or("");
    st.type_by_kind(av, kind).ok_or_else(|| {
        ApiError::bad_request(format!(
            "no kind \"{kind}\" is registered for version \"{av}\""
        ))
    })
}

impl Drop for FakeApiServer {
    fn drop(&mut self) {
        self.stop_now();
    }
}

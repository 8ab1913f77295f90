//! The real API server for the live benchmarks (`KSM_BENCH_SERVER=real`): kube-apiserver and
//! etcd of tests/realapi (built by `scripts/kube-test-server build`), seeded over HTTP by the
//! admin, the requests of a run counted from the server's own `apiserver_request_total`.
//!
//! A bench file that uses it declares `mod realapi;` (tests/realapi) beside `mod real;`.

#![allow(dead_code)]

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use kubectl_ksm::api::kinds;
use serde_json::{Value, json};

use super::realapi::{self, RealApi};

/// Whether the bench runs on the real API server rather than the fake one.
pub fn wanted() -> bool {
    std::env::var("KSM_BENCH_SERVER").is_ok_and(|v| v == "real")
}

pub struct Real {
    pub api: RealApi,
    base: String,
    token: String,
    /// The counters at the last `clear_requests`.
    last: Mutex<Metrics>,
}

/// The answer to one request.
pub struct Answer {
    pub status: u16,
    pub body: String,
}

impl Real {
    /// A server of the bench's own with the kcm, Flux and Sveltos CRDs (and `extra_crds`)
    /// installed. Panics when there is none: a benchmark asked for it.
    pub fn start(extra_crds: &[PathBuf]) -> Real {
        let api = realapi::dedicated().expect(
            "KSM_BENCH_SERVER=real: no real API server here (build it with `scripts/kube-test-server build`)",
        );
        if !extra_crds.is_empty() {
            api.install_crds(extra_crds);
        }
        Real {
            base: api.url().to_string(),
            token: api.admin_token().to_string(),
            api,
            last: Mutex::new(Metrics::default()),
        }
    }

    /// Starts counting requests anew.
    pub fn clear_requests(&self) {
        let now = self.metrics();
        *self.last.lock().unwrap() = now;
    }

    /// The requests answered since the last `clear_requests`.
    pub fn requests(&self) -> Requests {
        self.metrics().since(&self.last.lock().unwrap())
    }

    /// The admin's kubeconfig (its current context is the admin).
    pub fn kubeconfig(&self) -> &Path {
        self.api.kubeconfig()
    }

    pub fn url(&self) -> &str {
        &self.base
    }

    /// A client of its own (one keep-alive connection per thread that uses it); `timeout`
    /// None for watches.
    pub fn agent(&self, timeout: Option<Duration>) -> ureq::Agent {
        self.api.http_agent(timeout)
    }

    /// One request as the admin; `url` is a path on the server or a whole URL.
    pub fn send(
        &self,
        agent: &ureq::Agent,
        method: &str,
        url: &str,
        content_type: &str,
        body: Option<&str>,
    ) -> Answer {
        let url = if url.starts_with("https://") {
            url.to_string()
        } else {
            format!("{}{url}", self.base)
        };
        let mut req = ureq::http::Request::builder()
            .method(method)
            .uri(&url)
            .header("Accept", "application/json")
            .header("Authorization", format!("Bearer {}", self.token));
        if body.is_some() {
            req = req.header("Content-Type", content_type);
        }
        let req = req.body(body.unwrap_or_default().to_string()).unwrap();
        let mut resp = agent
            .run(req)
            .unwrap_or_else(|e| panic!("{method} {url}: {e}"));
        Answer {
            status: resp.status().as_u16(),
            body: resp
                .body_mut()
                .with_config()
                .limit(1 << 30)
                .read_to_string()
                .unwrap_or_default(),
        }
    }

    /// Creates every object as it is (status through the status subresource, as the
    /// controllers that own it would write it), on `workers` connections; namespaces first,
    /// and CRDs that are already installed left as they are.
    pub fn create_all(&self, objects: &[Value], workers: usize) {
        let agent = self.agent(Some(Duration::from_secs(120)));
        let namespaces: BTreeSet<&str> = objects
            .iter()
            .filter_map(|o| o["metadata"]["namespace"].as_str())
            .collect();
        for ns in namespaces {
            let body = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}});
            let a = self.send(
                &agent,
                "POST",
                "/api/v1/namespaces",
                "application/json",
                Some(&body.to_string()),
            );
            assert!(matches!(a.status, 201 | 409), "namespace {ns}: {}", a.body);
        }
        let (crds, rest): (Vec<&Value>, Vec<&Value>) = objects
            .iter()
            .partition(|o| o["kind"] == "CustomResourceDefinition");
        for crd in crds {
            let name = crd["metadata"]["name"].as_str().unwrap_or_default();
            let path = format!("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{name}");
            if self.send(&agent, "GET", &path, "", None).status == 200 {
                continue;
            }
            let file = std::env::temp_dir().join(format!("ksm-bench-crd-{name}.json"));
            std::fs::write(&file, crd.to_string()).unwrap();
            self.api.install_crds(std::slice::from_ref(&file));
            let _ = std::fs::remove_file(file);
        }
        let next = AtomicUsize::new(0);
        std::thread::scope(|s| {
            for _ in 0..workers.max(1) {
                s.spawn(|| {
                    let agent = self.agent(Some(Duration::from_secs(120)));
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(o) = rest.get(i) else { break };
                        self.create(&agent, o);
                    }
                });
            }
        });
    }

    fn create(&self, agent: &ureq::Agent, o: &Value) {
        let (collection, name) = paths(o);
        let mut body = o.clone();
        let status = body.as_object_mut().and_then(|m| m.remove("status"));
        if let Some(m) = body["metadata"].as_object_mut() {
            for server_set in [
                "uid",
                "resourceVersion",
                "creationTimestamp",
                "generation",
                "managedFields",
            ] {
                m.remove(server_set);
            }
        }
        let a = self.send(
            agent,
            "POST",
            &collection,
            "application/json",
            Some(&body.to_string()),
        );
        if a.status == 409 && o["kind"] == "Namespace" {
            return;
        }
        assert_eq!(a.status, 201, "create {collection}/{name}: {}", a.body);
        let status = status.filter(|s| s.as_object().is_some_and(|m| !m.is_empty()));
        if let Some(status) = status {
            let patch = json!({"status": status}).to_string();
            let path = format!("{collection}/{name}/status");
            let a = self.send(
                agent,
                "PATCH",
                &path,
                "application/merge-patch+json",
                Some(&patch),
            );
            assert_eq!(a.status, 200, "status of {collection}/{name}: {}", a.body);
        }
    }

    /// Every object of a kind (all namespaces), in pages.
    pub fn list(&self, kind: &kinds::Kind) -> Vec<Value> {
        let agent = self.agent(Some(Duration::from_secs(300)));
        let base = format!("{}/{}", group_path(kind), kind.plural);
        let mut out = Vec::new();
        let mut cont = String::new();
        loop {
            let url = format!("{base}?limit=500&continue={cont}");
            let a = self.send(&agent, "GET", &url, "", None);
            assert_eq!(a.status, 200, "list {base}: {}", a.body);
            let mut list: Value = serde_json::from_str(&a.body).unwrap();
            if let Some(items) = list["items"].as_array_mut() {
                for o in items.iter_mut() {
                    o["apiVersion"] = kind.api_version.into();
                    o["kind"] = kind.kind.into();
                }
                out.append(items);
            }
            match list["metadata"]["continue"].as_str() {
                Some(c) if !c.is_empty() => cont = c.to_string(),
                _ => return out,
            }
        }
    }

    /// The server's request counters now.
    pub fn metrics(&self) -> Metrics {
        let agent = self.agent(Some(Duration::from_secs(60)));
        let a = self.send(&agent, "GET", "/metrics", "", None);
        assert_eq!(a.status, 200, "/metrics: {}", a.body);
        Metrics::parse(&a.body)
    }

    /// Keeps, from a watch of every object of `kind`, the number of them for which `counts`
    /// holds, until the returned guard is dropped.
    pub fn count_while(
        &self,
        kind: &kinds::Kind,
        counts: impl Fn(&Value) -> bool + Send + 'static,
    ) -> Counter {
        let counter = Counter {
            n: Arc::new(AtomicUsize::new(0)),
            stop: Arc::new(AtomicBool::new(false)),
        };
        let (n, stop) = (counter.n.clone(), counter.stop.clone());
        let agent = self.agent(None);
        let url = format!("{}{}/{}", self.base, group_path(kind), kind.plural);
        let token = self.token.clone();
        let what = kind.plural;
        std::thread::spawn(move || {
            let mut state: HashMap<String, bool> = HashMap::new();
            let mut from = String::new();
            while !stop.load(Ordering::Relaxed) {
                // Without a resourceVersion the watch starts with every object as ADDED.
                let req = ureq::http::Request::builder()
                    .uri(format!(
                        "{url}?watch=1&allowWatchBookmarks=true&timeoutSeconds=3600&resourceVersion={from}"
                    ))
                    .header("Authorization", format!("Bearer {token}"))
                    .body(())
                    .unwrap();
                let resp = agent
                    .run(req)
                    .unwrap_or_else(|e| panic!("watch {what}: {e}"));
                // 429: the server's cache of a kind whose CRD is new is still filling.
                if resp.status().as_u16() == 429 {
                    std::thread::sleep(Duration::from_millis(100));
                    continue;
                }
                assert_eq!(resp.status().as_u16(), 200, "watch {what}");
                let reader = BufReader::new(resp.into_body().into_reader());
                for line in reader.lines() {
                    let Ok(line) = line else { break };
                    let Ok(event) = serde_json::from_str::<Value>(&line) else {
                        continue;
                    };
                    let o = &event["object"];
                    if let Some(rv) = o["metadata"]["resourceVersion"].as_str() {
                        from = rv.to_string();
                    }
                    let key = format!(
                        "{}/{}",
                        o["metadata"]["namespace"].as_str().unwrap_or(""),
                        o["metadata"]["name"].as_str().unwrap_or("")
                    );
                    match event["type"].as_str() {
                        Some("ADDED" | "MODIFIED") => {
                            state.insert(key, counts(o));
                        }
                        Some("DELETED") => {
                            state.remove(&key);
                        }
                        Some("ERROR") => panic!("watch {what}: {o}"),
                        _ => {}
                    }
                    n.store(state.values().filter(|v| **v).count(), Ordering::Relaxed);
                    if stop.load(Ordering::Relaxed) {
                        return;
                    }
                }
            }
        });
        counter
    }
}

/// What a watch counts; stops the watch when dropped (at its next event).
pub struct Counter {
    n: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
}

impl Counter {
    pub fn get(&self) -> usize {
        self.n.load(Ordering::Relaxed)
    }
}

impl Drop for Counter {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// `/apis/GROUP/VERSION` or `/api/v1`.
fn group_path(kind: &kinds::Kind) -> String {
    if kind.group.is_empty() {
        format!("/api/{}", kind.version)
    } else {
        format!("/apis/{}/{}", kind.group, kind.version)
    }
}

/// The collection path of an object and its name.
fn paths(o: &Value) -> (String, String) {
    let api_version = o["apiVersion"].as_str().unwrap_or_default();
    let kind = o["kind"].as_str().unwrap_or_default();
    let k = kinds::known()
        .find(|k| k.is(api_version, kind))
        .unwrap_or_else(|| panic!("a kind the tool does not know: {api_version} {kind}"));
    let name = o["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let collection = match o["metadata"]["namespace"].as_str() {
        Some(ns) if k.namespaced => format!("{}/namespaces/{ns}/{}", group_path(k), k.plural),
        _ => format!("{}/{}", group_path(k), k.plural),
    };
    (collection, name)
}

/// kube-apiserver's `apiserver_request_total`, by "VERB resource[/subresource] code". The
/// server does not count discovery (`/api`, `/apis`) nor `/metrics` there.
#[derive(Clone, Default)]
pub struct Metrics(BTreeMap<String, f64>);

impl Metrics {
    fn parse(text: &str) -> Metrics {
        let mut m = BTreeMap::new();
        for line in text.lines() {
            let Some(rest) = line.strip_prefix("apiserver_request_total{") else {
                continue;
            };
            let Some((labels, value)) = rest.rsplit_once("} ") else {
                continue;
            };
            let mut l: HashMap<&str, &str> = HashMap::new();
            for pair in labels.split("\",") {
                if let Some((k, v)) = pair.split_once("=\"") {
                    l.insert(k, v.trim_end_matches('"'));
                }
            }
            // A non-resource request the server counts (/readyz, /livez; not discovery, which
            // it does not count) has its path as the subresource.
            let resource = match (l.get("resource"), l.get("subresource")) {
                (Some(&""), Some(s)) => s.to_string(),
                (Some(r), Some(s)) if !s.is_empty() => format!("{r}/{s}"),
                (Some(r), _) => r.to_string(),
                (None, _) => "?".to_string(),
            };
            let key = format!(
                "{} {resource} {}",
                l.get("verb").unwrap_or(&"?"),
                l.get("code").unwrap_or(&"?")
            );
            *m.entry(key).or_insert(0.0) += value.trim().parse::<f64>().unwrap_or(0.0);
        }
        Metrics(m)
    }

    /// The requests answered between `before` and this scrape.
    pub fn since(&self, before: &Metrics) -> Requests {
        let mut out = BTreeMap::new();
        for (k, v) in &self.0 {
            let d = (v - before.0.get(k).copied().unwrap_or(0.0)).round() as usize;
            if d > 0 {
                out.insert(k.clone(), d);
            }
        }
        Requests(out)
    }
}

/// Requests by "VERB resource code".
#[derive(Clone, Default)]
pub struct Requests(pub BTreeMap<String, usize>);

const WRITE_VERBS: [&str; 6] = [
    "POST",
    "PUT",
    "PATCH",
    "APPLY",
    "DELETE",
    "DELETECOLLECTION",
];

impl Requests {
    /// Writes to `resources` (with their subresources), and how many were refused.
    pub fn writes(&self, resources: &[&str]) -> (usize, usize) {
        let (mut all, mut failed) = (0, 0);
        for (k, n) in &self.0 {
            let mut f = k.split(' ');
            let (verb, resource, code) = (
                f.next().unwrap_or(""),
                f.next().unwrap_or(""),
                f.next().unwrap_or(""),
            );
            let base = resource.split('/').next().unwrap_or("");
            if WRITE_VERBS.contains(&verb) && resources.contains(&base) {
                all += n;
                if !code.starts_with('2') {
                    failed += n;
                }
            }
        }
        (all, failed)
    }

    /// The requests on `resources`, by "VERB resource".
    pub fn on(&self, resources: &[&str]) -> BTreeMap<String, usize> {
        let mut m = BTreeMap::new();
        for (k, n) in &self.0 {
            let mut f = k.split(' ');
            let (verb, resource) = (f.next().unwrap_or(""), f.next().unwrap_or(""));
            let base = resource.split('/').next().unwrap_or("");
            if resources.contains(&base) {
                *m.entry(format!("{verb} {resource}")).or_insert(0) += n;
            }
        }
        m
    }
}

/// Waits until `done` holds, up to `limit` (then panics with `what`).
pub fn wait_until(limit: Duration, what: &str, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < limit, "{what}: not within {limit:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

//! A watch cache for the Flux objects that keeps each object as its JSON text.
//!
//! A parsed object (kube's `DynamicObject`, a `serde_json::Value` tree) takes about four times
//! the memory of its JSON; an adapter caches every HelmRelease and Kustomization of the
//! cluster but reads only the few of the ServiceSet it reconciles. So the text is kept, with
//! the handful of fields the lookups need, and parsed on read.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use futures::{Stream, StreamExt};
use kube::api::DynamicObject;
use kube::discovery::ApiResource;
use kube::runtime::watcher;
use serde_json::Value;
use tokio::sync::watch;

use crate::api::naming::LABEL_MANAGED;

struct Entry {
    /// uids of the ownerReferences.
    owners: Vec<String>,
    managed: bool,
    text: Box<str>,
}

#[derive(Default)]
struct State {
    /// By (namespace, name).
    objects: HashMap<(String, String), Entry>,
    /// A relist in progress: the new contents, swapped in at InitDone.
    relist: Option<HashMap<(String, String), Entry>>,
}

/// The cache of one kind. Clones share it.
#[derive(Clone)]
pub struct TextCache {
    ar: ApiResource,
    state: Arc<RwLock<State>>,
    ready: watch::Receiver<bool>,
    ready_tx: Arc<watch::Sender<bool>>,
}

fn key(o: &DynamicObject) -> (String, String) {
    (
        o.metadata.namespace.clone().unwrap_or_default(),
        o.metadata.name.clone().unwrap_or_default(),
    )
}

fn entry(o: &DynamicObject) -> Entry {
    Entry {
        owners: o
            .metadata
            .owner_references
            .iter()
            .flatten()
            .map(|r| r.uid.clone())
            .collect(),
        managed: o
            .metadata
            .labels
            .as_ref()
            .is_some_and(|l| l.get(LABEL_MANAGED).map(String::as_str) == Some("true")),
        text: serde_json::to_string(o)
            .unwrap_or_default()
            .into_boxed_str(),
    }
}

impl TextCache {
    pub fn new(ar: ApiResource) -> TextCache {
        let (tx, rx) = watch::channel(false);
        TextCache {
            ar,
            state: Arc::new(RwLock::new(State::default())),
            ready: rx,
            ready_tx: Arc::new(tx),
        }
    }

    /// Applies the events of `stream` as they pass.
    pub fn reflect<S>(&self, stream: S) -> impl Stream<Item = S::Item> + Send + use<S>
    where
        S: Stream<Item = Result<watcher::Event<DynamicObject>, watcher::Error>> + Send,
    {
        let cache = self.clone();
        stream.inspect(move |ev| {
            if let Ok(ev) = ev {
                cache.apply(ev);
            }
        })
    }

    pub(super) fn apply(&self, ev: &watcher::Event<DynamicObject>) {
        let mut st = self.state.write().unwrap_or_else(|e| e.into_inner());
        match ev {
            watcher::Event::Apply(o) => {
                st.objects.insert(key(o), entry(o));
            }
            watcher::Event::Delete(o) => {
                st.objects.remove(&key(o));
            }
            watcher::Event::Init => st.relist = Some(HashMap::new()),
            watcher::Event::InitApply(o) => {
                st.relist
                    .get_or_insert_with(HashMap::new)
                    .insert(key(o), entry(o));
            }
            watcher::Event::InitDone => {
                if let Some(fresh) = st.relist.take() {
                    st.objects = fresh;
                }
                let _ = self.ready_tx.send(true);
            }
        }
    }

    /// Resolves once the first list is in.
    pub async fn wait_ready(&self) {
        let mut rx = self.ready.clone();
        let _ = rx.wait_for(|r| *r).await;
    }

    /// The objects of `namespace` that `pick(name, owner uids)` selects, parsed, with
    /// apiVersion and kind.
    pub fn select(&self, namespace: &str, pick: impl Fn(&str, &[String]) -> bool) -> Vec<Value> {
        let st = self.state.read().unwrap_or_else(|e| e.into_inner());
        st.objects
            .iter()
            .filter(|((ns, name), e)| ns == namespace && pick(name, &e.owners))
            .filter_map(|(_, e)| serde_json::from_str::<Value>(&e.text).ok())
            .map(|mut v| {
                if let Value::Object(m) = &mut v {
                    m.insert("apiVersion".into(), self.ar.api_version.clone().into());
                    m.insert("kind".into(), self.ar.kind.clone().into());
                }
                v
            })
            .collect()
    }

    /// How many objects carry the adapter's `managed` label.
    pub fn managed(&self) -> usize {
        let st = self.state.read().unwrap_or_else(|e| e.into_inner());
        st.objects.values().filter(|e| e.managed).count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(name: &str, owner: &str) -> DynamicObject {
        serde_json::from_value(json!({"apiVersion": "helm.toolkit.fluxcd.io/v2",
            "kind": "HelmRelease", "metadata": {"name": name, "namespace": "ns",
            "labels": {LABEL_MANAGED: "true"},
            "ownerReferences": [{"apiVersion": "v1", "kind": "X", "name": "x", "uid": owner}]},
            "spec": {"interval": "1m"}}))
        .unwrap()
    }

    #[test]
    fn follows_the_events_and_relists() {
        let ar = ApiResource {
            group: "helm.toolkit.fluxcd.io".into(),
            version: "v2".into(),
            api_version: "helm.toolkit.fluxcd.io/v2".into(),
            kind: "HelmRelease".into(),
            plural: "helmreleases".into(),
        };
        let c = TextCache::new(ar);
        c.apply(&watcher::Event::Init);
        c.apply(&watcher::Event::InitApply(obj("a", "u1")));
        assert!(
            c.select("ns", |_, _| true).is_empty(),
            "not before InitDone"
        );
        c.apply(&watcher::Event::InitDone);
        c.apply(&watcher::Event::Apply(obj("b", "u2")));
        let owned = c.select("ns", |_, o| o.iter().any(|u| u == "u2"));
        assert_eq!(owned.len(), 1);
        assert_eq!(owned[0]["metadata"]["name"], "b");
        assert_eq!(owned[0]["kind"], "HelmRelease");
        assert_eq!(c.managed(), 2);
        c.apply(&watcher::Event::Delete(obj("a", "u1")));
        assert_eq!(c.select("ns", |_, _| true).len(), 1);
        // A relist replaces everything at its end.
        c.apply(&watcher::Event::Init);
        c.apply(&watcher::Event::InitApply(obj("c", "u3")));
        c.apply(&watcher::Event::InitDone);
        let names: Vec<Value> = c
            .select("ns", |_, _| true)
            .iter()
            .map(|v| v["metadata"]["name"].clone())
            .collect();
        assert_eq!(names, [json!("c")]);
        assert!(c.select("other", |_, _| true).is_empty());
    }
}

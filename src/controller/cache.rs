//! A watch cache for the Flux objects that keeps each object as its JSON text, compressed.
//!
//! A parsed object (kube's `DynamicObject`, a `serde_json::Value` tree) takes about four times
//! the memory of its JSON; an adapter caches every HelmRelease and Kustomization of the
//! cluster but reads only the few of the ServiceSet it reconciles. So the text is kept, with
//! the handful of fields the lookups need, and parsed on read. The objects of a kind look
//! alike (the same keys, labels, managedFields, conditions; the adapter wrote most of them
//! from one template), so each text is compressed against the text of the first object the
//! cache saw ([`super::compact`]).
//!
//! Lookups are indexed: a reconcile reads the objects of one ServiceSet, by name prefix within
//! its namespace or by owner, and must not scan the whole cache (at 10,000 ServiceSets × 5
//! services, a scan per reconcile made converging quadratic).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;
use std::sync::{Arc, RwLock};

use futures::{Stream, StreamExt};
use kube::api::ObjectMeta;
use kube::discovery::ApiResource;
use kube::runtime::watcher;
use serde::de::{self, Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::Value;
use tokio::sync::watch;

use super::cached::{Copy, dynamic_resource};
use super::compact::{Packed, Packer};
use super::watch::{slim_meta, slim_status};
use crate::api::naming::LABEL_MANAGED;

struct Entry {
    /// uids of the ownerReferences.
    owners: Box<[Box<str>]>,
    managed: bool,
    /// The JSON text, compressed against the first text of the cache.
    packed: Packed,
}

/// (namespace, name), shared by the map and the owner index.
type Key = (String, String);

#[derive(Default)]
struct State {
    /// By (namespace, name), in order: the objects of a name prefix are one range.
    objects: BTreeMap<Arc<Key>, Entry>,
    /// Owner uid → the objects it owns.
    owned: HashMap<Box<str>, Vec<Arc<Key>>>,
    /// A relist in progress: the new contents, swapped in at InitDone.
    relist: Option<BTreeMap<Arc<Key>, Entry>>,
    /// What every text is compressed with.
    packer: Packer,
}

impl State {
    fn index(&mut self, key: &Arc<Key>, owners: &[Box<str>]) {
        for uid in owners {
            let keys = self.owned.entry(uid.clone()).or_default();
            if !keys.iter().any(|k| **k == **key) {
                keys.push(key.clone());
            }
        }
    }

    fn unindex(&mut self, key: &Key, owners: &[Box<str>]) {
        for uid in owners {
            if let Some(keys) = self.owned.get_mut(uid) {
                keys.retain(|k| **k != *key);
                if keys.is_empty() {
                    self.owned.remove(uid);
                }
            }
        }
    }

    fn insert(&mut self, key: Key, e: Entry) {
        let key = match self.objects.get_key_value(&key) {
            Some((k, _)) => k.clone(),
            None => Arc::new(key),
        };
        self.index(&key, &e.owners);
        if let Some(old) = self.objects.insert(key.clone(), e) {
            // Owners the new version still has were just indexed again: unindex only the rest.
            let now = &self.objects[&*key].owners;
            let gone: Vec<Box<str>> = old
                .owners
                .into_iter()
                .filter(|u| !now.contains(u))
                .collect();
            self.unindex(&key, &gone);
        }
    }

    fn remove(&mut self, key: &Key) {
        if let Some(old) = self.objects.remove(key) {
            self.unindex(key, &old.owners);
        }
    }

    fn replace(&mut self, fresh: BTreeMap<Arc<Key>, Entry>) {
        self.objects = fresh;
        let mut owned: HashMap<Box<str>, Vec<Arc<Key>>> = HashMap::new();
        for (k, e) in &self.objects {
            for uid in &e.owners {
                let keys = owned.entry(uid.clone()).or_default();
                // An owner listed twice by one object is indexed once.
                if !keys.last().is_some_and(|l| Arc::ptr_eq(l, k)) {
                    keys.push(k.clone());
                }
            }
        }
        self.owned = owned;
    }

    fn entry(&mut self, o: &TextObject) -> Entry {
        Entry {
            owners: o
                .metadata
                .owner_references
                .iter()
                .flatten()
                .map(|r| r.uid.as_str().into())
                .collect(),
            managed: o
                .metadata
                .labels
                .as_ref()
                .is_some_and(|l| l.get(LABEL_MANAGED).map(String::as_str) == Some("true")),
            packed: self.packer.pack(&o.text),
        }
    }

    /// An entry's object, parsed.
    fn object(&self, e: &Entry) -> Option<Value> {
        self.packer.unpack(&e.packed).ok()
    }
}

/// A Flux object as its watch reads it for the cache: its metadata parsed (what the watch and
/// the lookups read) and the whole object as JSON text, both slimmed ([`slim_meta`],
/// [`slim_status`]). Only the status is parsed as a tree (to be slimmed); the other fields
/// (apiVersion, kind, spec) are copied as text as they are parsed. (kube's `DynamicObject`
/// buffers every field but the metadata before building them as a tree, which the cache then
/// wrote out again.)
#[derive(Clone, Debug)]
pub struct TextObject {
    pub metadata: ObjectMeta,
    /// The object's JSON text, its metadata first.
    pub text: Vec<u8>,
}

dynamic_resource!(TextObject);

impl<'de> Deserialize<'de> for TextObject {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<TextObject, D::Error> {
        struct Fields;
        impl<'de> Visitor<'de> for Fields {
            type Value = TextObject;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an object")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<TextObject, A::Error> {
                let mut metadata: Option<ObjectMeta> = None;
                let mut status: Option<Value> = None;
                // `,"key":value` of every other field.
                let mut rest = Vec::new();
                while let Some(key) = map.next_key::<String>()? {
                    match key.as_str() {
                        "metadata" => metadata = Some(map.next_value()?),
                        "status" => status = Some(map.next_value()?),
                        _ => {
                            rest.push(b',');
                            serde_json::to_writer(&mut rest, &key).map_err(de::Error::custom)?;
                            rest.push(b':');
                            map.next_value_seed(Copy(&mut rest))?;
                        }
                    }
                }
                let mut metadata = metadata.ok_or_else(|| de::Error::missing_field("metadata"))?;
                slim_meta(&mut metadata);
                let mut text = b"{\"metadata\":".to_vec();
                serde_json::to_writer(&mut text, &metadata).map_err(de::Error::custom)?;
                text.extend_from_slice(&rest);
                if let Some(mut status) = status {
                    slim_status(&mut status);
                    text.extend_from_slice(b",\"status\":");
                    serde_json::to_writer(&mut text, &status).map_err(de::Error::custom)?;
                }
                text.push(b'}');
                Ok(TextObject { metadata, text })
            }
        }
        d.deserialize_map(Fields)
    }
}

/// The cache of one kind. Clones share it.
#[derive(Clone)]
pub struct TextCache {
    ar: ApiResource,
    state: Arc<RwLock<State>>,
    ready: watch::Receiver<bool>,
    ready_tx: Arc<watch::Sender<bool>>,
}

fn key(o: &TextObject) -> Key {
    (
        o.metadata.namespace.clone().unwrap_or_default(),
        o.metadata.name.clone().unwrap_or_default(),
    )
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
        S: Stream<Item = Result<watcher::Event<TextObject>, watcher::Error>> + Send,
    {
        let cache = self.clone();
        stream.inspect(move |ev| {
            if let Ok(ev) = ev {
                cache.apply(ev);
            }
        })
    }

    pub(super) fn apply(&self, ev: &watcher::Event<TextObject>) {
        let mut st = self.state.write().unwrap_or_else(|e| e.into_inner());
        match ev {
            watcher::Event::Apply(o) => {
                let e = st.entry(o);
                st.insert(key(o), e);
            }
            watcher::Event::Delete(o) => st.remove(&key(o)),
            watcher::Event::Init => st.relist = Some(BTreeMap::new()),
            watcher::Event::InitApply(o) => {
                let e = st.entry(o);
                st.relist
                    .get_or_insert_with(BTreeMap::new)
                    .insert(Arc::new(key(o)), e);
            }
            watcher::Event::InitDone => {
                if let Some(fresh) = st.relist.take() {
                    st.replace(fresh);
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

    /// The objects of `namespace` whose name starts with `prefix` or that `owner` (a uid) owns,
    /// parsed, with apiVersion and kind, in name order.
    pub fn select(&self, namespace: &str, prefix: &str, owner: &str) -> Vec<Value> {
        let st = self.state.read().unwrap_or_else(|e| e.into_inner());
        let by_name = st
            .objects
            .range((namespace.to_string(), prefix.to_string())..)
            .take_while(|(k, _)| k.0 == namespace && k.1.starts_with(prefix))
            .map(|(k, _)| &**k);
        let by_owner = st
            .owned
            .get(owner)
            .into_iter()
            .flatten()
            .map(|k| &**k)
            .filter(|(ns, _)| ns == namespace);
        let keys: BTreeSet<&Key> = by_name.chain(by_owner).collect();
        keys.into_iter()
            .filter_map(|k| st.objects.get(k))
            .filter_map(|e| st.object(e))
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
    use crate::api::naming::{ANNOTATION_LAST_APPLIED, FIELD_MANAGER};
    use serde_json::json;

    fn obj(name: &str, owner: &str) -> TextObject {
        serde_json::from_value(json!({"apiVersion": "helm.toolkit.fluxcd.io/v2",
            "kind": "HelmRelease", "metadata": {"name": name, "namespace": "ns",
            "labels": {LABEL_MANAGED: "true"},
            "ownerReferences": [{"apiVersion": "v1", "kind": "X", "name": "x", "uid": owner}]},
            "spec": {"interval": "1m"}}))
        .unwrap()
    }

    fn ar() -> ApiResource {
        ApiResource {
            group: "helm.toolkit.fluxcd.io".into(),
            version: "v2".into(),
            api_version: "helm.toolkit.fluxcd.io/v2".into(),
            kind: "HelmRelease".into(),
            plural: "helmreleases".into(),
        }
    }

    fn names(objects: Vec<Value>) -> Vec<String> {
        objects
            .iter()
            .map(|v| v["metadata"]["name"].as_str().unwrap().to_string())
            .collect()
    }

    /// A HelmRelease as Flux leaves it: other managers' entries, the last-applied annotation,
    /// a long history, values of every JSON type, strings with escapes.
    fn full() -> Value {
        json!({"apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease",
            "metadata": {"name": "a", "namespace": "ns", "uid": "u", "resourceVersion": "9",
                "generation": 2, "creationTimestamp": "2026-01-01T00:00:00Z",
                "annotations": {ANNOTATION_LAST_APPLIED: "{}", "note": "<a & \"b\">\n"},
                "managedFields": [
                    {"manager": FIELD_MANAGER, "operation": "Apply", "fieldsType": "FieldsV1",
                        "fieldsV1": {"f:spec": {}}, "time": "2026-01-01T00:00:00Z"},
                    {"manager": "helm-controller", "operation": "Update",
                        "subresource": "status", "fieldsV1": {"f:status": {}}}]},
            "spec": {"interval": "1m", "values": {"a": [1, -2, 2.5, 1e300, null, true, "\u{e9}\t"],
                "o": {}, "l": []}},
            "status": {"observedGeneration": 2, "history": [{"v": 3}, {"v": 2}, {"v": 1}],
                "conditions": [{"type": "Ready", "status": "True"}]}})
    }

    /// What the cache kept before: kube's object, slimmed, written out.
    fn as_dynamic(v: &Value) -> Value {
        let mut o: kube::api::DynamicObject = serde_json::from_value(v.clone()).unwrap();
        super::super::watch::slim(&mut o);
        serde_json::to_value(&o).unwrap()
    }

    #[test]
    fn an_object_read_as_text_is_what_the_parsed_object_slimmed_was() {
        let mut no_status = full();
        no_status.as_object_mut().unwrap().remove("status");
        let mut null_status = full();
        null_status["status"] = Value::Null;
        for v in [
            full(),
            no_status,
            null_status,
            json!({"metadata": {"name": "m"}}),
        ] {
            let o: TextObject = serde_json::from_str(&v.to_string()).unwrap();
            let text: Value = serde_json::from_slice(&o.text).unwrap();
            assert_eq!(text, as_dynamic(&v), "{v}");
            assert_eq!(text["metadata"], serde_json::to_value(&o.metadata).unwrap());
        }
        let o: TextObject = serde_json::from_str(&full().to_string()).unwrap();
        let text: Value = serde_json::from_slice(&o.text).unwrap();
        assert_eq!(text["status"]["history"], json!([{"v": 3}]));
        assert_eq!(o.metadata.managed_fields.as_ref().map(Vec::len), Some(1));
        // kube reads a list's items from a buffered map: the same object.
        let list = json!({"apiVersion": "v1", "kind": "List", "metadata": {}, "items": [full()]});
        let list: kube::core::ObjectList<TextObject> = serde_json::from_value(list).unwrap();
        assert_eq!(
            serde_json::from_slice::<Value>(&list.items[0].text).unwrap(),
            text
        );
        for bad in [json!({"spec": {}}), json!([]), json!({"metadata": 1})] {
            assert!(
                serde_json::from_value::<TextObject>(bad.clone()).is_err(),
                "{bad}"
            );
        }
    }

    #[test]
    fn selects_by_name_prefix_and_by_owner_through_updates() {
        let c = TextCache::new(ar());
        c.apply(&watcher::Event::Init);
        c.apply(&watcher::Event::InitDone);
        for (name, owner) in [
            ("set-a", "u1"),
            ("set-b", "u1"),
            ("set-x-a", "u2"),
            ("other", "u1"),
            ("zzz", "u3"),
        ] {
            c.apply(&watcher::Event::Apply(obj(name, owner)));
        }
        // "set-" also matches the objects of a set named "set-x": callers check the owner.
        assert_eq!(
            names(c.select("ns", "set-", "none")),
            ["set-a", "set-b", "set-x-a"]
        );
        assert_eq!(
            names(c.select("ns", "set-b", "u1")),
            ["other", "set-a", "set-b"]
        );
        assert!(c.select("elsewhere", "set-", "u1").is_empty());
        // An owner that changes moves the object in the index; a deletion removes it.
        c.apply(&watcher::Event::Apply(obj("other", "u3")));
        assert_eq!(names(c.select("ns", "-", "u1")), ["set-a", "set-b"]);
        assert_eq!(names(c.select("ns", "-", "u3")), ["other", "zzz"]);
        c.apply(&watcher::Event::Delete(obj("zzz", "u3")));
        assert_eq!(names(c.select("ns", "-", "u3")), ["other"]);
        c.apply(&watcher::Event::Delete(obj("other", "u3")));
        let st = c.state.read().unwrap();
        assert!(!st.owned.contains_key("u3"), "no empty index entries left");
    }

    #[test]
    fn follows_the_events_and_relists() {
        let c = TextCache::new(ar());
        c.apply(&watcher::Event::Init);
        c.apply(&watcher::Event::InitApply(obj("a", "u1")));
        assert!(c.select("ns", "", "").is_empty(), "not before InitDone");
        c.apply(&watcher::Event::InitDone);
        c.apply(&watcher::Event::Apply(obj("b", "u2")));
        let owned = c.select("ns", "zz", "u2");
        assert_eq!(owned.len(), 1);
        assert_eq!(owned[0]["metadata"]["name"], "b");
        assert_eq!(owned[0]["kind"], "HelmRelease");
        assert_eq!(c.managed(), 2);
        c.apply(&watcher::Event::Delete(obj("a", "u1")));
        assert_eq!(c.select("ns", "", "").len(), 1);
        // A relist replaces everything at its end.
        c.apply(&watcher::Event::Init);
        c.apply(&watcher::Event::InitApply(obj("c", "u3")));
        c.apply(&watcher::Event::InitDone);
        let names: Vec<Value> = c
            .select("ns", "", "")
            .iter()
            .map(|v| v["metadata"]["name"].clone())
            .collect();
        assert_eq!(names, [json!("c")]);
        assert!(c.select("other", "", "").is_empty());
    }
}

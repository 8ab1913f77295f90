//! The server's state: resource types, objects, the resourceVersion counter, the event history
//! and the watchers. Every write goes through [`State::commit`], under one lock, so watches see
//! events in resourceVersion order with no gap between their start and the live stream.

use std::collections::{BTreeMap, HashMap, VecDeque};

use serde_json::{Map, Value, json};
use tokio::sync::mpsc::UnboundedSender;

use super::fields::{self, Entry, Scope};
use super::registry::{self, ResourceType, TypeKey};
use super::selector::{FieldSelector, LabelSelector};
use super::status::{ApiError, ApiResult, success_status};
use super::{Fault, RequestRecord};

pub const CRD_KEY: (&str, &str) = ("apiextensions.k8s.io", "customresourcedefinitions");

pub fn now_rfc3339() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

pub fn meta_str<'a>(obj: &'a Value, key: &str) -> Option<&'a str> {
    obj.get("metadata")?
        .get(key)?
        .as_str()
        .filter(|s| !s.is_empty())
}

fn meta_mut(obj: &mut Value) -> &mut Map<String, Value> {
    if !obj.get("metadata").is_some_and(Value::is_object) {
        obj["metadata"] = json!({});
    }
    obj["metadata"]
        .as_object_mut()
        .expect("metadata is an object")
}

fn finalizers(obj: &Value) -> usize {
    obj.pointer("/metadata/finalizers")
        .and_then(Value::as_array)
        .map_or(0, Vec::len)
}

fn random_suffix() -> String {
    const ALPHA: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    let u = uuid::Uuid::new_v4();
    u.as_bytes()[..5]
        .iter()
        .map(|b| ALPHA[*b as usize % ALPHA.len()] as char)
        .collect()
}

fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 253
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '.')
        && name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name.ends_with(|c: char| c.is_ascii_alphanumeric())
}

/// Who writes, and how.
#[derive(Debug, Clone)]
pub struct WriteCtx {
    pub manager: String,
    pub dry_run: bool,
    /// A test helper seeding state: no namespace check, status and metadata kept as given.
    pub seed: bool,
}

impl WriteCtx {
    pub fn seed() -> Self {
        WriteCtx {
            manager: "fakeapi-test".into(),
            dry_run: false,
            seed: true,
        }
    }
}

/// How an update sets `managedFields`.
enum Managed {
    /// Track the writer's changes as an `Update` operation.
    Track,
    /// Already computed (server-side apply).
    Set(Vec<Entry>),
}

/// The kinds of patch bodies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatchType {
    Json,
    Merge,
    Strategic,
    Apply,
}

#[derive(Debug, Clone, Default)]
pub struct DeleteOpts {
    pub propagation: Option<String>,
    pub precondition_uid: Option<String>,
    pub precondition_rv: Option<String>,
    pub dry_run: bool,
}

struct Event {
    rv: u64,
    key: TypeKey,
    etype: &'static str,
    object: Value,
    old: Option<Value>,
}

pub struct Watcher {
    pub id: u64,
    pub key: TypeKey,
    pub rt: ResourceType,
    pub version: String,
    pub namespace: Option<String>,
    pub labels: LabelSelector,
    pub fields: FieldSelector,
    pub tx: UnboundedSender<(u64, Value)>,
}

impl Watcher {
    fn matches(&self, obj: &Value) -> bool {
        if let Some(ns) = &self.namespace
            && meta_str(obj, "namespace").unwrap_or("") != ns
        {
            return false;
        }
        self.labels.matches(obj) && self.fields.matches(obj)
    }

    /// The event this watcher sees for a change, if any: a MODIFIED that enters (leaves) the
    /// selection is an ADDED (DELETED), as from the real watch cache.
    fn event_for(&self, ev: &Event) -> Option<Value> {
        if ev.key != self.key {
            return None;
        }
        let now = self.matches(&ev.object);
        let before = ev.old.as_ref().is_some_and(|o| self.matches(o));
        let etype = match (ev.etype, before, now) {
            ("MODIFIED", false, true) => "ADDED",
            ("MODIFIED", true, false) => "DELETED",
            ("MODIFIED", false, false) => return None,
            (t, _, true) => t,
            _ => return None,
        };
        Some(json!({"type": etype, "object": present(&ev.object, &self.rt, &self.version)}))
    }
}

/// The object as served at `version`.
pub fn present(obj: &Value, rt: &ResourceType, version: &str) -> Value {
    let mut o = obj.clone();
    if let Some(m) = o.as_object_mut() {
        m.insert("apiVersion".into(), json!(rt.api_version(version)));
        m.insert("kind".into(), json!(rt.kind));
    }
    o
}

pub struct State {
    pub types: Vec<ResourceType>,
    objects: BTreeMap<TypeKey, BTreeMap<(String, String), Value>>,
    pub rv: u64,
    history: VecDeque<Event>,
    pub history_window: usize,
    compacted_rv: u64,
    watchers: Vec<Watcher>,
    next_id: u64,
    pages: HashMap<u64, (u64, Vec<Value>)>,
    pub requests: Vec<RequestRecord>,
    /// The structural schemas of the custom resources, as the real server defaults and
    /// prunes them before it stores an object.
    schemas: HashMap<TypeKey, std::sync::Arc<kubectl_ksm::core::schema::Crd>>,
    /// The CRDs' `openAPIV3Schema` per type and version, for what field ownership needs of
    /// them (which objects are maps).
    raw_schemas: HashMap<TypeKey, HashMap<String, Value>>,
    pub faults: Vec<Fault>,
    /// Objects (`resource/namespace/name`) whose first write a
    /// `Fault::ConflictOnFirstWrite` has refused.
    pub first_writes: std::collections::HashSet<String>,
}

impl State {
    pub fn new(history_window: usize) -> Self {
        let mut s = State {
            types: registry::builtins(),
            objects: BTreeMap::new(),
            rv: 0,
            history: VecDeque::new(),
            history_window: history_window.max(1),
            compacted_rv: 0,
            watchers: Vec::new(),
            next_id: 1,
            pages: HashMap::new(),
            requests: Vec::new(),
            schemas: HashMap::new(),
            raw_schemas: HashMap::new(),
            faults: Vec::new(),
            first_writes: Default::default(),
        };
        let ns = s.type_by_key("", "namespaces").expect("namespaces");
        for name in ["default", "kube-system", "kube-public", "kube-node-lease"] {
            let obj = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}});
            s.create(&ns, "v1", None, obj, &WriteCtx::seed(), None)
                .expect("seed namespace");
        }
        s
    }

    pub fn type_by_key(&self, group: &str, plural: &str) -> Option<ResourceType> {
        self.types
            .iter()
            .find(|t| t.group == group && t.plural == plural)
            .cloned()
    }

    pub fn type_for(&self, group: &str, version: &str, plural: &str) -> Option<ResourceType> {
        self.types
            .iter()
            .find(|t| t.group == group && t.plural == plural && t.serves(version))
            .cloned()
    }

    /// By `apiVersion` and `kind` (for the test helpers).
    pub fn type_by_kind(&self, api_version: &str, kind: &str) -> Option<(ResourceType, String)> {
        let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
        self.types
            .iter()
            .find(|t| t.group == group && t.kind == kind && t.serves(version))
            .map(|t| (t.clone(), version.to_string()))
    }

    fn bucket(&self, rt: &ResourceType) -> Option<&BTreeMap<(String, String), Value>> {
        self.objects.get(&rt.key())
    }

    fn stored(&self, rt: &ResourceType, ns: &str, name: &str) -> Option<&Value> {
        let ns = if rt.namespaced { ns } else { "" };
        self.bucket(rt)?.get(&(ns.to_string(), name.to_string()))
    }

    pub fn get(&self, rt: &ResourceType, version: &str, ns: &str, name: &str) -> ApiResult<Value> {
        self.stored(rt, ns, name)
            .map(|o| present(o, rt, version))
            .ok_or_else(|| ApiError::not_found(rt, name))
    }

    /// The objects of a type, in `(namespace, name)` order (etcd key order).
    pub fn count(&self, rt: &ResourceType, pred: impl Fn(&Value) -> bool) -> usize {
        self.bucket(rt)
            .into_iter()
            .flat_map(|b| b.iter())
            .filter(|(_, o)| pred(o))
            .count()
    }

    pub fn select(
        &self,
        rt: &ResourceType,
        version: &str,
        ns: Option<&str>,
        labels: &LabelSelector,
        fields: &FieldSelector,
    ) -> Vec<Value> {
        self.bucket(rt)
            .into_iter()
            .flat_map(|b| b.iter())
            .filter(|((ons, _), o)| {
                ns.is_none_or(|n| n == ons) && labels.matches(o) && fields.matches(o)
            })
            .map(|(_, o)| present(o, rt, version))
            .collect()
    }

    #[allow(clippy::too_many_arguments)]
    pub fn list(
        &mut self,
        rt: &ResourceType,
        version: &str,
        ns: Option<&str>,
        labels: &LabelSelector,
        fields: &FieldSelector,
        limit: Option<usize>,
        cont: Option<&str>,
        rv: Option<&str>,
    ) -> ApiResult<Value> {
        if let Some(rv) = rv.filter(|r| !r.is_empty() && *r != "0") {
            let n: u64 = rv
                .parse()
                .map_err(|_| ApiError::bad_request(format!("invalid resource version: {rv}")))?;
            if n < self.compacted_rv && cont.is_none() {
                return Err(ApiError::expired(format!(
                    "too old resource version: {n} ({})",
                    self.compacted_rv
                )));
            }
        }
        let (list_rv, items, offset, page_id) = match cont.filter(|c| !c.is_empty()) {
            Some(token) => {
                let expired = || {
                    ApiError::expired(
                        "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.",
                    )
                };
                let (id, off) = decode_continue(token)
                    .ok_or_else(|| ApiError::bad_request("continue key is not valid"))?;
                let (prv, items) = self.pages.get(&id).cloned().ok_or_else(expired)?;
                (prv, items, off, Some(id))
            }
            None => (
                self.rv,
                self.select(rt, version, ns, labels, fields),
                0,
                None,
            ),
        };
        let total = items.len();
        let end = match limit.filter(|l| *l > 0) {
            Some(l) => (offset + l).min(total),
            None => total,
        };
        let page: Vec<Value> = items
            .get(offset..end)
            .map(<[Value]>::to_vec)
            .unwrap_or_default();
        let mut meta = json!({"resourceVersion": list_rv.to_string()});
        if end < total {
            let id = match page_id {
                Some(id) => id,
                None => {
                    let id = self.next_id;
                    self.next_id += 1;
                    if self.pages.len() >= 64
                        && let Some(oldest) = self.pages.keys().min().copied()
                    {
                        self.pages.remove(&oldest);
                    }
                    self.pages.insert(id, (list_rv, items.clone()));
                    id
                }
            };
            meta["continue"] = json!(encode_continue(id, end));
            if labels == &LabelSelector::default() && fields.is_empty() {
                meta["remainingItemCount"] = json!(total - end);
            }
        }
        Ok(json!({
            "kind": rt.list_kind,
            "apiVersion": rt.api_version(version),
            "metadata": meta,
            "items": page,
        }))
    }

    // ---- writes ----------------------------------------------------------------------------

    fn emit(&mut self, key: TypeKey, etype: &'static str, object: Value, old: Option<Value>) {
        let ev = Event {
            rv: self.rv,
            key,
            etype,
            object,
            old,
        };
        self.watchers.retain(|w| match w.event_for(&ev) {
            Some(e) => w.tx.send((ev.rv, e)).is_ok(),
            None => !w.tx.is_closed(),
        });
        self.history.push_back(ev);
        while self.history.len() > self.history_window {
            if let Some(e) = self.history.pop_front() {
                self.compacted_rv = e.rv;
            }
        }
    }

    /// Stores `obj` (a create or an update) with the next resourceVersion.
    fn commit(&mut self, rt: &ResourceType, mut obj: Value) -> Value {
        self.rv += 1;
        meta_mut(&mut obj).insert("resourceVersion".into(), json!(self.rv.to_string()));
        let ns = if rt.namespaced {
            meta_str(&obj, "namespace").unwrap_or("").to_string()
        } else {
            String::new()
        };
        let name = meta_str(&obj, "name").unwrap_or("").to_string();
        let old = self
            .objects
            .entry(rt.key())
            .or_default()
            .insert((ns, name), obj.clone());
        let etype = if old.is_some() { "MODIFIED" } else { "ADDED" };
        self.emit(rt.key(), etype, obj.clone(), old);
        obj
    }

    /// Removes an object for good, then what depends on it (namespace contents, a CRD's
    /// objects, garbage-collected dependents).
    fn remove(&mut self, rt: &ResourceType, mut obj: Value, propagation: &str) -> Value {
        let ns = if rt.namespaced {
            meta_str(&obj, "namespace").unwrap_or("").to_string()
        } else {
            String::new()
        };
        let name = meta_str(&obj, "name").unwrap_or("").to_string();
        let Some(old) = self
            .objects
            .get_mut(&rt.key())
            .and_then(|b| b.remove(&(ns.clone(), name.clone())))
        else {
            return obj;
        };
        self.rv += 1;
        meta_mut(&mut obj).insert("resourceVersion".into(), json!(self.rv.to_string()));
        self.emit(rt.key(), "DELETED", obj.clone(), Some(old));
        let uid = meta_str(&obj, "uid").unwrap_or("").to_string();
        if (rt.group.as_str(), rt.plural.as_str()) == CRD_KEY {
            self.unregister_crd(&obj);
        }
        if rt.group.is_empty() && rt.plural == "namespaces" {
            self.empty_namespace(&name);
        }
        if propagation != "Orphan" {
            self.collect_dependents(&uid, propagation);
        }
        if rt.namespaced {
            self.finish_namespace_if_empty(&ns);
        }
        obj
    }

    fn all_objects(&self) -> Vec<(ResourceType, Value)> {
        let mut out = Vec::new();
        for t in &self.types {
            if let Some(b) = self.objects.get(&t.key()) {
                out.extend(b.values().map(|o| (t.clone(), o.clone())));
            }
        }
        out
    }

    fn dependents(&self, uid: &str) -> Vec<(ResourceType, Value)> {
        if uid.is_empty() {
            return Vec::new();
        }
        self.all_objects()
            .into_iter()
            .filter(|(_, o)| {
                o.pointer("/metadata/ownerReferences")
                    .and_then(Value::as_array)
                    .is_some_and(|refs| {
                        refs.iter()
                            .any(|r| r.get("uid").and_then(Value::as_str) == Some(uid))
                    })
            })
            .collect()
    }

    fn uid_exists(&self, uid: &str) -> bool {
        self.objects
            .values()
            .flat_map(|b| b.values())
            .any(|o| meta_str(o, "uid") == Some(uid))
    }

    /// The garbage collector, synchronously: dependents left with no living owner are deleted
    /// (with the same propagation), the dangling reference is dropped from the others.
    fn collect_dependents(&mut self, uid: &str, propagation: &str) {
        for (rt, dep) in self.dependents(uid) {
            let others = dep
                .pointer("/metadata/ownerReferences")
                .and_then(Value::as_array)
                .map(|refs| {
                    refs.iter()
                        .filter_map(|r| r.get("uid").and_then(Value::as_str))
                        .any(|u| u != uid && self.uid_exists(u))
                })
                .unwrap_or(false);
            if others {
                self.drop_owner_ref(&rt, dep, uid);
            } else {
                let _ = self.delete_object(&rt, dep, propagation);
            }
        }
    }

    fn drop_owner_ref(&mut self, rt: &ResourceType, mut dep: Value, uid: &str) {
        if let Some(refs) = dep
            .pointer_mut("/metadata/ownerReferences")
            .and_then(Value::as_array_mut)
        {
            refs.retain(|r| r.get("uid").and_then(Value::as_str) != Some(uid));
            if refs.is_empty() {
                meta_mut(&mut dep).remove("ownerReferences");
            }
        }
        self.commit(rt, dep);
    }

    /// Deletion of a stored object: finalizers make it wait with a deletionTimestamp.
    fn delete_object(&mut self, rt: &ResourceType, mut obj: Value, propagation: &str) -> Value {
        let uid = meta_str(&obj, "uid").unwrap_or("").to_string();
        match propagation {
            "Orphan" => {
                for (drt, dep) in self.dependents(&uid) {
                    self.drop_owner_ref(&drt, dep, &uid);
                }
            }
            "Foreground" => self.collect_dependents(&uid, "Foreground"),
            _ => {}
        }
        // Dependents may have rewritten it (never, for a tree; cheap to re-read).
        let ns = meta_str(&obj, "namespace").unwrap_or("").to_string();
        let name = meta_str(&obj, "name").unwrap_or("").to_string();
        if let Some(cur) = self.stored(rt, &ns, &name) {
            obj = cur.clone();
        } else {
            return obj;
        }
        if finalizers(&obj) > 0 {
            if obj.pointer("/metadata/deletionTimestamp").is_some() {
                return obj;
            }
            let m = meta_mut(&mut obj);
            m.insert("deletionTimestamp".into(), json!(now_rfc3339()));
            m.insert("deletionGracePeriodSeconds".into(), json!(0));
            if let Some(g) = m.get("generation").and_then(Value::as_i64) {
                m.insert("generation".into(), json!(g + 1));
            }
            if rt.group.is_empty() && rt.plural == "namespaces" {
                obj["status"] = json!({"phase": "Terminating"});
                self.commit(rt, obj.clone());
                self.empty_namespace(&name);
                return self.stored(rt, "", &name).cloned().unwrap_or(obj);
            }
            return self.commit(rt, obj);
        }
        if rt.group.is_empty() && rt.plural == "namespaces" {
            // Contents first; the namespace stays Terminating while some wait on finalizers.
            let m = meta_mut(&mut obj);
            if m.get("deletionTimestamp").is_none() {
                m.insert("deletionTimestamp".into(), json!(now_rfc3339()));
                m.insert("deletionGracePeriodSeconds".into(), json!(0));
                obj["status"] = json!({"phase": "Terminating"});
                obj = self.commit(rt, obj);
            }
            self.empty_namespace(&name);
            if self.namespace_has_content(&name) {
                return self.stored(rt, "", &name).cloned().unwrap_or(obj);
            }
        }
        self.remove(
            rt,
            obj,
            if propagation.is_empty() {
                "Background"
            } else {
                propagation
            },
        )
    }

    fn namespace_has_content(&self, ns: &str) -> bool {
        self.types.iter().filter(|t| t.namespaced).any(|t| {
            self.objects
                .get(&t.key())
                .is_some_and(|b| b.keys().any(|(n, _)| n == ns))
        })
    }

    fn empty_namespace(&mut self, ns: &str) {
        for (rt, o) in self.all_objects() {
            if rt.namespaced && meta_str(&o, "namespace") == Some(ns) {
                self.delete_object(&rt, o, "Background");
            }
        }
    }

    fn finish_namespace_if_empty(&mut self, ns: &str) {
        if ns.is_empty() {
            return;
        }
        let Some(nst) = self.type_by_key("", "namespaces") else {
            return;
        };
        let Some(nso) = self.stored(&nst, "", ns).cloned() else {
            return;
        };
        if nso.pointer("/metadata/deletionTimestamp").is_some()
            && finalizers(&nso) == 0
            && !self.namespace_has_content(ns)
        {
            self.remove(&nst, nso, "Background");
        }
    }

    fn unregister_crd(&mut self, crd: &Value) {
        let Ok(t) = registry::from_crd(crd) else {
            return;
        };
        if let Some(b) = self.objects.remove(&t.key()) {
            for (_, o) in b {
                self.rv += 1;
                let mut o = o;
                meta_mut(&mut o).insert("resourceVersion".into(), json!(self.rv.to_string()));
                self.emit(t.key(), "DELETED", o, None);
            }
        }
        self.schemas.remove(&t.key());
        self.raw_schemas.remove(&t.key());
        self.types.retain(|x| x.key() != t.key());
    }

    /// Whether the object at a path of this type's objects is a map (see
    /// [`fields::schema_is_map`]).
    fn is_map(&self, rt: &ResourceType, version: &str) -> impl Fn(&[String]) -> bool + use<> {
        let schema = self
            .raw_schemas
            .get(&rt.key())
            .and_then(|v| v.get(version))
            .cloned();
        move |path: &[String]| fields::schema_is_map(schema.as_ref(), path)
    }

    /// ObjectMeta's empty maps and lists are not kept (`omitempty`): a write that empties the
    /// labels, annotations, finalizers or owner references drops the field.
    /// So are a ConfigMap's or Secret's empty data maps (Go `map` fields, `omitempty`).
    fn tidy_meta(rt: &ResourceType, obj: &mut Value) {
        if !rt.custom
            && let Some(m) = obj.as_object_mut()
        {
            for k in ["data", "binaryData", "stringData"] {
                if m.get(k)
                    .and_then(Value::as_object)
                    .is_some_and(Map::is_empty)
                {
                    m.remove(k);
                }
            }
        }
        if let Some(m) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
            for k in ["labels", "annotations", "finalizers", "ownerReferences"] {
                let empty = match m.get(k) {
                    Some(Value::Object(x)) => x.is_empty(),
                    Some(Value::Array(x)) => x.is_empty(),
                    Some(Value::Null) => true,
                    _ => false,
                };
                if empty {
                    m.remove(k);
                }
            }
        }
    }

    /// What the real server does to a custom resource before storing it: unknown fields
    /// pruned, the schema's defaults filled in (apiextensions' structural defaulting).
    fn default_custom(&self, rt: &ResourceType, obj: &mut Value) {
        if let Some(crd) = self.schemas.get(&rt.key()) {
            crd.default_and_prune(obj);
        }
    }

    /// Registers what a CRD defines and fills in its status as an Established CRD. With
    /// `keep_status` (a test seeding a CRD saved from a cluster), a status that has conditions
    /// is kept as given.
    fn prepare_crd(&mut self, obj: &mut Value, dry_run: bool, keep_status: bool) -> ApiResult<()> {
        let name = meta_str(obj, "name").unwrap_or("").to_string();
        let crd_t = self.type_by_key(CRD_KEY.0, CRD_KEY.1).expect("crd type");
        let t =
            registry::from_crd(obj).map_err(|e| ApiError::invalid(&crd_t, &name, "spec", &e))?;
        let expect = format!("{}.{}", t.plural, t.group);
        if name != expect {
            return Err(ApiError::invalid(
                &crd_t,
                &name,
                "metadata.name",
                &format!("must be spec.names.plural+\".\"+spec.group: \"{expect}\""),
            ));
        }
        if let Some(other) = self.types.iter().find(|x| x.key() == t.key() && !x.custom) {
            return Err(ApiError::invalid(
                &crd_t,
                &name,
                "spec.group",
                &format!("{} is a built-in resource", other.qualified()),
            ));
        }
        let now = now_rfc3339();
        let cond = |ty: &str, reason: &str, msg: &str| json!({"type": ty, "status": "True", "lastTransitionTime": now, "reason": reason, "message": msg});
        let stored: Vec<Value> = obj
            .pointer("/spec/versions")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter(|v| v.get("storage").and_then(Value::as_bool) == Some(true))
            .filter_map(|v| v.get("name").cloned())
            .collect();
        let given = obj
            .pointer("/status/conditions")
            .and_then(Value::as_array)
            .is_some_and(|c| !c.is_empty());
        if !(keep_status && given) {
            obj["status"] = json!({
                "acceptedNames": obj.pointer("/spec/names").cloned().unwrap_or(json!({})),
                "conditions": [
                    cond("NamesAccepted", "NoConflicts", "no conflicts found"),
                    cond("Established", "InitialNamesAccepted", "the initial names have been accepted"),
                ],
                "storedVersions": stored,
            });
        }
        if !dry_run {
            let raw: HashMap<String, Value> = obj
                .pointer("/spec/versions")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|v| {
                    let schema = v.pointer("/schema/openAPIV3Schema")?.clone();
                    Some((v.get("name")?.as_str()?.to_string(), schema))
                })
                .collect();
            self.raw_schemas.insert(t.key(), raw);
            match kubectl_ksm::core::schema::Crd::from_json(obj) {
                Ok(crd) => {
                    self.schemas.insert(t.key(), std::sync::Arc::new(crd));
                }
                Err(_) => {
                    self.schemas.remove(&t.key());
                }
            }
            match self.types.iter_mut().find(|x| x.key() == t.key()) {
                Some(slot) => *slot = t,
                None => self.types.push(t),
            }
        }
        Ok(())
    }

    fn check_namespace(&self, ns: &str) -> ApiResult<()> {
        let nst = self.type_by_key("", "namespaces").expect("namespaces");
        match self.stored(&nst, "", ns) {
            None => Err(ApiError::not_found(&nst, ns)),
            Some(o) if o.pointer("/metadata/deletionTimestamp").is_some() => Err(ApiError::new(
                403,
                "Forbidden",
                format!(
                    "unable to create new content in namespace {ns} because it is being terminated"
                ),
            )),
            Some(_) => Ok(()),
        }
    }

    /// POST (and the create half of an apply).
    pub fn create(
        &mut self,
        rt: &ResourceType,
        version: &str,
        url_ns: Option<&str>,
        mut obj: Value,
        ctx: &WriteCtx,
        managed: Option<Vec<Entry>>,
    ) -> ApiResult<Value> {
        if !obj.is_object() {
            return Err(ApiError::bad_request(
                "the body of the request is not an object",
            ));
        }
        if let Some(k) = obj
            .get("kind")
            .and_then(Value::as_str)
            .filter(|k| !k.is_empty())
            && k != rt.kind
        {
            return Err(ApiError::bad_request(format!(
                "the kind of the object ({k}) does not match the resource ({})",
                rt.kind
            )));
        }
        let body_ns = meta_str(&obj, "namespace").map(str::to_string);
        let ns = if rt.namespaced {
            let ns = match (url_ns, body_ns.as_deref()) {
                (Some(u), Some(b)) if u != b => {
                    return Err(ApiError::bad_request(
                        "the namespace of the provided object does not match the namespace sent on the request",
                    ));
                }
                (Some(u), _) => u.to_string(),
                (None, Some(b)) => b.to_string(),
                (None, None) => "default".to_string(),
            };
            if !ctx.seed {
                self.check_namespace(&ns)?;
            }
            Some(ns)
        } else {
            None
        };
        let now = now_rfc3339();
        let name = match meta_str(&obj, "name") {
            Some(n) => n.to_string(),
            None => match meta_str(&obj, "generateName") {
                Some(g) => format!("{g}{}", random_suffix()),
                None => {
                    return Err(ApiError::invalid(
                        rt,
                        "",
                        "metadata.name",
                        "Required value: name or generateName is required",
                    ));
                }
            },
        };
        if !valid_name(&name) {
            return Err(ApiError::invalid(
                rt,
                &name,
                "metadata.name",
                &format!(
                    "Invalid value: \"{name}\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character"
                ),
            ));
        }
        if self
            .stored(rt, ns.as_deref().unwrap_or(""), &name)
            .is_some()
        {
            return Err(ApiError::already_exists(rt, &name));
        }
        obj["apiVersion"] = json!(rt.api_version(version));
        obj["kind"] = json!(rt.kind);
        let has_spec = obj.get("spec").is_some();
        {
            let seed = ctx.seed;
            let m = meta_mut(&mut obj);
            m.insert("name".into(), json!(name));
            match &ns {
                Some(n) => m.insert("namespace".into(), json!(n)),
                None => m.remove("namespace"),
            };
            m.remove("resourceVersion");
            m.remove("selfLink");
            if !seed || !m.contains_key("uid") {
                m.insert("uid".into(), json!(uuid::Uuid::new_v4().to_string()));
            }
            if !seed || !m.contains_key("creationTimestamp") {
                m.insert("creationTimestamp".into(), json!(now));
            }
            if !seed {
                m.remove("deletionTimestamp");
                m.remove("deletionGracePeriodSeconds");
                m.remove("generation");
                m.remove("managedFields");
            }
            if (rt.custom || has_spec) && !m.contains_key("generation") {
                m.insert("generation".into(), json!(1));
            }
        }
        if !ctx.seed
            && rt.status_subresource
            && let Some(m) = obj.as_object_mut()
        {
            m.remove("status");
        }
        self.default_custom(rt, &mut obj);
        Self::tidy_meta(rt, &mut obj);
        if rt.group.is_empty() && rt.plural == "namespaces" {
            meta_mut(&mut obj)
                .entry("labels")
                .or_insert_with(|| json!({}))
                .as_object_mut()
                .map(|l| l.insert("kubernetes.io/metadata.name".into(), json!(name)));
            if obj.pointer("/status/phase").is_none() {
                obj["status"] = json!({"phase": "Active"});
            }
            if obj.pointer("/spec/finalizers").is_none() {
                obj["spec"] = json!({"finalizers": ["kubernetes"]});
            }
        }
        if (rt.group.as_str(), rt.plural.as_str()) == CRD_KEY {
            self.prepare_crd(&mut obj, ctx.dry_run, ctx.seed)?;
        }
        let entries = match managed {
            Some(e) => e,
            None if ctx.seed => fields::read_managed(&obj),
            None => {
                let mut e = Vec::new();
                let scope = Scope::Main {
                    skip_status: rt.status_subresource,
                };
                fields::track_update(
                    &mut e,
                    &json!({}),
                    &obj,
                    scope,
                    &ctx.manager,
                    &rt.api_version(version),
                    &now,
                );
                e
            }
        };
        fields::write_managed(&mut obj, &entries);
        if ctx.dry_run {
            return Ok(obj);
        }
        Ok(self.commit(rt, obj))
    }

    /// PUT.
    #[allow(clippy::too_many_arguments)]
    pub fn update(
        &mut self,
        rt: &ResourceType,
        version: &str,
        ns: &str,
        name: &str,
        sub: Option<&str>,
        body: Value,
        ctx: &WriteCtx,
    ) -> ApiResult<Value> {
        let old = self.get(rt, version, ns, name)?;
        if !body.is_object() {
            return Err(ApiError::bad_request(
                "the body of the request is not an object",
            ));
        }
        self.finish_update(rt, version, old, body, sub, ctx, Managed::Track)
    }

    /// PATCH of any type; an apply creates a missing object (`Ok((obj, true))`).
    #[allow(clippy::too_many_arguments)]
    pub fn patch(
        &mut self,
        rt: &ResourceType,
        version: &str,
        ns: &str,
        name: &str,
        sub: Option<&str>,
        ptype: PatchType,
        body: &[u8],
        ctx: &WriteCtx,
        force: bool,
    ) -> ApiResult<(Value, bool)> {
        let parse_json = || -> ApiResult<Value> {
            serde_json::from_slice(body)
                .map_err(|e| ApiError::bad_request(format!("error decoding patch: {e}")))
        };
        if ptype == PatchType::Apply {
            return self.apply(rt, version, ns, name, sub, body, ctx, force);
        }
        let old = self.get(rt, version, ns, name)?;
        let mut new = old.clone();
        match ptype {
            PatchType::Json => {
                let p: json_patch::Patch = serde_json::from_slice(body).map_err(|e| {
                    ApiError::bad_request(format!("error decoding json patch: {e}"))
                })?;
                json_patch::patch(&mut new, &p).map_err(|e| {
                    ApiError::invalid(
                        rt,
                        name,
                        "patch",
                        &format!(
                            "the server rejected our request due to an error in our request: {e}"
                        ),
                    )
                })?;
            }
            PatchType::Merge => json_patch::merge(&mut new, &parse_json()?),
            PatchType::Strategic => {
                if rt.custom {
                    return Err(ApiError::unsupported_media(
                        "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml",
                    ));
                }
                let mut p = parse_json()?;
                strip_directives(&mut p);
                json_patch::merge(&mut new, &p);
            }
            PatchType::Apply => unreachable!(),
        }
        if !new.is_object() {
            return Err(ApiError::bad_request("the patched object is not an object"));
        }
        self.finish_update(rt, version, old, new, sub, ctx, Managed::Track)
            .map(|o| (o, false))
    }

    #[allow(clippy::too_many_arguments)]
    fn apply(
        &mut self,
        rt: &ResourceType,
        version: &str,
        ns: &str,
        name: &str,
        sub: Option<&str>,
        body: &[u8],
        ctx: &WriteCtx,
        force: bool,
    ) -> ApiResult<(Value, bool)> {
        if ctx.manager.is_empty() {
            return Err(ApiError::new(
                422,
                "Invalid",
                "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch",
            ));
        }
        let text = std::str::from_utf8(body)
            .map_err(|_| ApiError::bad_request("apply body is not UTF-8"))?;
        let applied: Value = serde_saphyr::from_str(text)
            .map_err(|e| ApiError::bad_request(format!("error decoding YAML: {e}")))?;
        if !applied.is_object() {
            return Err(ApiError::bad_request("apply body is not an object"));
        }
        if let Some(n) = meta_str(&applied, "name")
            && n != name
        {
            return Err(ApiError::bad_request(format!(
                "the name of the object ({n}) does not match the name on the URL ({name})"
            )));
        }
        if let Some(k) = applied.get("kind").and_then(Value::as_str)
            && k != rt.kind
        {
            return Err(ApiError::bad_request(format!(
                "the kind of the object ({k}) does not match the resource ({})",
                rt.kind
            )));
        }
        let scope = match sub {
            Some(_) => Scope::Status,
            None => Scope::Main {
                skip_status: rt.status_subresource,
            },
        };
        let now = now_rfc3339();
        let av = rt.api_version(version);
        let live = self.get(rt, version, ns, name).ok();
        // apiserver's fieldmanager NewConflictError: one cause per field; the message names
        // the one conflict, or each manager (sorted) with its fields.
        let conflict_err = |conflicts: Vec<fields::Conflict>| {
            let n = conflicts.len();
            let causes: Vec<Value> = conflicts
                .iter()
                .map(|(m, p)| json!({"reason": "FieldManagerConflict", "message": format!("conflict with {m}"), "field": fields::dotted(p)}))
                .collect();
            let msg = if n == 1 {
                let (m, p) = &conflicts[0];
                format!(
                    "Apply failed with 1 conflict: conflict with {m}: {}",
                    fields::dotted(p)
                )
            } else {
                let mut by_manager: BTreeMap<&str, Vec<String>> = BTreeMap::new();
                for (m, p) in &conflicts {
                    by_manager.entry(m).or_default().push(fields::dotted(p));
                }
                let mut lines = Vec::new();
                for (m, paths) in by_manager {
                    lines.push(format!("conflicts with {m}:"));
                    lines.extend(paths.into_iter().map(|p| format!("- {p}")));
                }
                format!("Apply failed with {n} conflicts: {}", lines.join("\n"))
            };
            ApiError::new(409, "Conflict", msg).with_details(
                json!({"name": name, "group": rt.group, "kind": rt.plural, "causes": causes}),
            )
        };
        match live {
            None => {
                if sub.is_some() {
                    return Err(ApiError::not_found(rt, name));
                }
                let (merged, entries) = fields::apply(
                    &json!({}),
                    &applied,
                    &[],
                    scope,
                    &self.is_map(rt, version),
                    &ctx.manager,
                    &av,
                    &now,
                    force,
                )
                .map_err(conflict_err)?;
                let mut obj = merged;
                meta_mut(&mut obj).insert("name".into(), json!(name));
                let url_ns = rt.namespaced.then_some(ns);
                // The status of an apply-created object is dropped, as on create.
                self.create(rt, version, url_ns, obj, ctx, Some(entries))
                    .map(|o| (o, true))
            }
            Some(old) => {
                if let Some(rv) = meta_str(&applied, "resourceVersion")
                    && Some(rv) != meta_str(&old, "resourceVersion")
                {
                    return Err(ApiError::modified(rt, name));
                }
                let mut entries = fields::read_managed(&old);
                if entries.is_empty() {
                    // apiserver's skipNonAppliedManager: the fields already there belong to
                    // `before-first-apply`, as if it had written them.
                    fields::track_update(
                        &mut entries,
                        &json!({}),
                        &old,
                        scope,
                        "before-first-apply",
                        &av,
                        &now,
                    );
                }
                let (merged, entries) = fields::apply(
                    &old,
                    &applied,
                    &entries,
                    scope,
                    &self.is_map(rt, version),
                    &ctx.manager,
                    &av,
                    &now,
                    force,
                )
                .map_err(conflict_err)?;
                self.finish_update(rt, version, old, merged, sub, ctx, Managed::Set(entries))
                    .map(|o| (o, false))
            }
        }
    }

    /// The common end of PUT, PATCH and apply: preconditions, immutable metadata, status
    /// subresource rules, generation, managedFields, no-op detection, finalizer-driven removal.
    #[allow(clippy::too_many_arguments)]
    fn finish_update(
        &mut self,
        rt: &ResourceType,
        version: &str,
        old: Value,
        mut new: Value,
        sub: Option<&str>,
        ctx: &WriteCtx,
        managed: Managed,
    ) -> ApiResult<Value> {
        let name = meta_str(&old, "name").unwrap_or("").to_string();
        match meta_str(&new, "name") {
            Some(n) if n != name => {
                return Err(ApiError::bad_request(format!(
                    "the name of the object ({n}) does not match the name on the URL ({name})"
                )));
            }
            _ => {}
        }
        if rt.namespaced
            && let Some(n) = meta_str(&new, "namespace")
            && Some(n) != meta_str(&old, "namespace")
        {
            return Err(ApiError::bad_request(
                "the namespace of the provided object does not match the namespace sent on the request",
            ));
        }
        if let Some(rv) = meta_str(&new, "resourceVersion")
            && Some(rv) != meta_str(&old, "resourceVersion")
        {
            return Err(ApiError::modified(rt, &name));
        }
        new["apiVersion"] = json!(rt.api_version(version));
        new["kind"] = json!(rt.kind);
        {
            let om = old["metadata"].as_object().cloned().unwrap_or_default();
            let m = meta_mut(&mut new);
            for k in [
                "name",
                "namespace",
                "uid",
                "creationTimestamp",
                "deletionTimestamp",
                "deletionGracePeriodSeconds",
                "generation",
                "resourceVersion",
            ] {
                match om.get(k) {
                    Some(v) => m.insert(k.into(), v.clone()),
                    None => m.remove(k),
                };
            }
            m.remove("selfLink");
        }
        let scope = if sub.is_some() {
            // Only .status changes through the status subresource.
            let status = new.get("status").cloned();
            let new_meta = new["metadata"].clone();
            new = old.clone();
            match status {
                Some(s) => new["status"] = s,
                None => {
                    new.as_object_mut().map(|m| m.remove("status"));
                }
            }
            if let Some(mf) = new_meta.get("managedFields") {
                new["metadata"]["managedFields"] = mf.clone();
            }
            Scope::Status
        } else {
            if rt.status_subresource {
                match old.get("status") {
                    Some(s) => new["status"] = s.clone(),
                    None => {
                        new.as_object_mut().map(|m| m.remove("status"));
                    }
                }
            }
            Scope::Main {
                skip_status: rt.status_subresource,
            }
        };
        self.default_custom(rt, &mut new);
        Self::tidy_meta(rt, &mut new);
        // generation: bumped by changes outside metadata (and status, with the subresource).
        let body = |o: &Value| {
            let mut o = o.clone();
            if let Some(m) = o.as_object_mut() {
                m.remove("metadata");
                if rt.status_subresource {
                    m.remove("status");
                }
            }
            o
        };
        if body(&old) != body(&new)
            && let Some(g) = old.pointer("/metadata/generation").and_then(Value::as_i64)
        {
            meta_mut(&mut new).insert("generation".into(), json!(g + 1));
        }
        let now = now_rfc3339();
        match managed {
            Managed::Set(entries) => fields::write_managed(&mut new, &entries),
            Managed::Track => {
                let old_mf = old.pointer("/metadata/managedFields").cloned();
                let new_mf = new.pointer("/metadata/managedFields").cloned();
                if new_mf.is_some() && new_mf != old_mf {
                    // The client set managedFields itself; `[{}]` resets them.
                    let entries = fields::read_managed(&new);
                    fields::write_managed(&mut new, &entries);
                } else if fields::read_managed(&old).is_empty() {
                    // apiserver's skipNonAppliedManager: an object that no one has applied
                    // and whose fields no one tracks stays untracked on updates.
                    fields::write_managed(&mut new, &[]);
                } else {
                    let mut entries = fields::read_managed(&old);
                    fields::track_update(
                        &mut entries,
                        &old,
                        &new,
                        scope,
                        &ctx.manager,
                        &rt.api_version(version),
                        &now,
                    );
                    fields::write_managed(&mut new, &entries);
                }
            }
        }
        if (rt.group.as_str(), rt.plural.as_str()) == CRD_KEY && sub.is_none() {
            self.prepare_crd(&mut new, ctx.dry_run, false)?;
        }
        if normalized(&old) == normalized(&new) {
            return Ok(old);
        }
        if ctx.dry_run {
            return Ok(new);
        }
        if new.pointer("/metadata/deletionTimestamp").is_some() && finalizers(&new) == 0 {
            let mut last = self.commit(rt, new);
            meta_mut(&mut last).remove("resourceVersion");
            let gone = self.remove(rt, last, "Background");
            return Ok(present(&gone, rt, version));
        }
        let stored = self.commit(rt, new);
        Ok(present(&stored, rt, version))
    }

    /// DELETE of one object.
    pub fn delete(
        &mut self,
        rt: &ResourceType,
        version: &str,
        ns: &str,
        name: &str,
        opts: &DeleteOpts,
    ) -> ApiResult<Value> {
        let obj = self
            .stored(rt, ns, name)
            .cloned()
            .ok_or_else(|| ApiError::not_found(rt, name))?;
        if let Some(u) = &opts.precondition_uid
            && Some(u.as_str()) != meta_str(&obj, "uid")
        {
            return Err(ApiError::conflict(
                rt,
                name,
                &format!(
                    "Precondition failed: UID in precondition: {u}, UID in object meta: {}",
                    meta_str(&obj, "uid").unwrap_or("")
                ),
            ));
        }
        if let Some(r) = &opts.precondition_rv
            && Some(r.as_str()) != meta_str(&obj, "resourceVersion")
        {
            return Err(ApiError::conflict(
                rt,
                name,
                &format!(
                    "Precondition failed: ResourceVersion in precondition: {r}, ResourceVersion in object meta: {}",
                    meta_str(&obj, "resourceVersion").unwrap_or("")
                ),
            ));
        }
        let uid = meta_str(&obj, "uid").unwrap_or("").to_string();
        if opts.dry_run {
            return Ok(present(&obj, rt, version));
        }
        let propagation = opts
            .propagation
            .clone()
            .unwrap_or_else(|| "Background".into());
        let out = self.delete_object(rt, obj, &propagation);
        if self.stored(rt, ns, name).is_some() {
            Ok(present(&out, rt, version))
        } else {
            Ok(success_status(rt, name, &uid))
        }
    }

    /// DELETE of a collection (`deletecollection`): answers the list of what it deleted.
    pub fn delete_collection(
        &mut self,
        rt: &ResourceType,
        version: &str,
        ns: Option<&str>,
        labels: &LabelSelector,
        fields: &FieldSelector,
        opts: &DeleteOpts,
    ) -> ApiResult<Value> {
        let items = self.select(rt, version, ns, labels, fields);
        if !opts.dry_run {
            for o in &items {
                let n = meta_str(o, "name").unwrap_or("").to_string();
                let s = meta_str(o, "namespace").unwrap_or("").to_string();
                let _ = self.delete(rt, version, &s, &n, opts);
            }
        }
        Ok(json!({
            "kind": rt.list_kind,
            "apiVersion": rt.api_version(version),
            "metadata": {"resourceVersion": self.rv.to_string()},
            "items": items,
        }))
    }

    // ---- watch ------------------------------------------------------------------------------

    /// Registers a watcher and answers the events it starts with (synthetic ADDED for a watch
    /// from now, or the retained history after `rv`); a too old `rv` is `Err` (410 Expired).
    #[allow(clippy::too_many_arguments)]
    pub fn watch(
        &mut self,
        rt: &ResourceType,
        version: &str,
        ns: Option<&str>,
        labels: LabelSelector,
        fields: FieldSelector,
        rv: Option<&str>,
        tx: UnboundedSender<(u64, Value)>,
    ) -> ApiResult<(u64, Vec<Value>)> {
        let id = self.next_id;
        self.next_id += 1;
        let w = Watcher {
            id,
            key: rt.key(),
            rt: rt.clone(),
            version: version.to_string(),
            namespace: ns.map(str::to_string),
            labels,
            fields,
            tx,
        };
        let initial = match rv.filter(|r| !r.is_empty() && *r != "0") {
            None => {
                let objs = self.select(rt, version, ns, &w.labels, &w.fields);
                objs.into_iter()
                    .map(|o| json!({"type": "ADDED", "object": o}))
                    .collect()
            }
            Some(r) => {
                let n: u64 = r
                    .parse()
                    .map_err(|_| ApiError::bad_request(format!("invalid resource version: {r}")))?;
                if n < self.compacted_rv {
                    return Err(ApiError::expired(format!(
                        "too old resource version: {n} ({})",
                        self.compacted_rv + 1
                    )));
                }
                self.history
                    .iter()
                    .filter(|e| e.rv > n)
                    .filter_map(|e| w.event_for(e))
                    .collect()
            }
        };
        self.watchers.push(w);
        Ok((id, initial))
    }

    /// Forgets the history: only a watch from the current resourceVersion may resume.
    pub fn compact(&mut self) {
        self.history.clear();
        self.compacted_rv = self.rv;
    }

    /// Closes every watch stream.
    pub fn drop_watches(&mut self) {
        self.watchers.clear();
    }

    pub fn unwatch(&mut self, id: u64) {
        self.watchers.retain(|w| w.id != id);
    }

    pub fn watcher_count(&self) -> usize {
        self.watchers.len()
    }
}

/// For no-op detection: without resourceVersion and managedFields times.
fn normalized(o: &Value) -> Value {
    let mut o = o.clone();
    if let Some(m) = o.get_mut("metadata").and_then(Value::as_object_mut) {
        m.remove("resourceVersion");
        if let Some(Value::Array(mf)) = m.get_mut("managedFields") {
            for e in mf {
                if let Some(em) = e.as_object_mut() {
                    em.remove("time");
                }
            }
        }
    }
    o
}

/// Strategic-merge-patch directives (`$patch`, `$setElementOrder/…`, `$retainKeys`, …) are
/// dropped: a strategic merge patch of a built-in is applied as a merge patch.
fn strip_directives(v: &mut Value) {
    match v {
        Value::Object(m) => {
            m.retain(|k, _| !k.starts_with('$'));
            for c in m.values_mut() {
                strip_directives(c);
            }
        }
        Value::Array(a) => a.iter_mut().for_each(strip_directives),
        _ => {}
    }
}

fn encode_continue(id: u64, offset: usize) -> String {
    format!("{{\"p\":{id},\"o\":{offset}}}")
        .bytes()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn decode_continue(token: &str) -> Option<(u64, usize)> {
    if !token.len().is_multiple_of(2) {
        return None;
    }
    let bytes: Option<Vec<u8>> = (0..token.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(token.get(i..i + 2)?, 16).ok())
        .collect();
    let v: Value = serde_json::from_slice(&bytes?).ok()?;
    Some((v.get("p")?.as_u64()?, v.get("o")?.as_u64()? as usize))
}

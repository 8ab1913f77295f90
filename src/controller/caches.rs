//! The watch caches, behind the questions the controller asks of them: the ServiceSets
//! ([`CachedSet`]) and which of them use a template, the ServiceTemplates of a namespace, the
//! provider's SMP, the Flux objects ([`TextCache`]) and which ServiceSet owns one, and every
//! ServiceSet's claims ([`ClaimIndex`]).
//!
//! [`Caches::watch`] starts them; each is filled as its stream of watch events is polled
//! (the controller's trigger streams poll them).

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex};

use futures::StreamExt;
use futures::stream::BoxStream;
use kube::Client;
use kube::api::{Api, DynamicObject};
use kube::runtime::WatchStreamExt;
use kube::runtime::reflector::{self, ObjectRef, Store, store::Writer};
use kube::runtime::watcher;
use serde_json::Value;

use super::Options;
use super::cache::{TextCache, TextObject};
use super::cached::CachedSet;
use super::claims::{ClaimIndex, SetKey};
use super::context::Kinds;
use super::memo::Memo;
use super::watch::{reflect, slim, text_reflect};
use crate::api::kcm::ServiceSet;
use crate::api::{Object, kinds};
use crate::cluster::{self, with_type};
use crate::core::adapter::memo::Key;
use crate::core::adapter::{self, Desired};

/// A stream of watch events.
pub type Events<K> = BoxStream<'static, Result<watcher::Event<K>, watcher::Error>>;

/// The watch streams that fill the caches, one per kind.
pub struct Streams {
    pub sets: Events<CachedSet>,
    pub templates: Events<DynamicObject>,
    pub smps: Events<DynamicObject>,
    pub helm_releases: Events<TextObject>,
    pub kustomizations: Events<TextObject>,
}

/// Every cache of the controller. Shared by the trigger streams and the reconciles.
pub struct Caches {
    kinds: Kinds,
    provider: String,
    /// Every ServiceSet, of every shard (decisions across ServiceSets see them all).
    pub sets: Store<CachedSet>,
    templates: Store<DynamicObject>,
    /// The provider's SMP (the only one watched).
    smps: Store<DynamicObject>,
    pub helm_releases: TextCache,
    pub kustomizations: TextCache,
    /// Every ServiceSet's claims on releases and paths: the rivals of a reconcile.
    pub claims: ClaimIndex,
    /// What each ServiceSet's last reconcile rendered and found in sync.
    pub memo: Memo,
    using: Mutex<TemplateIndex>,
    /// The SMP as JSON, with the resourceVersion it was converted at.
    smp_json: Mutex<Option<(String, Arc<Value>)>>,
    /// The templates of recent renders as JSON, by the namespace and the names and
    /// resourceVersions of the templates a ServiceSet names (ServiceSets share them: most
    /// name the same few), so that a render does not convert them again.
    templates_json: Mutex<HashMap<TemplatesAt, Arc<Vec<Value>>>>,
}

/// A namespace, and the name and resourceVersion of each template found, in order.
type TemplatesAt = (String, Vec<(String, String)>);

/// The sets of templates [`Caches::templates_json`] keeps, at most (then it starts afresh).
const TEMPLATE_SETS_KEPT: usize = 256;

impl Caches {
    /// Starts the watches: the caches, and the streams that fill them.
    pub fn watch(client: &Client, kinds: &Kinds, opts: &Options) -> (Arc<Caches>, Streams) {
        let wc = watcher::Config::default()
            .page_size(cluster::PAGE_SIZE)
            .timeout(super::watch_timeout_seconds(opts.watch_timeout));
        let (templates, tpl_stream) = reflect(client, &kinds.template, wc.clone(), slim);
        let smp_wc = wc
            .clone()
            .fields(&format!("metadata.name={}", opts.provider));
        let (smps, smp_stream) = reflect(client, &kinds.smp, smp_wc, slim);
        let (helm_releases, hr_stream) = text_reflect(client, &kinds.helm_release, wc.clone());
        let (kustomizations, ks_stream) = text_reflect(client, &kinds.kustomization, wc.clone());
        let writer = Writer::<CachedSet>::new(kinds.service_set.clone());
        let caches = Arc::new(Caches {
            kinds: kinds.clone(),
            provider: opts.provider.clone(),
            sets: writer.as_reader(),
            templates,
            smps,
            helm_releases,
            kustomizations,
            claims: ClaimIndex::new(&opts.provider),
            memo: Memo::default(),
            using: Mutex::default(),
            smp_json: Mutex::default(),
            templates_json: Mutex::default(),
        });
        // The template index reads a ServiceSet's previous version from the store: it sees
        // each event before the store does.
        let indexed = {
            let caches = caches.clone();
            let api = Api::<CachedSet>::all_with(client.clone(), &kinds.service_set);
            watcher(api, wc).default_backoff().inspect(move |ev| {
                if let Ok(ev) = ev {
                    caches.index(ev);
                }
            })
        };
        let streams = Streams {
            sets: reflector::reflector(writer, indexed).boxed(),
            templates: tpl_stream.boxed(),
            smps: smp_stream.boxed(),
            helm_releases: hr_stream.boxed(),
            kustomizations: ks_stream.boxed(),
        };
        (caches, streams)
    }

    /// Caches filled from these objects, as if listed (for tests).
    #[cfg(test)]
    pub fn of(
        kinds: &Kinds,
        provider: &str,
        smps: &[Value],
        templates: &[Value],
        helm_releases: &[Value],
    ) -> Caches {
        let store = |ar: &kube::discovery::ApiResource, objects: &[Value]| {
            let mut w = Writer::<DynamicObject>::new(ar.clone());
            for o in objects {
                w.apply_watcher_event(&watcher::Event::Apply(
                    serde_json::from_value(o.clone()).expect("an object"),
                ));
            }
            w.as_reader()
        };
        let hrs = TextCache::new(kinds.helm_release.clone());
        for hr in helm_releases {
            hrs.apply(&watcher::Event::Apply(
                serde_json::from_value(hr.clone()).expect("an object"),
            ));
        }
        Caches {
            kinds: kinds.clone(),
            provider: provider.into(),
            sets: Writer::<CachedSet>::new(kinds.service_set.clone()).as_reader(),
            templates: store(&kinds.template, templates),
            smps: store(&kinds.smp, smps),
            helm_releases: hrs,
            kustomizations: TextCache::new(kinds.kustomization.clone()),
            claims: ClaimIndex::new(provider),
            memo: Memo::default(),
            using: Mutex::default(),
            smp_json: Mutex::default(),
            templates_json: Mutex::default(),
        }
    }

    /// Resolves once every cache has its first list.
    pub async fn ready(&self) {
        let _ = self.sets.wait_until_ready().await;
        let _ = self.smps.wait_until_ready().await;
        let _ = self.templates.wait_until_ready().await;
        self.helm_releases.wait_ready().await;
        self.kustomizations.wait_ready().await;
    }

    /// The reference of the ServiceSet of this key.
    pub fn set_ref(&self, (ns, name): &SetKey) -> ObjectRef<CachedSet> {
        ObjectRef::new_with(name, self.kinds.service_set.clone()).within(ns)
    }

    /// The ServiceSet of this key.
    pub fn set(&self, key: &SetKey) -> Option<Arc<CachedSet>> {
        self.sets.get(&self.set_ref(key))
    }

    /// A ServiceSet's labels, as JSON.
    pub fn labels_of(&self, key: &SetKey) -> Option<Value> {
        serde_json::to_value(&self.set(key)?.metadata.labels).ok()
    }

    /// The ServiceSets of `namespace` that deploy a service of the template `name`.
    pub fn sets_using(&self, namespace: &str, name: &str) -> Vec<SetKey> {
        self.lock_index().sets_using(namespace, name)
    }

    /// Every ServiceSet.
    pub fn all_sets(&self) -> Vec<ObjectRef<CachedSet>> {
        self.sets
            .state()
            .iter()
            .map(|s| ObjectRef::from_obj_with(s.as_ref(), self.kinds.service_set.clone()))
            .collect()
    }

    /// The ServiceSet that controls a Flux object.
    pub fn owner_of(&self, o: &TextObject) -> Option<ObjectRef<CachedSet>> {
        let ns = o.metadata.namespace.as_deref()?;
        let owner = o.metadata.owner_references.as_ref()?.iter().find(|r| {
            r.controller == Some(true)
                && r.kind == kinds::SERVICE_SET.kind
                && kinds::group_of(&r.api_version) == kinds::KCM_GROUP
        })?;
        Some(self.set_ref(&(ns.to_string(), owner.name.clone())))
    }

    /// What `set` wants: rendered with the templates its services name (those alone are
    /// converted from the store).
    pub fn desired(&self, set: &Value) -> Desired {
        let found: Vec<Arc<DynamicObject>> =
            self.templates_named(set).into_iter().flatten().collect();
        let at: Option<Vec<(String, String)>> = found
            .iter()
            .map(|t| {
                let version = t
                    .metadata
                    .resource_version
                    .clone()
                    .filter(|v| !v.is_empty())?;
                Some((t.metadata.name.clone().unwrap_or_default(), version))
            })
            .collect();
        let convert = || -> Vec<Value> {
            found
                .iter()
                .map(|t| with_type(t, &self.kinds.template))
                .collect()
        };
        // Without a version, a template's JSON cannot be told from another's: converted.
        let Some(at) = at else {
            return Desired::of(set, &convert());
        };
        let key = (Object(set).namespace().to_string(), at);
        let kept = self.lock_templates_json().get(&key).cloned();
        let templates = kept.unwrap_or_else(|| {
            let templates = Arc::new(convert());
            let mut all = self.lock_templates_json();
            if all.len() >= TEMPLATE_SETS_KEPT {
                all.clear();
            }
            all.insert(key, templates.clone());
            templates
        });
        Desired::of(set, &templates)
    }

    /// How many sets of templates are kept converted.
    #[cfg(test)]
    pub fn templates_converted(&self) -> usize {
        self.lock_templates_json().len()
    }

    fn lock_templates_json(
        &self,
    ) -> std::sync::MutexGuard<'_, HashMap<TemplatesAt, Arc<Vec<Value>>>> {
        self.templates_json
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }

    /// What `set`'s render depends on ([`Key`]): its uid, generation and pause, and the
    /// resourceVersions of the templates its services name (as [`Caches::desired`] takes
    /// them, none converted).
    pub fn render_key(&self, set: &Value) -> Option<Key> {
        let versions = self
            .templates_named(set)
            .into_iter()
            .map(|t| t.map(|t| t.metadata.resource_version.clone().unwrap_or_default()))
            .collect();
        Key::of(set, versions)
    }

    /// The template `name` of `namespace`, as the store holds it.
    fn template(&self, namespace: &str, name: &str) -> Option<Arc<DynamicObject>> {
        self.templates
            .get(&ObjectRef::new_with(name, self.kinds.template.clone()).within(namespace))
    }

    /// The templates `set`'s services name, each once (first mention first), as the store
    /// holds them; None for one that does not exist.
    fn templates_named(&self, set: &Value) -> Vec<Option<Arc<DynamicObject>>> {
        let ns = Object(set).namespace();
        let mut seen = BTreeSet::new();
        ServiceSet(set)
            .services()
            .map(|s| s.template())
            .filter(|n| seen.insert(*n))
            .map(|n| self.template(ns, n))
            .collect()
    }

    /// The SMP of the provider served (converted once per version of it).
    pub fn smp(&self) -> Option<Arc<Value>> {
        let o = self
            .smps
            .get(&ObjectRef::new_with(&self.provider, self.kinds.smp.clone()))?;
        let version = o.metadata.resource_version.as_deref().unwrap_or("");
        let mut last = self.smp_json.lock().unwrap_or_else(|e| e.into_inner());
        match &*last {
            Some((v, json)) if !version.is_empty() && v == version => Some(json.clone()),
            _ => {
                let json = Arc::new(with_type(&o, &self.kinds.smp));
                *last = Some((version.to_string(), json.clone()));
                Some(json)
            }
        }
    }

    /// How many ServiceSets of this replica's shard the provider serves.
    pub fn served_sets(&self, opts: &Options) -> usize {
        let smp = self.smp();
        self.sets
            .state()
            .iter()
            .filter(|s| opts.in_shard(s.metadata.labels.as_ref()))
            .filter(|s| adapter::serves(&self.provider, smp.as_deref(), &s.routing_view()))
            .count()
    }

    /// A ServiceSet event, for the claims index and the memo; returns the ServiceSets to
    /// requeue.
    pub fn set_event(&self, ev: &watcher::Event<CachedSet>) -> BTreeSet<SetKey> {
        self.memo.observe(ev);
        let ar = &self.kinds.service_set;
        self.claims
            .apply(ev, |s| s.to_json(ar), |s| self.desired(s))
    }

    /// A template event; returns the ServiceSets to reconcile: those that use the template
    /// (their claims rendered again), and those whose verdicts that may change. Once the
    /// templates are listed, the ServiceSets rendered without them (after a relist, all).
    pub fn on_template(&self, ev: &watcher::Event<DynamicObject>) -> Vec<SetKey> {
        let using = |t: &DynamicObject| {
            self.sets_using(
                t.metadata.namespace.as_deref().unwrap_or(""),
                t.metadata.name.as_deref().unwrap_or(""),
            )
        };
        match ev {
            watcher::Event::Apply(t) | watcher::Event::Delete(t) => {
                let keys = using(t);
                let mut out = self.render_again(&keys);
                out.extend(keys);
                out
            }
            watcher::Event::InitApply(t) => using(t),
            watcher::Event::InitDone => self.render_again(&self.claims.templates_listed()),
            watcher::Event::Init => Vec::new(),
        }
    }

    /// The claims index was fed while the caches filled, a ServiceSet possibly before its
    /// templates: once all are in, those are rendered again.
    pub fn synced(&self) {
        self.render_again(&self.claims.provisional());
    }

    /// Renders the claims of these ServiceSets again; returns the ServiceSets to requeue.
    fn render_again(&self, keys: &[SetKey]) -> Vec<SetKey> {
        let mut requeue = Vec::new();
        for key in keys {
            let Some(set) = self.set(key) else { continue };
            let set = set.to_json(&self.kinds.service_set);
            requeue.extend(self.claims.observe(&set, |s| self.desired(s), true));
        }
        requeue
    }

    fn lock_index(&self) -> std::sync::MutexGuard<'_, TemplateIndex> {
        self.using.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Follows a ServiceSet event in the template index, before the store does (so the
    /// store still holds the version it replaces).
    fn index(&self, ev: &watcher::Event<CachedSet>) {
        let previous = match ev {
            watcher::Event::Apply(s) | watcher::Event::Delete(s) => self
                .sets
                .get(&ObjectRef::from_obj_with(s, self.kinds.service_set.clone())),
            _ => None,
        };
        self.lock_index().apply(ev, previous.as_deref());
    }
}

/// (namespace, template) → the names of the ServiceSets of that namespace that use it.
type UsedBy = HashMap<(Box<str>, Box<str>), BTreeSet<Arc<str>>>;

/// Which ServiceSets use a template, as the store holds them (a relist is swapped in whole,
/// at its end, as the store's).
#[derive(Default)]
struct TemplateIndex {
    used_by: UsedBy,
    relist: Option<UsedBy>,
}

fn add_to(used_by: &mut UsedBy, s: &CachedSet) {
    let (ns, name) = (
        s.metadata.namespace.as_deref().unwrap_or(""),
        s.metadata.name.as_deref().unwrap_or(""),
    );
    let name: Arc<str> = name.into();
    for t in s.templates() {
        used_by
            .entry((ns.into(), t.into()))
            .or_default()
            .insert(name.clone());
    }
}

impl TemplateIndex {
    /// A watch event; `previous`: the version of the ServiceSet it replaces or deletes.
    fn apply(&mut self, ev: &watcher::Event<CachedSet>, previous: Option<&CachedSet>) {
        match ev {
            watcher::Event::Apply(s) => {
                if let Some(old) = previous {
                    if old.templates().eq(s.templates()) {
                        return; // a status write, most often
                    }
                    self.remove(old);
                }
                add_to(&mut self.used_by, s);
            }
            watcher::Event::Delete(s) => self.remove(previous.unwrap_or(s)),
            watcher::Event::Init => self.relist = Some(HashMap::new()),
            watcher::Event::InitApply(s) => {
                add_to(self.relist.get_or_insert_with(HashMap::new), s);
            }
            watcher::Event::InitDone => {
                if let Some(fresh) = self.relist.take() {
                    self.used_by = fresh;
                }
            }
        }
    }

    fn remove(&mut self, s: &CachedSet) {
        let (ns, name) = (
            s.metadata.namespace.as_deref().unwrap_or(""),
            s.metadata.name.as_deref().unwrap_or(""),
        );
        for t in s.templates() {
            let key: (Box<str>, Box<str>) = (ns.into(), t.into());
            if let Some(names) = self.used_by.get_mut(&key) {
                names.remove(name);
                if names.is_empty() {
                    self.used_by.remove(&key);
                }
            }
        }
    }

    fn sets_using(&self, namespace: &str, name: &str) -> Vec<SetKey> {
        self.used_by
            .get(&(namespace.into(), name.into()))
            .into_iter()
            .flatten()
            .map(|n| (namespace.to_string(), n.to_string()))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn set(ns: &str, name: &str, templates: &[&str]) -> CachedSet {
        let services: Vec<Value> = templates
            .iter()
            .map(|t| json!({"name": t, "namespace": "x", "template": t}))
            .collect();
        serde_json::from_value(json!({"metadata": {"name": name, "namespace": ns},
            "spec": {"provider": {"name": "ksm-flux"}, "services": services}}))
        .unwrap()
    }

    fn using(index: &TemplateIndex, ns: &str, template: &str) -> Vec<String> {
        index
            .sets_using(ns, template)
            .into_iter()
            .map(|(n, name)| {
                assert_eq!(n, ns);
                name
            })
            .collect()
    }

    #[test]
    fn the_template_index_follows_adds_updates_deletes_and_relists() {
        use watcher::Event::*;
        let mut index = TemplateIndex::default();
        let a = set("n", "a", &["t1", "t2", "t1"]);
        let b = set("n", "b", &["t1"]);
        let elsewhere = set("m", "a", &["t1"]);
        index.apply(&Apply(a.clone()), None);
        index.apply(&Apply(b.clone()), None);
        index.apply(&Apply(elsewhere.clone()), None);
        assert_eq!(using(&index, "n", "t1"), ["a", "b"]);
        assert_eq!(using(&index, "n", "t2"), ["a"]);
        assert_eq!(using(&index, "m", "t1"), ["a"]);
        assert!(using(&index, "n", "t3").is_empty());
        // An update moves a ServiceSet from the templates it left to those it now uses.
        let a2 = set("n", "a", &["t3"]);
        index.apply(&Apply(a2.clone()), Some(&a));
        assert_eq!(using(&index, "n", "t1"), ["b"]);
        assert!(using(&index, "n", "t2").is_empty());
        assert_eq!(using(&index, "n", "t3"), ["a"]);
        // A status write (same templates) changes nothing.
        index.apply(&Apply(a2.clone()), Some(&a2));
        assert_eq!(using(&index, "n", "t3"), ["a"]);
        // A deletion removes it, by the version the store held.
        index.apply(&Delete(set("n", "b", &[])), Some(&b));
        assert!(using(&index, "n", "t1").is_empty());
        assert!(
            !index.used_by.contains_key(&("n".into(), "t1".into())),
            "no empty entries"
        );
        // A relist is swapped in whole at its end.
        index.apply(&Init, None);
        index.apply(&InitApply(set("n", "c", &["t1"])), None);
        assert_eq!(
            using(&index, "n", "t3"),
            ["a"],
            "until InitDone, the old list"
        );
        index.apply(&InitDone, None);
        assert_eq!(using(&index, "n", "t1"), ["c"]);
        assert!(using(&index, "n", "t3").is_empty());
        assert!(using(&index, "m", "t1").is_empty());
    }

    #[test]
    fn the_owner_of_a_flux_object_is_its_controlling_service_set() {
        let kinds = Kinds::new();
        let caches = Caches::of(&kinds, "ksm-flux", &[], &[], &[]);
        let hr = |owners: Value| -> TextObject {
            serde_json::from_value(json!({"metadata": {"name": "a-x", "namespace": "n",
                "ownerReferences": owners}}))
            .unwrap()
        };
        let owner = caches.owner_of(&hr(json!([
            {"apiVersion": "v1", "kind": "ConfigMap", "name": "c", "uid": "1", "controller": true},
            {"apiVersion": "k0rdent.mirantis.com/v1beta1", "kind": "ServiceSet", "name": "a",
                "uid": "2", "controller": true}])));
        let owner = owner.unwrap();
        assert_eq!(
            (owner.namespace.as_deref(), owner.name.as_str()),
            (Some("n"), "a")
        );
        let not_controller = hr(json!([{"apiVersion": "k0rdent.mirantis.com/v1beta1",
            "kind": "ServiceSet", "name": "a", "uid": "2"}]));
        assert!(caches.owner_of(&not_controller).is_none());
        assert!(caches.owner_of(&hr(json!([]))).is_none());
    }
}

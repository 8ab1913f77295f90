//! The claims of every ServiceSet of the provider on the releases and paths it deploys
//! ([`ownership`]), kept up to date from the ServiceSet and ServiceTemplate watches, so that a
//! reconcile finds its rivals by target instead of rendering every ServiceSet.
//!
//! Every replica indexes every ServiceSet (all shards): two replicas reach the same decision
//! from the same objects. A ServiceSet is rendered again only when what its claims depend on
//! changes: its uid (a new object: a new creation time too), generation (the spec), deletion,
//! or a template.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex};

use chrono::{DateTime, Utc};

use kube::Resource;
use kube::runtime::watcher;
use serde_json::Value;

use crate::api::kcm::ServiceSet;
use crate::api::meta::{Object, or_default_namespace};
use crate::api::selector;
use crate::core::adapter::Desired;
use crate::core::adapter::ownership::{self, Claim, Target};

/// (namespace, name) of a ServiceSet.
pub type SetKey = (String, String);

#[derive(Clone, PartialEq, Eq)]
struct Fingerprint {
    uid: String,
    generation: Option<i64>,
    deleting: bool,
}

impl Fingerprint {
    /// From a watch event's object, without converting it.
    fn of_meta(m: &kube::api::ObjectMeta) -> Fingerprint {
        Fingerprint {
            uid: m.uid.clone().unwrap_or_default(),
            generation: m.generation,
            deleting: m.deletion_timestamp.is_some(),
        }
    }

    fn of(set: &Value) -> Fingerprint {
        let m = Object(set);
        Fingerprint {
            uid: m.uid().to_string(),
            generation: m.generation(),
            deleting: m.is_deleting(),
        }
    }
}

/// A ServiceSet's claims, kept small (every ServiceSet of the provider has one): what all its
/// claims share once, and of each claim its target and service.
struct Entry {
    fingerprint: Fingerprint,
    /// Rendered before the templates were listed: rendered again once they are.
    provisional: bool,
    priority: i64,
    created: Option<DateTime<Utc>>,
    deleting: bool,
    claims: Box<[(Target, Box<str>)]>,
}

impl Entry {
    fn targets(&self) -> impl Iterator<Item = &Target> {
        self.claims.iter().map(|(t, _)| t)
    }

    /// The claims on `target`, as [`ownership`] states them.
    fn claims_on<'a>(
        &'a self,
        key: &'a SetKey,
        target: &'a Target,
    ) -> impl Iterator<Item = Claim> + 'a {
        self.claims
            .iter()
            .filter(move |(t, _)| t == target)
            .map(move |(t, service)| Claim {
                target: t.clone(),
                namespace: key.0.clone(),
                service_set: key.1.clone(),
                service: service.to_string(),
                priority: self.priority,
                created: self.created,
                deleting: self.deleting,
            })
    }

    /// The same claims (the verdicts of the ServiceSets sharing a target may change otherwise).
    fn same_claims(&self, other: &Entry) -> bool {
        (self.priority, self.created, self.deleting, &self.claims)
            == (other.priority, other.created, other.deleting, &other.claims)
    }
}

#[derive(Default)]
struct State {
    sets: HashMap<Arc<SetKey>, Entry>,
    /// The hash of a target → the ServiceSets claiming it (or another target of the same
    /// hash: readers compare the targets). A hash instead of the target itself keeps the
    /// index a few hundred bytes per ServiceSet smaller.
    by_target: HashMap<u64, Vec<Arc<SetKey>>>,
    /// A relist in progress: the keys listed so far.
    relist: Option<BTreeSet<SetKey>>,
    /// The templates have been listed once.
    templates_ready: bool,
}

fn hash_of(t: &Target) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::hash::DefaultHasher::new();
    t.hash(&mut h);
    h.finish()
}

impl State {
    /// Whether the entry of `key` was rendered from this very spec (a generation is needed to
    /// know: without one, every event renders again).
    fn unchanged(&self, key: &SetKey, fp: &Fingerprint) -> bool {
        fp.generation.is_some()
            && self
                .sets
                .get(key)
                .is_some_and(|e| !e.provisional && e.fingerprint == *fp)
    }

    /// Replaces the entry of `key`; returns the ServiceSets that share a target with its old
    /// or new claims (whose verdicts may change).
    fn put(&mut self, key: &SetKey, entry: Option<Entry>) -> BTreeSet<SetKey> {
        let mut touched: BTreeSet<&Target> = BTreeSet::new();
        let (shared, old) = match self.sets.remove_entry(key) {
            Some((k, e)) => (k, Some(e)),
            None => (Arc::new(key.clone()), None),
        };
        if let Some(old) = &old {
            for t in old.targets() {
                let h = hash_of(t);
                if let Some(keys) = self.by_target.get_mut(&h) {
                    keys.retain(|k| **k != *key);
                    if keys.is_empty() {
                        self.by_target.remove(&h);
                    }
                }
            }
        }
        if let Some(e) = &entry {
            for t in e.targets() {
                let keys = self.by_target.entry(hash_of(t)).or_default();
                if !keys.iter().any(|k| **k == *key) {
                    keys.push(shared.clone());
                }
            }
        }
        let changed = match (&old, &entry) {
            (Some(o), Some(n)) => !o.same_claims(n),
            (None, None) => false,
            _ => true,
        };
        let mut rivals = BTreeSet::new();
        if changed {
            touched.extend(old.iter().flat_map(Entry::targets));
            touched.extend(entry.iter().flat_map(Entry::targets));
            for t in touched {
                for k in self.by_target.get(&hash_of(t)).into_iter().flatten() {
                    let shares = self
                        .sets
                        .get(&**k)
                        .is_some_and(|e| e.targets().any(|c| c == t));
                    if **k != *key && shares {
                        rivals.insert((**k).clone());
                    }
                }
            }
        }
        if let Some(e) = entry {
            self.sets.insert(shared, e);
        }
        rivals
    }
}

/// The index. One per controller.
pub struct ClaimIndex {
    provider: String,
    state: Mutex<State>,
}

pub(super) fn set_key(set: &Value) -> SetKey {
    let m = Object(set);
    key_in(m.namespace(), m.name())
}

/// The key of a watch event's ServiceSet, without converting it.
pub(super) fn meta_key(m: &kube::api::ObjectMeta) -> SetKey {
    key_in(
        m.namespace.as_deref().unwrap_or(""),
        m.name.as_deref().unwrap_or(""),
    )
}

fn key_in(namespace: &str, name: &str) -> SetKey {
    (
        or_default_namespace(namespace).to_string(),
        name.to_string(),
    )
}

impl ClaimIndex {
    pub fn new(provider: &str) -> ClaimIndex {
        ClaimIndex {
            provider: provider.to_string(),
            state: Mutex::new(State::default()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The claims of `set`, from what `desired` gives for it (None for another provider's).
    fn entry(
        &self,
        set: &Value,
        desired: impl FnOnce(&Value) -> Desired,
        provisional: bool,
    ) -> Option<Entry> {
        if ServiceSet(set).provider_name() != self.provider {
            return None;
        }
        let rendered = desired(set).rendered;
        let claims = ownership::claims(set, &rendered);
        let first = claims.first().map(|(_, c)| c);
        Some(Entry {
            fingerprint: Fingerprint::of(set),
            provisional,
            priority: first.map_or(0, |c| c.priority),
            created: first.and_then(|c| c.created),
            deleting: first.is_some_and(|c| c.deleting),
            claims: claims
                .into_iter()
                .map(|(_, c)| (c.target, c.service.into_boxed_str()))
                .collect(),
        })
    }

    /// A ServiceSet as the watch shows it; `force` renders it again whatever its fingerprint
    /// (a template changed). Returns the ServiceSets whose verdicts may have changed.
    pub fn observe(
        &self,
        set: &Value,
        desired: impl FnOnce(&Value) -> Desired,
        force: bool,
    ) -> BTreeSet<SetKey> {
        let key = set_key(set);
        let provisional = {
            let st = self.lock();
            if !force && st.unchanged(&key, &Fingerprint::of(set)) {
                return BTreeSet::new();
            }
            !st.templates_ready
        };
        // Rendered outside the lock.
        let entry = self.entry(set, desired, provisional);
        self.lock().put(&key, entry)
    }

    /// The templates have been listed: the ServiceSets rendered before (and, after a relist
    /// of the templates, every ServiceSet) must be rendered again. Returns their keys, sorted.
    pub fn templates_listed(&self) -> Vec<SetKey> {
        let mut st = self.lock();
        let relist = st.templates_ready;
        st.templates_ready = true;
        let mut keys: Vec<SetKey> = st
            .sets
            .iter()
            .filter(|(_, e)| relist || e.provisional)
            .map(|(k, _)| (**k).clone())
            .collect();
        keys.sort();
        keys
    }

    /// The ServiceSets still rendered without their templates, sorted.
    pub fn provisional(&self) -> Vec<SetKey> {
        let st = self.lock();
        let mut keys: Vec<SetKey> = st
            .sets
            .iter()
            .filter(|(_, e)| e.provisional)
            .map(|(k, _)| (**k).clone())
            .collect();
        keys.sort();
        keys
    }

    /// A ServiceSet is gone; returns the ServiceSets that may take its releases over.
    pub fn remove(&self, key: &SetKey) -> BTreeSet<SetKey> {
        self.lock().put(key, None)
    }

    /// A watch event of the ServiceSets (relists drop what the new list lacks).
    pub fn apply<K: Resource>(
        &self,
        ev: &watcher::Event<K>,
        as_json: impl Fn(&K) -> Value,
        desired: impl Fn(&Value) -> Desired,
    ) -> BTreeSet<SetKey> {
        match ev {
            watcher::Event::Apply(o) | watcher::Event::InitApply(o) => {
                let key = meta_key(o.meta());
                {
                    let mut st = self.lock();
                    if matches!(ev, watcher::Event::InitApply(_))
                        && let Some(seen) = st.relist.as_mut()
                    {
                        seen.insert(key.clone());
                    }
                    // A status write: nothing the claims depend on changed, and the object
                    // is not even converted.
                    if st.unchanged(&key, &Fingerprint::of_meta(o.meta())) {
                        return BTreeSet::new();
                    }
                }
                self.observe(&as_json(o), &desired, false)
            }
            watcher::Event::Delete(o) => self.remove(&meta_key(o.meta())),
            watcher::Event::Init => {
                self.lock().relist = Some(BTreeSet::new());
                BTreeSet::new()
            }
            watcher::Event::InitDone => {
                let mut st = self.lock();
                let Some(seen) = st.relist.take() else {
                    return BTreeSet::new();
                };
                let gone: Vec<SetKey> = st
                    .sets
                    .keys()
                    .filter(|k| !seen.contains(&***k))
                    .map(|k| (**k).clone())
                    .collect();
                let mut out = BTreeSet::new();
                for k in gone {
                    out.extend(st.put(&k, None));
                }
                out
            }
        }
    }

    /// The claims of the other ServiceSets that the provider serves (`smp`: its selector;
    /// `labels_of`: a ServiceSet's labels, read only for the few that share a target) on the
    /// targets `key` claims.
    pub fn rivals(
        &self,
        key: &SetKey,
        smp: Option<&Value>,
        labels_of: impl Fn(&SetKey) -> Option<Value>,
    ) -> Vec<Claim> {
        let st = self.lock();
        let Some(mine) = st.sets.get(key) else {
            return Vec::new();
        };
        let served = |k: &SetKey| {
            smp.is_some_and(|smp| {
                labels_of(k).is_some_and(|labels| {
                    selector::matches(
                        crate::api::kcm::StateManagementProvider(smp).selector(),
                        &labels,
                    )
                })
            })
        };
        let mut out = Vec::new();
        for t in mine.targets() {
            for k in st.by_target.get(&hash_of(t)).into_iter().flatten() {
                if **k == *key {
                    continue;
                }
                let Some(e) = st.sets.get(&**k) else { continue };
                if !served(k) {
                    continue;
                }
                out.extend(e.claims_on(k, t));
            }
        }
        out
    }

    /// How many ServiceSets are indexed (for tests and metrics).
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.lock().sets.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kube::api::DynamicObject;
    use serde_json::json;

    /// Renders with these templates.
    fn with(t: &[Value]) -> impl Fn(&Value) -> Desired + Copy + '_ {
        move |s| Desired::of(s, t)
    }

    fn template() -> Value {
        json!({"apiVersion": "k0rdent.mirantis.com/v1beta1", "kind": "ServiceTemplate",
            "metadata": {"name": "nginx", "namespace": "kcm-system"},
            "spec": {"helm": {"chartSpec": {"chart": "ingress-nginx", "version": "4.11.0",
                "sourceRef": {"kind": "HelmRepository", "name": "ingress"}}}},
            "status": {"valid": true, "observedGeneration": 1,
                "chartRef": {"kind": "HelmChart", "name": "nginx", "namespace": "kcm-system"}}})
    }

    fn set(name: &str, generation: i64, priority: i64) -> Value {
        json!({"apiVersion": "k0rdent.mirantis.com/v1beta1", "kind": "ServiceSet",
            "metadata": {"name": name, "namespace": "kcm-system", "uid": format!("uid-{name}"),
                "generation": generation, "creationTimestamp": "2026-01-01T00:00:00Z",
                "labels": {"ksm.k0rdent.mirantis.com/adapter": "flux"}},
            "spec": {"cluster": "dev", "provider": {"name": "ksm-flux",
                "config": {"priority": priority}},
                "services": [{"name": "nginx", "namespace": "ingress", "template": "nginx"}]}})
    }

    fn smp() -> Value {
        json!({"metadata": {"name": "ksm-flux"},
            "spec": {"selector": {"matchLabels": {"ksm.k0rdent.mirantis.com/adapter": "flux"}}}})
    }

    /// Every ServiceSet of the tests has the labels the SMP selects.
    fn labels(_: &SetKey) -> Option<Value> {
        Some(json!({"ksm.k0rdent.mirantis.com/adapter": "flux"}))
    }

    fn key(name: &str) -> SetKey {
        ("kcm-system".into(), name.into())
    }

    #[test]
    fn rivals_are_found_by_target_and_changes_name_who_to_requeue() {
        let idx = ClaimIndex::new("ksm-flux");
        idx.templates_listed();
        let t = [template()];
        assert!(idx.observe(&set("a", 1, 100), with(&t), false).is_empty());
        assert_eq!(
            idx.observe(&set("b", 1, 200), with(&t), false),
            BTreeSet::from([key("a")]),
            "b's claim is on a's release: a is requeued"
        );
        let rivals = idx.rivals(&key("a"), Some(&smp()), labels);
        assert_eq!(rivals.len(), 1);
        assert_eq!(rivals[0].service_set, "b");
        assert_eq!(rivals[0].priority, 200);
        // Unchanged fingerprint: nothing rendered, nobody requeued.
        assert!(idx.observe(&set("b", 1, 300), with(&t), false).is_empty());
        // A new generation: rendered again.
        assert_eq!(
            idx.observe(&set("b", 2, 300), with(&t), false),
            BTreeSet::from([key("a")])
        );
        assert_eq!(idx.rivals(&key("a"), Some(&smp()), labels)[0].priority, 300);
        // Not served (no SMP, or labels outside its selector): no rival.
        assert!(idx.rivals(&key("a"), None, labels).is_empty());
        // b goes: a may take over.
        assert_eq!(idx.remove(&key("b")), BTreeSet::from([key("a")]));
        assert!(idx.rivals(&key("a"), Some(&smp()), labels).is_empty());
    }

    #[test]
    fn without_templates_nothing_is_claimed_until_a_forced_render() {
        let idx = ClaimIndex::new("ksm-flux");
        idx.observe(&set("a", 1, 100), with(&[]), false);
        idx.observe(&set("b", 1, 100), with(&[]), false);
        assert!(idx.rivals(&key("a"), Some(&smp()), labels).is_empty());
        let t = [template()];
        idx.observe(&set("a", 1, 100), with(&t), true);
        idx.observe(&set("b", 1, 100), with(&t), true);
        assert_eq!(idx.rivals(&key("a"), Some(&smp()), labels).len(), 1);
    }

    #[test]
    fn sets_rendered_before_the_templates_are_listed_are_named_for_a_second_render() {
        let idx = ClaimIndex::new("ksm-flux");
        idx.observe(&set("a", 1, 100), with(&[]), false);
        assert_eq!(idx.provisional(), [key("a")]);
        // Not skipped for an unchanged fingerprint while provisional.
        let t = [template()];
        assert_eq!(idx.templates_listed(), [key("a")]);
        idx.observe(&set("a", 1, 100), with(&t), false);
        assert!(idx.provisional().is_empty());
        idx.observe(&set("b", 1, 100), with(&t), false);
        assert_eq!(idx.rivals(&key("a"), Some(&smp()), labels).len(), 1);
        // A later relist of the templates: every ServiceSet again.
        assert_eq!(idx.templates_listed(), [key("a"), key("b")]);
    }

    #[test]
    fn a_status_write_is_not_rendered_again() {
        let idx = ClaimIndex::new("ksm-flux");
        idx.templates_listed();
        let t = [template()];
        let dynamic = |v: &Value| -> DynamicObject { serde_json::from_value(v.clone()).unwrap() };
        let converted = std::cell::Cell::new(0);
        let to_json = |o: &DynamicObject| {
            converted.set(converted.get() + 1);
            serde_json::to_value(o).unwrap()
        };
        let templates = with(&t);
        let mut s = set("a", 1, 100);
        idx.apply(&watcher::Event::Apply(dynamic(&s)), to_json, templates);
        s["status"] = json!({"deployed": false});
        idx.apply(&watcher::Event::Apply(dynamic(&s)), to_json, templates);
        assert_eq!(converted.get(), 1, "the same generation: not converted");
        s["metadata"]["generation"] = 2.into();
        idx.apply(&watcher::Event::Apply(dynamic(&s)), to_json, templates);
        assert_eq!(converted.get(), 2);
    }

    #[test]
    fn other_providers_are_not_indexed_and_relists_drop_the_missing() {
        let idx = ClaimIndex::new("ksm-flux");
        let mut other = set("s", 1, 100);
        other["spec"]["provider"]["name"] = "ksm-projectsveltos".into();
        idx.observe(&other, with(&[template()]), false);
        assert_eq!(idx.len(), 0);

        let t = [template()];
        let dynamic = |v: &Value| -> DynamicObject { serde_json::from_value(v.clone()).unwrap() };
        let to_json = |o: &DynamicObject| serde_json::to_value(o).unwrap();
        let templates = with(&t);
        idx.apply(
            &watcher::Event::Apply(dynamic(&set("a", 1, 100))),
            to_json,
            templates,
        );
        idx.apply(
            &watcher::Event::Apply(dynamic(&set("b", 1, 100))),
            to_json,
            templates,
        );
        assert_eq!(idx.len(), 2);
        idx.apply(&watcher::Event::Init, to_json, templates);
        idx.apply(
            &watcher::Event::InitApply(dynamic(&set("a", 1, 100))),
            to_json,
            templates,
        );
        let requeue = idx.apply(&watcher::Event::InitDone, to_json, templates);
        assert_eq!(idx.len(), 1, "b was not in the relist");
        assert_eq!(requeue, BTreeSet::from([key("a")]));
    }
}

//! The replies of the controller's own writes, kept until the watch caches have caught up.
//!
//! A cache can lag behind the controller's writes. The reply of every write is kept until the
//! cache shows that version too, so a reconcile never decides from an object older than what
//! it wrote itself, and writes nothing twice.
//!
//! resourceVersions are opaque: Kubernetes says clients may compare them for equality only
//! ("must not assume resource versions are numeric or collatable"). So no ordering is
//! inferred from their text. Instead each entry knows the versions that are older than it
//! because the controller read them before writing: the version its write was made from, and
//! every earlier version of its own writes of the object. A cached copy at one of those
//! versions lags behind; a cached copy at the written version has caught up; a cached copy at
//! any other version was written by someone else after the controller (a watch delivers
//! versions in order), so it is newer.
//!
//! The entries are ordered by (kind, namespace, name), so a reconcile reads those of its own
//! ServiceSet as one range by name prefix; entries past their time are swept at most once a
//! second. Nothing here scans every entry per reconcile.

use std::collections::{BTreeMap, HashSet};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::compact::{Packed, Packer};
use super::watch::Reply;
use crate::api::Object;

/// How long the reply of a write that created an object may stand in for a cache that does not
/// show the object at all: long enough for its watch event to arrive, short enough that an
/// object deleted meanwhile by someone else is recreated soon. (A reply that stands in for an
/// older cached copy needs no time limit: the versions say exactly when the cache caught up.
/// A time limit there was the cause of the conflict storm under load: once the caches lagged
/// by more than it, every reconcile wrote from the stale copy and was refused.)
const WRITTEN_TTL: Duration = Duration::from_secs(30);

/// Entries of objects gone without the controller knowing (deleted by someone else) are
/// dropped after this long.
const FORGOTTEN_AFTER: Duration = Duration::from_secs(600);

type Key = (String, String, String);

fn key_of(v: &Value) -> Key {
    let o = Object(v);
    (o.kind().into(), o.namespace().into(), o.name().into())
}

fn rv(v: &Value) -> &str {
    Object(v).resource_version()
}

struct Entry {
    /// The reply as JSON text, compressed (at the peak of a converge, thousands of replies
    /// wait for the caches), parsed when a reconcile reads it.
    packed: Packed,
    uid: Box<str>,
    version: Box<str>,
    /// Versions of the object known to be older than `object` (never compared by order).
    older: Vec<String>,
    at: Instant,
}

/// How often entries older than [`FORGOTTEN_AFTER`] are swept.
const SWEEP_EVERY: Duration = Duration::from_secs(1);

#[derive(Default)]
struct Entries {
    /// By (kind, namespace, name): the newest object the API server returned, and when.
    by_key: BTreeMap<Key, Entry>,
    /// Objects the controller deleted (by uid), while a cache may still show them.
    deleted: BTreeMap<Key, (String, Instant)>,
    /// Per kind: what the replies are compressed with.
    packers: BTreeMap<String, Packer>,
    swept: Option<Instant>,
}

impl Entries {
    fn sweep(&mut self) {
        if self.swept.is_some_and(|t| t.elapsed() < SWEEP_EVERY) {
            return;
        }
        self.swept = Some(Instant::now());
        self.by_key.retain(|_, e| e.at.elapsed() < FORGOTTEN_AFTER);
        self.deleted.retain(|_, (_, at)| at.elapsed() < WRITTEN_TTL);
    }

    fn unpack(&self, kind: &str, packed: &Packed) -> Option<Value> {
        self.packers.get(kind)?.unpack(packed).ok()
    }

    #[cfg(test)]
    fn is_empty(&self) -> bool {
        self.by_key.is_empty()
    }
}

/// The replies of the controller's own writes.
#[derive(Default)]
pub struct Written {
    objects: Mutex<Entries>,
}

impl Written {
    fn lock(&self) -> std::sync::MutexGuard<'_, Entries> {
        self.objects.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The newer of the cached object and the controller's own last write of it.
    pub fn freshest(&self, cached: Value) -> Value {
        let key = key_of(&cached);
        let mut w = self.lock();
        match w.by_key.get(&key) {
            Some(e)
                if e.older.iter().any(|o| o == rv(&cached)) && *e.uid == *Object(&cached).uid() =>
            {
                w.unpack(&key.0, &e.packed).unwrap_or(cached)
            }
            Some(_) => {
                // The cache caught up, or someone wrote after us.
                w.by_key.remove(&key);
                cached
            }
            None => cached,
        }
    }

    /// Objects of `kind` in `namespace` whose name starts with `prefix` that the controller
    /// wrote and `cached` (the cache's objects of that prefix) does not show yet. A reply that
    /// stood in for a missing object longer than [`WRITTEN_TTL`] is dropped.
    pub fn only_written(
        &self,
        kind: &str,
        namespace: &str,
        prefix: &str,
        cached: &[Value],
    ) -> Vec<Value> {
        let shown: HashSet<Key> = cached.iter().map(key_of).collect();
        let mut w = self.lock();
        w.sweep();
        let from = (kind.to_string(), namespace.to_string(), prefix.to_string());
        let mut out = Vec::new();
        let mut expired = Vec::new();
        for (key, e) in w.by_key.range(from..) {
            if key.0 != kind || key.1 != namespace || !key.2.starts_with(prefix) {
                break;
            }
            if shown.contains(key) {
                continue;
            }
            if e.at.elapsed() < WRITTEN_TTL {
                out.extend(w.unpack(kind, &e.packed));
            } else {
                expired.push(key.clone());
            }
        }
        for key in expired {
            w.by_key.remove(&key);
        }
        out
    }

    /// Keeps `reply`, the result of a write made from the version `from` of the object (None
    /// for a create, or when the object was not read).
    #[cfg(test)]
    pub fn remember(&self, reply: Value, from: Option<&str>) {
        let o = Object(&reply);
        let text = reply.to_string().into_bytes();
        self.keep(key_of(&reply), o.uid(), rv(&reply), &text, from);
    }

    /// Keeps a write's `reply`, an object of `kind`, as [`Self::remember`] does; returns its
    /// resourceVersion.
    pub fn remember_reply(&self, reply: Reply, kind: &str, from: Option<&str>) -> String {
        let Reply {
            namespace,
            name,
            uid,
            version,
            text,
        } = reply;
        self.keep(
            (kind.to_string(), namespace, name),
            &uid,
            &version,
            &text,
            from,
        );
        version
    }

    fn keep(&self, key: Key, uid: &str, version: &str, text: &[u8], from: Option<&str>) {
        let mut w = self.lock();
        w.sweep();
        let mut older = match w.by_key.remove(&key) {
            Some(prev) if *prev.uid == *uid => {
                let mut o = prev.older;
                o.push(prev.version.into());
                o
            }
            _ => Vec::new(),
        };
        if let Some(f) = from.filter(|f| !f.is_empty()) {
            older.push(f.to_string());
        }
        older.retain(|o| o != version);
        older.sort();
        older.dedup();
        let packed = w.packers.entry(key.0.clone()).or_default().pack(text);
        w.by_key.insert(
            key,
            Entry {
                packed,
                uid: uid.into(),
                version: version.into(),
                older,
                at: Instant::now(),
            },
        );
    }

    /// A watch delivered this version of an object: a reply kept for it is dropped once the
    /// cache shows that version or a later one (someone else's), so replies are kept only while
    /// a cache lags, not until a reconcile happens to read them again.
    pub fn observed(&self, kind: &str, namespace: &str, name: &str, uid: &str, version: &str) {
        let key = (kind.to_string(), namespace.to_string(), name.to_string());
        let mut w = self.lock();
        let lagging = w
            .by_key
            .get(&key)
            .is_some_and(|e| e.older.iter().any(|o| o == version) && *e.uid == *uid);
        if !lagging {
            w.by_key.remove(&key);
        }
    }

    pub fn forget(&self, kind: &str, namespace: &str, name: &str) {
        self.lock()
            .by_key
            .remove(&(kind.to_string(), namespace.to_string(), name.to_string()));
    }

    /// The controller deleted the object of this uid (or found it gone): until the caches
    /// drop it, [`Written::deleted_here`] says so, and a reconcile does not delete it again.
    pub fn deleted(&self, kind: &str, namespace: &str, name: &str, uid: &str) {
        let key = (kind.to_string(), namespace.to_string(), name.to_string());
        let mut w = self.lock();
        w.sweep();
        w.by_key.remove(&key);
        w.deleted.insert(key, (uid.to_string(), Instant::now()));
    }

    /// Whether `cached` is an object the controller deleted and the cache still shows (for
    /// at most [`WRITTEN_TTL`]; an object of the same name and another uid is someone else's).
    pub fn deleted_here(&self, cached: &Value) -> bool {
        let key = key_of(cached);
        let mut w = self.lock();
        match w.deleted.get(&key) {
            Some((uid, at)) if uid == Object(cached).uid() && at.elapsed() < WRITTEN_TTL => true,
            Some(_) => {
                w.deleted.remove(&key);
                false
            }
            None => false,
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_reply_is_dropped_once_the_watch_shows_its_version() {
        let w = super::Written::default();
        let at = |rv: &str| {
            serde_json::json!({"kind": "HelmRelease", "metadata": {"namespace": "ns",
                "name": "a", "uid": "u", "resourceVersion": rv}})
        };
        let seen = |rv: &str| w.observed("HelmRelease", "ns", "a", "u", rv);
        w.remember(at("2"), Some("1"));
        seen("1");
        assert!(!w.lock().is_empty(), "the cache still lags: kept");
        seen("2");
        assert!(w.lock().is_empty(), "the cache caught up: dropped");
        w.remember(at("4"), Some("3"));
        seen("9");
        assert!(w.lock().is_empty(), "someone wrote after: dropped");
    }

    use super::*;
    use serde_json::json;

    #[test]
    fn a_reply_kept_straight_from_the_client_reads_back_typed_and_whole() {
        let w = Written::default();
        let ar = kube::discovery::ApiResource::from_gvk_with_plural(
            &kube::api::GroupVersionKind::gvk("helm.toolkit.fluxcd.io", "v2", "HelmRelease"),
            "helmreleases",
        );
        // The reply's text as the server sent it; its type is filled in whatever it said.
        let text = json!({"metadata": {"name": "a", "namespace": "ns", "uid": "u",
            "resourceVersion": "7"}, "spec": {"interval": "1m"},
            "status": {"observedGeneration": 1}})
        .to_string();
        let reply = Reply::of(text, &ar).unwrap();
        assert_eq!(w.remember_reply(reply, &ar.kind, Some("6")), "7");
        let cached = json!({"apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease",
            "metadata": {"name": "a", "namespace": "ns", "uid": "u", "resourceVersion": "6"}});
        let fresh = w.freshest(cached);
        assert_eq!(
            fresh,
            json!({"apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease",
                "metadata": {"name": "a", "namespace": "ns", "uid": "u", "resourceVersion": "7"},
                "spec": {"interval": "1m"}, "status": {"observedGeneration": 1}})
        );
        // Kept as remember keeps it: dropped once the watch shows the version.
        w.observed("HelmRelease", "ns", "a", "u", "7");
        assert!(w.lock().is_empty());
    }

    fn set(rv: &str) -> Value {
        json!({"kind": "ServiceSet", "metadata": {"name": "a", "namespace": "n", "uid": "u",
            "resourceVersion": rv}})
    }

    #[test]
    fn a_deleted_object_still_cached_is_known_gone_by_its_uid() {
        let w = Written::default();
        let cached = set("5");
        assert!(!w.deleted_here(&cached));
        w.remember(set("5"), Some("4"));
        w.deleted("ServiceSet", "n", "a", "u");
        assert!(w.deleted_here(&cached));
        assert!(w.only_written("ServiceSet", "n", "a", &[]).is_empty());
        // The same name with another uid was created by someone else afterwards.
        let mut again = set("7");
        again["metadata"]["uid"] = json!("v");
        assert!(!w.deleted_here(&again));
        assert!(!w.deleted_here(&cached), "the record went with it");
    }

    #[test]
    fn versions_are_compared_for_equality_only() {
        // Versions that sort the wrong way as numbers and as text: no order is assumed.
        let w = Written::default();
        w.remember(set("9"), Some("10"));
        assert_eq!(
            rv(&w.freshest(set("10"))),
            "9",
            "the cache lags: ours stands in"
        );
        w.remember(set("zz"), Some("9"));
        assert_eq!(
            rv(&w.freshest(set("10"))),
            "zz",
            "still older than both writes"
        );
        assert_eq!(rv(&w.freshest(set("zz"))), "zz", "caught up");
        assert_eq!(
            rv(&w.freshest(set("10"))),
            "10",
            "entry gone once caught up"
        );
        // A version that is neither ours nor one we read before: someone wrote after us.
        w.remember(set("a1"), Some("a0"));
        assert_eq!(rv(&w.freshest(set("b7"))), "b7");
        assert!(w.lock().is_empty());
    }

    #[test]
    fn a_create_stands_in_until_the_cache_shows_the_object() {
        let w = Written::default();
        let mut hr = set("5");
        hr["kind"] = json!("HelmRelease");
        w.remember(hr.clone(), None);
        assert_eq!(w.only_written("HelmRelease", "n", "", &[]).len(), 1);
        assert_eq!(w.only_written("HelmRelease", "n", "a", &[]).len(), 1);
        assert!(w.only_written("HelmRelease", "n", "b", &[]).is_empty());
        assert!(
            w.only_written("HelmRelease", "n", "", &[hr.clone()])
                .is_empty()
        );
        // Any version of it in the cache is at least as new as the create.
        let mut later = hr.clone();
        later["metadata"]["resourceVersion"] = json!("3");
        assert_eq!(rv(&w.freshest(later)), "3");
    }
}

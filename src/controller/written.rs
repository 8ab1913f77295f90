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

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::Value;

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
    object: Value,
    /// Versions of the object known to be older than `object` (never compared by order).
    older: Vec<String>,
    at: Instant,
}

/// By (kind, namespace, name): the newest object the API server returned, and when.
#[derive(Default)]
pub struct Written {
    objects: Mutex<HashMap<Key, Entry>>,
}

impl Written {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Key, Entry>> {
        self.objects.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The newer of the cached object and the controller's own last write of it.
    pub fn freshest(&self, cached: Value) -> Value {
        let key = key_of(&cached);
        let mut w = self.lock();
        match w.get(&key) {
            Some(e)
                if e.older.iter().any(|o| o == rv(&cached))
                    && Object(&e.object).uid() == Object(&cached).uid() =>
            {
                e.object.clone()
            }
            Some(_) => {
                // The cache caught up, or someone wrote after us.
                w.remove(&key);
                cached
            }
            None => cached,
        }
    }

    /// Objects of `kind` in `namespace` the controller wrote and the cache does not show yet.
    pub fn only_written(&self, kind: &str, namespace: &str, cached: &[Value]) -> Vec<Value> {
        let mut w = self.lock();
        w.retain(|key, e| {
            let age = e.at.elapsed();
            age < FORGOTTEN_AFTER
                && (age < WRITTEN_TTL
                    || key.0 != kind
                    || key.1 != namespace
                    || cached.iter().any(|c| key_of(c) == *key))
        });
        w.iter()
            .filter(|((k, ns, _), _)| k == kind && ns == namespace)
            .filter(|(key, _)| !cached.iter().any(|c| key_of(c) == **key))
            .map(|(_, e)| e.object.clone())
            .collect()
    }

    /// Keeps `reply`, the result of a write made from the version `from` of the object (None
    /// for a create, or when the object was not read).
    pub fn remember(&self, reply: Value, from: Option<&str>) {
        let key = key_of(&reply);
        let mut w = self.lock();
        let mut older = match w.remove(&key) {
            Some(prev) if Object(&prev.object).uid() == Object(&reply).uid() => {
                let mut o = prev.older;
                o.push(rv(&prev.object).to_string());
                o
            }
            _ => Vec::new(),
        };
        if let Some(f) = from.filter(|f| !f.is_empty()) {
            older.push(f.to_string());
        }
        older.retain(|o| o != rv(&reply));
        older.sort();
        older.dedup();
        w.insert(
            key,
            Entry {
                object: reply,
                older,
                at: Instant::now(),
            },
        );
    }

    pub fn forget(&self, kind: &str, namespace: &str, name: &str) {
        self.lock()
            .remove(&(kind.to_string(), namespace.to_string(), name.to_string()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn set(rv: &str) -> Value {
        json!({"kind": "ServiceSet", "metadata": {"name": "a", "namespace": "n", "uid": "u",
            "resourceVersion": rv}})
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
        assert_eq!(w.only_written("HelmRelease", "n", &[]).len(), 1);
        assert!(w.only_written("HelmRelease", "n", &[hr.clone()]).is_empty());
        // Any version of it in the cache is at least as new as the create.
        let mut later = hr.clone();
        later["metadata"]["resourceVersion"] = json!("3");
        assert_eq!(rv(&w.freshest(later)), "3");
    }
}

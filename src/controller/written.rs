//! The replies of the controller's own writes, kept until the watch caches have caught up.
//!
//! A cache can lag behind the controller's writes. The reply of every write is kept until the
//! cache shows that version too (compared by resourceVersion), so a reconcile never decides
//! from an object older than what it wrote itself, and writes nothing twice.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::api::Object;

/// How long a write's reply may stand in for the cache: long enough for any watch event to
/// arrive, short enough that an object deleted meanwhile by someone else is recreated soon.
const WRITTEN_TTL: Duration = Duration::from_secs(30);

type Key = (String, String, String);

fn key_of(v: &Value) -> Key {
    let o = Object(v);
    (o.kind().into(), o.namespace().into(), o.name().into())
}

fn rv(v: &Value) -> Option<u64> {
    Object(v).resource_version().parse().ok()
}

/// By (kind, namespace, name): the newest object the API server returned, and when.
#[derive(Default)]
pub struct Written {
    objects: Mutex<HashMap<Key, (Value, Instant)>>,
}

impl Written {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Key, (Value, Instant)>> {
        self.objects.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The newer of the cached object and the controller's own last write of it.
    pub fn freshest(&self, cached: Value) -> Value {
        let key = key_of(&cached);
        let mut w = self.lock();
        match w.get(&key) {
            Some((mine, at))
                if rv(mine) > rv(&cached)
                    && Object(mine).uid() == Object(&cached).uid()
                    && at.elapsed() < WRITTEN_TTL =>
            {
                mine.clone()
            }
            Some(_) => {
                // The cache caught up (or the entry is too old to trust).
                w.remove(&key);
                cached
            }
            None => cached,
        }
    }

    /// Objects of `kind` in `namespace` the controller wrote and the cache does not show yet.
    pub fn only_written(&self, kind: &str, namespace: &str, cached: &[Value]) -> Vec<Value> {
        let mut w = self.lock();
        w.retain(|_, (_, at)| at.elapsed() < WRITTEN_TTL);
        w.iter()
            .filter(|((k, ns, _), _)| k == kind && ns == namespace)
            .filter(|(key, _)| !cached.iter().any(|c| key_of(c) == **key))
            .map(|(_, (v, _))| v.clone())
            .collect()
    }

    pub fn remember(&self, reply: Value) {
        self.lock().insert(key_of(&reply), (reply, Instant::now()));
    }

    pub fn forget(&self, kind: &str, namespace: &str, name: &str) {
        self.lock()
            .remove(&(kind.to_string(), namespace.to_string(), name.to_string()));
    }
}

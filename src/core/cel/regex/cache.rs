//! The bounded cache of compiled patterns shared by all evaluations.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use super::*;

/// A compiled pattern or Go's error, and when it was last used.
pub(super) type Entry = (Result<Arc<Compiled>, String>, u64);

/// The bounded cache of compiled patterns.
pub(super) struct Cache {
    entries: HashMap<Arc<str>, Entry>,
    /// Sum of the cached patterns' weights.
    weight: u64,
    clock: u64,
}

/// At most this many patterns, and this much weight summed over them (about 32 MiB of
/// programs), stay compiled.
pub(super) const CACHE_ENTRIES: usize = 1024;
pub(super) const CACHE_WEIGHT: u64 = 4 << 20;

pub(super) static CACHE: Mutex<Option<Cache>> = Mutex::new(None);

/// A compiled pattern from the cache, compiling it on a miss; the bool tells a miss.
pub fn cached(pattern: &str) -> (Result<Arc<Compiled>, String>, bool) {
    {
        let mut guard = CACHE.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(cache) = guard.as_mut() {
            cache.clock += 1;
            let clock = cache.clock;
            if let Some((r, used)) = cache.entries.get_mut(pattern) {
                *used = clock;
                return (r.clone(), false);
            }
        }
    }
    let result = compile(pattern).map(Arc::new);
    let weight = match &result {
        Ok(c) => c.weight,
        Err(e) => e.len() as u64,
    };
    let mut guard = CACHE.lock().unwrap_or_else(|e| e.into_inner());
    let cache = guard.get_or_insert_with(|| Cache {
        entries: HashMap::new(),
        weight: 0,
        clock: 0,
    });
    if weight <= CACHE_WEIGHT / 4 {
        while cache.entries.len() >= CACHE_ENTRIES || cache.weight + weight > CACHE_WEIGHT {
            let Some(oldest) = cache
                .entries
                .iter()
                .min_by_key(|(_, (_, used))| *used)
                .map(|(k, _)| k.clone())
            else {
                break;
            };
            if let Some((r, _)) = cache.entries.remove(&oldest) {
                cache.weight -= match &r {
                    Ok(c) => c.weight,
                    Err(e) => e.len() as u64,
                };
            }
        }
        cache.clock += 1;
        let clock = cache.clock;
        cache
            .entries
            .insert(Arc::from(pattern), (result.clone(), clock));
        cache.weight += weight;
    }
    (result, true)
}

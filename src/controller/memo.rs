//! The adapter's memory of what each ServiceSet's last reconcile rendered, validated and found
//! in sync ([`crate::core::adapter::memo`]), packed ([`super::compact`]): a reconcile with
//! nothing changed recalls it instead of rendering. One entry per ServiceSet reconciled,
//! dropped when the ServiceSet is deleted (or a relist no longer shows it), so it holds what
//! the caches hold, a few hundred bytes each.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

use kube::Resource;
use kube::runtime::watcher;
use serde_json::Value;

use super::claims::{SetKey, meta_key};
use super::compact::{Packed, Packer};
use crate::core::adapter::Desired;
use crate::core::adapter::memo::{Key, Remembered};

#[derive(Default)]
pub struct Memo {
    packer: Packer,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    entries: HashMap<SetKey, Packed>,
    /// The ServiceSets a relist has shown so far (between its start and its end).
    relist: Option<HashSet<SetKey>>,
}

impl Memo {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// What the last reconcile of `set` (key `at`) rendered, if still true of it: see
    /// [`Remembered::recall`].
    pub fn recall(
        &self,
        set: &SetKey,
        at: &Key,
        object: &Value,
        live: &[Value],
    ) -> Option<Desired> {
        let packed = self.lock().entries.get(set)?.clone();
        // Unpacked outside the lock. An entry that does not unpack (never: only this packer
        // wrote it) is a miss.
        let remembered: Remembered = self.packer.unpack(&packed).ok()?;
        remembered.recall(at, object, live)
    }

    /// Keeps what a reconcile of `set` rendered, or forgets what it kept (None: nothing of it
    /// is known in sync).
    pub fn remember(&self, set: &SetKey, remembered: Option<&Remembered>) {
        let packed = remembered
            .and_then(|r| serde_json::to_vec(r).ok())
            .map(|t| self.packer.pack(&t));
        let mut st = self.lock();
        match packed {
            Some(p) => {
                st.entries.insert(set.clone(), p);
            }
            None => {
                st.entries.remove(set);
            }
        }
    }

    /// A watch event of the ServiceSets: a deleted one is forgotten, and so is one a relist
    /// no longer shows.
    pub fn observe<K: Resource>(&self, ev: &watcher::Event<K>) {
        let mut st = self.lock();
        match ev {
            watcher::Event::Delete(o) => {
                st.entries.remove(&meta_key(o.meta()));
            }
            watcher::Event::Init => st.relist = Some(HashSet::new()),
            watcher::Event::InitApply(o) => {
                let key = meta_key(o.meta());
                if let Some(seen) = st.relist.as_mut() {
                    seen.insert(key);
                }
            }
            watcher::Event::InitDone => {
                if let Some(seen) = st.relist.take() {
                    st.entries.retain(|k, _| seen.contains(k));
                }
            }
            watcher::Event::Apply(_) => {}
        }
    }

    /// How many ServiceSets it remembers.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.lock().entries.len()
    }
}

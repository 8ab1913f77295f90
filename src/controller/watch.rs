//! The watches: a cache per kind fed by a watch stream, each object slimmed to what the
//! reconciles read.

use kube::Client;
use kube::api::{Api, DynamicObject, ObjectMeta};
use kube::discovery::ApiResource;
use kube::runtime::WatchStreamExt;
use kube::runtime::reflector::{self, Store};
use kube::runtime::watcher;
use serde_json::Value;

use super::cache;
use crate::api::naming::{ANNOTATION_LAST_APPLIED, FIELD_MANAGER};

/// A cache of every object of a kind, and the stream of its watch events (which fills the
/// cache as it is polled; watch errors back off and the watch resumes or relists).
pub fn reflect(
    client: &Client,
    ar: &ApiResource,
    wc: watcher::Config,
    modify: fn(&mut DynamicObject),
) -> (
    Store<DynamicObject>,
    impl futures::Stream<Item = Result<watcher::Event<DynamicObject>, watcher::Error>> + Send + use<>,
) {
    let writer = reflector::store::Writer::<DynamicObject>::new(ar.clone());
    let store = writer.as_reader();
    let api = Api::<DynamicObject>::all_with(client.clone(), ar);
    let stream = watcher(api, wc).default_backoff().modify(modify);
    (store, reflector::reflector(writer, stream))
}

/// What the caches need of an object's metadata: managedFields only the adapter's own entry
/// (the SSA no-op check reads it), no last-applied annotation.
pub fn slim_meta(m: &mut ObjectMeta) {
    if let Some(mf) = m.managed_fields.as_mut() {
        mf.retain(|e| {
            e.manager.as_deref() == Some(FIELD_MANAGER)
                && e.operation.as_deref() == Some("Apply")
                && e.subresource.as_deref().unwrap_or("").is_empty()
        });
    }
    if let Some(a) = m.annotations.as_mut() {
        a.remove(ANNOTATION_LAST_APPLIED);
    }
}

/// What the caches need of an object, to keep memory flat: its metadata slimmed
/// ([`slim_meta`]), and of the long Flux status lists (Helm release history, Kustomization inventory) only whether they are
/// empty (the state mapping's "something was attempted").
pub fn slim(o: &mut DynamicObject) {
    slim_meta(&mut o.metadata);
    if let Some(status) = o.data.get_mut("status") {
        if let Some(Value::Array(h)) = status.get_mut("history") {
            h.truncate(1);
        }
        if let Some(Value::Array(e)) = status
            .get_mut("inventory")
            .and_then(|i| i.get_mut("entries"))
        {
            e.truncate(1);
        }
    }
}

/// Like [`reflect`], into a [`cache::TextCache`].
pub fn text_reflect(
    client: &Client,
    ar: &ApiResource,
    wc: watcher::Config,
) -> (
    cache::TextCache,
    impl futures::Stream<Item = Result<watcher::Event<DynamicObject>, watcher::Error>> + Send + use<>,
) {
    let cache = cache::TextCache::new(ar.clone());
    let api = Api::<DynamicObject>::all_with(client.clone(), ar);
    let stream = cache.reflect(watcher(api, wc).default_backoff().modify(slim));
    (cache, stream)
}

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
use crate::api::naming::{ANNOTATION_LAST_APPLIED, FIELD_MANAGER, OPERATION_APPLY};

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
            kept_entry(
                e.manager.as_deref(),
                e.operation.as_deref(),
                e.subresource.as_deref(),
            )
        });
    }
    if let Some(a) = m.annotations.as_mut() {
        a.remove(ANNOTATION_LAST_APPLIED);
    }
}

/// The managedFields entry the caches keep: the adapter's own apply of the object itself.
fn kept_entry(manager: Option<&str>, operation: Option<&str>, subresource: Option<&str>) -> bool {
    manager == Some(FIELD_MANAGER)
        && operation == Some(OPERATION_APPLY)
        && subresource.unwrap_or("").is_empty()
}

/// What the caches need of an object, to keep memory flat: its metadata slimmed
/// ([`slim_meta`]), and of the long Flux status lists (Helm release history, Kustomization inventory) only whether they are
/// empty (the state mapping's "something was attempted").
pub fn slim(o: &mut DynamicObject) {
    slim_meta(&mut o.metadata);
    if let Some(status) = o.data.get_mut("status") {
        slim_status(status);
    }
}

/// Of the long Flux status lists, only the first item ([`slim`]).
pub fn slim_status(status: &mut Value) {
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

/// Like [`reflect`], into a [`cache::TextCache`].
pub fn text_reflect(
    client: &Client,
    ar: &ApiResource,
    wc: watcher::Config,
) -> (
    cache::TextCache,
    impl futures::Stream<Item = Result<watcher::Event<cache::TextObject>, watcher::Error>>
    + Send
    + use<>,
) {
    let cache = cache::TextCache::new(ar.clone());
    // Slimmed as it is read (cache::TextObject).
    let api = Api::<cache::TextObject>::all_with(client.clone(), ar);
    let stream = cache.reflect(watcher(api, wc).default_backoff());
    (cache, stream)
}

/// A write's reply as the caches keep it ([`slim`]), read from its text: the text itself when
/// there is nothing to slim and it names the kind written (a reply to the adapter's own apply,
/// whose only managedFields entry is the adapter's), else parsed, slimmed and written out
/// again. Either way the same object; the first needs no tree of the object, only a pass
/// over its text.
#[derive(Debug)]
pub struct Reply {
    pub namespace: String,
    pub name: String,
    pub uid: String,
    pub version: String,
    /// JSON text.
    pub text: Vec<u8>,
}

impl Reply {
    /// The reply `text` of a write to an object of `ar`; an error when it is not an object.
    pub fn of(text: String, ar: &ApiResource) -> serde_json::Result<Reply> {
        if let Ok(s) = serde_json::from_str::<skim::Object>(&text)
            && s.as_kept(ar)
        {
            let m = s.metadata;
            return Ok(Reply {
                namespace: m.namespace.unwrap_or_default().to_string(),
                name: m.name.unwrap_or_default().to_string(),
                uid: m.uid.unwrap_or_default().to_string(),
                version: m.resource_version.unwrap_or_default().to_string(),
                text: text.into_bytes(),
            });
        }
        Ok(Reply::from_object(serde_json::from_str(&text)?, ar))
    }

    /// An object of `ar` read whole: slimmed, its type filled in, written out.
    pub fn from_object(mut o: DynamicObject, ar: &ApiResource) -> Reply {
        slim(&mut o);
        o.types = Some(kube::api::TypeMeta {
            api_version: ar.api_version.clone(),
            kind: ar.kind.clone(),
        });
        let m = &o.metadata;
        Reply {
            namespace: m.namespace.clone().unwrap_or_default(),
            name: m.name.clone().unwrap_or_default(),
            uid: m.uid.clone().unwrap_or_default(),
            version: m.resource_version.clone().unwrap_or_default(),
            text: serde_json::to_vec(&o).unwrap_or_default(),
        }
    }
}

/// What [`Reply::of`] reads of a reply's text to know whether [`slim`] would change it: the
/// strings borrowed from the text (one with an escape fails the read: the reply is then
/// parsed whole), every other value skipped.
mod skim {
    use std::fmt;

    use kube::discovery::ApiResource;
    use serde::Deserialize;
    use serde::de::{IgnoredAny, MapAccess, SeqAccess, Visitor};

    use crate::api::naming::ANNOTATION_LAST_APPLIED;

    #[derive(Deserialize)]
    pub struct Object<'a> {
        #[serde(rename = "apiVersion")]
        api_version: Option<&'a str>,
        kind: Option<&'a str>,
        pub metadata: Meta<'a>,
        status: Option<Status>,
    }

    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct Meta<'a> {
        pub name: Option<&'a str>,
        pub namespace: Option<&'a str>,
        pub uid: Option<&'a str>,
        pub resource_version: Option<&'a str>,
        managed_fields: Option<Vec<Entry<'a>>>,
        annotations: Option<LastApplied>,
    }

    #[derive(Deserialize)]
    struct Entry<'a> {
        manager: Option<&'a str>,
        operation: Option<&'a str>,
        subresource: Option<&'a str>,
    }

    #[derive(Deserialize)]
    struct Status {
        history: Option<Count>,
        inventory: Option<Inventory>,
    }

    #[derive(Deserialize)]
    struct Inventory {
        entries: Option<Count>,
    }

    /// How many items a list has (any other value: None, as `slim` leaves it alone).
    struct Count(Option<usize>);

    /// Whether the annotations hold the last-applied one.
    struct LastApplied(bool);

    impl Object<'_> {
        /// Whether the text is kept as it is: it names `ar`'s kind and [`super::slim`] would
        /// leave it as it is.
        pub fn as_kept(&self, ar: &ApiResource) -> bool {
            let m = &self.metadata;
            self.api_version == Some(ar.api_version.as_str())
                && self.kind == Some(ar.kind.as_str())
                && m.managed_fields
                    .iter()
                    .flatten()
                    .all(|e| super::kept_entry(e.manager, e.operation, e.subresource))
                && !m.annotations.as_ref().is_some_and(|a| a.0)
                && self.status.as_ref().is_none_or(|s| {
                    let short = |c: &Option<Count>| c.as_ref().and_then(|c| c.0).unwrap_or(0) <= 1;
                    short(&s.history) && s.inventory.as_ref().is_none_or(|i| short(&i.entries))
                })
        }
    }

    impl<'de> Deserialize<'de> for Count {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Count, D::Error> {
            struct V;
            impl<'de> Visitor<'de> for V {
                type Value = Count;
                fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                    f.write_str("any value")
                }
                fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Count, A::Error> {
                    let mut n = 0;
                    while seq.next_element::<IgnoredAny>()?.is_some() {
                        n += 1;
                    }
                    Ok(Count(Some(n)))
                }
                fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Count, A::Error> {
                    IgnoredAny.visit_map(map).map(|_| Count(None))
                }
                fn visit_bool<E>(self, _: bool) -> Result<Count, E> {
                    Ok(Count(None))
                }
                fn visit_i64<E>(self, _: i64) -> Result<Count, E> {
                    Ok(Count(None))
                }
                fn visit_u64<E>(self, _: u64) -> Result<Count, E> {
                    Ok(Count(None))
                }
                fn visit_f64<E>(self, _: f64) -> Result<Count, E> {
                    Ok(Count(None))
                }
                fn visit_str<E>(self, _: &str) -> Result<Count, E> {
                    Ok(Count(None))
                }
                fn visit_unit<E>(self) -> Result<Count, E> {
                    Ok(Count(None))
                }
            }
            d.deserialize_any(V)
        }
    }

    impl<'de> Deserialize<'de> for LastApplied {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<LastApplied, D::Error> {
            struct V;
            impl<'de> Visitor<'de> for V {
                type Value = LastApplied;
                fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                    f.write_str("a map of annotations")
                }
                fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<LastApplied, A::Error> {
                    let mut found = false;
                    while let Some(key) = map.next_key::<&'de str>()? {
                        found |= key == ANNOTATION_LAST_APPLIED;
                        map.next_value::<IgnoredAny>()?;
                    }
                    Ok(LastApplied(found))
                }
            }
            d.deserialize_map(V)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ar() -> ApiResource {
        ApiResource::from_gvk_with_plural(
            &kube::api::GroupVersionKind::gvk("helm.toolkit.fluxcd.io", "v2", "HelmRelease"),
            "helmreleases",
        )
    }

    /// An apply's reply: the adapter's entry alone, its type named.
    fn applied() -> Value {
        json!({"apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease",
            "metadata": {"name": "a", "namespace": "ns", "uid": "u", "resourceVersion": "7",
                "generation": 1, "creationTimestamp": "2026-01-01T00:00:00Z",
                "labels": {"l": "v"}, "annotations": {"note": "<&>"},
                "managedFields": [{"manager": FIELD_MANAGER, "operation": "Apply",
                    "apiVersion": "helm.toolkit.fluxcd.io/v2", "fieldsType": "FieldsV1",
                    "fieldsV1": {"f:spec": {"f:interval": {}}}, "time": "2026-01-01T00:00:00Z"}]},
            "spec": {"interval": "1m", "values": {"a": [1, 2.5, null, true, "\u{e9}"]}},
            "status": {"history": [{"v": 1}], "inventory": {"entries": [{"id": "x"}]}}})
    }

    /// What the reply was kept as before: parsed whole, slimmed, its type filled in.
    fn parsed_whole(text: &str) -> Value {
        let mut o: DynamicObject = serde_json::from_str(text).unwrap();
        slim(&mut o);
        o.types = Some(kube::api::TypeMeta {
            api_version: ar().api_version,
            kind: ar().kind,
        });
        serde_json::to_value(&o).unwrap()
    }

    #[test]
    fn a_reply_is_kept_as_its_text_when_slimming_changes_nothing_and_as_slimmed_else() {
        let other_entry = json!({"manager": "helm-controller", "operation": "Update",
            "subresource": "status", "fieldsV1": {"f:status": {}}});
        type Change = Box<dyn Fn(&mut Value)>;
        let variants: Vec<(&str, bool, Change)> = vec![
            ("as applied", true, Box::new(|_| {})),
            (
                "no managedFields, no status",
                true,
                Box::new(|v| {
                    let m = v["metadata"].as_object_mut().unwrap();
                    m.remove("managedFields");
                    v.as_object_mut().unwrap().remove("status");
                }),
            ),
            (
                "history not a list",
                true,
                Box::new(|v| v["status"]["history"] = json!("x")),
            ),
            (
                "another manager's entry",
                false,
                Box::new(move |v| {
                    v["metadata"]["managedFields"]
                        .as_array_mut()
                        .unwrap()
                        .push(other_entry.clone())
                }),
            ),
            (
                "the adapter's entry on status",
                false,
                Box::new(|v| v["metadata"]["managedFields"][0]["subresource"] = json!("status")),
            ),
            (
                "last-applied annotation",
                false,
                Box::new(|v| v["metadata"]["annotations"][ANNOTATION_LAST_APPLIED] = json!("{}")),
            ),
            (
                "long history",
                false,
                Box::new(|v| v["status"]["history"] = json!([{"v": 3}, {"v": 2}, {"v": 1}])),
            ),
            (
                "long inventory",
                false,
                Box::new(|v| {
                    v["status"]["inventory"]["entries"] = json!([{"id": "x"}, {"id": "y"}])
                }),
            ),
            (
                "no type",
                false,
                Box::new(|v| {
                    v.as_object_mut().unwrap().remove("kind");
                }),
            ),
            (
                "another version",
                false,
                Box::new(|v| v["apiVersion"] = json!("helm.toolkit.fluxcd.io/v2beta2")),
            ),
        ];
        for (what, as_is, change) in variants {
            let mut v = applied();
            change(&mut v);
            let text = v.to_string();
            let reply = Reply::of(text.clone(), &ar()).unwrap();
            assert_eq!(reply.text == text.as_bytes(), as_is, "{what}");
            let kept: Value = serde_json::from_slice(&reply.text).unwrap();
            assert_eq!(kept, parsed_whole(&text), "{what}");
            assert_eq!(
                (
                    &*reply.namespace,
                    &*reply.name,
                    &*reply.uid,
                    &*reply.version
                ),
                ("ns", "a", "u", "7"),
                "{what}"
            );
        }
    }

    #[test]
    fn an_escaped_string_is_read_whole_and_what_is_not_an_object_is_an_error() {
        // Go escapes <, > and & in strings: a name so written is not borrowed from the text.
        let text = applied()
            .to_string()
            .replace(r#""name":"a""#, r#""name":"\u0061""#);
        assert!(text.contains(r"\u0061"));
        let reply = Reply::of(text.clone(), &ar()).unwrap();
        assert_eq!(reply.name, "a");
        assert_eq!(
            serde_json::from_slice::<Value>(&reply.text).unwrap(),
            parsed_whole(&text)
        );
        for bad in ["", "[]", "{\"metadata\": 1}", "{\"metadata\": {}", "null"] {
            assert!(Reply::of(bad.to_string(), &ar()).is_err(), "{bad:?}");
        }
    }
}

//! What a reconcile rendered and validated, remembered for the next reconcile of the same
//! ServiceSet, so that one with nothing changed neither renders nor validates again.
//!
//! A render depends on the ServiceSet's uid, spec (its `generation`) and pause annotation, and
//! on the ServiceTemplates its services name (their `resourceVersion`s): the [`Key`]. Whether
//! a rendered object needs an apply depends on the object and on its live copy: a reconcile
//! that found the live copy in sync, or applied the object, knows the live copy's
//! `resourceVersion` then, and any later change of the live copy (someone's edit, a deletion,
//! a status) changes that version. So a [`Remembered`] keeps, of each service, what the plan
//! reads that the spec does not say (its type, outcome, version and target) and of each
//! object only its kind, name and the version known in sync. It is recalled as a [`Desired`]
//! whose objects are their kind and name alone, each known in sync, when the key is the same
//! and every object's live copy still has that version; otherwise the caller renders.
//!
//! The render's diagnostics are not kept: the reconcile that rendered logged them.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::ownership::Target;
use super::{Desired, key};
use crate::api::kcm::{ServiceSet, ServiceType};
use crate::api::kinds;
use crate::api::meta::Object;
use crate::api::naming;
use crate::core::render::{Outcome, Rendered, ServiceResult};

/// What a ServiceSet's render depends on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Key {
    uid: String,
    generation: i64,
    paused: bool,
    /// The `resourceVersion` of each template the services name (first mention first), None
    /// for one that does not exist.
    templates: Vec<Option<String>>,
}

impl Key {
    /// The key of `set` whose named templates have these versions; None without a uid or a
    /// generation (nothing then says whether the spec changed).
    pub fn of(set: &Value, templates: Vec<Option<String>>) -> Option<Key> {
        let s = ServiceSet(set);
        let uid = s.meta().uid();
        let generation = s.meta().generation()?;
        // A template without a version could change unseen.
        if uid.is_empty() || templates.iter().flatten().any(String::is_empty) {
            return None;
        }
        Some(Key {
            uid: uid.to_string(),
            generation,
            paused: s.paused(),
            templates,
        })
    }
}

/// One service as a render left it, less what the spec says (name, namespace, template).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Service {
    #[serde(rename = "t", default, skip_serializing_if = "Option::is_none")]
    service_type: Option<ServiceType>,
    /// The version it reports once deployed ([`super::service_version`]).
    #[serde(rename = "v", default, skip_serializing_if = "Option::is_none")]
    version: Option<String>,
    #[serde(rename = "o")]
    outcome: KeptOutcome,
}

/// A service's outcome; a rendered one with what the plan needs of its object.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
enum KeptOutcome {
    #[serde(rename = "f")]
    Failed(String),
    #[serde(rename = "u")]
    Uninstall,
    #[serde(rename = "r")]
    Rendered {
        #[serde(rename = "i")]
        index: usize,
        #[serde(rename = "k")]
        kind: String,
        /// The object's name when it is not `<ServiceSet>-<service>`.
        #[serde(rename = "n", default, skip_serializing_if = "Option::is_none")]
        name: Option<String>,
        /// The live copy's `resourceVersion` known in sync with the object.
        #[serde(rename = "s")]
        in_sync: String,
        #[serde(rename = "c", default, skip_serializing_if = "Option::is_none")]
        target: Option<Target>,
    },
}

/// What one reconcile of a ServiceSet rendered, validated and found in sync.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Remembered {
    #[serde(rename = "k")]
    key: Key,
    #[serde(rename = "s")]
    services: Vec<Service>,
}

impl Remembered {
    /// What `desired` (a render of `set` under the key `at`) gives, each object with the version of
    /// its live copy known in sync (`in_sync(index)`). None when one is not known (an object
    /// not applied: another ServiceSet owns its release, the provider is not ready, a write
    /// failed) or when `desired` was itself recalled.
    pub fn of(
        at: Key,
        set: &Value,
        desired: &Desired,
        in_sync: impl Fn(usize) -> Option<String>,
    ) -> Option<Remembered> {
        if desired.recalled {
            return None;
        }
        let rendered = &desired.rendered;
        let set_name = Object(set).name();
        let mut services = Vec::with_capacity(rendered.services.len());
        for (i, svc) in rendered.services.iter().enumerate() {
            let outcome = match &svc.outcome {
                Outcome::Failed { message } => KeptOutcome::Failed(message.clone()),
                Outcome::Uninstall => KeptOutcome::Uninstall,
                Outcome::Rendered { index } => {
                    let object = rendered.objects.get(*index)?;
                    let (kind, name) = key(object);
                    KeptOutcome::Rendered {
                        index: *index,
                        kind: kind.to_string(),
                        name: (name != naming::flux_object_name(set_name, &svc.name))
                            .then(|| name.to_string()),
                        in_sync: in_sync(*index).filter(|v| !v.is_empty())?,
                        target: desired.target(*index),
                    }
                }
            };
            services.push(Service {
                service_type: svc.service_type,
                version: desired.versions.get(i).cloned().flatten(),
                outcome,
            });
        }
        Some(Remembered { key: at, services })
    }

    /// The render of `set` again, when `now` is this one's key and each object's live copy
    /// in `live` has the version known in sync; None otherwise (the caller renders).
    pub fn recall(&self, now: &Key, set: &Value, live: &[Value]) -> Option<Desired> {
        if *now != self.key {
            return None;
        }
        let s = ServiceSet(set);
        let set_name = s.name();
        let namespace = s.meta().namespace_or_default();
        let count = self
            .services
            .iter()
            .filter(|s| matches!(s.outcome, KeptOutcome::Rendered { .. }))
            .count();
        let mut objects: Vec<Value> = vec![Value::Null; count];
        let mut targets: Vec<Option<Target>> = vec![None; count];
        let mut services = Vec::with_capacity(self.services.len());
        let mut versions = Vec::with_capacity(self.services.len());
        let mut spec = s.services();
        for remembered in &self.services {
            let svc = spec.next()?;
            let outcome = match &remembered.outcome {
                KeptOutcome::Failed(message) => Outcome::Failed {
                    message: message.clone(),
                },
                KeptOutcome::Uninstall => Outcome::Uninstall,
                KeptOutcome::Rendered {
                    index,
                    kind,
                    name,
                    in_sync,
                    target,
                } => {
                    let kind = kinds::flux_object(kind)?;
                    let name = name
                        .clone()
                        .unwrap_or_else(|| naming::flux_object_name(set_name, svc.name()));
                    let unchanged = !in_sync.is_empty()
                        && live.iter().any(|l| {
                            key(l) == (kind.kind, name.as_str())
                                && Object(l).resource_version() == in_sync
                        });
                    let slot = objects.get_mut(*index).filter(|o| o.is_null());
                    let (true, Some(slot)) = (unchanged, slot) else {
                        return None;
                    };
                    *slot = json!({"apiVersion": kind.api_version, "kind": kind.kind,
                        "metadata": {"name": name, "namespace": namespace}});
                    targets[*index] = target.clone();
                    Outcome::Rendered { index: *index }
                }
            };
            services.push(ServiceResult {
                name: svc.name().to_string(),
                namespace: svc.namespace().to_string(),
                template: svc.template().to_string(),
                service_type: remembered.service_type,
                outcome,
            });
            versions.push(remembered.version.clone());
        }
        if spec.next().is_some() {
            return None;
        }
        let rendered = Rendered {
            objects,
            services,
            diagnostics: Vec::new(),
        };
        Some(Desired::recalled(rendered, versions, targets))
    }
}

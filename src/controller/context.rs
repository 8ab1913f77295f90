//! What every reconcile shares: the client, the watch caches, the replies of its own
//! writes, the metrics; and the errors a reconcile ends with.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use kube::Client;
use kube::api::DynamicObject;
use kube::discovery::ApiResource;
use kube::runtime::reflector::Store;

use super::written::Written;
use super::{Metrics, Options, cache};
use crate::api::kinds;
use crate::cluster::api_resource;

/// The resources of the kinds the controller watches.
pub struct Kinds {
    pub service_set: ApiResource,
    pub template: ApiResource,
    pub smp: ApiResource,
    pub helm_release: ApiResource,
    pub kustomization: ApiResource,
}

impl Kinds {
    pub fn new() -> Kinds {
        Kinds {
            service_set: api_resource(&kinds::SERVICE_SET),
            template: api_resource(&kinds::SERVICE_TEMPLATE),
            smp: api_resource(&kinds::STATE_MANAGEMENT_PROVIDER),
            helm_release: api_resource(&kinds::HELM_RELEASE),
            kustomization: api_resource(&kinds::KUSTOMIZATION),
        }
    }
}

/// What every reconcile shares: the client, the caches, the replies of its own writes.
pub struct Ctx {
    pub client: Client,
    pub kinds: Kinds,
    pub opts: Options,
    pub smps: Store<DynamicObject>,
    /// Every ServiceSet (spec and status packed: `watch::set_json`).
    pub sets: Store<DynamicObject>,
    pub templates: Store<DynamicObject>,
    pub helm_releases: cache::TextCache,
    pub kustomizations: cache::TextCache,
    pub written: Arc<Written>,
    /// Every ServiceSet's claims on releases and paths: the rivals of a reconcile.
    pub claims: Arc<super::claims::ClaimIndex>,
    /// True once every cache has its initial list.
    pub synced: tokio::sync::watch::Receiver<bool>,
    /// Consecutive failures per ServiceSet uid, for the backoff.
    pub failures: Mutex<HashMap<String, u32>>,
    pub metrics: Arc<Metrics>,
    /// events.k8s.io/v1 Events about the ServiceSets.
    pub recorder: kube::runtime::events::Recorder,
}

/// The Events' reporter: the adapter, and this replica (the pod's name when it is known).
pub fn reporter() -> kube::runtime::events::Reporter {
    let instance = ["POD_NAME", "HOSTNAME"]
        .iter()
        .find_map(|v| std::env::var(v).ok().filter(|s| !s.is_empty()));
    kube::runtime::events::Reporter {
        controller: crate::api::naming::FIELD_MANAGER.into(),
        instance,
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ReconcileError {
    #[error("{0}")]
    Api(String),
    #[error("conflict: {0}")]
    Conflict(String),
}

pub fn api_error(what: &str, e: kube::Error) -> ReconcileError {
    match &e {
        kube::Error::Api(s) if s.code == 409 => {
            ReconcileError::Conflict(format!("{what}: {}", s.message))
        }
        kube::Error::Api(s) => {
            ReconcileError::Api(format!("{what}: {} (HTTP {})", s.message, s.code))
        }
        _ => ReconcileError::Api(format!("{what}: {e}")),
    }
}

//! What every reconcile shares: the client, the watch caches, the replies of its own
//! writes, the metrics; and the errors a reconcile ends with.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use kube::Client;
use kube::discovery::ApiResource;

use super::caches::Caches;
use super::written::Written;
use super::{Metrics, Options};
use crate::api::kinds;
use crate::cluster::api_resource;

/// The resources of the kinds the controller watches.
#[derive(Clone)]
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
    pub caches: Arc<Caches>,
    pub written: Arc<Written>,
    /// True once every cache has its initial list.
    pub synced: tokio::sync::watch::Receiver<bool>,
    /// Consecutive failures per ServiceSet uid, for the backoff.
    pub failures: Mutex<HashMap<String, u32>>,
    pub metrics: Arc<Metrics>,
    /// events.k8s.io/v1 Events about the ServiceSets.
    pub recorder: kube::runtime::events::Recorder,
}

impl Ctx {
    pub fn new(
        client: Client,
        kinds: Kinds,
        opts: Options,
        caches: &Arc<Caches>,
        written: Arc<Written>,
        synced: tokio::sync::watch::Receiver<bool>,
        metrics: &Arc<Metrics>,
    ) -> Ctx {
        Ctx {
            recorder: kube::runtime::events::Recorder::new(client.clone(), reporter()),
            client,
            kinds,
            opts,
            caches: caches.clone(),
            written,
            synced,
            failures: Mutex::new(HashMap::new()),
            metrics: metrics.clone(),
        }
    }
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

//! One reconcile of one ServiceSet: gather → plan → apply. Gathering reads the caches
//! ([`super::gather`]), the pure core decides ([`crate::core::adapter::plan`]: the objects,
//! the status, the finalizer, when to look again), and a small writer carries the plan out
//! ([`super::apply`]).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use kube::Client;
use kube::api::DynamicObject;
use kube::discovery::ApiResource;
use kube::runtime::controller::Action;
use kube::runtime::reflector::Store;
use serde_json::Value;
use tracing::{debug, warn};

use super::apply::{self, Applied};
use super::written::Written;
use super::{Options, cache, gather, leader, metrics};
use crate::api::{Object, kinds};
use crate::cluster::api_resource;
use crate::core::adapter::{self, Next};
use crate::diag::Severity;

pub use super::metrics::Metrics;

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
    pub templates: Store<DynamicObject>,
    pub helm_releases: cache::TextCache,
    pub kustomizations: cache::TextCache,
    pub written: Written,
    /// True once every cache has its initial list.
    pub synced: tokio::sync::watch::Receiver<bool>,
    /// Consecutive failures per ServiceSet uid, for the backoff.
    pub failures: Mutex<HashMap<String, u32>>,
    pub metrics: Arc<Metrics>,
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

/// One reconcile of one ServiceSet, with its metrics.
pub async fn reconcile(obj: Arc<DynamicObject>, ctx: Arc<Ctx>) -> Result<Action, ReconcileError> {
    let started = Instant::now();
    let result = reconcile_once(&obj, &ctx).await;
    ctx.metrics
        .duration
        .observe(started.elapsed().as_secs_f64());
    let uid = obj.metadata.uid.clone().unwrap_or_default();
    let result_label = if result.is_ok() { "success" } else { "error" };
    ctx.metrics
        .reconciles
        .get_or_create(&metrics::ResultLabel {
            result: result_label,
        })
        .inc();
    match &result {
        Ok(_) => {
            ctx.failures
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .remove(&uid);
        }
        Err(e) => {
            let kind = match e {
                ReconcileError::Conflict(_) => "conflict",
                ReconcileError::Api(_) => "api",
            };
            ctx.metrics
                .errors
                .get_or_create(&metrics::KindLabel { kind })
                .inc();
        }
    }
    result
}

/// Gather → plan → apply.
pub async fn reconcile_once(obj: &DynamicObject, ctx: &Ctx) -> Result<Action, ReconcileError> {
    // No decision from a half-filled cache (immediate once the caches are synced).
    // (`Store::wait_until_ready` wakes one waiter only; the run loop is that one.)
    leader::stopped(&mut ctx.synced.clone()).await;
    let Some(gathered) = gather::gather(obj, ctx).await else {
        return Ok(Action::await_change());
    };
    let live: Vec<&Value> = gathered.live.iter().collect();
    let plan = adapter::plan(&gathered.inputs(&live, ctx.opts.source_timeout));
    log_findings(&gathered.set, &plan);
    match apply::apply(ctx, &gathered.set, &plan).await? {
        Applied::Failed(e) => Err(e),
        Applied::Done(Next::AwaitChange) => Ok(Action::await_change()),
        Applied::Done(Next::After(d)) => Ok(Action::requeue(d)),
    }
}

fn log_findings(set: &Value, plan: &adapter::Plan) {
    let who = || format!("{}/{}", Object(set).namespace(), Object(set).name());
    for d in &plan.rendered.diagnostics {
        if d.severity == Severity::Error {
            debug!(serviceset = %who(), code = d.code, "{}", d.message);
        }
    }
}

/// Retries: a conflict soon (someone else wrote in between: read again), other errors with
/// an exponential backoff per ServiceSet.
pub fn error_policy(obj: Arc<DynamicObject>, err: &ReconcileError, ctx: Arc<Ctx>) -> Action {
    let uid = obj.metadata.uid.clone().unwrap_or_default();
    let mut failures = ctx.failures.lock().unwrap_or_else(|e| e.into_inner());
    let n = failures.entry(uid).or_insert(0);
    *n = n.saturating_add(1);
    let who = format!(
        "{}/{}",
        obj.metadata.namespace.as_deref().unwrap_or(""),
        obj.metadata.name.as_deref().unwrap_or("")
    );
    let delay = match err {
        // Someone else wrote in between: read again and retry at once (a little jitter).
        ReconcileError::Conflict(_) if *n <= 3 => Duration::from_millis(100 * u64::from(*n)),
        _ => {
            let exp = (*n).min(9);
            Duration::from_millis(500u64 << exp).min(Duration::from_secs(300))
        }
    };
    warn!(serviceset = %who, attempt = *n, retry_in_ms = delay.as_millis() as u64, "{err}");
    Action::requeue(delay)
}

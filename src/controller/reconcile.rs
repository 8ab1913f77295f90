//! One reconcile of one ServiceSet: gather → plan → apply. Gathering reads the caches
//! ([`super::gather`]), the pure core decides ([`crate::core::adapter::plan`]: the objects,
//! the status, the finalizer, when to look again), and a small writer carries the plan out
//! ([`super::apply`]).

use std::sync::Arc;
use std::time::{Duration, Instant};

use kube::api::DynamicObject;
use kube::runtime::controller::Action;
use serde_json::Value;
use tracing::{debug, warn};

use super::apply::{self, Applied};
use super::context::{Ctx, ReconcileError};
use super::{gather, leader, metrics};
use crate::api::Object;
use crate::core::adapter::{self, Next};
use crate::diag::Severity;

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
    match apply::apply(ctx, &gathered.set, &plan, &gathered.live).await? {
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
        // Exponential from 100 ms (client-go's per-item limiter starts at 5 ms; an API
        // server answering 5xx in a burst is back within seconds), up to 5 minutes.
        _ => {
            let exp = n.saturating_sub(1).min(12);
            Duration::from_millis(100u64 << exp).min(Duration::from_secs(300))
        }
    };
    warn!(serviceset = %who, attempt = *n, retry_in_ms = delay.as_millis() as u64, "{err}");
    Action::requeue(delay)
}

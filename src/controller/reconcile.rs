//! One reconcile of one ServiceSet: gather → plan → apply. Gathering reads the caches
//! ([`super::gather`]), the pure core decides ([`crate::core::adapter::plan`]: the objects,
//! the status, the finalizer, when to look again), and a small writer carries the plan out
//! ([`super::apply`]).

use std::sync::Arc;
use std::time::Instant;

use kube::runtime::controller::Action;
use serde_json::Value;
use tracing::{debug, warn};

use super::apply::{self, Applied};
use super::cached::CachedSet;
use super::claims::set_key;
use super::context::{Ctx, ReconcileError};
use super::gather::Gathered;
use super::{gather, leader, metrics};
use crate::api::Object;
use crate::core::adapter::memo::Remembered;
use crate::core::adapter::{self, Next, Plan};
use crate::diag::Severity;

/// One reconcile of one ServiceSet, with its metrics.
pub async fn reconcile(obj: Arc<CachedSet>, ctx: Arc<Ctx>) -> Result<Action, ReconcileError> {
    let started = Instant::now();
    let result = reconcile_once(&obj, &ctx).await;
    if let Ok(next) = &result {
        // What a reconcile saw and decided, for whoever follows the adapter (and for the
        // tests, which wait on a reconcile of the version they wrote).
        debug!(
            serviceset = %format!("{}/{}", obj.metadata.namespace.as_deref().unwrap_or(""), obj.metadata.name.as_deref().unwrap_or("")),
            resource_version = %obj.metadata.resource_version.as_deref().unwrap_or(""),
            next = %match next {
                Next::AwaitChange => "on change".to_string(),
                Next::After(d) => format!("in {}", crate::api::duration::format_coarse(*d)),
            },
            "reconciled"
        );
    }
    let result = result.map(|next| match next {
        Next::AwaitChange => Action::await_change(),
        Next::After(d) => Action::requeue(d),
    });
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
pub async fn reconcile_once(obj: &CachedSet, ctx: &Ctx) -> Result<Next, ReconcileError> {
    // No decision from a half-filled cache (immediate once the caches are synced).
    // (`Store::wait_until_ready` wakes one waiter only; the run loop is that one.)
    leader::stopped(&mut ctx.synced.clone()).await;
    let Some(gathered) = gather::gather(obj, ctx).await else {
        return Ok(Next::AwaitChange);
    };
    let live: Vec<&Value> = gathered.live.iter().collect();
    let plan = adapter::plan(&gathered.inputs(&live, ctx.opts.source_timeout));
    log_findings(&gathered.set, &gathered.desired.rendered.diagnostics);
    let mut applied = Vec::new();
    let rendered = &gathered.desired.rendered;
    let result = apply::apply(
        ctx,
        &gathered.set,
        &plan,
        rendered,
        &gathered.live,
        &mut applied,
    )
    .await;
    let done = matches!(result, Ok(Applied::Done(_)));
    remember(ctx, &gathered, &plan, done.then_some(&applied[..]));
    match result? {
        Applied::Failed(e) => Err(e),
        Applied::Done(next) => Ok(next),
    }
}

/// Keeps what this reconcile rendered for the next one, each object with the version of its
/// live copy known in sync: found in sync, or the reply of its apply. Forgets it when one is
/// not known (`applied`: None when the writes did not all succeed). A recalled render stays
/// as it was kept.
fn remember(ctx: &Ctx, gathered: &Gathered, plan: &Plan, applied: Option<&[(usize, String)]>) {
    let set = &gathered.set;
    if gathered.desired.recalled && applied.is_some() && !plan.deleting {
        return;
    }
    let kept = match (&gathered.key, applied) {
        (Some(at), Some(applied)) if !plan.deleting => {
            // By object: the live version found in sync, or its apply's reply's.
            let mut versions = vec![None; gathered.desired.rendered.objects.len()];
            let replies = applied.iter().map(|(j, v)| (plan.applied.get(*j), v));
            let found = plan.in_sync.iter().map(|(i, v)| (Some(i), v));
            for (i, v) in found.chain(replies) {
                if let Some(slot) = i.and_then(|i| versions.get_mut(*i)) {
                    *slot = Some(v.clone());
                }
            }
            let version = |i: usize| versions.get(i).cloned().flatten();
            Remembered::of(at.clone(), set, &gathered.desired, version)
        }
        _ => None,
    };
    ctx.caches.memo.remember(&set_key(set), kept.as_ref());
}

fn log_findings(set: &Value, diagnostics: &[crate::diag::Diagnostic]) {
    let who = || format!("{}/{}", Object(set).namespace(), Object(set).name());
    for d in diagnostics {
        if d.severity == Severity::Error {
            debug!(serviceset = %who(), code = d.code, "{}", d.message);
        }
    }
}

/// Retries: a conflict soon (someone else wrote in between: read again), other errors with
/// an exponential backoff per ServiceSet ([`super::RetryDelays`]: `--min-retry-delay`,
/// `--max-retry-delay`).
pub fn error_policy(obj: Arc<CachedSet>, err: &ReconcileError, ctx: Arc<Ctx>) -> Action {
    let uid = obj.metadata.uid.clone().unwrap_or_default();
    let mut failures = ctx.failures.lock().unwrap_or_else(|e| e.into_inner());
    let n = failures.entry(uid).or_insert(0);
    *n = n.saturating_add(1);
    let who = format!(
        "{}/{}",
        obj.metadata.namespace.as_deref().unwrap_or(""),
        obj.metadata.name.as_deref().unwrap_or("")
    );
    let conflict = matches!(err, ReconcileError::Conflict(_));
    let delay = ctx.opts.retry.delay(*n, conflict);
    warn!(serviceset = %who, attempt = *n, retry_in_ms = delay.as_millis() as u64, "{err}");
    Action::requeue(delay)
}

//! Apply: the writer that carries a plan out, in kcm's order: the finalizer, the status (on
//! deletion, Deleting shows before anything goes), server-side applies, deletions, and, once
//! the API server confirms that nothing of the ServiceSet remains, the finalizer's removal.
//! Every reply is remembered so that the next reconcile does not decide from a lagging cache.

use kube::api::{Api, DeleteParams, DynamicObject, ListParams, Patch, PatchParams, Preconditions};
use serde_json::{Value, json};
use tracing::info;

use super::context::{Ctx, ReconcileError, api_error};
use super::watch::slim;
use crate::api::naming::{self, FIELD_MANAGER, FINALIZER};
use crate::api::{Object, kinds};
use crate::cluster::{api_resource, with_type};
use crate::core::adapter::{self, FinalizerRelease, Next, Plan};

/// How the writes went.
pub enum Applied {
    /// Every write was made (or the ServiceSet is gone): look again as [`Next`] says.
    Done(Next),
    /// Some object writes failed (the first error); the status and finalizer writes before
    /// them were made.
    Failed(ReconcileError),
}

fn sets(ctx: &Ctx, ns: &str) -> Api<DynamicObject> {
    Api::namespaced_with(ctx.client.clone(), ns, &ctx.kinds.service_set)
}

/// Carries `plan` out for `set`.
pub async fn apply(ctx: &Ctx, set: &Value, plan: &Plan) -> Result<Applied, ReconcileError> {
    let meta = Object(set);
    let (name, ns) = (meta.name(), meta.namespace());
    let who = format!("{ns}/{name}");
    let mut rv = meta.resource_version().to_string();
    if plan.add_finalizer {
        let mut finalizers = meta.finalizers().to_vec();
        finalizers.push(FINALIZER.into());
        let written = patch_set(ctx, set, json!({"finalizers": finalizers}), &rv, false).await?;
        rv = written.unwrap_or_default();
    }
    if plan.status_changed {
        let old = set.get("status").cloned().unwrap_or(json!({}));
        // The diff is against the status this reconcile read: the resourceVersion makes the
        // patch apply only to that version (a cache lagging behind never writes a stale view).
        let patch = json!({"metadata": {"resourceVersion": rv},
            "status": adapter::merge_diff(&old, &plan.status)});
        ctx.metrics.write("status");
        match sets(ctx, ns)
            .patch_status(name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
        {
            Ok(mut reply) => {
                slim(&mut reply);
                let reply = with_type(&reply, &ctx.kinds.service_set);
                rv = Object(&reply).resource_version().to_string();
                ctx.written.remember(reply);
            }
            Err(kube::Error::Api(s)) if s.code == 404 => {
                return Ok(Applied::Done(Next::AwaitChange));
            }
            Err(e) => {
                return Err(
                    conflict_refresh(ctx, ns, name, api_error("write the status", e)).await,
                );
            }
        }
    }

    let mut errors = Vec::new();
    for desired in &plan.apply {
        let o = Object(desired);
        let Some(kind) = kinds::flux_object(o.kind()) else {
            continue;
        };
        let ar = api_resource(kind);
        ctx.metrics.write("apply");
        let reply = Api::<DynamicObject>::namespaced_with(ctx.client.clone(), ns, &ar)
            .patch(
                o.name(),
                &PatchParams::apply(FIELD_MANAGER).force(),
                &Patch::Apply(desired),
            )
            .await;
        match reply {
            Ok(mut reply) => {
                info!(serviceset = %who, object = %format!("{}/{}", kind.kind, o.name()), "applied");
                slim(&mut reply);
                ctx.written.remember(with_type(&reply, &ar));
            }
            Err(e) => errors.push(api_error(
                &format!("apply {} {ns}/{}", kind.kind, o.name()),
                e,
            )),
        }
    }
    for d in &plan.delete {
        let Some(kind) = kinds::flux_object(&d.kind) else {
            continue;
        };
        let dp = DeleteParams {
            preconditions: Some(Preconditions {
                uid: Some(d.uid.clone()),
                resource_version: None,
            }),
            ..DeleteParams::background()
        };
        ctx.metrics.write("delete");
        let api = Api::<DynamicObject>::namespaced_with(
            ctx.client.clone(),
            &d.namespace,
            &api_resource(kind),
        );
        match api.delete(&d.name, &dp).await {
            Ok(_) => {
                info!(serviceset = %who, object = %format!("{}/{}", d.kind, d.name), "deleted");
                ctx.written.forget(&d.kind, &d.namespace, &d.name);
            }
            Err(kube::Error::Api(s)) if s.code == 404 => {
                ctx.written.forget(&d.kind, &d.namespace, &d.name)
            }
            Err(e) => errors.push(api_error(
                &format!("delete {} {}/{}", d.kind, d.namespace, d.name),
                e,
            )),
        }
    }

    let remaining = if plan.remove_finalizer && errors.is_empty() {
        remaining_objects(ctx, set).await?
    } else {
        0
    };
    match plan.release_finalizer(!errors.is_empty(), remaining) {
        FinalizerRelease::Keep => {}
        FinalizerRelease::Recheck(after) => return Ok(Applied::Done(Next::After(after))),
        FinalizerRelease::Remove => {
            let finalizers: Vec<Value> = meta
                .finalizers()
                .iter()
                .filter(|f| f.as_str() != Some(FINALIZER))
                .cloned()
                .collect();
            if patch_set(ctx, set, json!({"finalizers": finalizers}), &rv, true)
                .await?
                .is_some()
            {
                info!(serviceset = %who, "finalizer removed");
            }
            ctx.written.forget(kinds::SERVICE_SET.kind, ns, name);
            return Ok(Applied::Done(Next::AwaitChange));
        }
    }
    Ok(match errors.into_iter().next() {
        Some(e) => Applied::Failed(e),
        None => Applied::Done(plan.next(ctx.opts.resync)),
    })
}

/// A merge patch of the finalizers at the resourceVersion they were computed from; returns
/// the new resourceVersion, or None when the ServiceSet is gone and `removing` (then there is
/// nothing left to hold).
async fn patch_set(
    ctx: &Ctx,
    set: &Value,
    metadata: Value,
    rv: &str,
    removing: bool,
) -> Result<Option<String>, ReconcileError> {
    let what = if removing {
        "remove the finalizer"
    } else {
        "add the finalizer"
    };
    let meta = Object(set);
    let (name, ns) = (meta.name(), meta.namespace());
    let mut metadata = metadata;
    metadata["resourceVersion"] = rv.into();
    ctx.metrics.write("finalizer");
    match sets(ctx, ns)
        .patch(
            name,
            &PatchParams::default(),
            &Patch::Merge(&json!({"metadata": metadata})),
        )
        .await
    {
        Ok(mut reply) => {
            slim(&mut reply);
            let reply = with_type(&reply, &ctx.kinds.service_set);
            let rv = Object(&reply).resource_version().to_string();
            ctx.written.remember(reply);
            Ok(Some(rv))
        }
        Err(kube::Error::Api(s)) if s.code == 404 && removing => Ok(None),
        Err(e) => Err(conflict_refresh(ctx, ns, name, api_error(what, e)).await),
    }
}

/// The objects the ServiceSet controls that the API server still lists (the caches say none
/// remain; the server must agree before the finalizer goes).
async fn remaining_objects(ctx: &Ctx, set: &Value) -> Result<usize, ReconcileError> {
    let meta = Object(set);
    let selector = naming::flux_objects_selector(meta.name());
    let mut remaining = 0;
    for kind in kinds::FLUX_OBJECTS {
        let ar = api_resource(kind);
        let list = Api::<DynamicObject>::namespaced_with(ctx.client.clone(), meta.namespace(), &ar)
            .list(&ListParams::default().labels(&selector))
            .await
            .map_err(|e| api_error(&format!("list {}", ar.plural), e))?;
        remaining += list
            .items
            .iter()
            .filter(|o| adapter::controlled_by(&with_type(o, &ar), set))
            .count();
    }
    Ok(remaining)
}

/// After a conflict on the ServiceSet (the cached copy was older than the server's), reads it
/// fresh, so that the retry starts from the server's version rather than the lagging cache.
pub async fn conflict_refresh(
    ctx: &Ctx,
    ns: &str,
    name: &str,
    err: ReconcileError,
) -> ReconcileError {
    if matches!(err, ReconcileError::Conflict(_))
        && let Ok(mut fresh) = sets(ctx, ns).get(name).await
    {
        slim(&mut fresh);
        ctx.written
            .remember(with_type(&fresh, &ctx.kinds.service_set));
    }
    err
}

//! Apply: the writer that carries a plan out, in kcm's order: the finalizer, the status (on
//! deletion, Deleting shows before anything goes), server-side applies, deletions, and, once
//! the API server confirms that nothing of the ServiceSet remains, the finalizer's removal.
//! Every reply is remembered so that the next reconcile does not decide from a lagging cache.

use kube::Resource;
use kube::api::{Api, DeleteParams, DynamicObject, ListParams, Patch, PatchParams, Preconditions};
use kube::discovery::ApiResource;
use serde_json::{Value, json};
use tracing::info;

use super::context::{Ctx, ReconcileError, api_error};
use super::watch::Reply;
use crate::api::naming::{self, FIELD_MANAGER, FINALIZER, SUBRESOURCE_STATUS};
use crate::api::{Object, kinds};
use crate::cluster::{api_resource, with_type};
use crate::core::adapter::{self, FinalizerRelease, Next, Plan};
use crate::core::render::Rendered;

/// How the writes went.
pub enum Applied {
    /// Every write was made (or the ServiceSet is gone): look again as [`Next`] says.
    Done(Next),
    /// Some object writes failed (the first error); the status and finalizer writes before
    /// them were made.
    Failed(ReconcileError),
}

/// The merge patches (finalizer, status, suspension) name the adapter as their field manager,
/// as its applies do, whatever the client's User-Agent.
fn merge_params() -> PatchParams {
    PatchParams {
        field_manager: Some(FIELD_MANAGER.into()),
        ..PatchParams::default()
    }
}

fn sets(ctx: &Ctx, ns: &str) -> Api<DynamicObject> {
    Api::namespaced_with(ctx.client.clone(), ns, &ctx.kinds.service_set)
}

/// Carries `plan` out for `set`.
/// `live` are the Flux objects the plan was made from (their versions are what each apply
/// was made from). `applied` gets the resourceVersion of each object of `plan.applied` the
/// API server applied (by its index there). `rendered` is the render the plan was made from.
pub async fn apply(
    ctx: &Ctx,
    set: &Value,
    plan: &Plan,
    rendered: &Rendered,
    live: &[Value],
    applied: &mut Vec<(usize, String)>,
) -> Result<Applied, ReconcileError> {
    let meta = Object(set);
    let (name, ns) = (meta.name(), meta.namespace());
    let who = format!("{ns}/{name}");
    let mut rv = meta.resource_version().to_string();
    if plan.add_finalizer {
        let mut finalizers = meta.finalizers().to_vec();
        finalizers.push(FINALIZER.into());
        let written = patch_set(ctx, set, json!({"finalizers": finalizers}), &rv, false).await?;
        rv = written.unwrap_or_default();
        info!(serviceset = %who, "finalizer added");
    }
    if plan.status_changed {
        let none = json!({});
        // The diff is against the status this reconcile read: the resourceVersion makes the
        // patch apply only to that version (a cache lagging behind never writes a stale view).
        let status = adapter::merge_diff(meta.status().unwrap_or(&none), &plan.status);
        // Moved in (`json!` would copy the status it is given).
        let diff = Value::Object(serde_json::Map::from_iter([
            ("metadata".to_string(), json!({"resourceVersion": rv})),
            ("status".to_string(), status),
        ]));
        ctx.metrics.write("status");
        let ar = &ctx.kinds.service_set;
        match patch(
            ctx,
            ar,
            ns,
            name,
            Some(SUBRESOURCE_STATUS),
            &merge_params(),
            &Patch::Merge(&diff),
        )
        .await
        .and_then(|text| reply(text, ar))
        {
            Ok(reply) => {
                let from = std::mem::take(&mut rv);
                rv = ctx.written.remember_reply(reply, &ar.kind, Some(&from));
                info!(serviceset = %who, services = %service_states(&plan.status), "status written");
            }
            Err(kube::Error::Api(s)) if s.code == 404 => {
                return Ok(Applied::Done(Next::AwaitChange));
            }
            Err(e) => {
                let what = format!("write the status (at resourceVersion {rv})");
                return Err(conflict_refresh(ctx, ns, name, &rv, api_error(&what, e)).await);
            }
        }
    }

    let mut errors = Vec::new();
    for (i, desired) in plan.to_apply(rendered).enumerate() {
        let o = Object(desired);
        let Some(kind) = kinds::flux_object(o.kind()) else {
            continue;
        };
        let ar = api_resource(kind);
        ctx.metrics.write("apply");
        let pp = PatchParams::apply(FIELD_MANAGER).force();
        match patch(ctx, &ar, ns, o.name(), None, &pp, &Patch::Apply(desired))
            .await
            .and_then(|text| reply(text, &ar))
        {
            Ok(reply) => {
                info!(serviceset = %who, object = %format!("{}/{}", kind.kind, o.name()), "applied");
                let from = live
                    .iter()
                    .find(|l| Object(l).kind() == o.kind() && Object(l).name() == o.name())
                    .map(|l| Object(l).resource_version());
                let version = ctx.written.remember_reply(reply, &ar.kind, from);
                applied.push((i, version));
            }
            Err(e) => errors.push(api_error(
                &format!("apply {} {ns}/{}", kind.kind, o.name()),
                e,
            )),
        }
    }
    // A release handed over to another ServiceSet: suspended first, so that Flux deletes the
    // object without uninstalling the release or pruning what it applied.
    let mut released = Vec::new();
    for d in &plan.release {
        let Some(kind) = kinds::flux_object(&d.kind) else {
            continue;
        };
        let ar = api_resource(kind);
        ctx.metrics.write("suspend");
        let suspend = json!({"metadata": {"uid": d.uid}, "spec": {"suspend": true}});
        // The reply is not read: the suspended object is deleted next.
        match patch(
            ctx,
            &ar,
            &d.namespace,
            &d.name,
            None,
            &merge_params(),
            &Patch::Merge(&suspend),
        )
        .await
        {
            Ok(_) => {
                info!(serviceset = %who, object = %format!("{}/{}", d.kind, d.name), "suspended to hand the release over");
                released.push(d);
            }
            Err(kube::Error::Api(s)) if s.code == 404 => {
                ctx.written.deleted(&d.kind, &d.namespace, &d.name, &d.uid)
            }
            Err(e) => errors.push(api_error(
                &format!("suspend {} {}/{}", d.kind, d.namespace, d.name),
                e,
            )),
        }
    }
    for d in plan.delete.iter().chain(released) {
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
                ctx.written.deleted(&d.kind, &d.namespace, &d.name, &d.uid);
            }
            Err(kube::Error::Api(s)) if s.code == 404 => {
                ctx.written.deleted(&d.kind, &d.namespace, &d.name, &d.uid)
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
                info!(serviceset = %who, provider_gone = plan.provider_gone, "finalizer removed");
                deletion_event(ctx, set, plan).await;
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

/// Sends a patch of `name` (an object of `ar` in `ns`, or its `subresource`) and returns the
/// reply's text, as kube's `Api::patch` does before parsing it (the same request, the same
/// errors): the caller reads only what it keeps ([`reply`]).
async fn patch<P: serde::Serialize + std::fmt::Debug>(
    ctx: &Ctx,
    ar: &ApiResource,
    ns: &str,
    name: &str,
    subresource: Option<&str>,
    pp: &PatchParams,
    patch: &Patch<P>,
) -> kube::Result<String> {
    let request = kube::core::Request::new(DynamicObject::url_path(ar, Some(ns)));
    let mut req = match subresource {
        Some(sub) => request.patch_subresource(sub, name, pp, patch),
        None => request.patch(name, pp, patch),
    }
    .map_err(kube::Error::BuildRequest)?;
    req.extensions_mut().insert(if subresource.is_some() {
        "patch_subresource"
    } else {
        "patch"
    });
    ctx.client.request_text(req).await
}

/// A write's reply as the caches keep it ([`Reply::of`]); not an object: the error kube's
/// `Api::patch` gives.
fn reply(text: String, ar: &ApiResource) -> kube::Result<Reply> {
    Reply::of(text, ar).map_err(kube::Error::SerdeError)
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
    let ar = &ctx.kinds.service_set;
    let merge = Patch::Merge(json!({"metadata": metadata}));
    match patch(ctx, ar, ns, name, None, &merge_params(), &merge)
        .await
        .and_then(|text| reply(text, ar))
    {
        Ok(reply) => {
            let new_rv = ctx.written.remember_reply(reply, &ar.kind, Some(rv));
            Ok(Some(new_rv))
        }
        Err(kube::Error::Api(s)) if s.code == 404 && removing => Ok(None),
        Err(e) => {
            let what = format!("{what} (at resourceVersion {rv})");
            Err(conflict_refresh(ctx, ns, name, rv, api_error(&what, e)).await)
        }
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
/// fresh, so that the retry starts from the server's version rather than the lagging cache
/// (`sent`, the version the write was refused at, is older than what the server has).
pub async fn conflict_refresh(
    ctx: &Ctx,
    ns: &str,
    name: &str,
    sent: &str,
    err: ReconcileError,
) -> ReconcileError {
    if matches!(err, ReconcileError::Conflict(_))
        && let Ok(fresh) = sets(ctx, ns).get(name).await
    {
        let ar = &ctx.kinds.service_set;
        ctx.written
            .remember_reply(Reply::from_object(fresh, ar), &ar.kind, Some(sent));
    }
    err
}

/// An Event on the ServiceSet: its deletion is complete (a failure to record it is logged,
/// not retried: the deletion itself is done).
async fn deletion_event(ctx: &Ctx, set: &Value, plan: &Plan) {
    let meta = Object(set);
    let note = if plan.provider_gone {
        format!(
            "StateManagementProvider {} is gone: removed the Flux objects of this ServiceSet and released its finalizer",
            ctx.opts.provider
        )
    } else {
        "removed the Flux objects of this ServiceSet and released its finalizer".to_string()
    };
    let reference = k8s_openapi::api::core::v1::ObjectReference {
        api_version: Some(kinds::SERVICE_SET.api_version.to_string()),
        kind: Some(kinds::SERVICE_SET.kind.to_string()),
        name: Some(meta.name().to_string()),
        namespace: Some(meta.namespace().to_string()),
        uid: Some(meta.uid().to_string()),
        resource_version: Some(meta.resource_version().to_string()),
        ..Default::default()
    };
    let event = kube::runtime::events::Event {
        type_: kube::runtime::events::EventType::Normal,
        reason: if plan.provider_gone {
            "ProviderGone".into()
        } else {
            "Deleted".into()
        },
        note: Some(note),
        action: "Delete".into(),
        secondary: None,
    };
    ctx.metrics.write("event");
    if let Err(e) = ctx.recorder.publish(&event, &reference).await {
        tracing::warn!(serviceset = %format!("{}/{}", meta.namespace(), meta.name()), error = %e, "cannot record the deletion Event");
    }
}

/// `name=State` of every service, for the log line of a status write.
fn service_states(status: &Value) -> String {
    status
        .get("services")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .map(|s| {
                    format!(
                        "{}={}",
                        s.get("name").and_then(Value::as_str).unwrap_or(""),
                        s.get("state").and_then(Value::as_str).unwrap_or("")
                    )
                })
                .collect::<Vec<_>>()
                .join(",")
        })
        .unwrap_or_default()
}

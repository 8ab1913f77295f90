//! Gather: what one reconcile of one ServiceSet decides from, read from the watch caches (and
//! the controller's own newer writes), plus the sources of the Flux objects whose state waits
//! on them, read on demand.

use chrono::Utc;
use kube::api::{Api, DynamicObject};
use serde_json::Value;
use tracing::debug;

use super::cached::CachedSet;
use super::claims::set_key;
use super::context::Ctx;
use crate::api::{Object, kinds, naming};
use crate::cluster::{api_resource, with_type};
use crate::core::adapter::memo::Key;
use crate::core::adapter::ownership::Claim;
use crate::core::adapter::{self, Desired, Provider, SourceLookup};

/// The inputs of [`adapter::plan`], owned.
pub struct Gathered {
    pub set: Value,
    /// What the render of `set` depends on (None: unknown, nothing is remembered).
    pub key: Option<Key>,
    pub desired: Desired,
    pub live: Vec<Value>,
    pub sources: Vec<(String, SourceLookup)>,
    pub provider: Provider,
    pub rivals: Vec<Claim>,
}

impl Gathered {
    /// The plan's inputs; `live` is a view of [`Self::live`].
    pub fn inputs<'a>(
        &'a self,
        live: &'a [&'a Value],
        source_timeout: std::time::Duration,
    ) -> adapter::Inputs<'a> {
        adapter::Inputs {
            service_set: &self.set,
            desired: &self.desired,
            live,
            sources: &self.sources,
            provider: self.provider,
            previous_status: Object(&self.set).status(),
            now: Utc::now(),
            source_timeout,
            rivals: &self.rivals,
        }
    }
}

/// Everything a reconcile of `obj` decides from; None when this adapter does not serve it.
pub async fn gather(obj: &CachedSet, ctx: &Ctx) -> Option<Gathered> {
    let set = ctx.written.freshest(obj.to_json(&ctx.kinds.service_set));
    let meta = Object(&set);
    let (name, ns, uid) = (meta.name(), meta.namespace(), meta.uid());
    if !ctx.opts.in_shard(obj.metadata.labels.as_ref()) {
        debug!(serviceset = %format!("{ns}/{name}"), "not in this replica's shard; skipped");
        return None;
    }
    let caches = &ctx.caches;
    let smp = caches.smp();
    if !adapter::reconciles(&ctx.opts.provider, smp.as_deref(), &set) {
        debug!(serviceset = %format!("{ns}/{name}"), "not served by this provider; skipped");
        return None;
    }
    let provider = Provider::of(smp.as_deref());
    let rivals = caches
        .claims
        .rivals(&(ns.to_string(), name.to_string()), smp.as_deref(), |key| {
            caches.labels_of(key)
        });

    // Flux objects of the namespace that the set controls or whose name is <set>-<service>.
    let prefix = naming::flux_object_name(name, "");
    let mut live: Vec<Value> = Vec::new();
    for (cache, kind) in [
        (&caches.helm_releases, &kinds::HELM_RELEASE),
        (&caches.kustomizations, &kinds::KUSTOMIZATION),
    ] {
        // Objects this controller deleted are gone, whatever the cache still shows.
        let cached: Vec<Value> = cache
            .select(ns, &prefix, uid)
            .into_iter()
            .filter(|v| !ctx.written.deleted_here(v))
            .map(|v| ctx.written.freshest(v))
            .collect();
        let mut extra = ctx.written.only_written(kind.kind, ns, &prefix, &cached);
        extra.retain(|v| adapter::controlled_by(v, &set));
        live.extend(cached);
        live.extend(extra);
    }
    // What the set wants: what its last reconcile rendered, when nothing the render depends
    // on changed and every object's live copy is still the one found in sync; else rendered
    // with the templates its services name. The key is read first: a template that changes
    // in between leaves a key older than the render (a miss next time, never a stale hit).
    let key = caches.render_key(&set);
    let recalled = key
        .as_ref()
        .and_then(|k| caches.memo.recall(&set_key(&set), k, &set, &live));
    ctx.metrics.desired(if recalled.is_some() {
        "recalled"
    } else {
        "rendered"
    });
    let desired = recalled.unwrap_or_else(|| caches.desired(&set));
    let sources = sources(ctx, &set, &live).await;
    Some(Gathered {
        key,
        desired,
        live,
        sources,
        provider,
        rivals,
        set,
    })
}

/// Sources, only for the objects the set controls whose state waits on them.
async fn sources(ctx: &Ctx, set: &Value, live: &[Value]) -> Vec<(String, SourceLookup)> {
    let mut out = Vec::new();
    for o in live {
        if !adapter::needs_source(o) || !adapter::controlled_by(o, set) {
            continue;
        }
        let Some((kind, sns, sname)) = adapter::source_ref(o) else {
            continue;
        };
        let Some(source_kind) = kinds::flux_source(&kind) else {
            continue;
        };
        let ar = api_resource(source_kind);
        let api: Api<DynamicObject> = Api::namespaced_with(ctx.client.clone(), &sns, &ar);
        let of = Object(o).name().to_string();
        match api.get_opt(&sname).await {
            Ok(Some(src)) => out.push((of, SourceLookup::Found(with_type(&src, &ar)))),
            Ok(None) => out.push((of, SourceLookup::Missing)),
            Err(e) => debug!(error = %e, "source {kind} {sns}/{sname} not read"),
        }
    }
    out
}

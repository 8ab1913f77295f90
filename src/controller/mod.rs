//! `kubectl ksm run`: the Flux adapter controller, the I/O edge around
//! [`crate::core::adapter::plan`].
//!
//! Watch caches (kube-runtime reflectors) hold the ServiceSets, the provider's SMP, the
//! ServiceTemplates and every HelmRelease and Kustomization. Any change to one of them queues
//! the ServiceSets it concerns; a reconcile reads the caches, asks the pure core for a plan and
//! carries it out: finalizer, server-side applies, deletions, a status patch, in that order.
//!
//! Staleness: a cache can lag behind the controller's own writes. The reply of every write is
//! kept until the cache has caught up (compared by resourceVersion), so a reconcile never
//! decides from an object older than what it wrote itself, and writes nothing twice.

mod cache;
mod http;
mod leader;
mod metrics;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use chrono::Utc;
use futures::StreamExt;
use kube::Client;
use kube::api::{Api, DeleteParams, DynamicObject, ListParams, Patch, PatchParams, Preconditions};
use kube::discovery::ApiResource;
use kube::runtime::WatchStreamExt;
use kube::runtime::controller::{Action, Controller};
use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::runtime::watcher;
use serde_json::{Value, json};
use tracing::{debug, error, info, warn};

use crate::api::naming;
use crate::cluster::{self, ClusterArgs, with_type};
use crate::core::adapter::{self, FIELD_MANAGER, FINALIZER, Provider, SourceLookup};

pub use metrics::Metrics;

/// How the controller runs.
#[derive(Debug, Clone)]
pub struct Options {
    /// The StateManagementProvider served.
    pub provider: String,
    pub leader_elect: bool,
    pub lease_namespace: Option<String>,
    pub lease_name: Option<String>,
    /// `/metrics`, `/healthz`, `/readyz`.
    pub bind: SocketAddr,
    pub source_timeout: Duration,
    /// Reconcile every ServiceSet at least this often (0: only on changes).
    pub resync: Duration,
    pub concurrency: u16,
    /// JSON logs (else human-readable lines).
    pub json_logs: bool,
}

/// The kinds the controller reads and writes.
struct Kinds {
    service_set: ApiResource,
    template: ApiResource,
    smp: ApiResource,
    helm_release: ApiResource,
    kustomization: ApiResource,
}

fn ar(group: &str, version: &str, kind: &str, plural: &str) -> ApiResource {
    ApiResource {
        group: group.into(),
        version: version.into(),
        api_version: if group.is_empty() {
            version.into()
        } else {
            format!("{group}/{version}")
        },
        kind: kind.into(),
        plural: plural.into(),
    }
}

impl Kinds {
    fn new() -> Kinds {
        const KCM: &str = "k0rdent.mirantis.com";
        Kinds {
            service_set: ar(KCM, "v1beta1", "ServiceSet", "servicesets"),
            template: ar(KCM, "v1beta1", "ServiceTemplate", "servicetemplates"),
            smp: ar(
                KCM,
                "v1beta1",
                "StateManagementProvider",
                "statemanagementproviders",
            ),
            helm_release: ar(
                "helm.toolkit.fluxcd.io",
                "v2",
                "HelmRelease",
                "helmreleases",
            ),
            kustomization: ar(
                "kustomize.toolkit.fluxcd.io",
                "v1",
                "Kustomization",
                "kustomizations",
            ),
        }
    }

    fn flux(&self, kind: &str) -> Option<&ApiResource> {
        match kind {
            "HelmRelease" => Some(&self.helm_release),
            "Kustomization" => Some(&self.kustomization),
            _ => None,
        }
    }
}

/// Flux source kinds a service's state may depend on (read on demand, never cached).
fn source_kind(kind: &str) -> Option<ApiResource> {
    let plural = match kind {
        "HelmChart" => "helmcharts",
        "HelmRepository" => "helmrepositories",
        "GitRepository" => "gitrepositories",
        "OCIRepository" => "ocirepositories",
        "Bucket" => "buckets",
        "ExternalArtifact" => "externalartifacts",
        _ => return None,
    };
    Some(ar("source.toolkit.fluxcd.io", "v1", kind, plural))
}

/// How long a write's reply may stand in for the cache: long enough for any watch event to
/// arrive, short enough that an object deleted meanwhile by someone else is recreated soon.
const WRITTEN_TTL: Duration = Duration::from_secs(30);

/// Writes' replies, kept until the cache has them too (or for [`WRITTEN_TTL`]).
#[derive(Default)]
struct Written {
    /// By (kind, namespace, name): the newest object the API server returned, and when.
    objects: HashMap<(String, String, String), (Value, Instant)>,
}

fn key_of(v: &Value) -> (String, String, String) {
    (
        str_at(v, "/kind").to_string(),
        str_at(v, "/metadata/namespace").to_string(),
        str_at(v, "/metadata/name").to_string(),
    )
}

struct Ctx {
    client: Client,
    kinds: Kinds,
    opts: Options,
    smps: Store<DynamicObject>,
    templates: Store<DynamicObject>,
    helm_releases: cache::TextCache,
    kustomizations: cache::TextCache,
    written: Mutex<Written>,
    /// True once every cache has its initial list.
    synced: tokio::sync::watch::Receiver<bool>,
    /// Consecutive failures per ServiceSet uid, for the backoff.
    failures: Mutex<HashMap<String, u32>>,
    metrics: Arc<Metrics>,
}

#[derive(Debug, thiserror::Error)]
pub enum ReconcileError {
    #[error("{0}")]
    Api(String),
    #[error("conflict: {0}")]
    Conflict(String),
}

fn api_error(what: &str, e: kube::Error) -> ReconcileError {
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

fn str_at<'a>(v: &'a Value, p: &str) -> &'a str {
    v.pointer(p).and_then(Value::as_str).unwrap_or("")
}

fn rv(v: &Value) -> Option<u64> {
    str_at(v, "/metadata/resourceVersion").parse().ok()
}

impl Ctx {
    /// The newer of the cached object and the controller's own last write of it.
    fn freshest(&self, cached: Value) -> Value {
        let key = key_of(&cached);
        let mut w = self.written.lock().unwrap_or_else(|e| e.into_inner());
        match w.objects.get(&key) {
            Some((mine, at))
                if rv(mine) > rv(&cached)
                    && str_at(mine, "/metadata/uid") == str_at(&cached, "/metadata/uid")
                    && at.elapsed() < WRITTEN_TTL =>
            {
                mine.clone()
            }
            Some(_) => {
                // The cache caught up (or the entry is too old to trust).
                w.objects.remove(&key);
                cached
            }
            None => cached,
        }
    }

    /// Objects of `kind` in `namespace` the controller wrote and the cache does not show yet.
    fn written_only(&self, kind: &str, namespace: &str, cached: &[Value]) -> Vec<Value> {
        let mut w = self.written.lock().unwrap_or_else(|e| e.into_inner());
        w.objects.retain(|_, (_, at)| at.elapsed() < WRITTEN_TTL);
        w.objects
            .iter()
            .filter(|((k, ns, _), _)| k == kind && ns == namespace)
            .filter(|(key, _)| !cached.iter().any(|c| key_of(c) == **key))
            .map(|(_, (v, _))| v.clone())
            .collect()
    }

    fn remember(&self, reply: Value) {
        let mut w = self.written.lock().unwrap_or_else(|e| e.into_inner());
        w.objects.insert(key_of(&reply), (reply, Instant::now()));
    }

    fn forget(&self, kind: &str, namespace: &str, name: &str) {
        let mut w = self.written.lock().unwrap_or_else(|e| e.into_inner());
        w.objects
            .remove(&(kind.to_string(), namespace.to_string(), name.to_string()));
    }

    fn smp(&self) -> Option<Value> {
        self.smps
            .get(&ObjectRef::new_with(
                &self.opts.provider,
                self.kinds.smp.clone(),
            ))
            .map(|o| with_type(&o, &self.kinds.smp))
    }

    fn dyn_api(&self, ar: &ApiResource, ns: &str) -> Api<DynamicObject> {
        Api::namespaced_with(self.client.clone(), ns, ar)
    }
}

/// One reconcile of one ServiceSet.
async fn reconcile(obj: Arc<DynamicObject>, ctx: Arc<Ctx>) -> Result<Action, ReconcileError> {
    let started = Instant::now();
    let result = reconcile_inner(&obj, &ctx).await;
    ctx.metrics
        .duration
        .observe(started.elapsed().as_secs_f64());
    let uid = obj.metadata.uid.clone().unwrap_or_default();
    match &result {
        Ok(_) => {
            ctx.metrics
                .reconciles
                .get_or_create(&metrics::ResultLabel { result: "success" })
                .inc();
            ctx.failures
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .remove(&uid);
        }
        Err(e) => {
            ctx.metrics
                .reconciles
                .get_or_create(&metrics::ResultLabel { result: "error" })
                .inc();
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

async fn reconcile_inner(obj: &DynamicObject, ctx: &Ctx) -> Result<Action, ReconcileError> {
    // No decision from a half-filled cache (immediate once the caches are synced).
    // (`Store::wait_until_ready` wakes one waiter only; the run loop is that one.)
    leader::stopped(&mut ctx.synced.clone()).await;
    let kinds = &ctx.kinds;
    let set = ctx.freshest(with_type(obj, &kinds.service_set));
    let name = str_at(&set, "/metadata/name").to_string();
    let ns = str_at(&set, "/metadata/namespace").to_string();
    let smp = ctx.smp();
    if !adapter::serves(&ctx.opts.provider, smp.as_ref(), &set) {
        debug!(serviceset = %format!("{ns}/{name}"), "not served by this provider; skipped");
        return Ok(Action::await_change());
    }
    let provider = Provider::of(smp.as_ref());

    // The caches: templates of the namespace, Flux objects of the namespace that the set
    // controls or whose name is <set>-<service>.
    let templates: Vec<Value> = ctx
        .templates
        .state()
        .iter()
        .filter(|t| t.metadata.namespace.as_deref() == Some(ns.as_str()))
        .map(|t| with_type(t, &kinds.template))
        .collect();
    let prefix = format!("{name}-");
    let uid = str_at(&set, "/metadata/uid").to_string();
    let mut live: Vec<Value> = Vec::new();
    for (cache, ar) in [
        (&ctx.helm_releases, &kinds.helm_release),
        (&ctx.kustomizations, &kinds.kustomization),
    ] {
        let cached: Vec<Value> = cache
            .select(&ns, |n, owners| {
                n.starts_with(&prefix) || owners.contains(&uid)
            })
            .into_iter()
            .map(|v| ctx.freshest(v))
            .collect();
        let mut extra = ctx.written_only(&ar.kind, &ns, &cached);
        extra.retain(|v| adapter::controlled_by(v, &set));
        live.extend(cached);
        live.extend(extra);
    }

    // Sources, only for objects whose state waits on them.
    let mut sources = Vec::new();
    for o in &live {
        if !adapter::needs_source(o) || !adapter::controlled_by(o, &set) {
            continue;
        }
        let Some((kind, sns, sname)) = adapter::source_ref(o) else {
            continue;
        };
        let Some(sar) = source_kind(&kind) else {
            continue;
        };
        match ctx.dyn_api(&sar, &sns).get_opt(&sname).await {
            Ok(Some(src)) => sources.push((
                str_at(o, "/metadata/name").to_string(),
                SourceLookup::Found(with_type(&src, &sar)),
            )),
            Ok(None) => sources.push((
                str_at(o, "/metadata/name").to_string(),
                SourceLookup::Missing,
            )),
            Err(e) => debug!(error = %e, "source {kind} {sns}/{sname} not read"),
        }
    }

    let live_refs: Vec<&Value> = live.iter().collect();
    let plan = adapter::plan(&adapter::Inputs {
        service_set: &set,
        templates: &templates,
        live: &live_refs,
        sources: &sources,
        provider,
        previous_status: set.get("status"),
        now: Utc::now(),
        source_timeout: ctx.opts.source_timeout,
    });
    for d in &plan.rendered.diagnostics {
        if d.severity == crate::diag::Severity::Error {
            debug!(serviceset = %format!("{ns}/{name}"), code = d.code, "{}", d.message);
        }
    }

    let sets = ctx.dyn_api(&kinds.service_set, &ns);
    let mut set_rv = str_at(&set, "/metadata/resourceVersion").to_string();
    if plan.add_finalizer {
        let mut finalizers: Vec<Value> = set
            .pointer("/metadata/finalizers")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        finalizers.push(FINALIZER.into());
        let patch = json!({"metadata": {"finalizers": finalizers, "resourceVersion": set_rv}});
        ctx.metrics.write("finalizer");
        let mut reply = match sets
            .patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
        {
            Ok(r) => r,
            Err(e) => {
                return Err(
                    conflict_refresh(ctx, &sets, &name, api_error("add the finalizer", e)).await,
                );
            }
        };
        slim(&mut reply);
        let reply = with_type(&reply, &kinds.service_set);
        set_rv = str_at(&reply, "/metadata/resourceVersion").to_string();
        ctx.remember(reply);
    }

    let mut errors = Vec::new();
    // The status first: on deletion, Deleting shows before anything goes.
    if plan.status_changed {
        let old = set.get("status").cloned().unwrap_or(json!({}));
        // The diff is against the status this reconcile read: the resourceVersion makes the
        // patch apply only to that version (a cache lagging behind never writes a stale view).
        let patch = json!({"metadata": {"resourceVersion": set_rv},
            "status": adapter::merge_diff(&old, &plan.status)});
        ctx.metrics.write("status");
        match sets
            .patch_status(&name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
        {
            Ok(mut reply) => {
                slim(&mut reply);
                let reply = with_type(&reply, &kinds.service_set);
                set_rv = str_at(&reply, "/metadata/resourceVersion").to_string();
                ctx.remember(reply);
            }
            Err(kube::Error::Api(s)) if s.code == 404 => return Ok(Action::await_change()),
            Err(e) => {
                let e = api_error("write the status", e);
                return Err(conflict_refresh(ctx, &sets, &name, e).await);
            }
        }
    }

    for desired in &plan.apply {
        let kind = str_at(desired, "/kind");
        let Some(far) = kinds.flux(kind) else {
            continue;
        };
        let oname = str_at(desired, "/metadata/name");
        ctx.metrics.write("apply");
        match ctx
            .dyn_api(far, &ns)
            .patch(
                oname,
                &PatchParams::apply(FIELD_MANAGER).force(),
                &Patch::Apply(desired),
            )
            .await
        {
            Ok(mut reply) => {
                info!(serviceset = %format!("{ns}/{name}"), object = %format!("{kind}/{oname}"), "applied");
                slim(&mut reply);
                ctx.remember(with_type(&reply, far));
            }
            Err(e) => errors.push(api_error(&format!("apply {kind} {ns}/{oname}"), e)),
        }
    }
    for d in &plan.delete {
        let Some(far) = kinds.flux(&d.kind) else {
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
        match ctx.dyn_api(far, &d.namespace).delete(&d.name, &dp).await {
            Ok(_) => {
                info!(serviceset = %format!("{ns}/{name}"), object = %format!("{}/{}", d.kind, d.name), "deleted");
                ctx.forget(&d.kind, &d.namespace, &d.name);
            }
            Err(kube::Error::Api(s)) if s.code == 404 => ctx.forget(&d.kind, &d.namespace, &d.name),
            Err(e) => errors.push(api_error(
                &format!("delete {} {}/{}", d.kind, d.namespace, d.name),
                e,
            )),
        }
    }

    if plan.remove_finalizer && errors.is_empty() {
        // The caches say every object is gone; the API server must agree.
        let selector = naming::flux_objects_selector(&name);
        let mut remaining = 0;
        for far in [&kinds.helm_release, &kinds.kustomization] {
            let list = ctx
                .dyn_api(far, &ns)
                .list(&ListParams::default().labels(&selector))
                .await
                .map_err(|e| api_error(&format!("list {}", far.plural), e))?;
            remaining += list
                .items
                .iter()
                .filter(|o| adapter::controlled_by(&with_type(o, far), &set))
                .count();
        }
        if remaining > 0 {
            return Ok(Action::requeue(Duration::from_secs(2)));
        }
        let finalizers: Vec<Value> = set
            .pointer("/metadata/finalizers")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter(|f| f.as_str() != Some(FINALIZER))
            .cloned()
            .collect();
        let patch = json!({"metadata": {"finalizers": finalizers, "resourceVersion": set_rv}});
        ctx.metrics.write("finalizer");
        match sets
            .patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
        {
            Ok(_) => {
                info!(serviceset = %format!("{ns}/{name}"), "finalizer removed");
                ctx.forget("ServiceSet", &ns, &name);
            }
            Err(kube::Error::Api(s)) if s.code == 404 => ctx.forget("ServiceSet", &ns, &name),
            Err(e) => {
                let e = api_error("remove the finalizer", e);
                return Err(conflict_refresh(ctx, &sets, &name, e).await);
            }
        }
        return Ok(Action::await_change());
    }

    if let Some(e) = errors.into_iter().next() {
        return Err(e);
    }
    let mut next = plan.requeue_after;
    if !ctx.opts.resync.is_zero() {
        next = Some(next.map_or(ctx.opts.resync, |n| n.min(ctx.opts.resync)));
    }
    if !plan.delete.is_empty() && !str_at(&set, "/metadata/deletionTimestamp").is_empty() {
        // Deleting: the objects' deletion events bring us back; look again soon regardless.
        next = Some(Duration::from_secs(2));
    }
    Ok(next.map_or_else(Action::await_change, Action::requeue))
}

/// After a conflict on the ServiceSet (the cached copy was older than the server's), reads it
/// fresh, so that the retry starts from the server's version rather than the lagging cache.
async fn conflict_refresh(
    ctx: &Ctx,
    sets: &Api<DynamicObject>,
    name: &str,
    err: ReconcileError,
) -> ReconcileError {
    if matches!(err, ReconcileError::Conflict(_))
        && let Ok(mut fresh) = sets.get(name).await
    {
        slim(&mut fresh);
        ctx.remember(with_type(&fresh, &ctx.kinds.service_set));
    }
    err
}

fn error_policy(obj: Arc<DynamicObject>, err: &ReconcileError, ctx: Arc<Ctx>) -> Action {
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

/// Runs the controller until SIGTERM/SIGINT (graceful) or a fatal error.
pub fn run(cluster_args: &ClusterArgs, opts: Options) -> Result<(), String> {
    init_logs(opts.json_logs);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the I/O runtime: {e}"))?;
    runtime.block_on(run_async(cluster_args, opts))
}

fn init_logs(json: bool) {
    let filter = tracing_subscriber::EnvFilter::try_from_env("KSM_LOG").unwrap_or_else(|_| {
        tracing_subscriber::EnvFilter::new(
            "info,kube_client=warn,kube_runtime=warn,hyper=warn,tower=warn",
        )
    });
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false);
    let _ = if json {
        builder.json().flatten_event(true).try_init()
    } else {
        builder.with_ansi(false).try_init()
    };
}

async fn run_async(cluster_args: &ClusterArgs, opts: Options) -> Result<(), String> {
    let metrics = Arc::new(Metrics::default());
    let health = Arc::new(http::Health::default());
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);

    let listener = tokio::net::TcpListener::bind(opts.bind)
        .await
        .map_err(|e| format!("cannot listen on {}: {e}", opts.bind))?;
    info!(address = %listener.local_addr().map(|a| a.to_string()).unwrap_or_default(), "serving /metrics, /healthz, /readyz");
    let http = tokio::spawn(http::serve(
        listener,
        metrics.clone(),
        health.clone(),
        stop_rx.clone(),
    ));

    // SIGTERM / SIGINT: stop taking work, finish what runs, release the lease.
    {
        let stop_tx = stop_tx.clone();
        tokio::spawn(async move {
            shutdown_signal().await;
            info!("shutdown requested");
            let _ = stop_tx.send(true);
        });
    }

    let config = cluster::load_config(cluster_args).await.map_err(|e| e.0)?;
    let server = config.cluster_url.to_string();
    let namespace_default = config.default_namespace.clone();
    let client = Client::try_from(config)
        .map_err(|e| format!("cannot create a client for {server}: {e}"))?;
    let kinds = Kinds::new();
    check_kinds(&client, &server, &kinds).await?;

    let elector = if opts.leader_elect {
        let ns = opts
            .lease_namespace
            .clone()
            .or_else(|| {
                std::env::var("POD_NAMESPACE")
                    .ok()
                    .filter(|s| !s.is_empty())
            })
            .unwrap_or(namespace_default);
        let lease = opts
            .lease_name
            .clone()
            .unwrap_or_else(|| format!("kubectl-ksm-{}", opts.provider));
        let mut elector = leader::Elector::new(client.clone(), &ns, &lease, metrics.clone());
        health.ready.store(true, Ordering::Relaxed); // a standby replica is healthy
        info!(lease = %format!("{ns}/{lease}"), identity = %elector.identity(), "waiting for leadership");
        if !elector.acquire(stop_rx.clone()).await {
            let _ = stop_tx.send(true);
            let _ = http.await;
            return Ok(());
        }
        health.ready.store(false, Ordering::Relaxed);
        info!(lease = %format!("{ns}/{lease}"), "leading");
        Some(elector)
    } else {
        None
    };
    metrics.leader.set(1);

    let lost = match elector {
        Some(e) => {
            let stop_tx = stop_tx.clone();
            let stop_rx = stop_rx.clone();
            Some(tokio::spawn(async move { e.hold(stop_rx, stop_tx).await }))
        }
        None => None,
    };

    let result = control(
        client,
        kinds,
        opts,
        metrics.clone(),
        health.clone(),
        stop_rx.clone(),
    )
    .await;
    let _ = stop_tx.send(true);
    let lost = match lost {
        Some(h) => h.await.unwrap_or(false),
        None => false,
    };
    metrics.leader.set(0);
    let _ = http.await;
    result?;
    if lost {
        return Err("lost the leader lease; exiting so that another replica takes over".into());
    }
    info!("stopped");
    Ok(())
}

async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let mut term = match signal(SignalKind::terminate()) {
            Ok(s) => s,
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
                return;
            }
        };
        tokio::select! {
            _ = term.recv() => {}
            _ = tokio::signal::ctrl_c() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

/// The kcm and Flux kinds must be served; one clear line otherwise.
async fn check_kinds(client: &Client, server: &str, kinds: &Kinds) -> Result<(), String> {
    for (ar, what) in [
        (&kinds.service_set, "k0rdent (kcm) is not installed"),
        (&kinds.helm_release, "Flux helm-controller is not installed"),
        (
            &kinds.kustomization,
            "Flux kustomize-controller is not installed",
        ),
    ] {
        let api: Api<DynamicObject> = Api::all_with(client.clone(), ar);
        match api.list_metadata(&ListParams::default().limit(1)).await {
            Ok(_) => {}
            Err(kube::Error::Api(s)) if s.code == 404 => {
                return Err(format!(
                    "{server}: {} ({}) is not served: {what}",
                    ar.plural, ar.api_version
                ));
            }
            Err(e) => return Err(cluster::explain(server, &format!("list {}", ar.plural), e).0),
        }
    }
    Ok(())
}

/// A cache of every object of a kind, and the stream of its watch events (which fills the
/// cache as it is polled; watch errors back off and the watch resumes or relists).
fn reflect(
    client: &Client,
    ar: &ApiResource,
    wc: watcher::Config,
) -> (
    Store<DynamicObject>,
    impl futures::Stream<Item = Result<watcher::Event<DynamicObject>, watcher::Error>> + Send + use<>,
) {
    let writer = reflector::store::Writer::<DynamicObject>::new(ar.clone());
    let store = writer.as_reader();
    let api = Api::<DynamicObject>::all_with(client.clone(), ar);
    let stream = watcher(api, wc).default_backoff().modify(slim);
    (store, reflector::reflector(writer, stream))
}

/// What the caches need of an object, to keep memory flat: managedFields only the adapter's
/// own entry (the SSA no-op check reads it), no last-applied annotation, and of the long
/// Flux status lists (Helm release history, Kustomization inventory) only whether they are
/// empty (the state mapping's "something was attempted").
fn slim(o: &mut DynamicObject) {
    if let Some(mf) = o.metadata.managed_fields.as_mut() {
        mf.retain(|e| {
            e.manager.as_deref() == Some(FIELD_MANAGER)
                && e.operation.as_deref() == Some("Apply")
                && e.subresource.as_deref().unwrap_or("").is_empty()
        });
    }
    if let Some(a) = o.metadata.annotations.as_mut() {
        a.remove("kubectl.kubernetes.io/last-applied-configuration");
    }
    if let Some(status) = o.data.get_mut("status") {
        if let Some(Value::Array(h)) = status.get_mut("history") {
            h.truncate(1);
        }
        if let Some(Value::Array(e)) = status.pointer_mut("/inventory/entries") {
            e.truncate(1);
        }
    }
}

/// Like [`reflect`], into a [`cache::TextCache`].
fn text_reflect(
    client: &Client,
    ar: &ApiResource,
    wc: watcher::Config,
) -> (
    cache::TextCache,
    impl futures::Stream<Item = Result<watcher::Event<DynamicObject>, watcher::Error>> + Send + use<>,
) {
    let cache = cache::TextCache::new(ar.clone());
    let api = Api::<DynamicObject>::all_with(client.clone(), ar);
    let stream = cache.reflect(watcher(api, wc).default_backoff().modify(slim));
    (cache, stream)
}

/// The watches and the controller loop, until `stop`.
async fn control(
    client: Client,
    kinds: Kinds,
    opts: Options,
    metrics: Arc<Metrics>,
    health: Arc<http::Health>,
    stop: tokio::sync::watch::Receiver<bool>,
) -> Result<(), String> {
    let wc = watcher::Config::default().page_size(cluster::PAGE_SIZE);
    let (sets, set_stream) = reflect(&client, &kinds.service_set, wc.clone());
    let controller = Controller::for_stream_with(
        set_stream.applied_objects(),
        sets.clone(),
        kinds.service_set.clone(),
    )
    .with_config(kube::runtime::controller::Config::default().concurrency(opts.concurrency));

    // Reflectors for the other kinds; each change maps to the ServiceSets it concerns.
    let smp_wc = wc
        .clone()
        .fields(&format!("metadata.name={}", opts.provider));
    let (smps, smp_stream) = reflect(&client, &kinds.smp, smp_wc);
    let (templates, tpl_stream) = reflect(&client, &kinds.template, wc.clone());
    let (hrs, hr_stream) = text_reflect(&client, &kinds.helm_release, wc.clone());
    let (kss, ks_stream) = text_reflect(&client, &kinds.kustomization, wc.clone());

    let set_ar = kinds.service_set.clone();
    let owner_of = move |o: DynamicObject| -> Option<ObjectRef<DynamicObject>> {
        let ns = o.metadata.namespace.clone()?;
        o.metadata
            .owner_references
            .as_ref()?
            .iter()
            .find(|r| {
                r.controller == Some(true)
                    && r.kind == "ServiceSet"
                    && r.api_version.starts_with("k0rdent.mirantis.com/")
            })
            .map(|r| ObjectRef::new_with(&r.name, set_ar.clone()).within(&ns))
    };
    let owner_of2 = owner_of.clone();
    let hr_triggers = hr_stream
        .touched_objects()
        .filter_map(move |r| std::future::ready(r.ok().and_then(&owner_of)));
    let ks_triggers = ks_stream
        .touched_objects()
        .filter_map(move |r| std::future::ready(r.ok().and_then(&owner_of2)));
    let sets_for_tpl = sets.clone();
    let set_ar = kinds.service_set.clone();
    let tpl_triggers = tpl_stream
        .touched_objects()
        .filter_map(|r| std::future::ready(r.ok()))
        .flat_map(move |t: DynamicObject| {
            let ns = t.metadata.namespace.clone().unwrap_or_default();
            let name = t.metadata.name.clone().unwrap_or_default();
            let refs: Vec<ObjectRef<DynamicObject>> = sets_for_tpl
                .state()
                .iter()
                .filter(|s| s.metadata.namespace.as_deref() == Some(ns.as_str()))
                .filter(|s| {
                    s.data
                        .pointer("/spec/services")
                        .and_then(Value::as_array)
                        .is_some_and(|svcs| svcs.iter().any(|x| str_at(x, "/template") == name))
                })
                .map(|s| ObjectRef::from_obj_with(s.as_ref(), set_ar.clone()))
                .collect();
            futures::stream::iter(refs)
        });
    let sets_for_smp = sets.clone();
    let set_ar = kinds.service_set.clone();
    let smp_triggers = smp_stream
        .touched_objects()
        .filter_map(|r| std::future::ready(r.ok()))
        .flat_map(move |_smp: DynamicObject| {
            let refs: Vec<ObjectRef<DynamicObject>> = sets_for_smp
                .state()
                .iter()
                .map(|s| ObjectRef::from_obj_with(s.as_ref(), set_ar.clone()))
                .collect();
            futures::stream::iter(refs)
        });

    let (synced_tx, synced_rx) = tokio::sync::watch::channel(false);
    let ctx = Arc::new(Ctx {
        synced: synced_rx,
        client,
        kinds,
        opts: opts.clone(),
        smps: smps.clone(),
        templates: templates.clone(),
        helm_releases: hrs.clone(),
        kustomizations: kss.clone(),
        written: Mutex::new(Written::default()),
        failures: Mutex::new(HashMap::new()),
        metrics: metrics.clone(),
    });

    // Caches first: no reconcile decides from a half-filled cache.
    let mut stop_wait = stop.clone();
    let ready = async {
        let _ = smps.wait_until_ready().await;
        let _ = templates.wait_until_ready().await;
        hrs.wait_ready().await;
        kss.wait_ready().await;
    };
    let mut stop_graceful = stop.clone();
    let controller = controller
        .reconcile_on(hr_triggers)
        .reconcile_on(ks_triggers)
        .reconcile_on(tpl_triggers)
        .reconcile_on(smp_triggers)
        .graceful_shutdown_on(async move {
            let _ = stop_graceful.wait_for(|s| *s).await;
        });
    let gauges = {
        let (sets, hrs, kss, metrics) = (sets.clone(), hrs.clone(), kss.clone(), metrics.clone());
        move || {
            let gauge = |kind: &'static str, n: usize| {
                metrics
                    .managed
                    .get_or_create(&metrics::KindLabel { kind })
                    .set(n as i64);
            };
            gauge("ServiceSet", sets.state().len());
            gauge("HelmRelease", hrs.managed());
            gauge("Kustomization", kss.managed());
        }
    };
    let health2 = health.clone();
    let run = async move {
        // The controller's own watches start with it; the shared reflectors are driven by
        // the trigger streams it polls.
        let mut results = controller.run(reconcile, error_policy, ctx).boxed();
        let mut synced = false;
        let mut ticker = tokio::time::interval(Duration::from_secs(5));
        let mut ready = Box::pin(ready);
        loop {
            tokio::select! {
                item = results.next() => match item {
                    None => break,
                    Some(Ok(_)) => {}
                    Some(Err(kube::runtime::controller::Error::ObjectNotFound(_))) => {}
                    Some(Err(e)) => debug!(error = %e, "controller"),
                },
                _ = &mut ready, if !synced => {
                    synced = true;
                    let _ = synced_tx.send(true);
                    health2.ready.store(true, Ordering::Relaxed);
                    info!("caches synced");
                }
                _ = ticker.tick() => gauges(),
            }
        }
    };
    tokio::select! {
        _ = run => {}
        _ = async { let _ = stop_wait.wait_for(|s| *s).await; tokio::time::sleep(Duration::from_secs(25)).await } => {
            error!("reconciles did not finish 25 s after shutdown was requested; exiting");
        }
    }
    health.ready.store(false, Ordering::Relaxed);
    Ok(())
}

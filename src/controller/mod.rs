//! `kubectl ksm run`: the Flux adapter controller, the I/O edge around
//! [`crate::core::adapter::plan`].
//!
//! Watch caches ([`watch`]: kube-runtime reflectors, and [`cache`] for the Flux objects) hold
//! the ServiceSets, the provider's SMP, the ServiceTemplates and every HelmRelease and
//! Kustomization. Any change to one of them queues the ServiceSets it concerns. A reconcile
//! ([`reconcile`]) gathers its inputs from the caches ([`gather`]), asks the pure core for a
//! plan, and hands it to a small writer ([`apply`]): finalizer, status, server-side applies,
//! deletions, finalizer removal; what reconciles share is in [`context`]. The replies of its
//! writes stand in for a lagging cache ([`written`]). This file wires it together: start-up, leader election ([`leader`]), the
//! HTTP endpoints ([`http`]), metrics ([`metrics`]) and shutdown.

mod apply;
mod cache;
mod claims;
mod context;
mod gather;
mod http;
mod leader;
mod metrics;
mod reconcile;
#[cfg(test)]
mod tests;
mod watch;
mod written;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use kube::Client;
use kube::api::{Api, DynamicObject, ListParams};
use kube::runtime::WatchStreamExt;
use kube::runtime::controller::Controller;
use kube::runtime::reflector::ObjectRef;
use kube::runtime::watcher;
use tracing::{debug, error, info};

use crate::api::kcm::ServiceSet;
use crate::api::kinds;
use crate::api::selector::Selector;
use crate::cluster::{self, ConnectOptions, with_type};
use crate::core::adapter;
use context::{Ctx, Kinds};
use gather::templates_of;
use reconcile::{error_policy, reconcile};
use watch::{reflect, text_reflect};
use written::Written;

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
    /// How long a failed reconcile waits before it is tried again.
    pub retry: RetryDelays,
    /// JSON logs (else human-readable lines).
    pub json_logs: bool,
    /// The shard: only the ServiceSets whose labels match are reconciled (Flux's
    /// `--watch-label-selector`, with the `sharding.fluxcd.io/key` label). Every ServiceSet is
    /// still cached, so that decisions across ServiceSets see them all.
    pub shard: Option<Shard>,
    /// The timeoutSeconds of every watch request: the API server ends each watch after this
    /// long, and the watch resumes from the version it reached.
    pub watch_timeout: Duration,
}

/// The retries of a ServiceSet whose reconcile failed (Flux's `--min-retry-delay` and
/// `--max-retry-delay`): exponential from `min`, doubling with each consecutive failure, up
/// to `max`. A conflict (someone else wrote in between) is retried sooner for its first few
/// times: reading again is all it takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryDelays {
    pub min: Duration,
    pub max: Duration,
}

impl Default for RetryDelays {
    fn default() -> Self {
        RetryDelays {
            min: Duration::from_millis(100),
            max: Duration::from_secs(300),
        }
    }
}

impl RetryDelays {
    /// The wait before the retry that follows the `failures`-th consecutive failure (from 1).
    pub fn delay(&self, failures: u32, conflict: bool) -> Duration {
        let n = failures.max(1);
        let d = if conflict && n <= 3 {
            self.min.saturating_mul(n)
        } else {
            self.min.saturating_mul(1u32 << (n - 1).min(20))
        };
        d.min(self.max)
    }
}

/// A shard of the ServiceSets: a label selector, as text and parsed.
#[derive(Debug, Clone)]
pub struct Shard {
    pub text: String,
    pub selector: Selector,
}

impl Shard {
    pub fn parse(text: &str) -> Result<Shard, String> {
        let selector = Selector::parse_string(text)
            .map_err(|e| format!("invalid --watch-label-selector: {e}"))?;
        Ok(Shard {
            text: text.to_string(),
            selector,
        })
    }
}

impl Options {
    /// Whether the ServiceSet with these labels is in this replica's shard.
    pub fn in_shard(&self, labels: Option<&std::collections::BTreeMap<String, String>>) -> bool {
        self.shard.as_ref().is_none_or(|s| match labels {
            Some(l) => s.selector.matches_map(l),
            None => s.selector.matches_map(&Default::default()),
        })
    }

    /// The Lease of this replica's leader election: one per provider and shard (as Flux
    /// derives its leader election ID from the label selector), so that each shard has its
    /// own leader.
    pub fn lease_name(&self) -> String {
        if let Some(name) = &self.lease_name {
            return name.clone();
        }
        let base = format!("kubectl-ksm-{}", self.provider);
        match &self.shard {
            None => base,
            Some(s) => {
                use sha2::Digest;
                let digest = sha2::Sha256::digest(s.text.as_bytes());
                let hex: String = digest.iter().take(4).map(|b| format!("{b:02x}")).collect();
                format!("{base}-{hex}")
            }
        }
    }
}

/// Runs the controller until SIGTERM/SIGINT (graceful) or a fatal error.
pub fn run(cluster_args: &ConnectOptions, opts: Options) -> Result<(), String> {
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

async fn run_async(cluster_args: &ConnectOptions, opts: Options) -> Result<(), String> {
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

    let config = cluster::load_config(cluster_args)
        .await
        .map_err(|e| e.message)?;
    let server = config.cluster_url.to_string();
    let namespace_default = config.default_namespace.clone();
    let client = Client::try_from(config)
        .map_err(|e| format!("cannot create a client for {server}: {e}"))?;
    // The process has what it needs to work: from now on it is alive (/healthz); it is ready
    // (/readyz) once connected and, when leading, with its caches filled.
    health.live.store(true, Ordering::Relaxed);
    let kinds = Kinds::new();
    if !connect(&client, &server, &kinds, stop_rx.clone()).await? {
        let _ = http.await;
        return Ok(());
    }

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
        let lease = opts.lease_name();
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

/// How long to wait before the next attempt to reach the API server at start-up: exponential
/// from 1 s up to 30 s (an unreachable server at start is often one that is starting too).
fn connect_backoff(attempt: u32) -> Duration {
    Duration::from_secs(1u64 << attempt.min(5)).min(Duration::from_secs(30))
}

/// Whether an error at start-up may go away by itself (the server unreachable, overloaded or
/// restarting), rather than needing someone to act (no such kind, no permission).
fn transient(e: &kube::Error) -> bool {
    match e {
        kube::Error::Api(s) => s.code == 429 || s.code >= 500,
        kube::Error::HyperError(_) | kube::Error::Service(_) => true,
        _ => false,
    }
}

/// Reaches the API server and checks the kinds, retrying transient errors with a backoff
/// until `stop`; false when stopped first.
async fn connect(
    client: &Client,
    server: &str,
    kinds: &Kinds,
    mut stop: tokio::sync::watch::Receiver<bool>,
) -> Result<bool, String> {
    let mut attempt = 0u32;
    loop {
        match check_kinds(client, server, kinds).await {
            Ok(()) => return Ok(true),
            Err(KindsError::Fatal(e)) => return Err(e),
            Err(KindsError::Transient(e)) => {
                let wait = connect_backoff(attempt);
                attempt = attempt.saturating_add(1);
                error!(attempt, retry_in_ms = wait.as_millis() as u64, "{e}");
                tokio::select! {
                    _ = tokio::time::sleep(wait) => {}
                    _ = stop.wait_for(|s| *s) => return Ok(false),
                }
            }
        }
    }
}

enum KindsError {
    Transient(String),
    Fatal(String),
}

/// The kcm and Flux kinds must be served; one clear line otherwise.
async fn check_kinds(client: &Client, server: &str, kinds: &Kinds) -> Result<(), KindsError> {
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
                return Err(KindsError::Fatal(format!(
                    "{server}: {} ({}) is not served: {what}",
                    ar.plural, ar.api_version
                )));
            }
            Err(e) => {
                let transient = transient(&e);
                let msg = cluster::explain(server, &format!("list {}", ar.plural), e).message;
                return Err(if transient {
                    KindsError::Transient(msg)
                } else {
                    KindsError::Fatal(msg)
                });
            }
        }
    }
    Ok(())
}

/// How long a ServiceSet's reconcile waits for the events that follow one another (its
/// own status write, then its Flux objects appearing one by one in the caches) so that one
/// reconcile sees them all instead of one reconcile each (trailing edge: a reconcile runs at
/// most this long after the last event of a burst).
const RECONCILE_DEBOUNCE: Duration = Duration::from_secs(1);

/// The watches and the controller loop, until `stop`.
async fn control(
    client: Client,
    kinds: Kinds,
    opts: Options,
    metrics: Arc<Metrics>,
    health: Arc<http::Health>,
    stop: tokio::sync::watch::Receiver<bool>,
) -> Result<(), String> {
    let wc = watcher::Config::default()
        .page_size(cluster::PAGE_SIZE)
        .timeout(watch_timeout_seconds(opts.watch_timeout));
    let written = Arc::new(Written::default());
    let (templates, tpl_stream) = reflect(&client, &kinds.template, wc.clone(), watch::slim);

    // Who owns each release: every ServiceSet's claims, indexed as the watches deliver them;
    // a change requeues the ServiceSets whose verdicts it may change.
    let claims = Arc::new(claims::ClaimIndex::new(&opts.provider));
    let (requeue_tx, requeue_rx) = tokio::sync::mpsc::unbounded_channel::<claims::SetKey>();
    let (sets, set_stream) = reflect(&client, &kinds.service_set, wc.clone(), watch::slim_set);
    let set_stream = {
        let (claims, templates, ar, tpl_ar) = (
            claims.clone(),
            templates.clone(),
            kinds.service_set.clone(),
            kinds.template.clone(),
        );
        let requeue_tx = requeue_tx.clone();
        let mut seen = observe(&written, kinds::SERVICE_SET.kind);
        set_stream.inspect(move |ev| {
            seen(ev);
            if let Ok(ev) = ev {
                let in_ns = |ns: &str| templates_of(&templates, &tpl_ar, ns);
                for k in claims.apply(ev, |o| watch::set_json(o, &ar), in_ns) {
                    let _ = requeue_tx.send(k);
                }
            }
        })
    };
    let tpl_stream = {
        let (claims, templates, sets, set_ar, tpl_ar) = (
            claims.clone(),
            templates.clone(),
            sets.clone(),
            kinds.service_set.clone(),
            kinds.template.clone(),
        );
        tpl_stream.inspect(move |ev| {
            // A template changed: the ServiceSets that use it render differently. Once the
            // templates are listed, those rendered without them (after a relist, all).
            let keys: Vec<(String, String)> = match ev {
                Ok(watcher::Event::Apply(t) | watcher::Event::Delete(t)) => {
                    let ns = t.metadata.namespace.as_deref().unwrap_or("");
                    let name = t.metadata.name.as_deref().unwrap_or("");
                    sets.state()
                        .iter()
                        .filter(|s| s.metadata.namespace.as_deref() == Some(ns))
                        .filter(|s| uses_template(s, name))
                        .map(|s| (ns.to_string(), s.metadata.name.clone().unwrap_or_default()))
                        .collect()
                }
                Ok(watcher::Event::InitDone) => claims.templates_listed(),
                _ => return,
            };
            for k in render_again(&claims, &sets, (&set_ar, &tpl_ar), &templates, keys) {
                let _ = requeue_tx.send(k);
            }
        })
    };
    let claim_ar = kinds.service_set.clone();
    let claim_triggers = futures::stream::unfold(requeue_rx, |mut rx| async move {
        rx.recv().await.map(|k| (k, rx))
    })
    .map(move |(ns, name)| ObjectRef::new_with(&name, claim_ar.clone()).within(&ns));
    // Every ServiceSet is cached; only those of this shard start a reconcile of their own
    // (the others may still be queued by a trigger; the reconcile then skips them).
    let shard_opts = opts.clone();
    let set_triggers = set_stream.applied_objects().filter(move |r| {
        std::future::ready(match r {
            Ok(s) => {
                let mine = shard_opts.in_shard(s.metadata.labels.as_ref());
                let who = || {
                    format!(
                        "{}/{}",
                        s.metadata.namespace.as_deref().unwrap_or(""),
                        s.metadata.name.as_deref().unwrap_or("")
                    )
                };
                let rv = s.metadata.resource_version.as_deref().unwrap_or("");
                if mine {
                    tracing::trace!(serviceset = %who(), resource_version = %rv, "ServiceSet event");
                } else {
                    debug!(serviceset = %who(), resource_version = %rv, "not in this replica's shard: no reconcile of its own");
                }
                mine
            }
            Err(_) => true,
        })
    });
    let controller =
        Controller::for_stream_with(set_triggers, sets.clone(), kinds.service_set.clone())
            .with_config(
                kube::runtime::controller::Config::default()
                    .concurrency(opts.concurrency)
                    .debounce(RECONCILE_DEBOUNCE),
            );

    // Reflectors for the other kinds; each change maps to the ServiceSets it concerns.
    let smp_wc = wc
        .clone()
        .fields(&format!("metadata.name={}", opts.provider));
    let (smps, smp_stream) = reflect(&client, &kinds.smp, smp_wc, watch::slim);
    let (hrs, hr_stream) = text_reflect(&client, &kinds.helm_release, wc.clone());
    let (kss, ks_stream) = text_reflect(&client, &kinds.kustomization, wc.clone());
    let hr_stream = hr_stream.inspect(observe(&written, kinds::HELM_RELEASE.kind));
    let ks_stream = ks_stream.inspect(observe(&written, kinds::KUSTOMIZATION.kind));

    let set_ar = kinds.service_set.clone();
    let owner_of = move |o: DynamicObject| -> Option<ObjectRef<DynamicObject>> {
        let ns = o.metadata.namespace.clone()?;
        o.metadata
            .owner_references
            .as_ref()?
            .iter()
            .find(|r| {
                r.controller == Some(true)
                    && r.kind == kinds::SERVICE_SET.kind
                    && kinds::group_of(&r.api_version) == kinds::KCM_GROUP
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
                .filter(|s| uses_template(s, &name))
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

    let kinds_smp = kinds.smp.clone();
    let (synced_tx, synced_rx) = tokio::sync::watch::channel(false);
    let ctx = Arc::new(Ctx {
        synced: synced_rx,
        client: client.clone(),
        kinds,
        opts: opts.clone(),
        smps: smps.clone(),
        sets: sets.clone(),
        templates: templates.clone(),
        helm_releases: hrs.clone(),
        kustomizations: kss.clone(),
        written,
        claims,
        failures: Mutex::new(HashMap::new()),
        metrics: metrics.clone(),
        recorder: kube::runtime::events::Recorder::new(client.clone(), context::reporter()),
    });

    // Caches first: no reconcile decides from a half-filled cache.
    let mut stop_wait = stop.clone();
    let sets_ready = sets.clone();
    let ready = async {
        let _ = sets_ready.wait_until_ready().await;
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
        .reconcile_on(claim_triggers)
        .graceful_shutdown_on(async move {
            let _ = stop_graceful.wait_for(|s| *s).await;
        });
    let gauges = {
        let (sets, hrs, kss, metrics) = (sets.clone(), hrs.clone(), kss.clone(), metrics.clone());
        let (smps, smp_ar, opts) = (smps.clone(), kinds_smp.clone(), opts.clone());
        let provider = opts.provider.clone();
        move || {
            let gauge = |kind: &'static str, n: usize| {
                metrics
                    .managed
                    .get_or_create(&metrics::KindLabel { kind })
                    .set(n as i64);
            };
            // Only the ServiceSets this adapter serves (another provider's are not managed).
            let smp = smps
                .get(&ObjectRef::new_with(&provider, smp_ar.clone()))
                .map(|o| with_type(&o, &smp_ar));
            let served = sets
                .state()
                .iter()
                .filter(|s| opts.in_shard(s.metadata.labels.as_ref()))
                .filter(|s| adapter::serves(&provider, smp.as_ref(), &routing_view(s)))
                .count();
            gauge("ServiceSet", served);
            gauge("HelmRelease", hrs.managed());
            gauge("Kustomization", kss.managed());
        }
    };
    let health2 = health.clone();
    let (index, index_sets, index_templates) =
        (ctx.claims.clone(), sets.clone(), templates.clone());
    let (index_set_ar, index_tpl_ar) = (ctx.kinds.service_set.clone(), ctx.kinds.template.clone());
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
                    // The index was fed while the caches filled, a ServiceSet possibly before
                    // its templates: once all are in, those are rendered again, before any
                    // reconcile decides.
                    let kinds = (&index_set_ar, &index_tpl_ar);
                    render_again(&index, &index_sets, kinds, &index_templates, index.provisional());
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

/// A watch's timeoutSeconds: whole seconds, at least one (zero would ask the server for its
/// own, much longer, timeout).
fn watch_timeout_seconds(d: Duration) -> u32 {
    u32::try_from(d.as_secs()).unwrap_or(u32::MAX).max(1)
}

/// Drops the kept replies of the writes that a watch event shows have reached the cache.
fn observe(
    written: &Arc<Written>,
    kind: &'static str,
) -> impl FnMut(&Result<watcher::Event<DynamicObject>, watcher::Error>) + use<> {
    let written = written.clone();
    move |ev| {
        if let Ok(watcher::Event::Apply(o) | watcher::Event::InitApply(o)) = ev {
            let m = &o.metadata;
            written.observed(
                kind,
                m.namespace.as_deref().unwrap_or(""),
                m.name.as_deref().unwrap_or(""),
                m.uid.as_deref().unwrap_or(""),
                m.resource_version.as_deref().unwrap_or(""),
            );
        }
    }
}

/// Renders the claims of these ServiceSets again (a template they use changed, or they were
/// indexed before the templates were listed); returns the ServiceSets to requeue.
fn render_again(
    index: &claims::ClaimIndex,
    sets: &kube::runtime::reflector::Store<DynamicObject>,
    kinds: (&kube::discovery::ApiResource, &kube::discovery::ApiResource),
    templates: &kube::runtime::reflector::Store<DynamicObject>,
    keys: Vec<claims::SetKey>,
) -> Vec<claims::SetKey> {
    let (set_ar, tpl_ar) = kinds;
    let mut requeue = Vec::new();
    for (ns, name) in keys {
        let Some(set) = sets.get(&ObjectRef::new_with(&name, set_ar.clone()).within(&ns)) else {
            continue;
        };
        let set = watch::set_json(&set, set_ar);
        let in_ns = templates_of(templates, tpl_ar, &ns);
        requeue.extend(index.observe(&set, &in_ns, true));
    }
    requeue
}

/// What decides which adapter serves a ServiceSet: its labels and its provider name (a
/// small copy, instead of the whole object).
fn routing_view(set: &DynamicObject) -> serde_json::Value {
    let provider = watch::set_provider(set);
    serde_json::json!({"metadata": {"labels": set.metadata.labels},
        "spec": {"provider": provider}})
}

/// Whether a cached ServiceSet deploys a service of the template `name`.
fn uses_template(set: &DynamicObject, name: &str) -> bool {
    let spec = watch::set_field(set, "spec");
    let set = serde_json::json!({"spec": spec});
    ServiceSet(&set).services().any(|x| x.template() == name)
}

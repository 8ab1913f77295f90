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
use crate::cluster::{self, ClusterArgs};
use context::{Ctx, Kinds};
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
    /// JSON logs (else human-readable lines).
    pub json_logs: bool,
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
                .filter(|s| ServiceSet(&s.data).services().any(|x| x.template() == name))
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
        written: Written::default(),
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

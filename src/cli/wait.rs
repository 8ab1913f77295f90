//! `kubectl ksm wait`: a gate for pipelines. Watches (one watch per kind doctor reads, no
//! polling) until every service of a ClusterDeployment, MultiClusterService or ServiceSet is
//! Deployed as kcm reports it, a failure that will not heal by itself is known, or the
//! timeout passes. On a terminal one live line per service; elsewhere one line per change.

use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use clap::Args;

use super::doctor::{ObjectsArgs, Snapshot, snapshot, without_secret_data};
use super::tree::{focus_arg, focus_words};
use super::{CliError, CliResult, EXIT_FINDINGS, EXIT_OK, EXIT_TIMEOUT, GlobalArgs, Io};
use crate::cluster::Cluster;
use crate::core::provider;
use crate::core::tree::Focus;
use crate::core::wait::{self, Judgement, Outcome};
use crate::output::wait::Progress;

#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  kubectl ksm wait clusterdeployment/prod-1 -n kcm-system --timeout 10m
  kubectl ksm wait multiclusterservice/ingress --for deployed --timeout 15m
  kubectl ksm wait serviceset/prod-1-3f2a9c1e -n kcm-system
  kubectl ksm wait cld/dev-cluster --from bundle.yaml

Exit codes: 0 every service is Deployed (as kcm reports it, after its health verification
where its adapter runs one); 1 a failure that will not heal by itself (doctor's finding
and hint are printed: a suspended or paused object, a stalled Flux object, a release another
ServiceSet owns, a failure Sveltos does not retry, an invalid template...); 2 could not run
(or the object is not there); 3 the timeout passed first (each service's state is printed).
Live it watches the kinds doctor reads (one watch each, get, list and watch only); from a
dump it judges the saved objects once.")]
pub struct WaitArgs {
    /// What to wait for: clusterdeployment/NAME (its services and those of the
    /// MultiClusterServices that target it), multiclusterservice/NAME (every cluster it
    /// targets) or serviceset/NAME
    #[arg(value_name = "KIND/NAME", value_parser = focus_arg)]
    pub target: Focus,
    /// The condition: `deployed`, every service Deployed
    #[arg(long = "for", value_name = "CONDITION", default_value = "deployed", value_parser = ["deployed"])]
    pub condition: String,
    /// How long to wait at most (Go duration: 90s, 10m, 1h)
    #[arg(long, value_name = "DURATION", default_value = "10m", value_parser = crate::api::duration::flag)]
    pub timeout: Duration,
    #[command(flatten)]
    pub objects: ObjectsArgs,
}

pub fn run(args: &WaitArgs, global: &GlobalArgs, io: &mut Io) -> CliResult {
    let deadline = Instant::now() + args.timeout;
    let mut progress = Progress::new(io.stdout_tty, io.color, io.width);
    if !args.objects.from.is_empty() {
        // A dump does not change: judged once, Waiting is the timeout's answer.
        let snap = snapshot(&args.objects.from, true, global, io)?;
        let namespace = namespace_of(&args.target, global, None);
        let judged = judgement(&args.target, &namespace, snap, args.objects.now)?;
        return finish(
            io,
            &mut progress,
            &args.target,
            &judged,
            "not deployed in the saved objects (a dump does not change)",
        );
    }
    let mut cluster = Cluster::connect(&global.cluster)?;
    let namespace = namespace_of(&args.target, global, Some(&cluster.default_namespace));
    // A MultiClusterService's ServiceSets are in its clusters' namespaces.
    let watched = match args.target {
        Focus::MultiClusterService(_) => None,
        _ => Some(namespace.as_str()),
    };
    let mut watch = cluster
        .watch_doctor(watched, &provider::provider_apis(), false)
        .map_err(|e| CliError::Fatal(e.message))?;
    let mut first = true;
    loop {
        let snap = cluster
            .next_snapshot(&mut watch, Some(deadline))
            .map_err(|e| CliError::Fatal(e.message))?;
        let Some(snap) = snap else {
            let why = format!(
                "timed out after {}",
                crate::api::duration::human(args.timeout)
            );
            progress.timed_out(io.stdout, &why)?;
            return Ok(EXIT_TIMEOUT);
        };
        let mut snap = Snapshot::live(snap, None, io)?;
        snap.objects = without_secret_data(snap.objects);
        let judged = match judgement(&args.target, &namespace, snap, None) {
            Ok(j) => j,
            // Gone while waited for: it will not come back by itself.
            Err(CliError::Fatal(e)) if !first => {
                writeln!(io.stdout, "{e} any more")?;
                return Ok(EXIT_FINDINGS);
            }
            Err(e) => return Err(e),
        };
        first = false;
        if judged.outcome != Outcome::Waiting {
            return finish(io, &mut progress, &args.target, &judged, "");
        }
        progress.show(io.stdout, &judged)?;
    }
}

/// The namespace of a ClusterDeployment or ServiceSet: -n, else the context's (live), else
/// kcm's system namespace (a dump has no context).
fn namespace_of(target: &Focus, global: &GlobalArgs, context: Option<&str>) -> String {
    match target {
        Focus::MultiClusterService(_) => String::new(),
        _ => global
            .cluster
            .namespace
            .clone()
            .or(context.map(str::to_string))
            .unwrap_or_else(|| crate::api::sveltos::DEFAULT_SYSTEM_NAMESPACE.to_string()),
    }
}

/// Doctor's report of the snapshot and the judgement of the target on it.
fn judgement(
    target: &Focus,
    namespace: &str,
    snap: Snapshot,
    now: Option<DateTime<Utc>>,
) -> Result<Judgement, CliError> {
    let report = snap.report(snap.judged_at(now), None, None)?;
    wait::judge(&snap.objects, &report, target, namespace).ok_or_else(|| {
        let where_ = match target {
            Focus::MultiClusterService(_) => String::new(),
            _ => format!(" in namespace {namespace}"),
        };
        CliError::Fatal(format!("{} not found{where_}", focus_words(target)))
    })
}

/// The end: every service and the outcome, and its exit code.
fn finish(
    io: &mut Io,
    progress: &mut Progress,
    target: &Focus,
    judged: &Judgement,
    waiting: &str,
) -> CliResult {
    progress.show(io.stdout, judged)?;
    Ok(match judged.outcome {
        Outcome::Deployed => {
            progress.deployed(io.stdout, &focus_words(target), judged)?;
            EXIT_OK
        }
        Outcome::Failed => {
            progress.failed(io.stdout, judged)?;
            EXIT_FINDINGS
        }
        Outcome::Waiting => {
            progress.timed_out(io.stdout, waiting)?;
            EXIT_TIMEOUT
        }
    })
}

//! `kubectl ksm run --provider NAME`: the in-cluster Flux adapter (see src/controller/).

use std::net::SocketAddr;
use std::time::Duration;

use clap::Args;

use super::{CliError, CliResult, EXIT_OK, GlobalArgs, Io};
use crate::cluster::ConnectOptions;
use crate::controller::{self, Options};

#[derive(Debug, Args)]
#[command(after_help = "\
The adapter watches ServiceSets whose labels match the StateManagementProvider's selector and
whose spec.provider.name is the provider, applies the HelmReleases and Kustomizations that
`kubectl ksm render` shows (server-side apply, field manager kubectl-ksm) and writes the service
states back. It runs until SIGTERM or SIGINT.

Examples:
  kubectl ksm run --provider ksm-flux
  kubectl ksm run --provider ksm-flux --leader-elect --bind-address 0.0.0.0:8080

Logs are JSON lines on stderr (--log-format text for people); KSM_LOG sets the filter
(e.g. KSM_LOG=debug).

Exit codes: 0 stopped by a signal, 2 cannot start (no cluster, kcm or Flux missing) or lost
the leader lease.")]
pub struct RunArgs {
    /// The StateManagementProvider this adapter serves
    #[arg(long, value_name = "NAME")]
    pub provider: String,
    /// Run only while holding a coordination.k8s.io Lease (for more than one replica)
    #[arg(long)]
    pub leader_elect: bool,
    /// Namespace of the Lease (default: POD_NAMESPACE, then the context's namespace)
    #[arg(long, value_name = "NAMESPACE")]
    pub leader_election_namespace: Option<String>,
    /// Name of the Lease (default: kubectl-ksm-<provider>)
    #[arg(long, value_name = "NAME")]
    pub leader_election_id: Option<String>,
    /// Address of /metrics, /healthz and /readyz
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8080")]
    pub bind_address: SocketAddr,
    /// How long a service may wait on a failing source (or a transient error) before it counts
    /// as Failed
    #[arg(long, value_name = "DURATION", default_value = "5m", value_parser = crate::api::duration::flag_or_zero)]
    pub source_timeout: Duration,
    /// Reconcile every ServiceSet at least this often, changes or not (0: only on changes)
    #[arg(long, value_name = "DURATION", default_value = "10m", value_parser = crate::api::duration::flag_or_zero)]
    pub resync: Duration,
    /// The first retry of a ServiceSet whose reconcile failed; each further failure doubles it
    #[arg(long, value_name = "DURATION", default_value = "100ms", value_parser = crate::api::duration::flag)]
    pub min_retry_delay: Duration,
    /// The longest wait between two retries of a failing ServiceSet
    #[arg(long, value_name = "DURATION", default_value = "5m", value_parser = crate::api::duration::flag)]
    pub max_retry_delay: Duration,
    /// ServiceSets reconciled at the same time
    #[arg(long, value_name = "N", default_value_t = 8, value_parser = clap::value_parser!(u16).range(1..))]
    pub concurrency: u16,
    /// Reconcile only the ServiceSets whose labels match (a shard, e.g.
    /// 'sharding.fluxcd.io/key in (shard1)'; the replica for the rest: '!sharding.fluxcd.io/key').
    /// The default Lease name then carries a hash of the selector: one leader per shard
    #[arg(long, value_name = "SELECTOR")]
    pub watch_label_selector: Option<String>,
    /// Log format
    #[arg(long, value_name = "FORMAT", default_value = "json", value_parser = ["json", "text"])]
    pub log_format: String,
    /// How long each watch request lasts (its timeoutSeconds, whole seconds): the API server
    /// ends it then, and the adapter opens it again from the version it reached, without
    /// listing again. Lower it where a proxy between the adapter and the API server cuts
    /// longer requests
    #[arg(long, value_name = "DURATION", default_value = "290s", value_parser = crate::api::duration::flag)]
    pub watch_timeout: Duration,
}

pub fn run(args: &RunArgs, global: &GlobalArgs, _io: &mut Io) -> CliResult {
    let shard = match &args.watch_label_selector {
        Some(text) => Some(controller::Shard::parse(text).map_err(CliError::Fatal)?),
        None => None,
    };
    if args.min_retry_delay > args.max_retry_delay {
        return Err(CliError::Fatal(format!(
            "--min-retry-delay ({}) is longer than --max-retry-delay ({})",
            crate::api::duration::format_coarse(args.min_retry_delay),
            crate::api::duration::format_coarse(args.max_retry_delay)
        )));
    }
    let opts = Options {
        provider: args.provider.clone(),
        leader_elect: args.leader_elect,
        lease_namespace: args.leader_election_namespace.clone(),
        lease_name: args.leader_election_id.clone(),
        bind: args.bind_address,
        source_timeout: args.source_timeout,
        resync: args.resync,
        concurrency: args.concurrency,
        retry: controller::RetryDelays {
            min: args.min_retry_delay,
            max: args.max_retry_delay,
        },
        json_logs: args.log_format == "json",
        shard,
        watch_timeout: args.watch_timeout,
    };
    controller::run(&ConnectOptions::from(&global.cluster), opts).map_err(CliError::Fatal)?;
    Ok(EXIT_OK)
}

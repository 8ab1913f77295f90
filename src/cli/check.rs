//! `kubectl ksm check`: the conditions kcm would set on StateManagementProviders, from saved
//! objects (`check SMP.yaml --objects ...`) or live (`check [SMP-NAME...]`).

use std::path::{Path, PathBuf};

use clap::Args;
use serde_json::Value;

use super::eval::BudgetArgs;
use super::input;
use super::{
    CliError, CliResult, EXIT_FINDINGS, EXIT_OK, GlobalArgs, Io, OutputFormat, SelectorArg,
    formats, selector_flag,
};
use crate::api::kinds;
use crate::api::meta::Object;
use crate::cluster::Cluster;
use crate::core::readiness::{self, Explain, ObjectSet, Rbac};
use crate::output::check as render;

#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  kubectl ksm check                         # every StateManagementProvider of the cluster
  kubectl ksm check ksm-flux                # one, live (or smp/ksm-flux)
  kubectl ksm check -l team=platform        # those whose labels match
  kubectl ksm check smp.yaml --objects flux-system.yaml --objects crds.yaml   # offline
  kubectl ksm check ksm-flux --from bundle.yaml     # from a saved dump (doctor --save)

Offline, the adapter, provisioners and CRDs are looked up among the objects (the SMP files are
searched too) and RBACReady is not evaluated: READY assumes kcm creates the RBAC objects. Live,
kinds are resolved through discovery as kcm does, RBACReady is what kcm last wrote, and a
condition whose recorded status differs from the evaluation now is flagged. From a dump
(--from), the SMPs are named as live and looked up, with what they reference, among the saved
objects; RBACReady and the flagged differences are read from the saved status as live.

Exit codes: 0 every provider ready, 1 a provider not ready, 2 bad usage, unreadable input or
cluster unreachable.")]
pub struct CheckArgs {
    /// Files holding StateManagementProviders (offline), or SMP names (live; none: all), as
    /// NAME or smp/NAME
    #[arg(value_name = "SMP")]
    pub smps: Vec<String>,
    /// Only the StateManagementProviders whose labels match (kubectl's syntax: a=b,c!=d)
    #[arg(short = 'l', long, value_name = "SELECTOR", value_parser = selector_flag)]
    pub selector: Option<SelectorArg>,
    /// Files or directories with the referenced objects and CRDs (`kubectl get -o yaml` output)
    #[arg(long = "objects", value_name = "PATH", num_args = 1..)]
    pub objects: Vec<PathBuf>,
    /// Read the SMPs (named as live) and what they reference from saved objects instead of
    /// the cluster: files or directories of `kubectl get ... -o yaml` output or `doctor
    /// --save` bundles
    #[arg(long = "from", value_name = "PATH", num_args = 1.., conflicts_with = "objects")]
    pub from: Vec<PathBuf>,
    #[command(flatten)]
    pub budget: BudgetArgs,
    /// Output format
    #[arg(short = 'o', long = "output", value_name = "FORMAT", default_value = "human", value_parser = formats(FORMATS))]
    pub output: OutputFormat,
}

/// The formats of `check -o`.
pub const FORMATS: &[OutputFormat] = &[OutputFormat::Human, OutputFormat::Json];

/// An SMP named on the command line: `NAME`, or `KIND/NAME` with the SMP kind as kubectl takes
/// it (`smp/ksm-flux`, `statemanagementproviders/ksm-flux`).
fn smp_name(arg: &str) -> Result<&str, CliError> {
    let Some((kind, name)) = arg.split_once('/') else {
        return Ok(arg);
    };
    let (resource, _, group) = kinds::split_resource_name(kind);
    match kinds::by_resource_name(resource, group) {
        Some(k) if k == &kinds::STATE_MANAGEMENT_PROVIDER && !name.is_empty() => Ok(name),
        _ => Err(CliError::Fatal(format!(
            "{arg:?}: check takes StateManagementProviders: NAME or smp/NAME"
        ))),
    }
}

pub fn run(args: &CheckArgs, global: &GlobalArgs, io: &mut Io) -> CliResult {
    let format = args.output;
    let from_dump = !args.from.is_empty();
    let offline = !from_dump
        && (!args.objects.is_empty()
            || args.smps.iter().any(|s| s == "-" || Path::new(s).exists()));
    let explain = if global.verbosity > 0 {
        Explain::Always
    } else {
        Explain::WhenNotTrue
    };
    let limits = args.budget.limits();
    let (checks, disagreements) = if offline {
        let files: Vec<PathBuf> = args.smps.iter().map(PathBuf::from).collect();
        if files.is_empty() {
            return Err(CliError::Fatal(
                "offline check needs the SMP files: check SMP.yaml --objects PATH".into(),
            ));
        }
        let smp_files = input::load_objects(&files, io)?;
        let others = input::load_objects(&args.objects, io)?;
        let selected = |o: &Value| {
            args.selector
                .as_ref()
                .is_none_or(|s| s.selector.matches_json(Object(o).labels()))
        };
        let smps: Vec<&Value> = smp_files
            .iter()
            .map(|o| &o.json)
            .filter(|o| is_smp(o) && selected(o))
            .collect();
        if smps.is_empty() {
            return Err(CliError::Fatal(
                "no StateManagementProvider in the given files".into(),
            ));
        }
        let set = ObjectSet::new(
            smp_files
                .iter()
                .chain(&others)
                .map(|o| o.json.clone())
                .filter(|o| !is_smp(o))
                .collect(),
        );
        let checks: Vec<_> = smps
            .iter()
            .map(|smp| readiness::check_smp(smp, &set, Rbac::NotEvaluated, &limits, explain))
            .collect();
        let none = vec![Vec::new(); checks.len()];
        (checks, none)
    } else if from_dump {
        let objects = input::load_dump(&args.from, io)?;
        let (smps, others): (Vec<Value>, Vec<Value>) = objects.into_iter().partition(is_smp);
        let smps = selected_smps(smps, args)?;
        judged_as_recorded(&smps, &ObjectSet::new(others), &limits, explain)
    } else {
        let mut cluster = Cluster::connect(&global.cluster)?;
        cluster.discover()?;
        let Some((ar, caps)) =
            cluster.resource(kinds::KCM_GROUP, kinds::STATE_MANAGEMENT_PROVIDER.kind)
        else {
            return Err(CliError::Fatal(format!(
                "the cluster at {} serves no StateManagementProvider: is k0rdent (kcm) installed?",
                cluster.server
            )));
        };
        let smps = cluster.list_selected(
            &ar,
            &caps,
            None,
            args.selector.as_ref().map(|s| s.text.as_str()),
        )?;
        let smps = selected_smps(smps, args)?;
        let refs = cluster.smp_references(&smps, None)?;
        let set = ObjectSet::new(refs).with_not_served(cluster.not_served_references(&smps));
        judged_as_recorded(&smps, &set, &limits, explain)
    };
    match format {
        OutputFormat::Json => render::json(io.stdout, &checks, &disagreements)?,
        _ => render::human(io.stdout, &checks, &disagreements, io.color)?,
    }
    Ok(if checks.iter().all(|c| c.ready) {
        EXIT_OK
    } else {
        EXIT_FINDINGS
    })
}

/// The SMPs named on the command line among `smps` (all when none is named), those the
/// selector matches; a named one that is missing is an error.
fn selected_smps(mut smps: Vec<Value>, args: &CheckArgs) -> Result<Vec<Value>, CliError> {
    if let Some(s) = &args.selector {
        smps.retain(|o| s.selector.matches_json(Object(o).labels()));
    }
    if args.smps.is_empty() {
        return Ok(smps);
    }
    let names = args
        .smps
        .iter()
        .map(|a| smp_name(a))
        .collect::<Result<Vec<_>, _>>()?;
    for name in &names {
        if !smps.iter().any(|s| Object(s).name() == *name) {
            return Err(CliError::Fatal(format!(
                "StateManagementProvider {name:?} not found"
            )));
        }
    }
    smps.retain(|s| names.contains(&Object(s).name()));
    Ok(smps)
}

/// Where an SMP's recorded conditions differ from the judgement: (type, recorded, now).
type Disagreements = Vec<(String, String, String)>;

/// Each SMP's conditions judged now, RBACReady as kcm last recorded it, and where the
/// recorded conditions differ from the judgement.
fn judged_as_recorded(
    smps: &[Value],
    set: &ObjectSet,
    limits: &crate::core::cel::Limits,
    explain: Explain,
) -> (Vec<readiness::SmpCheck>, Vec<Disagreements>) {
    let mut checks = Vec::new();
    let mut disagreements = Vec::new();
    for smp in smps {
        let rbac = readiness::recorded_condition(smp, readiness::COND_RBAC)
            .map_or(Rbac::NotEvaluated, Rbac::Known);
        let c = readiness::check_smp(smp, set, rbac, limits, explain);
        disagreements.push(readiness::disagreements(smp, &c));
        checks.push(c);
    }
    (checks, disagreements)
}

fn is_smp(o: &Value) -> bool {
    Object(o).kind() == kinds::STATE_MANAGEMENT_PROVIDER.kind
}

//! `kubectl ksm check SMP.yaml --objects OBJECTS.yaml...`: the conditions kcm would set.

use std::path::PathBuf;

use clap::Args;

use super::eval::BudgetArgs;
use super::input;
use super::{
    CliError, CliResult, EXIT_FINDINGS, EXIT_OK, GlobalArgs, Io, OutputFormat, output_format,
};
use crate::core::objects::LoadedObject;
use crate::core::readiness::{self, Explain, ObjectSet, Rbac};
use crate::output::check as render;

#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  kubectl ksm check smp.yaml --objects flux-system.yaml --objects crds.yaml
  kubectl get deploy,crd -A -o yaml > objs.yaml && kubectl ksm check smp.yaml --objects objs.yaml -o json

The adapter, provisioners and CRDs are looked up among the objects (the SMP files are searched too).
RBACReady is not evaluated offline; `ready` is what kcm would report if it creates the RBAC objects.

Exit codes: 0 every provider ready, 1 a provider not ready, 2 bad usage or unreadable input.")]
pub struct CheckArgs {
    /// Files holding StateManagementProviders
    #[arg(value_name = "SMP", required = true)]
    pub smps: Vec<PathBuf>,
    /// Files or directories with the referenced objects and CRDs (`kubectl get -o yaml` output)
    #[arg(long = "objects", value_name = "PATH", num_args = 1..)]
    pub objects: Vec<PathBuf>,
    #[command(flatten)]
    pub budget: BudgetArgs,
}

pub fn run(args: &CheckArgs, global: &GlobalArgs, io: &mut Io) -> CliResult {
    let format = output_format(global, "check", &[OutputFormat::Human, OutputFormat::Json])?;
    let smp_files = input::load_objects(&args.smps, io.stdin)?;
    let smps: Vec<&LoadedObject> = smp_files
        .iter()
        .filter(|o| o.kind() == "StateManagementProvider")
        .collect();
    if smps.is_empty() {
        return Err(CliError::Fatal(
            "no StateManagementProvider in the given files".into(),
        ));
    }
    let others = input::load_objects(&args.objects, io.stdin)?;
    let set = ObjectSet::new(
        smp_files
            .iter()
            .chain(&others)
            .filter(|o| o.kind() != "StateManagementProvider")
            .map(|o| o.json.clone())
            .collect(),
    );
    let limits = args.budget.limits();
    let explain = if global.verbose > 0 {
        Explain::Always
    } else {
        Explain::WhenNotTrue
    };
    let checks: Vec<_> = smps
        .iter()
        .map(|smp| readiness::check_smp(&smp.json, &set, Rbac::NotEvaluated, &limits, explain))
        .collect();
    match format {
        OutputFormat::Json => render::json(io.stdout, &checks)?,
        _ => render::human(io.stdout, &checks, io.color)?,
    }
    Ok(if checks.iter().all(|c| c.ready) {
        EXIT_OK
    } else {
        EXIT_FINDINGS
    })
}

//! `kubectl ksm diff`: the objects `render` produces against the live ones, as `flux diff`
//! compares a Kustomization's build with the cluster. Read-only: one get per object.

use std::path::PathBuf;

use clap::Args;

use super::render::{RenderArgs, rendered};
use super::{
    CliError, CliResult, EXIT_ERROR, EXIT_FINDINGS, EXIT_OK, GlobalArgs, Io, OutputFormat,
    SelectorArg, formats, selector_flag,
};
use crate::cluster::Cluster;
use crate::core::drift::{self, Status};
use crate::output::{diff as render, human};

#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  kubectl ksm diff serviceset.yaml --templates templates/
  kubectl ksm diff clusterdeployment.yaml --templates templates/ --smp smp.yaml
  kubectl ksm diff --live dev-cluster -n kcm-system
  kubectl ksm diff --live -l team=platform -o json

Only the fields the rendered objects set are compared: what the API server and the
controllers add (status, defaults, extra labels) is not drift. Secret values are never printed.

Exit codes: 0 no drift, 1 drift (an object differs or is missing), 2 bad input, a service that
could not be rendered, or the cluster unreachable.")]
pub struct DiffArgs {
    /// A file with the ServiceSet, ClusterDeployment or MultiClusterService (and possibly the
    /// ServiceTemplates); with --live, the name of a ServiceSet (none: every one of the
    /// namespace)
    #[arg(value_name = "SERVICESET")]
    pub file: Option<PathBuf>,
    /// Render the ServiceSets of the cluster (with their ServiceTemplates) instead of a file
    #[arg(long)]
    pub live: bool,
    /// With --live and no name, only the ServiceSets whose labels match (a=b,c!=d)
    #[arg(short = 'l', long, value_name = "SELECTOR", value_parser = selector_flag, requires = "live")]
    pub selector: Option<SelectorArg>,
    /// Files or directories with ServiceTemplates
    #[arg(long = "templates", value_name = "PATH", num_args = 1..)]
    pub templates: Vec<PathBuf>,
    /// Files with StateManagementProviders, whose selectors give a derived ServiceSet its labels
    #[arg(long = "smp", value_name = "PATH", num_args = 1..)]
    pub smp: Vec<PathBuf>,
    /// kcm's system namespace (self-management ServiceSets of a MultiClusterService live there)
    #[arg(long, value_name = "NAMESPACE", default_value = "kcm-system")]
    pub system_namespace: String,
    /// Output format
    #[arg(short = 'o', long = "output", value_name = "FORMAT", default_value = "human", value_parser = formats(FORMATS))]
    pub output: OutputFormat,
}

/// The formats of `diff -o`.
pub const FORMATS: &[OutputFormat] = &[OutputFormat::Human, OutputFormat::Json];

pub fn run(args: &DiffArgs, global: &GlobalArgs, io: &mut Io) -> CliResult {
    let render_args = RenderArgs {
        file: args.file.clone(),
        live: args.live,
        from: Vec::new(),
        selector: args.selector.clone(),
        templates: args.templates.clone(),
        smp: args.smp.clone(),
        system_namespace: args.system_namespace.clone(),
        explain: None,
        output: OutputFormat::Yaml,
    };
    let (objects, diagnostics, errors) = rendered(&render_args, global, io)?;
    human::render(io.stderr, &diagnostics, false, io.width)?;
    let mut cluster = Cluster::connect(&global.cluster)?;
    cluster.discover_all()?;
    let mut drifts = Vec::new();
    for o in &objects {
        let id = crate::api::ObjectId::of(o);
        let Some((ar, caps)) = cluster.resource_at(&id.api_version, &id.kind) else {
            return Err(CliError::Fatal(format!(
                "the cluster at {} serves no {} {} (is its controller installed?)",
                cluster.server, id.kind, id.api_version
            )));
        };
        let live = cluster.get(&ar, &caps, &id.namespace, &id.name)?;
        drifts.push(drift::compare(o, live.as_ref()));
    }
    match args.output {
        OutputFormat::Json => render::json(io.stdout, &drifts)?,
        _ => render::human(io.stdout, &drifts)?,
    }
    Ok(if errors {
        writeln!(
            io.stderr,
            "error: some services could not be rendered (above): their objects were not compared"
        )?;
        EXIT_ERROR
    } else if drifts.iter().any(|d| d.status != Status::Unchanged) {
        EXIT_FINDINGS
    } else {
        EXIT_OK
    })
}

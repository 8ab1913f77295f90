//! `kubectl ksm render SERVICESET.yaml [--templates PATH...]`: the objects a ServiceSet's
//! adapter writes (the Sveltos Profile/ClusterProfile of kcm's default provider, the Flux
//! objects of ours), printed so that `kubectl apply -f -` takes them. Findings go to stderr.

use std::collections::HashMap;
use std::path::PathBuf;

use clap::Args;
use serde_json::Value;

use super::input;
use super::{
    CliError, CliResult, EXIT_FINDINGS, EXIT_OK, GlobalArgs, Io, OutputFormat, SelectorArg,
    formats, selector_flag,
};
use crate::api::kcm::{ServiceSet, StateManagementProvider};
use crate::api::kinds;
use crate::api::meta::Object;
use crate::core::adapter::ownership;
use crate::core::derive;
use crate::core::objects::LoadedObject;
use crate::core::provider;
use crate::core::render::codes as render_codes;
use crate::diag::{Diagnostic, Severity};
use crate::output::human;
use crate::output::render as render_out;

#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  kubectl ksm render serviceset.yaml --templates templates/
  kubectl get serviceset dev -n kcm-system -o yaml > ss.yaml
  kubectl get servicetemplates -n kcm-system -o yaml > templates.yaml
  kubectl ksm render ss.yaml --templates templates.yaml | kubectl apply --dry-run=server -f -
  kubectl ksm render --live dev-cluster -n kcm-system
  kubectl ksm render dev-cluster -n kcm-system --from bundle.yaml

Exit codes: 0 rendered, 1 rendered with errors for some services (reported on stderr; the
others are rendered), 2 unusable input.")]
pub struct RenderArgs {
    /// A file with the ServiceSet (it may also hold the ServiceTemplates); with --live, the
    /// name of a ServiceSet in the cluster (none: every ServiceSet of the namespace)
    #[arg(value_name = "SERVICESET")]
    pub file: Option<PathBuf>,
    /// Read the ServiceSet and its ServiceTemplates from the cluster
    #[arg(long)]
    pub live: bool,
    /// Read the ServiceSet (by name, as with --live; none: every ServiceSet, of the namespace
    /// when -n is given) and what its render reads from saved objects: files or directories
    /// of `kubectl get ... -o yaml` output or `doctor --save` bundles
    #[arg(long = "from", value_name = "PATH", num_args = 1.., conflicts_with = "live")]
    pub from: Vec<PathBuf>,
    /// With --live or --from and no name, only the ServiceSets whose labels match (a=b,c!=d)
    #[arg(short = 'l', long, value_name = "SELECTOR", value_parser = selector_flag)]
    pub selector: Option<SelectorArg>,
    /// Files or directories with ServiceTemplates (`kubectl get servicetemplates -o yaml`)
    #[arg(long = "templates", value_name = "PATH", num_args = 1..)]
    pub templates: Vec<PathBuf>,
    /// Files with StateManagementProviders, whose selectors give a derived ServiceSet its labels
    #[arg(long = "smp", value_name = "PATH", num_args = 1..)]
    pub smp: Vec<PathBuf>,
    /// kcm's system namespace (self-management ServiceSets of a MultiClusterService live there)
    #[arg(long, value_name = "NAMESPACE", default_value = "kcm-system")]
    pub system_namespace: String,
    /// Print the documentation of a finding code (e.g. KSM505) and exit
    #[arg(long, value_name = "CODE")]
    pub explain: Option<String>,
    /// Output format: a multi-document YAML stream, or a JSON List
    #[arg(short = 'o', long = "output", value_name = "FORMAT", default_value = "yaml", value_parser = formats(FORMATS))]
    pub output: OutputFormat,
}

/// The formats of `render -o`.
pub const FORMATS: &[OutputFormat] = &[OutputFormat::Yaml, OutputFormat::Json];

pub fn run(args: &RenderArgs, global: &GlobalArgs, io: &mut Io) -> CliResult {
    if let Some(code) = &args.explain {
        return super::explain(code, io);
    }
    let format = args.output;
    let (rendered_objects, diagnostics, errors) = rendered(args, global, io)?;
    match format {
        OutputFormat::Json => render_out::json_list(io.stdout, &rendered_objects)?,
        _ => render_out::yaml_stream(io.stdout, &rendered_objects)?,
    }
    human::render(io.stderr, &diagnostics, false, io.width)?;
    let n_err = diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .count();
    if !diagnostics.is_empty() {
        let n_warn = diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Warning)
            .count();
        writeln!(
            io.stderr,
            "{} rendered; {}, {}",
            crate::output::count(rendered_objects.len(), "object"),
            crate::output::count(n_err, "error"),
            crate::output::count(n_warn, "warning"),
        )?;
    }
    Ok(if errors { EXIT_FINDINGS } else { EXIT_OK })
}

/// The objects `render` prints (and `diff` compares), the findings of the translation, and
/// whether some service could not be rendered.
pub fn rendered(
    args: &RenderArgs,
    global: &GlobalArgs,
    io: &mut Io,
) -> Result<(Vec<Value>, Vec<crate::diag::Diagnostic>, bool), CliError> {
    if args.selector.is_some() && !args.live && args.from.is_empty() {
        return Err(CliError::Fatal(
            "-l/--selector picks among the ServiceSets of the cluster (--live) or of saved objects (--from)".into(),
        ));
    }
    let (main, mut all) = if args.live {
        live_inputs(args, global)?
    } else if !args.from.is_empty() {
        saved_inputs(args, global.cluster.namespace.as_deref(), io)?
    } else {
        let Some(file) = &args.file else {
            return Err(CliError::Fatal(
                "give a file with the ServiceSet, or --live to read it from the cluster".into(),
            ));
        };
        let main: Vec<Value> = input::load_objects(std::slice::from_ref(file), io)?
            .into_iter()
            .map(|o: LoadedObject| o.json)
            .collect();
        (main.clone(), main)
    };
    for paths in [&args.templates, &args.smp] {
        all.extend(input::load_objects(paths, io)?.into_iter().map(|o| o.json));
    }
    let of_kind = |objs: &[Value], kind: &str| -> Vec<Value> {
        objs.iter()
            .filter(|v| Object(v).kind() == kind)
            .cloned()
            .collect()
    };
    let mut sets = of_kind(&main, kinds::SERVICE_SET.kind);
    if sets.is_empty() {
        sets = derive_service_sets(&main, &all, &args.system_namespace, io)?;
    }
    if sets.is_empty() {
        let what = match &args.file {
            Some(f) if !args.live && args.from.is_empty() => f.display().to_string(),
            _ if !args.from.is_empty() => input::paths_text(&args.from),
            _ => "the cluster".into(),
        };
        return Err(CliError::Fatal(format!(
            "{what}: no ServiceSet, ClusterDeployment or MultiClusterService to render"
        )));
    }
    let smps: Vec<&Value> = all
        .iter()
        .filter(|o| Object(o).kind() == kinds::STATE_MANAGEMENT_PROVIDER.kind)
        .collect();
    let kcm_adapter = provider::kcm_adapter(smps.iter().map(|s| StateManagementProvider(s)));
    let mut renders: Vec<(&Value, provider::Translator, crate::core::render::Rendered)> =
        Vec::new();
    let mut diagnostics = Vec::new();
    let mut errors = false;
    // Each provider's inputs, gathered once.
    let mut inputs: HashMap<provider::Translator, Vec<Value>> = HashMap::new();
    for set in &sets {
        let ss = ServiceSet(set);
        let name = ss.provider_name();
        let smp = smps
            .iter()
            .find(|s| Object(s).name() == name)
            .map(|s| StateManagementProvider(s));
        let translator = match provider::translator(name, smp, kcm_adapter.as_ref()) {
            Ok(t) => t,
            Err(unknown) => {
                errors = true;
                diagnostics.push(
                    Diagnostic::error(
                        render_codes::PROVIDER_UNKNOWN,
                        format!("ServiceSet {}/{}: {unknown}", ss.namespace(), ss.name()),
                    )
                    .help("pass the provider's StateManagementProvider with --smp; nothing is rendered for this ServiceSet"),
                );
                continue;
            }
        };
        let inputs = inputs
            .entry(translator)
            .or_insert_with(|| translator.provider().inputs_of(&all));
        renders.push((set, translator, provider::render(translator, set, inputs)));
    }
    // Several ServiceSets of the Flux adapter on one release: the adapter writes only the
    // owner's object.
    let flux: Vec<(usize, (&Value, &crate::core::render::Rendered))> = renders
        .iter()
        .enumerate()
        .filter(|(_, (_, t, _))| *t == provider::Translator::Flux)
        .map(|(i, (set, _, r))| (i, (*set, r)))
        .collect();
    let pairs: Vec<(&Value, &crate::core::render::Rendered)> =
        flux.iter().map(|(_, p)| *p).collect();
    let mut left_out: Vec<(usize, usize)> = Vec::new();
    let mut conflict_diags = Vec::new();
    for c in ownership::conflicts(&pairs) {
        let (ri, (set, rendered)) = flux[c.set];
        let svc = &rendered.services[c.service].name;
        left_out.push((ri, c.object));
        conflict_diags.push((
            ri,
            Diagnostic::error(
                render_codes::RELEASE_CONFLICT,
                format!(
                    "ServiceSet {}/{}, service {svc:?}: {}; its {} is not written",
                    ServiceSet(set).namespace(),
                    ServiceSet(set).name(),
                    c.message(),
                    Object(&rendered.objects[c.object]).kind(),
                ),
            )
            .help(
                "remove the service from one ServiceSet, or give the one that should own it a higher spec.provider.config.priority",
            ),
        ));
    }
    let mut rendered_objects = Vec::new();
    for (ri, (_, _, r)) in renders.into_iter().enumerate() {
        errors |= r.has_errors();
        rendered_objects.extend(
            r.objects
                .into_iter()
                .enumerate()
                .filter(|(oi, _)| !left_out.contains(&(ri, *oi)))
                .map(|(_, o)| o),
        );
        diagnostics.extend(r.diagnostics);
        for (_, d) in conflict_diags.iter().filter(|(i, _)| *i == ri) {
            errors = true;
            diagnostics.push(d.clone());
        }
    }
    Ok((rendered_objects, diagnostics, errors))
}

/// The ServiceSets (one by name, or all of the namespace) and ServiceTemplates of the cluster:
/// (main objects, all objects).
pub fn live_inputs(
    args: &RenderArgs,
    global: &GlobalArgs,
) -> Result<(Vec<Value>, Vec<Value>), CliError> {
    let fatal = |e: crate::cluster::ClusterError| CliError::Fatal(e.message);
    let mut cluster = crate::cluster::Cluster::connect(&global.cluster).map_err(fatal)?;
    cluster.discover().map_err(fatal)?;
    let namespace = cluster.default_namespace.clone();
    let kind = |k: &str| {
        cluster.resource(kinds::KCM_GROUP, k).ok_or_else(|| {
            CliError::Fatal(format!(
                "the cluster at {} serves no {k}: is k0rdent (kcm) installed?",
                cluster.server
            ))
        })
    };
    let (ss_ar, ss_caps) = kind(kinds::SERVICE_SET.kind)?;
    let (t_ar, t_caps) = kind(kinds::SERVICE_TEMPLATE.kind)?;
    let sets = match &args.file {
        Some(name) => {
            let name = service_set_name(&name.to_string_lossy())?;
            match cluster
                .get(&ss_ar, &ss_caps, &namespace, &name)
                .map_err(fatal)?
            {
                Some(s) => vec![s],
                None => {
                    return Err(CliError::Fatal(format!(
                        "ServiceSet {namespace}/{name} not found"
                    )));
                }
            }
        }
        None => cluster
            .list_selected(
                &ss_ar,
                &ss_caps,
                Some(&namespace),
                args.selector.as_ref().map(|s| s.text.as_str()),
            )
            .map_err(fatal)?,
    };
    let templates = cluster
        .list(&t_ar, &t_caps, Some(&namespace))
        .map_err(fatal)?;
    let mut all = sets.clone();
    all.extend(templates);
    // What kcm's Sveltos adapter reads besides templates, and the providers (to pick the
    // translation): one list per kind the cluster serves.
    let mut inputs: Vec<&kinds::Kind> = Vec::new();
    for k in provider::PROVIDERS.iter().flat_map(|p| p.inputs) {
        if k.kind != kinds::SERVICE_TEMPLATE.kind && !inputs.contains(k) {
            inputs.push(k);
        }
    }
    for kind in inputs {
        if let Some((ar, caps)) = cluster.resource(kind.group, kind.kind) {
            all.extend(cluster.list(&ar, &caps, Some(&namespace)).map_err(fatal)?);
        }
    }
    if let Some((ar, caps)) = cluster.resource(
        kinds::STATE_MANAGEMENT_PROVIDER.group,
        kinds::STATE_MANAGEMENT_PROVIDER.kind,
    ) {
        all.extend(cluster.list(&ar, &caps, None).map_err(fatal)?);
    }
    Ok((sets, all))
}

/// The ServiceSets to render among saved objects (the one named, in `namespace` when given,
/// else in the one namespace that holds it; none named: all of `namespace`, or all, those the
/// selector matches) and every saved object, which the render reads as it reads the cluster.
fn saved_inputs(
    args: &RenderArgs,
    namespace: Option<&str>,
    io: &mut Io,
) -> Result<(Vec<Value>, Vec<Value>), CliError> {
    let all = input::load_dump(&args.from, io)?;
    let in_namespace = |o: &Value| namespace.is_none_or(|n| Object(o).namespace() == n);
    let mut sets: Vec<Value> = all
        .iter()
        .filter(|o| Object(o).kind() == kinds::SERVICE_SET.kind && in_namespace(o))
        .cloned()
        .collect();
    match &args.file {
        Some(name) => {
            let name = service_set_name(&name.to_string_lossy())?;
            sets.retain(|s| Object(s).name() == name);
            let one = input::the_one_saved(
                sets,
                &format!("ServiceSet {name}"),
                namespace,
                "the saved objects",
            )?;
            sets = vec![one];
        }
        None => {
            if let Some(s) = &args.selector {
                sets.retain(|o| s.selector.matches_json(Object(o).labels()));
            }
        }
    }
    Ok((sets, all))
}

/// A ServiceSet named on the command line: `NAME` or `servicesets/NAME` (`serviceset/NAME`).
fn service_set_name(arg: &str) -> Result<String, CliError> {
    let Some((kind, name)) = arg.split_once('/') else {
        return Ok(arg.to_string());
    };
    let (resource, _, group) = kinds::split_resource_name(kind);
    match kinds::by_resource_name(resource, group) {
        Some(k) if k == &kinds::SERVICE_SET && !name.is_empty() => Ok(name.to_string()),
        _ => Err(CliError::Fatal(format!(
            "{arg:?}: render --live and --from take a ServiceSet: NAME or servicesets/NAME"
        ))),
    }
}

/// The ServiceSets kcm would create for the ClusterDeployments and MultiClusterServices of the
/// main file; says on stderr which ServiceSet each is.
fn derive_service_sets(
    main: &[Value],
    all: &[Value],
    system_namespace: &str,
    io: &mut Io,
) -> Result<Vec<Value>, CliError> {
    let derived = derive::service_sets(main, all, system_namespace)
        .map_err(|e| CliError::Fatal(e.to_string()))?;
    let mut sets = Vec::with_capacity(derived.len());
    for d in derived {
        writeln!(io.stderr, "{}", d.explanation)?;
        sets.push(d.service_set);
    }
    Ok(sets)
}

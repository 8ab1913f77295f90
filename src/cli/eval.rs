//! `kubectl ksm eval RULE -f FILE`: one rule against every object of a file.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use super::input;
use super::{CliError, CliResult, EXIT_FINDINGS, EXIT_OK, GlobalArgs, Io, OutputFormat, formats};
use serde_json::Value;

use crate::api::meta::Object;
use crate::cluster::Cluster;
use crate::core::cel::{Environment, Limits};
use crate::core::objects::ObjectId;
use crate::core::readiness::{Explain, Rule};
use crate::output::eval as render;

#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  kubectl ksm eval 'has(self.status.readyReplicas) && self.status.readyReplicas == self.spec.replicas' -f deploy.yaml
  kubectl get deploy -n flux-system -o yaml | kubectl ksm eval --rule-file rule.cel -f -
  kubectl ksm eval 'self.status.phase == \"Running\"' -f pods.yaml -o json
  kubectl ksm eval 'has(self.status.readyReplicas)' deploy/helm-controller -n flux-system
  kubectl ksm eval 'has(self.status)' hr/dev-cluster-ingress-nginx -n kcm-system --as system:serviceaccount:kcm-system:ksm-flux-sa
  kubectl ksm eval 'has(self.status)' hr/dev-cluster-ingress-nginx -n kcm-system --from bundle.yaml
  kubectl ksm eval --env health 'obj.status.phase == \"Running\"' --message '\"phase \" + obj.status.phase' -f pods.yaml

Exit codes: 0 every result true, 1 a result false or failed, 2 bad usage or unreadable input.")]
pub struct EvalArgs {
    /// The CEL rule (readiness: standard library, `self` is the object; health: `obj` is the
    /// object, with the string extension); with --rule-file, the only positional argument is
    /// KIND/NAME
    #[arg(value_name = "RULE")]
    pub rule: Option<String>,
    /// Read the rule from a file (`-` for stdin)
    #[arg(long, value_name = "PATH")]
    pub rule_file: Option<PathBuf>,
    /// A live object to evaluate against: KIND/NAME as kubectl takes it (deploy/x,
    /// deployments/x, hr/x, helmreleases.helm.toolkit.fluxcd.io/x)
    #[arg(value_name = "KIND/NAME")]
    pub target: Option<String>,
    /// Read KIND/NAME from saved objects instead of the cluster: files or directories of
    /// `kubectl get ... -o yaml` output or `doctor --save` bundles
    #[arg(long = "from", value_name = "PATH", num_args = 1.., conflicts_with = "file")]
    pub from: Vec<PathBuf>,
    /// Objects to evaluate against: YAML or JSON, multi-document, `kind: List`, or `-` for stdin
    #[arg(short = 'f', long = "filename", value_name = "FILE")]
    pub file: Option<PathBuf>,
    /// kcm's CEL environment: `readiness` (StateManagementProvider rules: `self`, programs
    /// built with OptOptimize) or `health` (the Sveltos adapter's health rules: `obj`, the
    /// string extension, programs built without options)
    #[arg(long, value_enum, default_value_t = EnvArg::Readiness)]
    pub env: EnvArg,
    /// With --env health: the rule's `message` expression, shown for each unhealthy object
    /// (empty when it fails or is not a string, as kcm's verifier does)
    #[arg(long, value_name = "EXPR")]
    pub message: Option<String>,
    #[command(flatten)]
    pub budget: BudgetArgs,
    /// Output format
    #[arg(short = 'o', long = "output", value_name = "FORMAT", default_value = "human", value_parser = formats(FORMATS))]
    pub output: OutputFormat,
}

/// The CEL environment of `eval`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum EnvArg {
    /// StateManagementProvider readiness rules
    Readiness,
    /// Service health rules (the Sveltos adapter's verifier)
    Health,
}

impl EnvArg {
    fn env(self) -> Environment {
        match self {
            EnvArg::Readiness => Environment::Readiness,
            EnvArg::Health => Environment::Health,
        }
    }
}

/// The formats of `eval -o`.
pub const FORMATS: &[OutputFormat] = &[OutputFormat::Human, OutputFormat::Json];

/// `KIND/NAME` split, or an error saying what was expected.
fn kind_and_name(target: &str) -> Result<(&str, &str), CliError> {
    target
        .split_once('/')
        .filter(|(k, n)| !k.is_empty() && !n.is_empty() && !n.contains('/'))
        .ok_or_else(|| {
            CliError::Fatal(format!(
                "{target:?}: expected KIND/NAME, e.g. deployment/flux-adapter"
            ))
        })
}

/// The object `KIND/NAME` among saved objects, in `namespace` when one is given (else in the
/// one namespace that holds it). The kind is taken as kubectl takes it; a kind the tool does
/// not know matches objects whose kind is the same word in any case, or its plural with `s`.
fn saved_object(
    from: &[PathBuf],
    namespace: Option<&str>,
    target: &str,
    io: &mut Io,
) -> Result<Value, CliError> {
    let (kind, name) = kind_and_name(target)?;
    let (resource, _, group) = crate::api::kinds::split_resource_name(kind);
    let known = crate::api::kinds::by_resource_name(resource, group);
    let lower = resource.to_ascii_lowercase();
    let is_kind = |o: &Object| match known {
        Some(k) => k.is_any_version(o.api_version(), o.kind()),
        None => {
            let k = o.kind().to_ascii_lowercase();
            (k == lower || format!("{k}s") == lower)
                && group.is_none_or(|g| g == crate::api::kinds::group_of(o.api_version()))
        }
    };
    let found: Vec<Value> = input::load_dump(from, io)?
        .into_iter()
        .filter(|o| {
            let o = Object(o);
            o.name() == name && is_kind(&o) && namespace.is_none_or(|n| o.namespace() == n)
        })
        .collect();
    input::the_one_saved(found, target, namespace, &input::paths_text(from))
}

/// Gets the live object KIND/NAME.
fn live_object(global: &GlobalArgs, target: &str) -> Result<Value, CliError> {
    let (kind, name) = kind_and_name(target)?;
    let mut cluster = Cluster::connect(&global.cluster)?;
    cluster.discover_all()?;
    let Some((ar, caps)) = cluster.resolve(kind) else {
        // kubectl names the resource without its version and group.
        let (resource, ..) = crate::api::kinds::split_resource_name(kind);
        return Err(CliError::Fatal(format!(
            "the server doesn't have a resource type {resource:?} (kubectl api-resources lists them)"
        )));
    };
    let namespace = cluster.default_namespace.clone();
    match cluster
        .get(&ar, &caps, &namespace, name)
        .map_err(|e| CliError::Fatal(e.message))?
    {
        Some(o) => Ok(o),
        None => Err(CliError::Fatal(match caps.scope {
            kube::discovery::Scope::Namespaced => {
                format!("{}/{name} not found in namespace {namespace}", ar.kind)
            }
            kube::discovery::Scope::Cluster => format!("{}/{name} not found", ar.kind),
        })),
    }
}

/// The evaluation bound every subcommand that evaluates CEL accepts.
#[derive(Debug, Args, Clone)]
pub struct BudgetArgs {
    /// Cost budget of one evaluation (CEL cost units; the default bounds an evaluation well under 1 s)
    #[arg(long, value_name = "UNITS", default_value_t = Limits::default().max_cost)]
    pub cost_limit: u64,
    /// Memory budget of one evaluation (bytes the values it builds may take in all)
    #[arg(long, value_name = "BYTES", default_value_t = Limits::default().max_memory)]
    pub memory_limit: u64,
}

impl BudgetArgs {
    pub fn limits(&self) -> Limits {
        Limits {
            max_cost: self.cost_limit,
            max_memory: self.memory_limit,
            ..Limits::default()
        }
    }
}

pub fn run(args: &EvalArgs, global: &GlobalArgs, io: &mut Io) -> CliResult {
    let format = args.output;
    if args
        .rule_file
        .as_deref()
        .is_some_and(|p| p.as_os_str() == "-")
        && args.file.as_deref().is_some_and(|f| f.as_os_str() == "-")
    {
        return Err(CliError::Fatal(
            "--rule-file and -f cannot both read stdin".into(),
        ));
    }
    // With --rule-file, the one positional argument clap reads as the rule is the object.
    let (rule, target) = match (&args.rule_file, &args.rule, &args.target) {
        (Some(_), Some(_), Some(_)) => {
            return Err(CliError::Fatal(
                "the rule is given twice: as RULE and with --rule-file".into(),
            ));
        }
        (Some(_), Some(t), None) => (None, Some(t)),
        (None, None, _) => {
            return Err(CliError::Fatal(
                "give the rule: eval RULE ..., or --rule-file PATH".into(),
            ));
        }
        (_, r, t) => (r.as_ref(), t.as_ref()),
    };
    match (&args.file, target) {
        (Some(_), Some(t)) => {
            return Err(CliError::Fatal(format!(
                "{t}: evaluate against objects of a file (-f) or one object by KIND/NAME, not both"
            )));
        }
        (None, None) => {
            return Err(CliError::Fatal(
                "give the object: KIND/NAME (live, or with --from saved), or -f FILE".into(),
            ));
        }
        _ => {}
    }
    if !args.from.is_empty() && target.is_none() {
        return Err(CliError::Fatal(
            "--from reads one object by KIND/NAME: give it".into(),
        ));
    }
    let rule_text = match (rule, &args.rule_file) {
        (Some(r), _) => r.clone(),
        (None, Some(path)) => {
            let src = input::read_source(path, io.stdin)?;
            // A trailing newline of a rule file is not part of the rule.
            src.text()
                .strip_suffix('\n')
                .unwrap_or(src.text())
                .to_string()
        }
        (None, None) => return Err(CliError::Fatal("give the rule".into())),
    };
    let objects: Vec<(ObjectId, Value)> = match (&args.file, target) {
        (Some(file), _) => {
            let objects = input::load_objects(std::slice::from_ref(file), io)?;
            if objects.is_empty() {
                return Err(CliError::Fatal(format!(
                    "{}: no objects to evaluate",
                    file.display()
                )));
            }
            objects.into_iter().map(|o| (o.id(), o.json)).collect()
        }
        (None, Some(target)) if !args.from.is_empty() => {
            let o = saved_object(&args.from, global.cluster.namespace.as_deref(), target, io)?;
            vec![(ObjectId::of(&o), o)]
        }
        (None, Some(target)) => {
            let o = live_object(global, target)?;
            vec![(ObjectId::of(&o), o)]
        }
        (None, None) => return Err(CliError::Fatal("give the object".into())),
    };
    if args.message.is_some() && args.env != EnvArg::Health {
        return Err(CliError::Fatal(
            "--message is the message expression of a health rule: use it with --env health".into(),
        ));
    }
    let limits = args.budget.limits();
    let rule = Rule::in_env(&rule_text, &limits, args.env.env());
    let message = match &args.message {
        Some(m) => {
            let rule = Rule::in_env(m, &limits, Environment::Health);
            if let Some(errors) = rule.compile_errors() {
                // kcm refuses to load a health rule whose message does not compile
                let text = errors
                    .iter()
                    .map(|e| e.message.as_str())
                    .collect::<Vec<_>>()
                    .join("; ");
                return Err(CliError::Fatal(format!("message: compile: {text}")));
            }
            Some(rule)
        }
        None => None,
    };
    let explain = if global.verbosity > 0 {
        Explain::Always
    } else {
        Explain::WhenNotTrue
    };
    let results: Vec<render::Result> = objects
        .iter()
        .map(|(id, json)| {
            let outcome = rule.evaluate(json, explain);
            let message = message
                .as_ref()
                .filter(|_| outcome.result == Some(false))
                .map(|m| m.message_for(json));
            render::Result {
                object: id.clone(),
                outcome,
                message,
            }
        })
        .collect();
    match format {
        OutputFormat::Json => render::json(io.stdout, &rule_text, &results)?,
        _ => render::human(io.stdout, &rule_text, args.env.env(), &results, io.color)?,
    }
    Ok(if results.iter().all(|r| r.outcome.result == Some(true)) {
        EXIT_OK
    } else {
        EXIT_FINDINGS
    })
}

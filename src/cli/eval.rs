//! `kubectl ksm eval RULE -f FILE`: one rule against every object of a file.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use super::input;
use super::{CliError, CliResult, EXIT_FINDINGS, EXIT_OK, GlobalArgs, Io, OutputFormat, formats};
use serde_json::Value;

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
  kubectl ksm eval --env health 'obj.status.phase == \"Running\"' --message '\"phase \" + obj.status.phase' -f pods.yaml

Exit codes: 0 every result true, 1 a result false or failed, 2 bad usage or unreadable input.")]
pub struct EvalArgs {
    /// The CEL rule (readiness: standard library, `self` is the object; health: `obj` is the
    /// object, with the string extension)
    #[arg(
        value_name = "RULE",
        required_unless_present = "rule_file",
        conflicts_with = "rule_file"
    )]
    pub rule: Option<String>,
    /// Read the rule from a file (`-` for stdin)
    #[arg(long, value_name = "PATH")]
    pub rule_file: Option<PathBuf>,
    /// A live object to evaluate against: KIND/NAME as kubectl takes it (deploy/x,
    /// deployments/x, hr/x, helmreleases.helm.toolkit.fluxcd.io/x)
    #[arg(value_name = "KIND/NAME", conflicts_with = "file")]
    pub target: Option<String>,
    /// Objects to evaluate against: YAML or JSON, multi-document, `kind: List`, or `-` for stdin
    #[arg(
        short = 'f',
        long = "filename",
        value_name = "FILE",
        required_unless_present = "target"
    )]
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

/// Gets the live object KIND/NAME.
fn live_object(global: &GlobalArgs, target: &str) -> Result<Value, CliError> {
    let Some((kind, name)) = target
        .split_once('/')
        .filter(|(k, n)| !k.is_empty() && !n.is_empty())
    else {
        return Err(CliError::Fatal(format!(
            "{target:?}: expected KIND/NAME, e.g. deployment/flux-adapter"
        )));
    };
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
    let rule_text = match (&args.rule, &args.rule_file) {
        (Some(r), _) => r.clone(),
        (None, Some(path)) => {
            let src = input::read_source(path, io.stdin)?;
            // A trailing newline of a rule file is not part of the rule.
            src.text()
                .strip_suffix('\n')
                .unwrap_or(src.text())
                .to_string()
        }
        (None, None) => unreachable!("clap requires RULE or --rule-file"),
    };
    let objects: Vec<(ObjectId, Value)> = match (&args.file, &args.target) {
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
        (None, Some(target)) => {
            let o = live_object(global, target)?;
            vec![(ObjectId::of(&o), o)]
        }
        (None, None) => unreachable!("clap requires -f or KIND/NAME"),
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

//! `kubectl ksm tree`: the fleet as a tree, live or from a saved dump (the objects doctor
//! reads, drawn from the MultiClusterServices down to each service).

use clap::Args;

use super::doctor::{ObjectsArgs, snapshot};
use super::{CliError, CliResult, EXIT_OK, GlobalArgs, Io, OutputFormat, formats};
use crate::api::kinds;
use crate::core::tree::{self, Focus};
use crate::output::tree as render;

#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  kubectl ksm tree -A
  kubectl ksm tree multiclusterservice/ingress
  kubectl ksm tree cld/prod-1 -n kcm-system
  kubectl ksm tree serviceset/prod-1-3f2a9c1e -n kcm-system -o yaml
  kubectl ksm tree --from bundle.yaml

For each MultiClusterService, the clusters its selector matches (with kcm's status for
each) and the ClusterDeployments it does not match with the requirement that decides; then
each cluster with its ServiceSets and their services: state and age, dependsOn, and the
ServiceSet that owns a release two of them claim. Live, it reads what doctor reads (get and
list only). Exit codes: 0 shown, 2 could not run (or the named object is not there).")]
pub struct TreeArgs {
    /// What to root the tree at: clusterdeployment/NAME, multiclusterservice/NAME or
    /// serviceset/NAME (kubectl's resource names and short names: cld, mcs); all when none
    #[arg(value_name = "KIND/NAME", value_parser = focus_arg)]
    pub focus: Option<Focus>,
    #[command(flatten)]
    pub objects: ObjectsArgs,
    /// Output format
    #[arg(short = 'o', long = "output", value_name = "FORMAT", default_value = "human", value_parser = formats(FORMATS))]
    pub output: OutputFormat,
}

/// The formats of `tree -o`.
pub const FORMATS: &[OutputFormat] = &[OutputFormat::Human, OutputFormat::Json, OutputFormat::Yaml];

/// `KIND/NAME` as kubectl takes it, of the three kinds a tree can be rooted at.
pub(super) fn focus_arg(text: &str) -> Result<Focus, String> {
    let Some((kind, name)) = text.split_once('/') else {
        return Err(format!(
            "{text:?}: give KIND/NAME: clusterdeployment/NAME, multiclusterservice/NAME or serviceset/NAME"
        ));
    };
    if name.is_empty() || name.contains('/') {
        return Err(format!(
            "{text:?}: the name after {kind}/ is missing or has a '/'"
        ));
    }
    let (resource, _, group) = kinds::split_resource_name(kind);
    let focus = match kinds::by_resource_name(resource, group) {
        Some(k) if *k == kinds::CLUSTER_DEPLOYMENT => Focus::ClusterDeployment(name.into()),
        Some(k) if *k == kinds::MULTI_CLUSTER_SERVICE => Focus::MultiClusterService(name.into()),
        Some(k) if *k == kinds::SERVICE_SET => Focus::ServiceSet(name.into()),
        _ => {
            return Err(format!(
                "{kind:?}: a tree is rooted at a clusterdeployment (cld), multiclusterservice (mcs) or serviceset"
            ));
        }
    };
    Ok(focus)
}

pub fn run(args: &TreeArgs, global: &GlobalArgs, io: &mut Io) -> CliResult {
    let snap = snapshot(&args.objects.from, args.objects.all_namespaces, global, io)?;
    // A MultiClusterService is cluster-scoped: naming one looks at its clusters everywhere.
    let namespace = match args.focus {
        Some(Focus::MultiClusterService(_)) => None,
        _ => snap.namespace.clone(),
    };
    let now = snap.judged_at(args.objects.now);
    let report = snap.report(now, namespace.clone(), None)?;
    let t = tree::tree(
        &snap.objects,
        &report,
        &tree::Options {
            now,
            namespace: namespace.clone(),
            focus: args.focus.clone(),
        },
    );
    if let Some(focus) = &args.focus
        && !tree::found(&t, focus)
    {
        let where_ = match (&namespace, focus) {
            (_, Focus::MultiClusterService(_)) | (None, _) => String::new(),
            (Some(ns), _) => format!(" in namespace {ns}"),
        };
        return Err(CliError::Fatal(format!(
            "{} not found{where_}",
            focus_words(focus)
        )));
    }
    match args.output {
        OutputFormat::Json => render::json(io.stdout, &t)?,
        OutputFormat::Yaml => render::yaml(io.stdout, &t)?,
        _ => render::human(io.stdout, &t, io.color)?,
    }
    super::leave_to_exit((snap, report, t));
    Ok(EXIT_OK)
}

pub(super) fn focus_words(focus: &Focus) -> String {
    match focus {
        Focus::ClusterDeployment(n) => format!("ClusterDeployment {n:?}"),
        Focus::MultiClusterService(n) => format!("MultiClusterService {n:?}"),
        Focus::ServiceSet(n) => format!("ServiceSet {n:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn focus_takes_kubectls_names_of_the_three_kinds() {
        assert_eq!(
            focus_arg("cld/prod-1"),
            Ok(Focus::ClusterDeployment("prod-1".into()))
        );
        assert_eq!(
            focus_arg("multiclusterservices/ingress"),
            Ok(Focus::MultiClusterService("ingress".into()))
        );
        assert_eq!(focus_arg("ServiceSet/a"), Ok(Focus::ServiceSet("a".into())));
        assert!(focus_arg("hr/a").unwrap_err().contains("rooted at"));
        assert!(focus_arg("prod-1").unwrap_err().contains("KIND/NAME"));
        assert!(focus_arg("cd/").is_err());
    }
}

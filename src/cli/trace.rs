//! `kubectl ksm trace`: who deployed this, from which template, and why is it in this state.
//! From a Flux object, a Sveltos ClusterSummary or Profile, a ServiceSet, or a release on a
//! cluster, up to the ServiceTemplate; live or from a saved dump.

use clap::Args;

use super::doctor::{ObjectsArgs, snapshot};
use super::{CliError, CliResult, EXIT_OK, GlobalArgs, Io, OutputFormat, formats};
use crate::api::kinds;
use crate::core::trace::{self, ClusterFilter, Start};
use crate::output::trace as render;

#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  kubectl ksm trace helmrelease/dev-cluster-ingress-nginx -n kcm-system
  kubectl ksm trace clustersummary/p--dev-cluster-capi-dev-cluster -n kcm-system --release ingress-nginx/ingress-nginx
  kubectl ksm trace --release ingress-nginx/ingress-nginx --cluster dev-cluster -A
  kubectl ksm trace serviceset/dev-cluster -n kcm-system -o yaml
  kubectl ksm trace kustomization/dev-cluster-podinfo --from bundle.yaml

For each service the start leads to: the provider's objects (the Flux object and its
source, or the Sveltos ClusterSummary and Profile), the ServiceSet and the service's state,
the MultiClusterService or ClusterDeployment it comes from, and the ServiceTemplate (type,
version, validity, chain and source); then doctor's verdict with its hint. Live, it reads
what doctor reads (get and list only). Exit codes: 0 traced, 2 could not run (or the start
is not there, or leads to no service).")]
pub struct TraceArgs {
    /// Where to start: helmrelease/NAME, kustomization/NAME, clustersummary/NAME,
    /// profile/NAME, clusterprofile/NAME or serviceset/NAME (kubectl's resource names and
    /// short names: hr, ks); every ServiceSet when only --release is given
    #[arg(value_name = "KIND/NAME", value_parser = start_arg, required_unless_present = "release")]
    pub start: Option<Start>,
    /// Only the service deployed as this release: [NAMESPACE/]NAME, a Helm release's
    /// namespace and name on the cluster (for Kustomize and Resources services, the
    /// service's)
    #[arg(long, value_name = "[NAMESPACE/]NAME", value_parser = release_arg)]
    pub release: Option<(Option<String>, String)>,
    /// Only services deployed to this cluster: a ClusterDeployment ([NAMESPACE/]NAME), or
    /// `management` for self-management
    #[arg(long, value_name = "CLUSTER", value_parser = cluster_arg)]
    pub cluster: Option<ClusterFilter>,
    #[command(flatten)]
    pub objects: ObjectsArgs,
    /// Output format
    #[arg(short = 'o', long = "output", value_name = "FORMAT", default_value = "human", value_parser = formats(FORMATS))]
    pub output: OutputFormat,
}

/// The formats of `trace -o`.
pub const FORMATS: &[OutputFormat] = &[OutputFormat::Human, OutputFormat::Json, OutputFormat::Yaml];

/// `KIND/NAME` as kubectl takes it, of the kinds a trace can start from.
fn start_arg(text: &str) -> Result<Start, String> {
    const KINDS: &str = "helmrelease (hr), kustomization (ks), clustersummary, profile, clusterprofile or serviceset";
    let Some((kind, name)) = text.split_once('/') else {
        return Err(format!("{text:?}: give KIND/NAME, KIND one of {KINDS}"));
    };
    if name.is_empty() || name.contains('/') {
        return Err(format!(
            "{text:?}: the name after {kind}/ is missing or has a '/'"
        ));
    }
    let (resource, _, group) = kinds::split_resource_name(kind);
    let name = name.to_string();
    let start = match kinds::by_resource_name(resource, group) {
        Some(k) if *k == kinds::HELM_RELEASE || *k == kinds::KUSTOMIZATION => {
            Start::Flux { kind: k, name }
        }
        Some(k) if *k == kinds::CLUSTER_SUMMARY => Start::ClusterSummary(name),
        Some(k) if *k == kinds::PROFILE => Start::Profile {
            cluster_scoped: false,
            name,
        },
        Some(k) if *k == kinds::CLUSTER_PROFILE => Start::Profile {
            cluster_scoped: true,
            name,
        },
        Some(k) if *k == kinds::SERVICE_SET => Start::ServiceSet(name),
        _ => return Err(format!("{kind:?}: a trace starts from a {KINDS}")),
    };
    Ok(start)
}

fn release_arg(text: &str) -> Result<(Option<String>, String), String> {
    match text.split_once('/') {
        None if !text.is_empty() => Ok((None, text.to_string())),
        Some((ns, name)) if !ns.is_empty() && !name.is_empty() && !name.contains('/') => {
            Ok((Some(ns.to_string()), name.to_string()))
        }
        _ => Err(format!("{text:?}: give [NAMESPACE/]NAME")),
    }
}

fn cluster_arg(text: &str) -> Result<ClusterFilter, String> {
    // kubectl's KIND/NAME of a ClusterDeployment is taken too.
    let text = match text.split_once('/') {
        Some((kind, rest)) if is_cluster_deployment(kind) => rest,
        _ => text,
    };
    if text == "management" {
        return Ok(ClusterFilter::Management);
    }
    match text.split_once('/') {
        None if !text.is_empty() => Ok(ClusterFilter::Deployment {
            namespace: None,
            name: text.to_string(),
        }),
        Some((ns, name)) if !ns.is_empty() && !name.is_empty() && !name.contains('/') => {
            Ok(ClusterFilter::Deployment {
                namespace: Some(ns.to_string()),
                name: name.to_string(),
            })
        }
        _ => Err(format!(
            "{text:?}: give a ClusterDeployment as [NAMESPACE/]NAME, or management"
        )),
    }
}

fn is_cluster_deployment(kind: &str) -> bool {
    let (resource, _, group) = kinds::split_resource_name(kind);
    kinds::by_resource_name(resource, group).is_some_and(|k| *k == kinds::CLUSTER_DEPLOYMENT)
}

pub fn run(args: &TraceArgs, global: &GlobalArgs, io: &mut Io) -> CliResult {
    let snap = snapshot(&args.objects.from, args.objects.all_namespaces, global, io)?;
    let start = args.start.clone().unwrap_or(Start::Everything);
    // A ClusterProfile is cluster-scoped: naming one looks at its ServiceSet everywhere.
    let namespace = match start {
        Start::Profile {
            cluster_scoped: true,
            ..
        } => None,
        _ => snap.namespace.clone(),
    };
    let now = snap.judged_at(args.objects.now);
    let service_set = match &start {
        Start::ServiceSet(name) => Some(name.clone()),
        _ => None,
    };
    let report = snap.report(now, None, service_set)?;
    let t = trace::trace(
        &snap.objects,
        &report,
        &start,
        &trace::Options {
            now,
            namespace,
            release: args.release.clone(),
            cluster: args.cluster.clone(),
        },
    )
    .map_err(CliError::Fatal)?;
    match args.output {
        OutputFormat::Json => render::json(io.stdout, &t)?,
        OutputFormat::Yaml => render::yaml(io.stdout, &t)?,
        _ => render::human(io.stdout, &t, io.color)?,
    }
    super::leave_to_exit((snap, report, t));
    Ok(EXIT_OK)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_takes_kubectls_names_of_the_kinds_a_trace_starts_from() {
        assert_eq!(
            start_arg("hr/a"),
            Ok(Start::Flux {
                kind: &kinds::HELM_RELEASE,
                name: "a".into()
            })
        );
        assert_eq!(
            start_arg("kustomizations.kustomize.toolkit.fluxcd.io/a"),
            Ok(Start::Flux {
                kind: &kinds::KUSTOMIZATION,
                name: "a".into()
            })
        );
        assert_eq!(
            start_arg("clustersummary/p--x"),
            Ok(Start::ClusterSummary("p--x".into()))
        );
        assert_eq!(
            start_arg("clusterprofile/x"),
            Ok(Start::Profile {
                cluster_scoped: true,
                name: "x".into()
            })
        );
        assert_eq!(start_arg("serviceset/x"), Ok(Start::ServiceSet("x".into())));
        assert!(start_arg("cld/x").unwrap_err().contains("starts from"));
        assert!(start_arg("x").unwrap_err().contains("KIND/NAME"));
        assert!(start_arg("hr/").is_err());
    }

    #[test]
    fn release_and_cluster_arguments() {
        assert_eq!(release_arg("a"), Ok((None, "a".into())));
        assert_eq!(release_arg("n/a"), Ok((Some("n".into()), "a".into())));
        assert!(release_arg("n/").is_err() && release_arg("").is_err());
        assert_eq!(cluster_arg("management"), Ok(ClusterFilter::Management));
        assert_eq!(
            cluster_arg("cld/kcm-system/dev"),
            Ok(ClusterFilter::Deployment {
                namespace: Some("kcm-system".into()),
                name: "dev".into()
            })
        );
        assert_eq!(
            cluster_arg("dev"),
            Ok(ClusterFilter::Deployment {
                namespace: None,
                name: "dev".into()
            })
        );
        assert!(cluster_arg("a/b/c").is_err());
    }
}

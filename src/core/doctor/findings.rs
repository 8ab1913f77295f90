//! What each finding of doctor says: one constructor per code of [`super::codes`], in code
//! order, composing the message and the runnable next step from typed arguments. The chains
//! decide which finding a link gives and place it on the failing object
//! ([`Words::about`]); the words are here and nowhere else.

use std::time::Duration;

use serde_json::Value;

use super::{Finding, Severity, Unread, codes};
use crate::api::flux;
use crate::api::meta::{Condition, Object};
use crate::api::naming::{self, ANNOTATION_PAUSED};
use crate::api::sveltos::{self as sv, CapiCluster, ClusterRef, MAX_TIER, SveltosCluster};
use crate::api::{ObjectId, duration};
use crate::core::adapter::ownership::{Conflict, Target};
use crate::core::readiness::Evaluation;
use crate::core::state::ServiceState;

/// What a finding says, before it is placed on the failing object and its chain.
pub(super) struct Words {
    severity: Severity,
    code: &'static str,
    message: String,
    hint: String,
}

impl Words {
    /// The finding about `object`, reached through `chain`.
    pub(super) fn about(self, object: ObjectId, chain: Vec<String>) -> Finding {
        Finding {
            severity: self.severity,
            code: self.code,
            object,
            chain,
            message: self.message,
            hint: self.hint,
        }
    }
}

fn words(
    severity: Severity,
    code: &'static str,
    message: String,
    hint: impl Into<String>,
) -> Words {
    Words {
        severity,
        code,
        message,
        hint: hint.into(),
    }
}

/// A Flux object as the findings name it.
pub(super) struct FluxRef<'a> {
    /// `Kind/namespace/name`.
    pub display: String,
    pub kind: &'a str,
    pub namespace: &'a str,
    pub name: &'a str,
}

impl FluxRef<'_> {
    /// `flux get <kind> -n <namespace> <name>`.
    pub(super) fn get(&self) -> String {
        format!(
            "flux get {} -n {} {}",
            flux::cli_object_word(self.kind),
            self.namespace,
            self.name
        )
    }

    /// `kubectl <verb> <kind> -n <namespace> <name>`, the kind in lower case (flux's too).
    fn command(&self, tool: &str) -> String {
        format!(
            "{tool} {} -n {} {}",
            self.kind.to_lowercase(),
            self.namespace,
            self.name
        )
    }
}

/// KSM601: the ServiceSet names a provider with no StateManagementProvider.
pub(super) fn smp_missing(namespace: &str, name: &str, provider: &str) -> Words {
    words(
        Severity::Error,
        codes::SMP_MISSING,
        format!(
            "ServiceSet {namespace}/{name} names provider {provider:?}, but there is no StateManagementProvider {provider:?}: no adapter will deploy its services"
        ),
        "kubectl get statemanagementproviders  # then fix spec.provider.name or install the provider",
    )
}

/// KSM602: the provider is not ready; `failing` are its conditions that are not True, and
/// `evaluations` its rules re-evaluated now.
pub(super) fn smp_not_ready<'c>(
    name: &str,
    failing: impl Iterator<Item = Condition<'c>>,
    evaluations: &[Evaluation],
) -> Words {
    let failing: Vec<String> = failing
        .map(|c| {
            format!(
                "{}={} {}: {}",
                c.type_(),
                c.status(),
                c.reason(),
                c.message()
            )
        })
        .collect();
    let explained: Vec<String> = evaluations.iter().filter_map(explanation).collect();
    let mut message = format!("StateManagementProvider {name} is not ready");
    if failing.is_empty() {
        message.push_str(" (kcm has not written its conditions yet)");
    } else {
        message.push_str(&format!(": {}", failing.join("; ")));
    }
    if !explained.is_empty() {
        message.push_str(&format!(". Re-evaluated now: {}", explained.join("; ")));
    }
    words(
        Severity::Error,
        codes::SMP_NOT_READY,
        message,
        format!(
            "kubectl ksm check {name}  # or: kubectl get statemanagementprovider {name} -o yaml"
        ),
    )
}

/// A rule that is not true now, with its first clause that is not (None: it is true).
fn explanation(e: &Evaluation) -> Option<String> {
    let o = e.outcome.as_ref()?;
    (o.result != Some(true)).then(|| {
        let first = o
            .explanation
            .iter()
            .find(|c| c.value.as_deref() != Ok("true"));
        let why = match (&o.error, first) {
            (Some(err), _) => err.message.clone(),
            (None, _) if o.budget_exceeded.is_some() => o
                .budget_exceeded
                .as_ref()
                .map(|b| format!("no verdict: {}", b.message()))
                .unwrap_or_default(),
            (None, Some(c)) => {
                format!("{} is {}", c.text, c.value.clone().unwrap_or_else(|e| e))
            }
            (None, None) => "false".into(),
        };
        format!(
            "{} {}/{}: {why}",
            e.role, e.reference.kind, e.reference.name
        )
    })
}

/// KSM603: the provider is suspended.
pub(super) fn smp_suspended(name: &str) -> Words {
    words(
        Severity::Warning,
        codes::SMP_SUSPENDED,
        format!("StateManagementProvider {name} is suspended: adapters skip its ServiceSets"),
        format!(
            "kubectl patch statemanagementprovider {name} --type merge -p '{{\"spec\":{{\"suspend\":false}}}}'"
        ),
    )
}

/// KSM604: the ServiceSet's labels do not match the provider's selector (`selector` in words).
pub(super) fn selector_mismatch(
    namespace: &str,
    name: &str,
    provider: &str,
    selector: &str,
) -> Words {
    words(
        Severity::Error,
        codes::SELECTOR_MISMATCH,
        format!(
            "the labels of ServiceSet {namespace}/{name} do not match the selector of StateManagementProvider {provider} ({selector}): its adapter ignores this ServiceSet"
        ),
        format!(
            "kubectl get serviceset -n {namespace} {name} --show-labels; kubectl get statemanagementprovider {provider} -o jsonpath='{{.spec.selector}}'"
        ),
    )
}

/// Which pause a ServiceSet is under.
pub(super) enum Paused<'a> {
    /// Of the Flux adapter: its Flux objects are suspended.
    Flux,
    /// Of kcm's default provider: the ServiceSet's annotation, the Profile's, or both.
    Sveltos {
        profile: &'a str,
        set_paused: bool,
        profile_paused: bool,
    },
}

/// KSM605: the ServiceSet (or, for kcm's provider, its Profile) is paused.
pub(super) fn serviceset_paused(namespace: &str, name: &str, paused: Paused) -> Words {
    let message = match paused {
        Paused::Flux => format!(
            "ServiceSet {namespace}/{name} is paused ({ANNOTATION_PAUSED}): its Flux objects are suspended and nothing changes"
        ),
        Paused::Sveltos {
            profile,
            set_paused,
            profile_paused,
        } => {
            let why = match (set_paused, profile_paused) {
                (true, true) => format!(
                    "ServiceSet {namespace}/{name} is paused ({ANNOTATION_PAUSED}) and kcm annotated {profile} {}",
                    sv::ANNOTATION_PROFILE_PAUSED
                ),
                (true, false) => format!(
                    "ServiceSet {namespace}/{name} is paused ({ANNOTATION_PAUSED}); kcm adds {} to {profile} on its next reconcile",
                    sv::ANNOTATION_PROFILE_PAUSED
                ),
                _ => format!(
                    "{profile} carries {} but the ServiceSet is not paused: kcm removes it on its next reconcile",
                    sv::ANNOTATION_PROFILE_PAUSED
                ),
            };
            format!(
                "{why}: Sveltos skips the Profile, nothing is deployed or updated and the service states are frozen (a paused Profile shows nothing in its status)"
            )
        }
    };
    words(
        Severity::Warning,
        codes::SERVICESET_PAUSED,
        message,
        format!("kubectl annotate serviceset -n {namespace} {name} {ANNOTATION_PAUSED}-"),
    )
}

/// Why a service is Failed.
pub(super) enum Failed<'a> {
    /// The Flux adapter reports it Failed without creating its Flux object: a configuration
    /// error in its failureMessage.
    NotRendered { failure_message: &'a str },
    /// The Flux adapter reports it Failed and its Flux object failed too.
    Flux {
        failure_message: &'a str,
        flux: &'a FluxRef<'a>,
    },
    /// Sveltos could not install or upgrade its Helm release, or its feature failed;
    /// `non_retriable`: the feature is FailedNonRetriable (KSM625 then).
    Sveltos {
        message: &'a str,
        how: SveltosFailure,
        non_retriable: bool,
        summary_get: &'a str,
    },
}

/// How a Sveltos service failed.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum SveltosFailure {
    Install,
    Upgrade,
    Feature,
}

/// KSM606 (or KSM625 when Sveltos will not retry): the service is Failed.
pub(super) fn service_failed(
    label: &str,
    namespace: &str,
    service_set: &str,
    failed: Failed,
) -> Words {
    match failed {
        Failed::NotRendered { failure_message } => words(
            Severity::Error,
            codes::SERVICE_FAILED,
            format!(
                "{label} is Failed: {}",
                match failure_message {
                    "" => "(no failureMessage)",
                    m => m,
                }
            ),
            format!(
                "kubectl ksm render  # with the ServiceSet and its templates: kubectl get serviceset -n {namespace} {service_set} -o yaml"
            ),
        ),
        Failed::Flux {
            failure_message,
            flux,
        } => words(
            Severity::Error,
            codes::SERVICE_FAILED,
            format!("{label} is Failed: {failure_message}"),
            flux.get(),
        ),
        Failed::Sveltos {
            message,
            how,
            non_retriable,
            summary_get,
        } => {
            let mut m = format!("{label} is Failed: {message}");
            match how {
                SveltosFailure::Upgrade => m.push_str(" (an older version stays installed)"),
                SveltosFailure::Install | SveltosFailure::Feature => {}
            }
            if non_retriable {
                m.push_str(if how == SveltosFailure::Feature {
                    " (FailedNonRetriable: Sveltos will not retry)"
                } else {
                    "; the Helm feature is FailedNonRetriable: Sveltos will not retry until the Profile changes"
                });
            }
            let code = if non_retriable {
                codes::NON_RETRIABLE
            } else {
                codes::SERVICE_FAILED
            };
            words(Severity::Error, code, m, summary_get)
        }
    }
}

/// Why a service is stuck, or not followed further.
pub(super) enum Stuck<'a> {
    /// Flux: Pending or Provisioning longer than `--stuck-after` with no error found.
    Flux {
        state: ServiceState,
        age: Duration,
        stuck_after: Duration,
        reason: &'a str,
        message: &'a str,
        flux: &'a FluxRef<'a>,
    },
    /// Sveltos: the set-level links stopped the chain (`why`); info.
    NotFollowed { why: &'a str },
    /// Sveltos: the release is neither installed nor failed after `age`; `no_release`:
    /// the ClusterSummary has no release summary for it yet.
    NotInstalled {
        state: ServiceState,
        age: Duration,
        no_release: bool,
        summary: &'a str,
        release: (&'a str, &'a str),
    },
    /// Sveltos: the Helm feature is still Provisioning after `age`.
    HelmProvisioning { age: Duration, summary_get: &'a str },
    /// Sveltos: the Kustomize or Resources feature is still Provisioning after `age`.
    FeatureProvisioning { age: Duration, summary_get: &'a str },
}

/// KSM607: the service has been Pending or Provisioning too long (or, for kcm's provider, is
/// not followed past a set-level link that stopped).
pub(super) fn service_stuck(
    label: &str,
    namespace: &str,
    service_set: &str,
    stuck: Stuck,
) -> Words {
    match stuck {
        Stuck::Flux {
            state,
            age,
            stuck_after,
            reason,
            message,
            flux,
        } => words(
            Severity::Error,
            codes::SERVICE_STUCK,
            format!(
                "{label} has been {} for {} (longer than {}): {}",
                state.as_str(),
                duration::human(age),
                duration::human(stuck_after),
                if message.is_empty() {
                    "no message from Flux".to_string()
                } else {
                    format!("{reason}: {message}")
                }
            ),
            format!(
                "{}; kubectl get events -n {namespace} --field-selector involvedObject.name={}",
                flux.get(),
                flux.name
            ),
        ),
        Stuck::NotFollowed { why } => words(
            Severity::Info,
            codes::SERVICE_STUCK,
            format!("{label}: not followed further: {why}"),
            format!("kubectl get serviceset -n {namespace} {service_set} -o yaml"),
        ),
        Stuck::NotInstalled {
            state,
            age,
            no_release,
            summary,
            release: (rel_ns, rel_name),
        } => {
            let what = if no_release {
                format!("{summary} has no release summary for {rel_ns}/{rel_name} yet")
            } else {
                format!(
                    "Sveltos has neither installed release {rel_ns}/{rel_name} (no valuesHash) nor reported an error for it"
                )
            };
            words(
                Severity::Warning,
                codes::SERVICE_STUCK,
                format!(
                    "{label} has been {state} for {}: {what}",
                    duration::format_coarse(age)
                ),
                "kubectl logs -n projectsveltos deploy/addon-controller",
            )
        }
        Stuck::HelmProvisioning { age, summary_get } => words(
            Severity::Warning,
            codes::SERVICE_STUCK,
            format!(
                "{label} has been Provisioning for {}: Sveltos's Helm feature is still Provisioning",
                duration::format_coarse(age)
            ),
            summary_get,
        ),
        Stuck::FeatureProvisioning { age, summary_get } => words(
            Severity::Warning,
            codes::SERVICE_STUCK,
            format!(
                "{label} has been Provisioning for {}",
                duration::format_coarse(age)
            ),
            summary_get,
        ),
    }
}

/// KSM608: the ServiceSet status says `reported`, the Flux object says `observed`.
pub(super) fn status_disagrees(
    label: &str,
    reported: &str,
    flux: &FluxRef,
    observed: ServiceState,
    reason: &str,
) -> Words {
    words(
        Severity::Warning,
        codes::STATUS_DISAGREES,
        format!(
            "{label}: the ServiceSet status says {reported}, but {} says {}{}",
            flux.display,
            observed.as_str(),
            if reason.is_empty() {
                String::new()
            } else {
                format!(" ({reason})")
            }
        ),
        "kubectl logs -n <adapter namespace> deploy/<adapter>  # the adapter is not writing status",
    )
}

/// How much a missing Flux object matters.
pub(super) enum Absent {
    /// The provider above does not deploy the service: expected (info).
    Expected,
    /// The status says Deployed, or the service is stuck (error).
    Overdue,
    /// The adapter may not have created it yet (warning).
    NotYet,
}

/// KSM609: no Flux object for the service (`object`: the name it would have).
pub(super) fn flux_missing(
    label: &str,
    namespace: &str,
    service_set: &str,
    object: &str,
    reported: Option<&str>,
    absent: Absent,
) -> Words {
    let (severity, why) = match absent {
        Absent::Expected => (
            Severity::Info,
            " (expected: the provider above does not deploy it)",
        ),
        Absent::Overdue => (Severity::Error, ""),
        Absent::NotYet => (
            Severity::Warning,
            " (the adapter may not have created it yet)",
        ),
    };
    words(
        severity,
        codes::FLUX_MISSING,
        format!(
            "{label}: no Flux object (HelmRelease or Kustomization labelled for it, or named {object}){}{why}",
            match reported {
                Some(r) => format!(", yet the ServiceSet status says {r}"),
                None => String::new(),
            }
        ),
        format!(
            "kubectl get helmreleases,kustomizations -n {namespace} -l {}",
            naming::flux_objects_selector(service_set)
        ),
    )
}

/// KSM610: the Flux object is stalled.
pub(super) fn flux_stalled(label: &str, flux: &FluxRef, reason: &str, message: &str) -> Words {
    words(
        Severity::Error,
        codes::FLUX_STALLED,
        format!("{label}: {} is stalled ({reason}): {message}", flux.display),
        format!("{}; {}", flux.get(), flux.command("kubectl describe")),
    )
}

/// KSM611: the Flux object failed.
pub(super) fn flux_failing(label: &str, flux: &FluxRef, reason: &str, message: &str) -> Words {
    words(
        Severity::Error,
        codes::FLUX_FAILING,
        format!("{label}: {} failed ({reason}): {message}", flux.display),
        format!("{}; {}", flux.get(), flux.command("kubectl describe")),
    )
}

/// KSM612: the Flux object is suspended.
pub(super) fn flux_suspended(label: &str, flux: &FluxRef) -> Words {
    words(
        Severity::Warning,
        codes::FLUX_SUSPENDED,
        format!(
            "{label}: {} is suspended: Flux does not reconcile it",
            flux.display
        ),
        flux.command("flux resume"),
    )
}

/// KSM613: the Flux object has not reconciled its latest spec.
pub(super) fn flux_old_generation(
    label: &str,
    flux: &FluxRef,
    generation: i64,
    observed: i64,
) -> Words {
    words(
        Severity::Warning,
        codes::FLUX_OLD_GENERATION,
        format!(
            "{label}: {} has not yet reconciled its latest spec (generation {generation}, observed {observed})",
            flux.display
        ),
        flux.command("flux reconcile"),
    )
}

/// KSM614: a dependency of the Flux object is not ready.
pub(super) fn dependency_not_ready(label: &str, flux: &FluxRef, message: &str) -> Words {
    words(
        Severity::Warning,
        codes::DEPENDENCY_NOT_READY,
        format!(
            "{label}: {} waits for a dependency: {message}",
            flux.display
        ),
        flux.get(),
    )
}

/// KSM615: the source of the Flux object is failing.
pub(super) fn source_failing(label: &str, source: &Value) -> Words {
    let src = Object(source);
    let why = src
        .conditions()
        .find(|c| c.type_() == "Ready" || c.type_() == "Stalled")
        .map(|c| format!("{}: {}", c.reason(), c.message()))
        .unwrap_or_else(|| "no Ready condition".into());
    words(
        Severity::Error,
        codes::SOURCE_FAILING,
        format!("{label}: source {} is failing: {why}", src.display()),
        format!(
            "flux get sources {} -n {} {}",
            flux::cli_source_word(src.kind()),
            src.namespace(),
            src.name()
        ),
    )
}

/// KSM616: the ServiceTemplate is missing (`invalid`: None) or invalid (its validationError).
pub(super) fn template_invalid(
    label: &str,
    namespace: &str,
    template: &str,
    invalid: Option<&str>,
) -> Words {
    let (message, hint) = match invalid {
        Some(why) => (
            format!(
                "{label}: ServiceTemplate {namespace}/{template} is invalid: {}",
                if why.is_empty() {
                    "(no validationError)"
                } else {
                    why
                }
            ),
            format!("kubectl get servicetemplate -n {namespace} {template} -o yaml"),
        ),
        None => (
            format!("{label}: ServiceTemplate {namespace}/{template} does not exist"),
            format!("kubectl get servicetemplates -n {namespace}"),
        ),
    };
    words(Severity::Error, codes::TEMPLATE_INVALID, message, hint)
}

/// KSM617: the kubeconfig Secret of the target cluster is missing.
pub(super) fn kubeconfig_missing(namespace: &str, secret: &str, cluster: &str) -> Words {
    words(
        Severity::Error,
        codes::KUBECONFIG_MISSING,
        format!(
            "the kubeconfig Secret {namespace}/{secret} of cluster {cluster} does not exist: Flux cannot reach the cluster"
        ),
        format!(
            "kubectl get clusterdeployment -n {namespace} {cluster}; kubectl get secret -n {namespace} {secret}"
        ),
    )
}

/// KSM618: kcm's recorded readiness differs from the rules now.
pub(super) fn smp_status_stale(name: &str, recorded: bool, now: bool) -> Words {
    words(
        Severity::Warning,
        codes::SMP_STATUS_STALE,
        format!(
            "StateManagementProvider {name}: status.ready is {recorded}, but its rules evaluate to {now} now (kcm re-evaluates every 10 s; a lasting difference means kcm is not reconciling it)"
        ),
        "kubectl logs -n kcm-system deploy/kcm-controller-manager | grep -i statemanagementprovider",
    )
}

/// Why kcm wrote no Profile, as the ServiceSet and the snapshot say.
pub(super) enum NotWritten<'a> {
    /// `ServiceSetProfile=False` (reason, message).
    Condition(&'a str, &'a str),
    /// The Profile does not exist.
    Missing,
    /// No Profiles of the kind were collected.
    NotCollected(&'a str),
}

/// What rebuilding the Profile as kcm builds it says.
pub(super) enum Rebuilt<'a> {
    /// The errors of the translation.
    Errors(Vec<String>),
    /// The error kcm's condition would carry.
    KcmError(&'a str),
    /// It builds now, although kcm's condition is False.
    BuildsNow,
    /// Nothing to add.
    Nothing,
}

/// KSM619: kcm wrote no Sveltos Profile for the ServiceSet.
pub(super) fn profile_not_written(
    namespace: &str,
    name: &str,
    profile: &str,
    why: NotWritten,
    rebuilt: Rebuilt,
) -> Words {
    let mut message = match why {
        NotWritten::Condition(reason, m) => format!(
            "kcm could not write {profile}: ServiceSetProfile=False {reason}: {}",
            m.replace('\n', "; ")
        ),
        NotWritten::Missing => format!("{profile} does not exist"),
        NotWritten::NotCollected(kind) => {
            format!("{profile} is not in the snapshot (no {kind} collected)")
        }
    };
    match rebuilt {
        Rebuilt::Errors(why) => {
            message.push_str(&format!(". Rebuilt as kcm builds it: {}", why.join("; ")))
        }
        Rebuilt::KcmError(e) => {
            message.push_str(&format!(". kcm's error: {}", e.replace('\n', "; ")))
        }
        Rebuilt::BuildsNow => message.push_str(". Rebuilt from the objects at hand it builds now: the cause is gone or lies in the regional cluster or the API server (see kcm's Warning events)"),
        Rebuilt::Nothing => {}
    }
    words(
        Severity::Error,
        codes::PROFILE_NOT_WRITTEN,
        message,
        format!(
            "kubectl ksm render --live {name} -n {namespace}; kubectl get events -n {namespace} --field-selector involvedObject.name={name}"
        ),
    )
}

/// How the Profile and its cluster do not meet.
pub(super) enum NotMatched<'a> {
    /// Sveltos failed for a cluster (its display, its message).
    Failed(&'a str, &'a str),
    /// No `status.matchingClusters`.
    NoCluster,
    /// The ClusterSummary (its display) holds an older spec: the fields that differ (info).
    /// `kind`: the Profile kind's plural; `namespace`/`name`: the ServiceSet's.
    NotCopied {
        summary: &'a str,
        fields: &'a [&'a str],
        plural: &'a str,
        namespace: &'a str,
        name: &'a str,
    },
}

/// KSM620: Sveltos has not matched the Profile to its cluster (or not copied its spec).
pub(super) fn profile_not_matched(profile: &str, how: NotMatched) -> Words {
    match how {
        NotMatched::Failed(cluster, m) => words(
            Severity::Error,
            codes::PROFILE_NOT_MATCHED,
            format!("{profile} failed for cluster {cluster}: {m}"),
            "kubectl logs -n projectsveltos deploy/addon-controller",
        ),
        NotMatched::NoCluster => words(
            Severity::Error,
            codes::PROFILE_NOT_MATCHED,
            format!(
                "{profile} has no status.matchingClusters: Sveltos has not reconciled it, so there is no ClusterSummary and kcm collects no service state"
            ),
            "kubectl logs -n projectsveltos deploy/addon-controller | grep -i profile",
        ),
        NotMatched::NotCopied {
            summary,
            fields,
            plural,
            namespace,
            name,
        } => words(
            Severity::Info,
            codes::PROFILE_NOT_MATCHED,
            format!(
                "{summary} does not hold {profile}'s current spec yet (differs in: {}): the service states are those of the spec Sveltos last copied",
                if fields.is_empty() {
                    "removed fields".to_string()
                } else {
                    fields.join(", ")
                }
            ),
            format!("kubectl get {plural} -n {namespace} {name} -o jsonpath='{{.status}}'"),
        ),
    }
}

/// KSM621: the ClusterSummary (`summary`, its display) of the Profile does not exist;
/// `collected`: ClusterSummaries were collected.
pub(super) fn summary_missing(
    profile: &str,
    cluster: &ClusterRef,
    summary: &str,
    collected: bool,
) -> Words {
    words(
        Severity::Error,
        codes::SUMMARY_MISSING,
        if collected {
            format!(
                "{profile} matches {} but {summary} does not exist: kcm keeps the last service states",
                cluster.display()
            )
        } else {
            format!("{summary} is not in the snapshot (no ClusterSummaries collected)")
        },
        format!("kubectl get clustersummaries -n {}", cluster.namespace),
    )
}

/// Where Sveltos's "cluster is not ready" is reported.
pub(super) enum NotReady<'a> {
    /// On the ClusterSummary (its display): with the target cluster as found
    /// (`target`: the CAPI Cluster or SveltosCluster; `collected`: its kind was collected).
    Summary {
        summary: &'a str,
        cluster: &'a ClusterRef,
        target: Option<&'a Value>,
        collected: bool,
    },
    /// On a service it leaves Pending (info).
    Service {
        label: &'a str,
        state: ServiceState,
        summary_get: &'a str,
    },
}

/// KSM622: Sveltos cannot use the target cluster (`message`: its words), which kcm hides.
pub(super) fn cluster_not_ready(message: &str, at: NotReady) -> Words {
    match at {
        NotReady::Summary {
            summary,
            cluster,
            target,
            collected,
        } => words(
            Severity::Error,
            codes::CLUSTER_NOT_READY,
            format!(
                "{summary}: Sveltos reports {message:?} for every feature ({}); kcm shows its Helm services Pending (or still Deployed) and never this message",
                cluster_state(cluster, target, collected)
            ),
            format!(
                "kubectl get {}.{} -n {} {} -o yaml",
                cluster.target_kind().plural,
                cluster.target_kind().group,
                cluster.namespace,
                cluster.name
            ),
        ),
        NotReady::Service {
            label,
            state,
            summary_get,
        } => words(
            Severity::Info,
            codes::CLUSTER_NOT_READY,
            format!(
                "{label} is {state} because Sveltos cannot use the cluster ({message:?}, above)"
            ),
            summary_get,
        ),
    }
}

/// The target cluster as Sveltos judges it, in words.
fn cluster_state(cluster: &ClusterRef, target: Option<&Value>, collected: bool) -> String {
    match target {
        None if collected => format!("{} does not exist", cluster.display()),
        None => format!("{} is not in the snapshot", cluster.display()),
        Some(t) if cluster.is_sveltos() => {
            let s = SveltosCluster(t);
            let mut m = format!("{}: ready={}", cluster.display(), s.ready());
            if !s.connection_status().is_empty() {
                m.push_str(&format!(", connectionStatus {}", s.connection_status()));
            }
            if !s.failure_message().is_empty() {
                m.push_str(&format!(", {}", s.failure_message()));
            }
            m
        }
        Some(t) => format!(
            "{}: control plane initialized: {}",
            cluster.display(),
            CapiCluster(t).control_plane_initialized()
        ),
    }
}

/// Who manages a Helm release a service conflicts on: its ClusterSummary, Profile and
/// ServiceSet (displays) and tier, when known.
pub(super) struct ReleaseOwner {
    pub summary: String,
    pub profile: String,
    pub service_set: String,
    pub tier: Option<i64>,
}

/// KSM623: another Profile manages the Helm release; `ours`: this ServiceSet's tier.
#[allow(clippy::too_many_arguments)]
pub(super) fn helm_conflict(
    label: &str,
    release: (&str, &str),
    owner: &ReleaseOwner,
    summary: &str,
    ours: i64,
    continue_on_conflict: bool,
    sveltos: &str,
) -> Words {
    let (rel_ns, rel_name) = release;
    let mut m = format!(
        "{label} is Failed: Helm release {rel_ns}/{rel_name} is managed by {} (of {}, {}, {}); this ServiceSet's {summary} has {}. ",
        owner.summary,
        owner.profile,
        owner.service_set,
        owner.tier.map_or("tier unknown".into(), tier_words),
        tier_words(ours)
    );
    match owner.tier {
        Some(t) if ours < t => {
            m.push_str("This one has the lower tier and takes the release over on its next attempt.")
        }
        Some(t) if ours == t => m.push_str(
            "Equal tiers: the first owner keeps the release; Sveltos does not retry (FailedNonRetriable).",
        ),
        Some(_) => m.push_str(
            "The owner has the lower tier (strictly lower wins): it keeps the release; Sveltos does not retry (FailedNonRetriable).",
        ),
        None => {}
    }
    if !continue_on_conflict {
        m.push_str(" continueOnConflict is false: the charts after it are not deployed.");
    }
    m.push_str(&format!(" Sveltos: {sveltos}"));
    words(
        Severity::Error,
        codes::HELM_CONFLICT,
        m,
        "raise the priority (serviceSpec.provider.config.priority: lower tier = 2147483647 - priority) of the ServiceSet that should own the release, or remove the service from the other",
    )
}

/// "tier N (priority P)" or "tier 100 (a nil provider config)".
fn tier_words(tier: i64) -> String {
    if tier == sv::DEFAULT_TIER {
        "tier 100 (a nil provider config, or priority 2147483547)".into()
    } else if tier > 0 && tier < MAX_TIER {
        format!("tier {tier} (priority {})", sv::tier_to_priority(tier))
    } else {
        format!("tier {tier}")
    }
}

/// The earlier chart (release namespace, name) Sveltos stopped at.
pub(super) enum Held<'a> {
    /// It failed (Sveltos's message) and continueOnError is false.
    Failed(&'a str, &'a str, String),
    /// It is in conflict and continueOnConflict is false.
    Conflict(&'a str, &'a str),
}

/// KSM624: the service waits behind an earlier chart.
pub(super) fn chart_held(label: &str, state: ServiceState, held: Held) -> Words {
    let blocker = match held {
        Held::Failed(ns, name, message) => format!(
            "the earlier chart {ns}/{name} failed and continueOnError is false, so Sveltos stopped there ({message})"
        ),
        Held::Conflict(ns, name) => format!(
            "the earlier chart {ns}/{name} is in conflict and continueOnConflict is false (stopOnConflict, or a nil provider config), so Sveltos stopped there"
        ),
    };
    words(
        Severity::Warning,
        codes::CHART_HELD,
        format!("{label} is {state} (never attempted): {blocker}"),
        "fix the earlier chart; or set continueOnError: true (or leave stopOnConflict unset, with a provider config) in serviceSpec.provider.config",
    )
}

/// KSM625: the service was never attempted and the Helm feature is FailedNonRetriable (its
/// failureMessage). A failed service Sveltos will not retry: [`service_failed`].
pub(super) fn non_retriable(
    label: &str,
    state: ServiceState,
    why: &str,
    summary_get: &str,
) -> Words {
    words(
        Severity::Error,
        codes::NON_RETRIABLE,
        format!(
            "{label} is {state}: the Helm feature is FailedNonRetriable ({why}): Sveltos will not retry"
        ),
        summary_get,
    )
}

/// Why kcm's health verifier holds a Helm service Sveltos deployed.
pub(super) enum VerifierHold<'a> {
    /// `ServiceHealth*` conditions are False (in words, joined), with the rules they name.
    Unhealthy {
        conditions: &'a str,
        rules: &'a [String],
    },
    /// No ClusterConfigurations in the snapshot to check the fingerprint.
    NotCollected,
    /// The ClusterConfiguration of the namespace has no chart entry for the release.
    NoChartEntry {
        namespace: &'a str,
        release: (&'a str, &'a str),
    },
    /// Nothing found: the verifier has not promoted it yet.
    NotYet,
}

/// KSM626: kcm's health verifier holds the service Provisioning.
pub(super) fn verifier_hold(
    label: &str,
    namespace: &str,
    service_set: &str,
    hold: VerifierHold,
) -> Words {
    let hint = format!(
        "kubectl get serviceset -n {namespace} {service_set} -o jsonpath='{{.status.services}}'"
    );
    match hold {
        VerifierHold::Unhealthy { conditions, rules } => {
            let mut m = format!(
                "{label} is held Provisioning by kcm's health verifier although Sveltos deployed it: {conditions}"
            );
            if conditions.contains("Completed") {
                m.push_str(". Completed pods (Jobs or hooks left behind) are never Ready: the default Pod rule keeps the service Provisioning until they are deleted");
            }
            if !rules.is_empty() {
                m.push_str(&format!(". The rule: {}", rules.join("; ")));
            }
            words(Severity::Error, codes::VERIFIER_HOLD, m, hint)
        }
        VerifierHold::NotCollected => words(
            Severity::Warning,
            codes::VERIFIER_HOLD,
            format!(
                "{label} is Provisioning although Sveltos deployed it, with no unhealthy object reported: kcm's verifier holds it (no ClusterConfigurations in the snapshot to check the release fingerprint)"
            ),
            hint,
        ),
        VerifierHold::NoChartEntry {
            namespace: cluster_ns,
            release: (rel_ns, rel_name),
        } => words(
            Severity::Error,
            codes::VERIFIER_HOLD,
            format!(
                "{label} is Provisioning although Sveltos deployed it: the ClusterConfiguration of namespace {cluster_ns} has no chart entry for release {rel_ns}/{rel_name}, so kcm cannot compute its fingerprint and never promotes it to Deployed (nor stamps its version)"
            ),
            format!("kubectl get clusterconfigurations -n {cluster_ns} -o yaml"),
        ),
        VerifierHold::NotYet => words(
            Severity::Warning,
            codes::VERIFIER_HOLD,
            format!(
                "{label} is Provisioning although Sveltos deployed it and no health condition is False: kcm's verifier has not promoted it yet (it re-checks every 10 s; rule evaluation errors only reach kcm's log)"
            ),
            hint,
        ),
    }
}

/// Which feature keeps a stale failure message while it retries.
pub(super) enum Stale<'a> {
    /// A Kustomize or Resources feature (its id) kcm shows Failed from it.
    Feature(&'a str),
    /// The Helm feature (info).
    Helm,
}

/// KSM627: a failure message (`message`) is stale: the feature is Provisioning again.
pub(super) fn stale_failure(label: &str, message: &str, stale: Stale, summary_get: &str) -> Words {
    match stale {
        Stale::Feature(feature) => words(
            Severity::Warning,
            codes::STALE_FAILURE,
            format!(
                "{label} is shown Failed from a stale message: the {feature} feature is Provisioning again (retrying) and keeps its previous failureMessage: {message}"
            ),
            summary_get,
        ),
        Stale::Helm => words(
            Severity::Info,
            codes::STALE_FAILURE,
            format!(
                "{label}: the Helm feature is Provisioning (retrying) with the previous failureMessage kept: {message}"
            ),
            summary_get,
        ),
    }
}

/// How long the services left out have waited, or that they are stuck.
pub(super) enum Blocked {
    Stuck,
    /// Longer than `--stuck-after` (warning).
    WaitingLong(Duration),
    /// Info.
    Waiting,
}

/// KSM628: service `service` of `source` is left out of ServiceSet `namespace`/`name` while
/// a dependency is not ready (`why`: the dependency, followed).
pub(super) fn dependents_blocked(
    service: &str,
    source: &str,
    namespace: &str,
    name: &str,
    blocked: Blocked,
    why: &str,
) -> Words {
    let (severity, why) = match blocked {
        Blocked::Stuck => (Severity::Error, format!("stuck: it depends on {why}")),
        Blocked::WaitingLong(s) => (
            Severity::Warning,
            format!(
                "waiting for {}: it depends on {why}",
                duration::format_coarse(s)
            ),
        ),
        Blocked::Waiting => (Severity::Info, format!("waiting: it depends on {why}")),
    };
    words(
        severity,
        codes::DEPENDENTS_BLOCKED,
        format!(
            "service {service} of {source} is left out of ServiceSet {namespace}/{name}: {why}"
        ),
        format!("kubectl get serviceset -n {namespace} {name} -o jsonpath='{{.status.services}}'"),
    )
}

/// KSM629: a nil provider config gives the Profile tier 100.
pub(super) fn nil_config_tier(namespace: &str, name: &str, profile: &str) -> Words {
    words(
        Severity::Warning,
        codes::NIL_CONFIG_TIER,
        format!(
            "ServiceSet {namespace}/{name} has no provider config: {profile} has tier 100 (it wins every conflict against ServiceSets with a priority, whose tiers are about 2.1e9) and continueOnConflict false (its first conflict stops the charts after it)"
        ),
        "give the ClusterDeployment/MultiClusterService serviceSpec.provider.config (even {}), or leave serviceSpec.provider.name empty",
    )
}

/// KSM630: kcm cannot load the ServiceSet's health rules (its condition's reason, message).
pub(super) fn health_rules_invalid(
    namespace: &str,
    name: &str,
    reason: &str,
    message: &str,
) -> Words {
    words(
        Severity::Error,
        codes::HEALTH_RULES_INVALID,
        format!(
            "kcm cannot load the health rules of ServiceSet {namespace}/{name} ({reason}): {message}; its verifier does not run, so Helm services are not promoted to Deployed nor their version stamped"
        ),
        format!(
            "kubectl get configmaps -A -l {}",
            sv::LABEL_HEALTH_RULE_TARGET
        ),
    )
}

/// Why Sveltos does not reconcile a ClusterSummary.
pub(super) enum Suspended<'a> {
    /// `status.reconciliationSuspended`, with its reason.
    Reconciliation(&'a str),
    /// A reconcile-level failureMessage.
    Failure(&'a str),
}

/// KSM631: Sveltos suspended the ClusterSummary (`summary`, its display).
pub(super) fn summary_suspended(
    summary: &str,
    namespace: &str,
    name: &str,
    why: Suspended,
) -> Words {
    let what = match why {
        Suspended::Reconciliation(reason) => format!(
            "reconciliation is suspended ({})",
            match reason {
                "" => "no reason given",
                r => r,
            }
        ),
        Suspended::Failure(m) => format!("Sveltos reports: {m}"),
    };
    words(
        Severity::Warning,
        codes::SUMMARY_SUSPENDED,
        format!("{summary}: {what}"),
        format!("kubectl get clustersummary -n {namespace} {name} -o yaml"),
    )
}

/// KSM632: a Profile's `spec.<field>` names `kind` `ref_ns`/`ref_name`, read in `namespace`.
pub(super) fn reference_namespace(
    profile: &str,
    field: &str,
    kind: &str,
    ref_ns: &str,
    ref_name: &str,
    namespace: &str,
) -> Words {
    words(
        Severity::Warning,
        codes::REFERENCE_NAMESPACE,
        format!(
            "{profile}: spec.{field} names {kind} {ref_ns}/{ref_name}, but Sveltos reads a Profile's {field} in the Profile's namespace: it deploys {kind} {namespace}/{ref_name} (if it exists) instead"
        ),
        format!(
            "kubectl get {} -n {namespace} {ref_name}",
            kind.to_lowercase()
        ),
    )
}

/// KSM633: another ServiceSet of the Flux adapter owns the release (warning while it is
/// being deleted).
pub(super) fn flux_conflict(label: &str, c: &Conflict) -> Words {
    let (owner, loser) = (&c.owner, &c.loser);
    let mut m = format!(
        "{label} is {}: {} is owned by service {} of ServiceSet {}/{} (priority {}); this ServiceSet has priority {}. ",
        if c.pending { "Pending" } else { "Failed" },
        loser.target,
        owner.service,
        owner.namespace,
        owner.service_set,
        owner.priority,
        loser.priority
    );
    m.push_str(if c.pending {
        "The owner is being deleted: this service takes the release over once it is gone."
    } else if owner.priority > loser.priority {
        "The owner has the higher priority: it keeps the release; the adapter writes nothing for this service."
    } else {
        "Equal priorities: the older ServiceSet keeps the release; the adapter writes nothing for this service."
    });
    words(
        if c.pending {
            Severity::Warning
        } else {
            Severity::Error
        },
        codes::FLUX_CONFLICT,
        m,
        "raise spec.provider.config.priority of the ServiceSet that should own the release (in the ClusterDeployment's or MultiClusterService's serviceSpec.provider.config), or remove the service from the other",
    )
}

/// A Flux object deploying a release, and the ServiceSet that controls it (if one does).
pub(super) struct Deployer<'a> {
    pub display: String,
    pub namespace: &'a str,
    pub service_set: Option<&'a str>,
}

/// KSM634: several Flux objects of `kind` deploy one release.
pub(super) fn flux_duplicate(label: &str, target: &Target, kind: &str, all: &[Deployer]) -> Words {
    let who: Vec<String> = all
        .iter()
        .map(|d| match d.service_set {
            Some(set) => format!("{} (ServiceSet {}/{set})", d.display, d.namespace),
            None => format!("{} (no ServiceSet)", d.display),
        })
        .collect();
    let word = flux::cli_object_word(kind).trim_end_matches('s');
    words(
        Severity::Error,
        codes::FLUX_DUPLICATE,
        format!(
            "{label}: {target} is deployed by {} {kind}s: {}; they fight over it, and deleting either one uninstalls it",
            all.len(),
            who.join(", ")
        ),
        format!(
            "flux suspend {word} -n NAMESPACE NAME && kubectl delete {word} -n NAMESPACE NAME  # the one no ServiceSet should own: suspended first, its deletion does not uninstall the release"
        ),
    )
}

/// How a MultiClusterService waits on another.
pub(super) enum McsBlocked<'a> {
    /// kcm could not check its dependencies (condition reason, message).
    Unchecked(&'a str, &'a str),
    /// On a target (in words): stuck, waiting (how long, when longer than `--stuck-after`),
    /// on what.
    Target {
        target: &'a str,
        blocked: Blocked,
        why: &'a str,
    },
}

/// KSM635: the MultiClusterService `name` waits on another.
pub(super) fn mcs_blocked(name: &str, how: McsBlocked) -> Words {
    match how {
        McsBlocked::Unchecked(reason, message) => words(
            Severity::Warning,
            codes::MCS_BLOCKED,
            format!(
                "MultiClusterService {name}: kcm could not check its dependencies ({reason}): {message}"
            ),
            format!("kubectl get multiclusterservice {name} -o yaml"),
        ),
        McsBlocked::Target {
            target,
            blocked,
            why,
        } => {
            let (severity, state) = match blocked {
                Blocked::Stuck => (Severity::Error, "stuck".to_string()),
                Blocked::WaitingLong(a) => (
                    Severity::Warning,
                    format!("waiting for {}", duration::format_coarse(a)),
                ),
                Blocked::Waiting => (Severity::Info, "waiting".to_string()),
            };
            words(
                severity,
                codes::MCS_BLOCKED,
                format!(
                    "MultiClusterService {name} is blocked on {target} ({state}): kcm creates or updates its ServiceSet there only once every service of each MultiClusterService it depends on is Deployed there. It waits on {why}"
                ),
                format!(
                    "kubectl get multiclusterservice {name} -o jsonpath='{{.status.matchingClusters}}'"
                ),
            )
        }
    }
}

/// KSM636: kcm stopped reconciling the MultiClusterService: a validation (its condition's
/// type, message) failed; `stale`: the generation the condition was written for and the
/// current one, when older.
pub(super) fn mcs_not_reconciled(
    name: &str,
    condition: &str,
    message: &str,
    stale: Option<(i64, i64)>,
) -> Words {
    let stale = match stale {
        Some((o, g)) => {
            format!(" (written for generation {o}; generation {g} has not been validated yet)")
        }
        None => String::new(),
    };
    words(
        Severity::Error,
        codes::MCS_NOT_RECONCILED,
        format!(
            "MultiClusterService {name} is not reconciled: {condition}=False: {message}{stale}. kcm's controller stops at this validation and creates or updates no ServiceSet until the spec changes"
        ),
        format!(
            "kubectl get multiclusterservice {name} -o yaml > {name}.yaml && kubectl ksm lint {name}.yaml"
        ),
    )
}

/// KSM637: a kind doctor needs could not be read.
pub(super) fn kind_unread(u: &Unread) -> Words {
    let k = u.kind;
    let resource = if k.group.is_empty() {
        k.plural.to_string()
    } else {
        format!("{}.{}", k.plural, k.group)
    };
    words(
        Severity::Warning,
        codes::KIND_UNREAD,
        format!(
            "{} could not be read ({}): none is judged or reported missing, and every chain that leads to one stops there",
            k.kind, u.reason
        ),
        format!(
            "kubectl auth can-i list {resource} -A  # grant get and list on it (README: the RBAC doctor needs)"
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tiers_in_words() {
        assert!(tier_words(100).contains("nil provider config"));
        assert_eq!(tier_words(2147483547), "tier 2147483547 (priority 100)");
    }
}

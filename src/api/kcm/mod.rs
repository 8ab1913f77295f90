//! Typed views of the k0rdent (kcm) objects: ServiceSet and its services,
//! StateManagementProvider and its references, ServiceTemplate, ClusterDeployment and
//! MultiClusterService. Each borrows the object's JSON (see [`super::meta`]).

use crate::api::meta::At;
use serde::Serialize;
use serde_json::Value;

use super::meta::{Condition, Object, ObjectRef, bool_at, items_at, opt_str_at, str_at};
use super::naming::ANNOTATION_PAUSED;
use super::selector::Selector;

mod template;
pub use template::{
    ServiceTemplate, ServiceType, SupportedTemplate, TemplateChain, TemplateSource,
};

/// The namespace of a service when its spec leaves it empty (the CRD default).
pub const DEFAULT_SERVICE_NAMESPACE: &str = "default";

/// `kube.DefaultStateManagementProvider`: kcm's built-in provider.
pub const DEFAULT_PROVIDER: &str = "ksm-projectsveltos";

fn or_default_namespace(ns: &str) -> &str {
    if ns.is_empty() {
        DEFAULT_SERVICE_NAMESPACE
    } else {
        ns
    }
}

/// kcm's key of a service, `serviceset.ServiceKey`: (namespace, name), an empty namespace
/// being `default`. Services and `dependsOn` entries are both keyed so.
pub fn service_key<'a>(namespace: &'a str, name: &'a str) -> (&'a str, &'a str) {
    (or_default_namespace(namespace), name)
}

// ---------------------------------------------------------------- ServiceSpec facts

/// A deprecated top-level field of a ClusterDeployment's or MultiClusterService's
/// `spec.serviceSpec`, which kcm uses only when the provider has neither a name nor a config
/// (`StateManagementProviderConfigFromServiceSpec`): it then becomes `config_key` of the
/// default provider's config.
#[derive(Debug, Clone, Copy)]
pub struct DeprecatedField {
    pub field: &'static str,
    pub config_key: &'static str,
    /// The value that changes nothing: the CRD default (the API server fills it in
    /// whenever `serviceSpec` is present), or the zero value kcm leaves out (`omitempty`).
    pub inert: Inert,
}

/// The value of a [`DeprecatedField`] that carries nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Inert {
    /// The CRD default (or the empty string).
    Str(&'static str),
    /// The CRD default (or 0).
    Int(i64),
    /// false.
    False,
    /// An empty list.
    EmptyList,
}

impl DeprecatedField {
    /// The value sets nothing kcm would use: null, the CRD default, or the zero value.
    pub fn is_inert(&self, value: &Value) -> bool {
        match (self.inert, value) {
            (_, Value::Null) => true,
            (Inert::Str(d), Value::String(s)) => s.is_empty() || s == d,
            (Inert::Int(d), Value::Number(n)) => n.as_i64().is_some_and(|n| n == 0 || n == d),
            (Inert::False, Value::Bool(b)) => !b,
            (Inert::EmptyList, Value::Array(a)) => a.is_empty(),
            _ => false,
        }
    }
}

/// The deprecated `serviceSpec` fields, in kcm's order (`config` struct of
/// `StateManagementProviderConfigFromServiceSpec`), with their CRD defaults
/// (`api/v1beta1/multiclusterservice_types.go` `ServiceSpec`).
pub const DEPRECATED_SERVICE_SPEC_FIELDS: &[DeprecatedField] = &[
    DeprecatedField {
        field: "syncMode",
        config_key: "syncMode",
        inert: Inert::Str("Continuous"),
    },
    DeprecatedField {
        field: "templateResourceRefs",
        config_key: "templateResourceRefs",
        inert: Inert::EmptyList,
    },
    DeprecatedField {
        field: "policyRefs",
        config_key: "policyRefs",
        inert: Inert::EmptyList,
    },
    DeprecatedField {
        field: "driftIgnore",
        config_key: "driftIgnore",
        inert: Inert::EmptyList,
    },
    DeprecatedField {
        field: "driftExclusions",
        config_key: "driftExclusions",
        inert: Inert::EmptyList,
    },
    DeprecatedField {
        field: "priority",
        config_key: "priority",
        inert: Inert::Int(100),
    },
    DeprecatedField {
        field: "stopOnConflict",
        config_key: "stopOnConflict",
        inert: Inert::False,
    },
    DeprecatedField {
        field: "reload",
        config_key: "reloader",
        inert: Inert::False,
    },
    DeprecatedField {
        field: "continueOnError",
        config_key: "continueOnError",
        inert: Inert::False,
    },
];

// ---------------------------------------------------------------- MultiClusterService facts

/// The MultiClusterService conditions whose failure stops its reconcile until the spec
/// changes (`multiclusterservice_controller.go` `reconcileUpdate`), in the order kcm checks
/// them.
pub const COND_SERVICES_REFERENCES_VALIDATION: &str = "ServicesReferencesValidation";
pub const COND_SERVICES_DEPENDENCY_VALIDATION: &str = "ServicesDependencyValidation";
pub const COND_MCS_DEPENDENCY_VALIDATION: &str = "MultiClusterServiceDependencyValidation";
pub const MCS_VALIDATIONS: [&str; 3] = [
    COND_SERVICES_REFERENCES_VALIDATION,
    COND_SERVICES_DEPENDENCY_VALIDATION,
    COND_MCS_DEPENDENCY_VALIDATION,
];
/// Whether every MultiClusterService this one depends on has deployed on its targets.
pub const COND_MCS_DEPENDENCY_READY: &str = "MultiClusterServiceDependencyReady";
/// `<deployed>/<total>` targets.
pub const COND_CLUSTER_IN_READY_STATE: &str = "ClusterInReadyState";
/// The reason of a blocked target (`status.matchingClusters[].reason`) and of
/// `MultiClusterServiceDependencyReady` False.
pub const REASON_MCS_DEPENDENCY_NOT_READY: &str = "MultiClusterServiceDependencyNotReady";
/// `MultiClusterServiceDependencyReady` Unknown: the check itself failed.
pub const REASON_MCS_DEPENDENCY_CHECK_FAILED: &str = "MultiClusterServiceDependencyCheckFailed";
/// The prefix of a blocked target's message, then `<ns>/<name>: waiting on <deps>`.
pub const BLOCKED_MESSAGE_PREFIX: &str =
    "skipping create/update of ServiceSet for matching cluster ";

/// A ServiceSet (`k0rdent.mirantis.com/v1beta1`).
#[derive(Debug, Clone, Copy)]
pub struct ServiceSet<'a>(pub &'a Value);

impl<'a> ServiceSet<'a> {
    pub fn meta(self) -> Object<'a> {
        Object(self.0)
    }
    pub fn name(self) -> &'a str {
        self.meta().name()
    }
    pub fn namespace(self) -> &'a str {
        self.meta().namespace()
    }
    /// `spec.cluster`: the ClusterDeployment; empty for the management cluster.
    pub fn cluster(self) -> &'a str {
        str_at(self.0, "/spec/cluster")
    }
    /// `spec.multiClusterService`: the MultiClusterService it comes from ("" for a
    /// ClusterDeployment's).
    pub fn multi_cluster_service(self) -> &'a str {
        str_at(self.0, "/spec/multiClusterService")
    }
    pub fn provider_name(self) -> &'a str {
        str_at(self.0, "/spec/provider/name")
    }
    /// `spec.provider.selfManagement` as written (an empty `spec.cluster` aside).
    pub fn provider_self_management(self) -> bool {
        bool_at(self.0, "/spec/provider/selfManagement") == Some(true)
    }
    /// `spec.provider.config` (None when absent).
    pub fn provider_config(self) -> Option<&'a Value> {
        self.0.at("/spec/provider/config")
    }
    /// Deploys to the management cluster: `spec.provider.selfManagement`, or no cluster.
    pub fn self_management(self) -> bool {
        bool_at(self.0, "/spec/provider/selfManagement").unwrap_or(false)
            || self.cluster().is_empty()
    }
    /// The cluster it deploys to as [`MatchingCluster::target`] keys it: its
    /// ClusterDeployment's namespace and name, None for the management cluster.
    pub fn target(self) -> ClusterTarget<'a> {
        (!self.self_management()).then(|| (self.namespace(), self.cluster()))
    }
    /// kcm's pause annotation is set.
    pub fn paused(self) -> bool {
        self.meta().has_annotation(ANNOTATION_PAUSED)
    }
    pub fn services(self) -> impl Iterator<Item = Service<'a>> {
        items_at(self.0, "/spec/services").iter().map(Service)
    }
    /// `spec.services` as JSON.
    pub fn service_items(self) -> &'a [Value] {
        items_at(self.0, "/spec/services")
    }
    /// The service of a name.
    pub fn service(self, name: &str) -> Option<Service<'a>> {
        self.services().find(|s| s.name() == name)
    }
    /// `status.services`.
    pub fn service_statuses(self) -> impl Iterator<Item = ServiceStatus<'a>> {
        items_at(self.0, "/status/services")
            .iter()
            .map(ServiceStatus)
    }
}

/// One service of a ServiceSet (`spec.services[]`).
#[derive(Debug, Clone, Copy)]
pub struct Service<'a>(pub &'a Value);

impl<'a> Service<'a> {
    pub fn json(self) -> &'a Value {
        self.0
    }
    pub fn name(self) -> &'a str {
        str_at(self.0, "/name")
    }
    /// The namespace the service deploys into (`default` when empty).
    pub fn namespace(self) -> &'a str {
        or_default_namespace(self.namespace_as_written())
    }
    /// `namespace` as written ("" when unset).
    pub fn namespace_as_written(self) -> &'a str {
        str_at(self.0, "/namespace")
    }
    /// kcm's key of the service: (namespace or `default`, name).
    pub fn key(self) -> (&'a str, &'a str) {
        service_key(self.namespace_as_written(), self.name())
    }
    /// `dependsOn[]`: the services (namespace, name) it waits for.
    pub fn depends_on(self) -> impl Iterator<Item = ObjectRef<'a>> {
        items_at(self.0, "/dependsOn").iter().map(ObjectRef)
    }
    /// kcm's keys of `dependsOn[]`.
    pub fn dependency_keys(self) -> Vec<(&'a str, &'a str)> {
        self.depends_on()
            .map(|d| service_key(d.namespace(), d.name()))
            .collect()
    }
    /// `disable: true`.
    pub fn disabled(self) -> bool {
        bool_at(self.0, "/disable") == Some(true)
    }
    /// `templateChain` ("" when unset).
    pub fn template_chain(self) -> &'a str {
        str_at(self.0, "/templateChain")
    }
    pub fn template(self) -> &'a str {
        str_at(self.0, "/template")
    }
    pub fn version(self) -> &'a str {
        str_at(self.0, "/version")
    }
    /// `values` (Helm values as YAML text).
    pub fn values(self) -> &'a str {
        str_at(self.0, "/values")
    }
    pub fn values_from(self) -> Option<&'a Value> {
        self.0.get("valuesFrom")
    }
    /// `valuesFrom[]`: the ConfigMaps and Secrets the values come from (none when absent or
    /// not a list).
    pub fn values_from_refs(self) -> impl Iterator<Item = ObjectRef<'a>> {
        items_at(self.0, "/valuesFrom").iter().map(ObjectRef)
    }
    pub fn helm_options(self) -> Option<&'a Value> {
        self.0.get("helmOptions")
    }
    /// `helmAction` (None when absent or not a string).
    pub fn helm_action(self) -> Option<&'a str> {
        opt_str_at(self.0, "/helmAction")
    }
    /// `helmAction: Uninstall`.
    pub fn uninstall(self) -> bool {
        str_at(self.0, "/helmAction") == "Uninstall"
    }
}

/// One entry of a ServiceSet's `status.services[]`.
#[derive(Debug, Clone, Copy)]
pub struct ServiceStatus<'a>(pub &'a Value);

impl<'a> ServiceStatus<'a> {
    pub fn json(self) -> &'a Value {
        self.0
    }
    pub fn name(self) -> &'a str {
        str_at(self.0, "/name")
    }
    pub fn namespace(self) -> &'a str {
        str_at(self.0, "/namespace")
    }
    pub fn state(self) -> &'a str {
        str_at(self.0, "/state")
    }
    pub fn failure_message(self) -> &'a str {
        str_at(self.0, "/failureMessage")
    }
    pub fn last_state_transition_time(self) -> &'a str {
        str_at(self.0, "/lastStateTransitionTime")
    }
    /// `version`: what was last confirmed Deployed.
    pub fn version(self) -> &'a str {
        str_at(self.0, "/version")
    }
    /// `type`: Helm, Kustomize or Resource ("" when unset).
    pub fn type_(self) -> &'a str {
        str_at(self.0, "/type")
    }
    /// `conditions[]`.
    pub fn conditions(self) -> impl Iterator<Item = Condition<'a>> {
        items_at(self.0, "/conditions").iter().map(Condition)
    }
}

/// A StateManagementProvider.
#[derive(Debug, Clone, Copy)]
pub struct StateManagementProvider<'a>(pub &'a Value);

impl<'a> StateManagementProvider<'a> {
    pub fn meta(self) -> Object<'a> {
        Object(self.0)
    }
    pub fn name(self) -> &'a str {
        self.meta().name()
    }
    /// `spec.selector` (Null when absent: kcm refuses such an SMP).
    pub fn selector(self) -> &'a Value {
        self.0.at("/spec/selector").unwrap_or(&Value::Null)
    }
    pub fn suspended(self) -> bool {
        bool_at(self.0, "/spec/suspend") == Some(true)
    }
    /// `status.ready` is true.
    pub fn ready(self) -> bool {
        bool_at(self.0, "/status/ready") == Some(true)
    }
    /// kcm has written `status.ready`.
    pub fn ready_recorded(self) -> bool {
        self.0.at("/status/ready").is_some()
    }
    /// `spec.adapter` as written (None when absent).
    pub fn adapter_json(self) -> Option<&'a Value> {
        self.0.at("/spec/adapter")
    }
    /// `spec.provisioner[]` as written (none when absent or not a list).
    pub fn provisioner_items(self) -> &'a [Value] {
        items_at(self.0, "/spec/provisioner")
    }
    /// `spec.adapter`.
    pub fn adapter(self) -> Reference {
        Reference::from_json(self.0.at("/spec/adapter").unwrap_or(&Value::Null))
    }
    /// `spec.provisioner[]`.
    pub fn provisioners(self) -> Vec<Reference> {
        items_at(self.0, "/spec/provisioner")
            .iter()
            .map(Reference::from_json)
            .collect()
    }
    /// The adapter, then the provisioners.
    pub fn references(self) -> Vec<Reference> {
        let mut all = vec![self.adapter()];
        all.extend(self.provisioners());
        all
    }
    /// `spec.provisionerCRDs[]` as written.
    pub fn provisioner_crd_items(self) -> &'a [Value] {
        items_at(self.0, "/spec/provisionerCRDs")
    }
    /// `spec.provisionerCRDs[]`.
    pub fn provisioner_crds(self) -> Vec<ProvisionerCrds<'a>> {
        items_at(self.0, "/spec/provisionerCRDs")
            .iter()
            .map(|g| ProvisionerCrds {
                group: str_at(g, "/group"),
                version: str_at(g, "/version"),
                resources: items_at(g, "/resources")
                    .iter()
                    .filter_map(Value::as_str)
                    .collect(),
            })
            .collect()
    }
}

/// A reference of an SMP (`spec.adapter`, `spec.provisioner[]`): the object whose readiness
/// rule kcm evaluates.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Reference {
    pub api_version: String,
    pub kind: String,
    pub name: String,
    pub namespace: String,
    pub readiness_rule: String,
}

impl Reference {
    pub fn from_json(v: &Value) -> Reference {
        let s = |k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_string();
        Reference {
            api_version: s("apiVersion"),
            kind: s("kind"),
            name: s("name"),
            namespace: s("namespace"),
            readiness_rule: s("readinessRule"),
        }
    }

    /// Go's `%s` of the struct, as kcm's error messages print it.
    pub fn go_format(&self) -> String {
        format!(
            "{{{} {} {} {} {}}}",
            self.api_version, self.kind, self.name, self.namespace, self.readiness_rule
        )
    }
}

/// One `spec.provisionerCRDs[]` entry: CRDs `<resource>.<group>` that must serve `version`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProvisionerCrds<'a> {
    pub group: &'a str,
    pub version: &'a str,
    pub resources: Vec<&'a str>,
}

impl ProvisionerCrds<'_> {
    /// The CRD names, `<resource>.<group>`.
    pub fn crd_names(&self) -> impl Iterator<Item = String> + '_ {
        self.resources.iter().map(|r| format!("{r}.{}", self.group))
    }
}

/// A ClusterDeployment or a MultiClusterService: what kcm derives a ServiceSet from.
#[derive(Debug, Clone, Copy)]
pub struct ServiceSource<'a>(pub &'a Value);

impl<'a> ServiceSource<'a> {
    pub fn meta(self) -> Object<'a> {
        Object(self.0)
    }
    /// `spec.serviceSpec.services`.
    pub fn services(self) -> &'a [Value] {
        items_at(self.0, "/spec/serviceSpec/services")
    }
    /// `spec.serviceSpec.services`, each a view.
    pub fn service_views(self) -> impl Iterator<Item = Service<'a>> {
        self.services().iter().map(Service)
    }
    /// A ClusterDeployment's `spec.template` (its ClusterTemplate).
    pub fn cluster_template(self) -> &'a str {
        str_at(self.0, "/spec/template")
    }
    /// A ClusterDeployment's `spec.credential`.
    pub fn credential(self) -> &'a str {
        str_at(self.0, "/spec/credential")
    }
    /// A ClusterDeployment's `spec.propagateCredentials` is true.
    pub fn propagate_credentials(self) -> bool {
        bool_at(self.0, "/spec/propagateCredentials") == Some(true)
    }
    /// `spec.serviceSpec.provider.name` as written ("" when unset).
    pub fn provider_name_as_written(self) -> &'a str {
        str_at(self.0, "/spec/serviceSpec/provider/name")
    }
    /// `spec.serviceSpec.provider.config` (None when absent or null: a nil `*apiextv1.JSON`).
    pub fn provider_config(self) -> Option<&'a Value> {
        self.0
            .at("/spec/serviceSpec/provider/config")
            .filter(|c| !c.is_null())
    }
    /// kcm reads the deprecated `serviceSpec` fields: neither a provider name nor a config.
    pub fn deprecated_fields_used(self) -> bool {
        self.provider_name_as_written().is_empty() && self.provider_config().is_none()
    }
    /// `spec.serviceSpec.provider.name`, or kcm's default provider when empty.
    pub fn provider_name(self) -> &'a str {
        match str_at(self.0, "/spec/serviceSpec/provider/name") {
            "" => DEFAULT_PROVIDER,
            n => n,
        }
    }
    /// `spec.serviceSpec.provider.selfManagement` is true.
    pub fn self_management(self) -> bool {
        bool_at(self.0, "/spec/serviceSpec/provider/selfManagement") == Some(true)
    }
    /// `spec.serviceSpec` (None when absent).
    pub fn service_spec(self) -> Option<&'a Value> {
        self.0.at("/spec/serviceSpec")
    }
    /// A MultiClusterService's `spec.clusterSelector`.
    pub fn cluster_selector(self) -> Option<&'a Value> {
        self.0.at("/spec/clusterSelector")
    }
    /// A MultiClusterService's `spec.dependsOn[]` as written.
    pub fn depends_on_items(self) -> &'a [Value] {
        items_at(self.0, "/spec/dependsOn")
    }
    /// A MultiClusterService's `spec.dependsOn` names.
    pub fn depends_on(self) -> Vec<&'a str> {
        items_at(self.0, "/spec/dependsOn")
            .iter()
            .filter_map(Value::as_str)
            .collect()
    }
    /// A MultiClusterService's `spec.clusterSelector` selects no ClusterDeployment: kcm lists
    /// ClusterDeployments only when the selector is not empty (`if !selector.Empty()`).
    /// A selector that does not parse is not called empty (kcm fails on it instead).
    pub fn selects_no_cluster(self) -> bool {
        match self.cluster_selector() {
            None | Some(Value::Null) => true,
            Some(sel) => Selector::parse(sel).is_ok_and(|s| s.is_empty()),
        }
    }
    /// A MultiClusterService's `status.matchingClusters`.
    pub fn matching_clusters(self) -> impl Iterator<Item = MatchingCluster<'a>> {
        items_at(self.0, "/status/matchingClusters")
            .iter()
            .map(MatchingCluster)
    }
}

/// The cluster a ServiceSet deploys to, as an index key: its ClusterDeployment's namespace
/// and name, None for the management cluster.
pub type ClusterTarget<'a> = Option<(&'a str, &'a str)>;

/// One `status.matchingClusters[]` entry of a MultiClusterService: a target (a
/// ClusterDeployment, or the SveltosCluster `mgmt/mgmt` of self-management).
#[derive(Debug, Clone, Copy)]
pub struct MatchingCluster<'a>(pub &'a Value);

impl<'a> MatchingCluster<'a> {
    pub fn kind(self) -> &'a str {
        str_at(self.0, "/kind")
    }
    pub fn name(self) -> &'a str {
        str_at(self.0, "/name")
    }
    pub fn namespace(self) -> &'a str {
        str_at(self.0, "/namespace")
    }
    pub fn deployed(self) -> bool {
        bool_at(self.0, "/deployed") == Some(true)
    }
    pub fn reason(self) -> &'a str {
        str_at(self.0, "/reason")
    }
    pub fn message(self) -> &'a str {
        str_at(self.0, "/message")
    }
    /// When `deployed` last changed (or the target was first seen).
    pub fn last_transition_time(self) -> &'a str {
        str_at(self.0, "/lastTransitionTime")
    }
    /// The self-management target.
    pub fn is_management(self) -> bool {
        self.kind() != "ClusterDeployment"
    }
    /// The target as an index key (equal to [`ServiceSet::target`] of the ServiceSet that
    /// deploys to it): its ClusterDeployment's namespace and name, None for
    /// the management cluster.
    pub fn target(self) -> ClusterTarget<'a> {
        (!self.is_management()).then(|| (self.namespace(), self.name()))
    }
    /// The MultiClusterServices a blocked target waits on, with what kcm says of each
    /// (`blockedMessage`: `... waiting on a (ServiceSet not yet created), b (1/2 services
    /// deployed) and 2 more`).
    pub fn waiting_on(self) -> Vec<(&'a str, &'a str)> {
        let msg = self.message();
        let Some(i) = msg.find(": waiting on ") else {
            return Vec::new();
        };
        let mut rest = &msg[i + ": waiting on ".len()..];
        if let Some(j) = rest.rfind(" and ")
            && rest[j + 5..].ends_with(" more")
        {
            rest = &rest[..j];
        }
        rest.split("), ")
            .filter_map(|part| {
                let (name, why) = part.split_once(" (")?;
                Some((name.trim(), why.trim_end_matches(')')))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_target_entry_and_the_service_set_deploying_there_have_one_key() {
        let entry = |kind: &str, ns: &str, name: &str| json!({"kind": kind, "namespace": ns, "name": name, "deployed": true});
        let (cd, mgmt) = (
            entry("ClusterDeployment", "team-a", "prod"),
            entry("SveltosCluster", "mgmt", "mgmt"),
        );
        let set =
            |spec: Value| json!({"metadata": {"namespace": "team-a", "name": "s"}, "spec": spec});
        let on_cd = set(json!({"cluster": "prod"}));
        let self_managed = set(json!({"provider": {"selfManagement": true}, "cluster": "prod"}));
        let no_cluster = set(json!({}));
        let other_ns = json!({"metadata": {"namespace": "team-b"}, "spec": {"cluster": "prod"}});
        assert_eq!(MatchingCluster(&cd).target(), Some(("team-a", "prod")));
        assert_eq!(MatchingCluster(&mgmt).target(), None);
        assert_eq!(ServiceSet(&on_cd).target(), MatchingCluster(&cd).target());
        assert_eq!(ServiceSet(&self_managed).target(), None);
        assert_eq!(ServiceSet(&no_cluster).target(), None);
        assert_ne!(
            ServiceSet(&other_ns).target(),
            MatchingCluster(&cd).target()
        );
    }

    #[test]
    fn service_set_view() {
        let v = json!({"kind": "ServiceSet", "metadata": {"name": "s", "namespace": "n",
            "annotations": {ANNOTATION_PAUSED: ""}},
            "spec": {"cluster": "", "provider": {"name": "p", "config": {"a": 1}},
                "services": [{"name": "a", "template": "t", "helmAction": "Uninstall"},
                             {"name": "b", "namespace": "x"}]},
            "status": {"services": [{"name": "a", "namespace": "default", "state": "Deployed"}]}});
        let s = ServiceSet(&v);
        assert_eq!(
            (s.name(), s.namespace(), s.provider_name()),
            ("s", "n", "p")
        );
        assert!(s.self_management() && s.paused());
        assert_eq!(s.provider_config(), Some(&json!({"a": 1})));
        let svcs: Vec<_> = s
            .services()
            .map(|x| (x.name(), x.namespace(), x.uninstall()))
            .collect();
        assert_eq!(svcs, [("a", "default", true), ("b", "x", false)]);
        assert_eq!(s.service("b").map(|x| x.template()), Some(""));
        assert_eq!(
            s.service_statuses().next().map(|x| x.state()),
            Some("Deployed")
        );
    }

    #[test]
    fn malformed_objects_read_as_empty() {
        let v = json!({"spec": {"services": "x", "provider": 3}, "status": []});
        let s = ServiceSet(&v);
        assert_eq!(s.services().count(), 0);
        assert_eq!(s.provider_name(), "");
        assert!(s.provider_config().is_none());
        let smp = StateManagementProvider(&v);
        assert!(smp.selector().is_null() && !smp.ready() && smp.provisioners().is_empty());
        assert_eq!(smp.adapter(), Reference::default());
    }

    #[test]
    fn smp_references_and_crds() {
        let v = json!({"spec": {"adapter": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "a",
            "namespace": "x", "readinessRule": "true"},
            "provisioner": [{"kind": "Deployment", "name": "p"}],
            "provisionerCRDs": [{"group": "g.io", "version": "v1", "resources": ["as", "bs"]}]}});
        let smp = StateManagementProvider(&v);
        assert_eq!(smp.references().len(), 2);
        assert_eq!(smp.adapter().go_format(), "{apps/v1 Deployment a x true}");
        let crds = smp.provisioner_crds();
        assert_eq!(
            crds[0].crd_names().collect::<Vec<_>>(),
            ["as.g.io", "bs.g.io"]
        );
    }

    #[test]
    fn service_and_source_views() {
        let v = json!({"spec": {"credential": "c", "propagateCredentials": true,
            "dependsOn": ["m"], "serviceSpec": {"services": [
                {"name": "a", "disable": true, "templateChain": "ch", "valuesFrom": [{"kind": "Secret", "name": "v"}],
                 "dependsOn": [{"name": "b"}, {"name": "c", "namespace": "x"}]},
                {"name": "b", "namespace": "y", "dependsOn": "no"}]}}});
        let src = ServiceSource(&v);
        assert_eq!((src.credential(), src.propagate_credentials()), ("c", true));
        assert_eq!(src.depends_on_items().len(), 1);
        let svcs: Vec<_> = src.service_views().collect();
        let (a, b) = (svcs[0], svcs[1]);
        assert!(a.disabled() && !b.disabled());
        assert_eq!((a.key(), b.key()), (("default", "a"), ("y", "b")));
        assert_eq!(a.dependency_keys(), [("default", "b"), ("x", "c")]);
        assert!(b.dependency_keys().is_empty());
        assert_eq!((a.template_chain(), b.namespace_as_written()), ("ch", "y"));
        let vf: Vec<_> = a.values_from_refs().map(|r| (r.kind(), r.name())).collect();
        assert_eq!(vf, [("Secret", "v")]);
        assert_eq!(b.values_from_refs().count(), 0);
    }
}

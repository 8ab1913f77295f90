//! Derive the k0rdent `ServiceSet` that kcm writes for a `ClusterDeployment` or a
//! `MultiClusterService`.
//!
//! This mirrors kcm (k0rdent/kcm, `internal/serviceset/{util,builder}.go`,
//! `internal/controller/{clusterdeployment,multiclusterservice}_controller.go`):
//!
//! * name/namespace: `serviceset.ObjectKey` (CD: the CD's own key; MCS:
//!   `<cd>-<hex(sha256(mcs.name)[:4])>` in the CD namespace, or
//!   `management-<hash>` in the system namespace for self-management);
//! * metadata: one controller ownerReference (`metav1.NewControllerRef`) to the CD
//!   when a CD is given (even for an MCS), else to the MCS; labels from the
//!   StateManagementProvider selector (`extractRequiredLabels`);
//! * `spec.provider`: `StateManagementProviderConfigFromServiceSpec`, then
//!   `selfManagement = (cd == nil)`;
//! * `spec.services`: `ResolveServicesToApply` + `BuildServicesList` with no stored
//!   ServiceSet (so nothing is "locked" and there are no upgrade paths).
//!
//! Objects are handled the way kcm sees them: the inputs are first given the CRD
//! defaults the API server would have applied (a manifest from a file may lack them),
//! then every typed field goes through the same Go JSON round trip (`omitempty`,
//! `metav1.Duration` normalisation, unknown fields dropped) that happens when kcm
//! decodes the CD/MCS and encodes the ServiceSet. The result is the ServiceSet as
//! the API server stores it, i.e. including the ServiceSet CRD defaults.
//!
//! Pure: no I/O, no clock, no printing.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

/// `kube.DefaultStateManagementProvider`.
pub const DEFAULT_PROVIDER: &str = "ksm-projectsveltos";

const GROUP_VERSION: &str = "k0rdent.mirantis.com/v1beta1";
const CD_KIND: &str = "ClusterDeployment";
const MCS_KIND: &str = "MultiClusterService";
const SS_KIND: &str = "ServiceSet";
const ST_KIND: &str = "ServiceTemplate";

/// The derived ServiceSet and a one-line explanation for the user.
#[derive(Debug, Clone, PartialEq)]
pub struct Derived {
    pub service_set: Value,
    pub explanation: String,
}

// ------------------------------------------------------------------------------------------
// Public API
// ------------------------------------------------------------------------------------------

/// The ServiceSet kcm's ClusterDeployment controller writes for `cd`
/// (`createOrUpdateServiceSet`, key = `client.ObjectKeyFromObject(cd)`).
///
/// `smp` is the StateManagementProvider named by `spec.serviceSpec.provider.name` (or the
/// default one); with `None` no labels are added. `templates` are candidate
/// ServiceTemplates; only those in the CD namespace are used.
pub fn from_cluster_deployment(
    cd: &Value,
    smp: Option<&Value>,
    templates: &[Value],
) -> Result<Derived, String> {
    let cd_meta = ObjMeta::read(cd, CD_KIND, true)?;
    let service_spec = defaulted_service_spec(cd, &cd_meta.display())?;
    let mut notes = Vec::new();
    if cd_meta.deleting {
        notes.push(
            "the ClusterDeployment is being deleted, kcm no longer updates its ServiceSet"
                .to_string(),
        );
    }
    build(
        Source {
            kind: CD_KIND,
            display: cd_meta.display(),
        },
        &cd_meta.namespace,
        &cd_meta.name,
        Some(&cd_meta),
        None,
        &service_spec,
        smp,
        templates,
        notes,
    )
}

/// The ServiceSet kcm's MultiClusterService controller writes for `mcs` and one matching
/// ClusterDeployment `cd`, or, with `cd = None`, the self-management ServiceSet
/// (only when `spec.serviceSpec.provider.selfManagement` is true).
pub fn from_multi_cluster_service(
    mcs: &Value,
    cd: Option<&Value>,
    smp: Option<&Value>,
    templates: &[Value],
    system_namespace: &str,
) -> Result<Derived, String> {
    let mcs_meta = ObjMeta::read(mcs, MCS_KIND, false)?;
    let mcs_display = mcs_meta.display();
    let service_spec = defaulted_service_spec(mcs, &mcs_display)?;
    let self_management = match service_spec
        .get("provider")
        .and_then(|p| p.get("selfManagement"))
    {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => {
            return Err(format!(
                "{mcs_display}: spec.serviceSpec.provider.selfManagement must be a boolean"
            ));
        }
    };
    let mut notes = Vec::new();
    let cd_meta = match cd {
        None => {
            if !self_management {
                return Err(format!(
                    "{mcs_display} does not set spec.serviceSpec.provider.selfManagement, so kcm \
                     renders no management-cluster ServiceSet for it: an MCS renders one ServiceSet \
                     per matching ClusterDeployment, give the ClusterDeployment to render for"
                ));
            }
            if system_namespace.is_empty() {
                return Err("the system namespace must not be empty".to_string());
            }
            None
        }
        Some(cd) => {
            let m = ObjMeta::read(cd, CD_KIND, true)?;
            if m.deleting {
                return Err(format!(
                    "{} is being deleted: kcm skips it and renders no ServiceSet for {mcs_display}",
                    m.display()
                ));
            }
            check_cluster_selector(mcs, &mcs_display, &m)?;
            Some(m)
        }
    };
    if let Some(deps) = mcs.pointer("/spec/dependsOn").and_then(Value::as_array)
        && !deps.is_empty()
    {
        let names: Vec<&str> = deps.iter().filter_map(Value::as_str).collect();
        notes.push(format!(
            "kcm creates it only once the MultiClusterServices it depends on ({}) have deployed \
             their services on this target, which is not checked here",
            names.join(", ")
        ));
    }
    let (ns, name) = key_for(cd_meta.as_ref(), &mcs_meta.name, system_namespace);
    build(
        Source {
            kind: MCS_KIND,
            display: mcs_display,
        },
        &ns,
        &name,
        cd_meta.as_ref(),
        Some(&mcs_meta),
        &service_spec,
        smp,
        templates,
        notes,
    )
}

/// `serviceset.ObjectKey`: the (namespace, name) of the ServiceSet an MCS produces for
/// `cd` (or for the management cluster when `cd` is `None`).
pub fn object_key(cd: Option<&Value>, mcs: &Value, system_namespace: &str) -> (String, String) {
    let mcs_name = str_at(mcs, "/metadata/name");
    match cd {
        None => (
            system_namespace.to_string(),
            format!("management-{}", mcs_name_hash(mcs_name)),
        ),
        Some(cd) => (
            str_at(cd, "/metadata/namespace").to_string(),
            format!(
                "{}-{}",
                str_at(cd, "/metadata/name"),
                mcs_name_hash(mcs_name)
            ),
        ),
    }
}

/// `extractRequiredLabels` (builder.go): the labels a ServiceSet needs so that the
/// StateManagementProvider's `spec.selector` selects it. `matchLabels` are copied; an `In`
/// expression gives the first of its sorted values; `Exists` gives `""` (unless already
/// set); negative and range requirements are ignored. A nil selector is an error, and so is
/// a selector `metav1.LabelSelectorAsSelector` rejects.
pub fn selector_labels(selector: &Value) -> Result<BTreeMap<String, String>, String> {
    if selector.is_null() {
        return Err("selector cannot be nil".to_string());
    }
    let reqs = parse_selector(selector)?;
    let mut out = BTreeMap::new();
    // maps.Copy(result, selector.MatchLabels)
    if let Some(Value::Object(ml)) = selector.get("matchLabels") {
        for (k, v) in ml {
            if let Value::String(v) = v {
                out.insert(k.clone(), v.clone());
            }
        }
    }
    for r in &reqs {
        match r.op {
            Op::Equals | Op::In => {
                // sets.String.List() is sorted; In takes the first value.
                let vals: BTreeSet<&String> = r.values.iter().collect();
                if let Some(first) = vals.into_iter().next() {
                    out.insert(r.key.clone(), first.clone());
                }
            }
            Op::Exists => {
                out.entry(r.key.clone()).or_default();
            }
            Op::NotIn | Op::DoesNotExist => {}
        }
    }
    Ok(out)
}

// ------------------------------------------------------------------------------------------
// Building
// ------------------------------------------------------------------------------------------

struct Source {
    kind: &'static str,
    display: String,
}

#[derive(Debug, Clone)]
struct ObjMeta {
    kind: &'static str,
    name: String,
    namespace: String,
    uid: Option<String>,
    labels: BTreeMap<String, String>,
    deleting: bool,
}

impl ObjMeta {
    fn read(obj: &Value, kind: &'static str, namespaced: bool) -> Result<ObjMeta, String> {
        if !obj.is_object() {
            return Err(format!("a {kind} must be a JSON object"));
        }
        if let Some(k) = obj.get("kind").and_then(Value::as_str)
            && k != kind
        {
            return Err(format!("expected a {kind}, got a {k}"));
        }
        let name = str_at(obj, "/metadata/name");
        if name.is_empty() {
            return Err(format!("the {kind} has no metadata.name"));
        }
        let namespace = str_at(obj, "/metadata/namespace");
        if namespaced && namespace.is_empty() {
            return Err(format!(
                "{kind} {name} has no metadata.namespace (needed for the ServiceSet namespace)"
            ));
        }
        let uid = obj
            .pointer("/metadata/uid")
            .and_then(Value::as_str)
            .filter(|u| !u.is_empty())
            .map(str::to_string);
        let mut labels = BTreeMap::new();
        match obj.pointer("/metadata/labels") {
            None | Some(Value::Null) => {}
            Some(Value::Object(m)) => {
                for (k, v) in m {
                    let Value::String(v) = v else {
                        return Err(format!("{kind} {name}: label {k} is not a string"));
                    };
                    labels.insert(k.clone(), v.clone());
                }
            }
            Some(_) => return Err(format!("{kind} {name}: metadata.labels is not an object")),
        }
        let deleting = !matches!(
            obj.pointer("/metadata/deletionTimestamp"),
            None | Some(Value::Null)
        );
        Ok(ObjMeta {
            kind,
            name: name.to_string(),
            namespace: if namespaced {
                namespace.to_string()
            } else {
                String::new()
            },
            uid,
            labels,
            deleting,
        })
    }

    fn display(&self) -> String {
        if self.namespace.is_empty() {
            format!("{} {}", self.kind, self.name)
        } else {
            format!("{} {}/{}", self.kind, self.namespace, self.name)
        }
    }
}

fn mcs_name_hash(name: &str) -> String {
    let sum = Sha256::digest(name.as_bytes());
    sum[..4].iter().map(|b| format!("{b:02x}")).collect()
}

fn key_for(cd: Option<&ObjMeta>, mcs_name: &str, system_namespace: &str) -> (String, String) {
    match cd {
        None => (
            system_namespace.to_string(),
            format!("management-{}", mcs_name_hash(mcs_name)),
        ),
        Some(cd) => (
            cd.namespace.clone(),
            format!("{}-{}", cd.name, mcs_name_hash(mcs_name)),
        ),
    }
}

#[allow(clippy::too_many_arguments)]
fn build(
    source: Source,
    ss_namespace: &str,
    ss_name: &str,
    cd: Option<&ObjMeta>,
    mcs: Option<&ObjMeta>,
    service_spec: &Map<String, Value>,
    smp: Option<&Value>,
    templates: &[Value],
    mut notes: Vec<String>,
) -> Result<Derived, String> {
    let ctx = &source.display;
    // StateManagementProviderConfigFromServiceSpec, then SelfManagement = (cd == nil).
    let mut provider = provider_config(service_spec, ctx)?;
    let provider_name = provider
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    provider.remove("selfManagement");
    if cd.is_none() {
        provider.insert("selfManagement".into(), Value::Bool(true));
    }

    // Labels from the StateManagementProvider selector.
    let labels = match smp {
        None => None,
        Some(smp) => {
            if let Some(n) = smp.pointer("/metadata/name").and_then(Value::as_str)
                && n != provider_name
            {
                return Err(format!(
                    "{ctx} uses StateManagementProvider {provider_name}, but {n} was given"
                ));
            }
            let sel = smp.pointer("/spec/selector").unwrap_or(&Value::Null);
            Some(selector_labels(sel).map_err(|e| {
                format!(
                    "failed to extract required labels from StateManagementProvider \
                     {provider_name} selector: {e}"
                )
            })?)
        }
    };

    let services = resolve_services(service_spec, ss_namespace, templates, ctx, &mut notes)?;

    // metadata
    let mut meta = Map::new();
    meta.insert("name".into(), Value::String(ss_name.to_string()));
    meta.insert("namespace".into(), Value::String(ss_namespace.to_string()));
    if let Some(labels) = &labels
        && !labels.is_empty()
    {
        let m: Map<String, Value> = labels
            .iter()
            .map(|(k, v)| (k.clone(), Value::String(v.clone())))
            .collect();
        meta.insert("labels".into(), Value::Object(m));
    }
    let owner = cd.or(mcs).ok_or("internal: no owner")?;
    match &owner.uid {
        Some(uid) => {
            let mut r = Map::new();
            r.insert("apiVersion".into(), GROUP_VERSION.into());
            r.insert("kind".into(), owner.kind.into());
            r.insert("name".into(), owner.name.clone().into());
            r.insert("uid".into(), uid.clone().into());
            r.insert("controller".into(), true.into());
            r.insert("blockOwnerDeletion".into(), true.into());
            meta.insert(
                "ownerReferences".into(),
                Value::Array(vec![Value::Object(r)]),
            );
        }
        None => notes.push(format!(
            "no ownerReference: {} has no metadata.uid",
            owner.display()
        )),
    }

    // spec (ServiceSetSpec: cluster is not omitempty, the rest is)
    let mut spec = Map::new();
    spec.insert(
        "cluster".into(),
        Value::String(cd.map(|c| c.name.clone()).unwrap_or_default()),
    );
    if let Some(mcs) = mcs {
        spec.insert("multiClusterService".into(), mcs.name.clone().into());
    }
    spec.insert("provider".into(), Value::Object(provider));
    let n_services = services.len();
    if !services.is_empty() {
        spec.insert("services".into(), Value::Array(services));
    }

    let mut ss = Map::new();
    ss.insert("apiVersion".into(), GROUP_VERSION.into());
    ss.insert("kind".into(), SS_KIND.into());
    ss.insert("metadata".into(), Value::Object(meta));
    ss.insert("spec".into(), Value::Object(spec));

    let label_note = match &labels {
        Some(_) => "labels from its selector".to_string(),
        None => {
            format!("selector labels unknown, StateManagementProvider {provider_name} not given")
        }
    };
    let target = match (cd, source.kind) {
        (Some(cd), MCS_KIND) => format!(" for {}", cd.display()),
        (None, _) => " for the management cluster".to_string(),
        _ => String::new(),
    };
    let mut explanation = format!(
        "derived ServiceSet {ss_namespace}/{ss_name} from {}{target} (provider {provider_name}, \
         {label_note}; {n_services} service(s))",
        source.display
    );
    for n in notes {
        explanation.push_str("; ");
        explanation.push_str(&n);
    }
    Ok(Derived {
        service_set: Value::Object(ss),
        explanation,
    })
}

/// An MCS only renders for ClusterDeployments its `spec.clusterSelector` selects. An
/// empty selector selects none (`if !selector.Empty()` guards the List).
fn check_cluster_selector(mcs: &Value, mcs_display: &str, cd: &ObjMeta) -> Result<(), String> {
    let sel = match mcs.pointer("/spec/clusterSelector") {
        None | Some(Value::Null) => Value::Object(Map::new()),
        Some(v) => v.clone(),
    };
    let reqs = parse_selector(&sel).map_err(|e| {
        format!("{mcs_display}: failed to convert ClusterSelector to selector: {e}")
    })?;
    if reqs.is_empty() {
        return Err(format!(
            "{mcs_display} has an empty spec.clusterSelector, which kcm treats as selecting no \
             ClusterDeployment"
        ));
    }
    if !reqs.iter().all(|r| r.matches(&cd.labels)) {
        return Err(format!(
            "{mcs_display}: spec.clusterSelector does not select {} (its labels do not match), \
             so kcm renders no ServiceSet for it",
            cd.display()
        ));
    }
    Ok(())
}

// ------------------------------------------------------------------------------------------
// ServiceSpec: CRD defaults, provider config
// ------------------------------------------------------------------------------------------

fn set_default(m: &mut Map<String, Value>, key: &str, v: Value) {
    // The API server prunes nulls of non-nullable fields before defaulting.
    if matches!(m.get(key), None | Some(Value::Null)) {
        m.insert(key.to_string(), v);
    }
}

fn for_each_item(m: &mut Map<String, Value>, key: &str, f: impl Fn(&mut Map<String, Value>)) {
    if let Some(Value::Array(items)) = m.get_mut(key) {
        for it in items {
            if let Value::Object(o) = it {
                f(o);
            }
        }
    }
}

fn sub_object<'a>(m: &'a mut Map<String, Value>, key: &str) -> Option<&'a mut Map<String, Value>> {
    match m.get_mut(key) {
        Some(Value::Object(o)) => Some(o),
        _ => None,
    }
}

/// `spec.serviceSpec` with the CD/MCS CRD defaults applied.
///
/// The defaults (`priority: 100`, `syncMode: Continuous`, `stopOnConflict: false`,
/// `continueOnError: false`, service `namespace: default`, the helmOptions and
/// policyRefs/templateResourceRefs item defaults) are applied by the API server, so an
/// object read from the cluster always has them; a manifest from a file may not, so they
/// are applied here. `spec.serviceSpec` itself has no default: when it is absent, nothing
/// below it is defaulted (kcm then sees a zero ServiceSpec).
fn defaulted_service_spec(obj: &Value, display: &str) -> Result<Map<String, Value>, String> {
    let mut ss = match obj.pointer("/spec/serviceSpec") {
        None | Some(Value::Null) => return Ok(Map::new()),
        Some(Value::Object(m)) => m.clone(),
        Some(_) => return Err(format!("{display}: spec.serviceSpec must be an object")),
    };
    set_default(&mut ss, "syncMode", "Continuous".into());
    set_default(&mut ss, "priority", 100.into());
    set_default(&mut ss, "stopOnConflict", false.into());
    set_default(&mut ss, "continueOnError", false.into());
    for_each_item(&mut ss, "templateResourceRefs", |r| {
        set_default(r, "ignoreStatusChanges", false.into());
        set_default(r, "optional", false.into());
    });
    for_each_item(&mut ss, "policyRefs", |r| {
        set_default(r, "deploymentType", "Remote".into());
        set_default(r, "optional", false.into());
        set_default(r, "skipNamespaceCreation", false.into());
        set_default(r, "tier", 100.into());
    });
    for_each_item(&mut ss, "services", |s| {
        set_default(s, "namespace", "default".into());
        if let Some(ho) = sub_object(s, "helmOptions") {
            default_helm_options(ho);
        }
    });
    Ok(ss)
}

/// The `helmOptions` defaults; identical in the CD, MCS, ServiceTemplate and ServiceSet CRDs.
fn default_helm_options(ho: &mut Map<String, Value>) {
    if let Some(o) = sub_object(ho, "installOptions") {
        set_default(o, "createNamespace", true.into());
        set_default(o, "disableHooks", false.into());
        set_default(o, "replace", true.into());
        set_default(o, "takeOwnership", false.into());
    }
    if let Some(o) = sub_object(ho, "uninstallOptions") {
        set_default(o, "disableHooks", false.into());
    }
    if let Some(o) = sub_object(ho, "upgradeOptions") {
        for k in [
            "cleanupOnFail",
            "disableHooks",
            "force",
            "recreate",
            "resetThenReuseValues",
            "resetValues",
            "reuseValues",
            "subNotes",
            "takeOwnership",
            "upgradeCRDs",
        ] {
            set_default(o, k, false.into());
        }
        set_default(o, "maxHistory", 2.into());
    }
}

/// `StateManagementProviderConfigFromServiceSpec` (util.go). Returns the
/// `StateManagementProviderConfig` as JSON (`config`, `name`, `selfManagement`, all omitempty).
fn provider_config(ss: &Map<String, Value>, ctx: &str) -> Result<Map<String, Value>, String> {
    let path = |f: &str| format!("{ctx}: spec.serviceSpec.{f}");
    let provider = match ss.get("provider") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(p)) => p.clone(),
        Some(_) => return Err(format!("{} must be an object", path("provider"))),
    };
    let name = match provider.get("name") {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(_) => return Err(format!("{} must be a string", path("provider.name"))),
    };
    // *apiextv1.JSON: a JSON null leaves the pointer nil.
    let config = provider.get("config").filter(|c| !c.is_null()).cloned();
    let self_management = match provider.get("selfManagement") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => {
            return Err(format!(
                "{} must be a boolean",
                path("provider.selfManagement")
            ));
        }
    };

    let mut out = Map::new();
    match (name.is_empty(), config) {
        // Neither name nor config: default provider, config from the deprecated fields.
        (true, None) => {
            out.insert("config".into(), Value::Object(deprecated_config(ss, ctx)?));
            out.insert("name".into(), DEFAULT_PROVIDER.into());
        }
        // Config only: default provider, the user's config (deprecated fields dropped).
        (true, Some(c)) => {
            out.insert("config".into(), c);
            out.insert("name".into(), DEFAULT_PROVIDER.into());
        }
        // Name only: that provider, no config (deprecated fields dropped).
        (false, None) => {
            out.insert("name".into(), name.into());
        }
        // Both: the provider as given.
        (false, Some(c)) => {
            out.insert("config".into(), c);
            out.insert("name".into(), name.into());
        }
    }
    if self_management {
        out.insert("selfManagement".into(), true.into());
    }
    Ok(out)
}

/// The JSON kcm builds from the deprecated ServiceSpec fields (all omitempty; note
/// `reload` -> `reloader`).
fn deprecated_config(ss: &Map<String, Value>, ctx: &str) -> Result<Map<String, Value>, String> {
    let p = |f: &str| format!("{ctx}: spec.serviceSpec.{f}");
    let mut cfg = Map::new();
    let fields: [(&str, &str, &F); 9] = [
        ("syncMode", "syncMode", &F::Str),
        (
            "templateResourceRefs",
            "templateResourceRefs",
            &F::List(TEMPLATE_RESOURCE_REF),
        ),
        ("policyRefs", "policyRefs", &F::List(POLICY_REF)),
        ("driftIgnore", "driftIgnore", &F::List(PATCH_SELECTOR)),
        (
            "driftExclusions",
            "driftExclusions",
            &F::List(DRIFT_EXCLUSION),
        ),
        ("priority", "priority", &F::Int),
        ("stopOnConflict", "stopOnConflict", &F::Bool),
        ("reload", "reloader", &F::Bool),
        ("continueOnError", "continueOnError", &F::Bool),
    ];
    for (src, dst, f) in fields {
        if let Some(v) = go_roundtrip(ss.get(src), f, &p(src))? {
            cfg.insert(dst.to_string(), v);
        }
    }
    Ok(cfg)
}

// ------------------------------------------------------------------------------------------
// Services
// ------------------------------------------------------------------------------------------

struct Svc {
    name: String,
    namespace: String, // effective
    template: String,
    version: String,
    values: String,
    values_from: Option<Value>,
    helm_options: Option<Value>,
    helm_action: Option<Value>,
    depends_on: Vec<(String, String)>,
    disable: bool,
}

fn effective_namespace(ns: &str) -> String {
    if ns.is_empty() {
        "default".to_string()
    } else {
        ns.to_string()
    }
}

fn opt_str(m: &Map<String, Value>, key: &str, path: &str) -> Result<String, String> {
    match m.get(key) {
        None | Some(Value::Null) => Ok(String::new()),
        Some(Value::String(s)) => Ok(s.clone()),
        Some(_) => Err(format!("{path}.{key} must be a string")),
    }
}

fn decode_service(v: &Value, path: &str) -> Result<Svc, String> {
    let Value::Object(m) = v else {
        return Err(format!("{path} must be an object"));
    };
    let name = opt_str(m, "name", path)?;
    if name.is_empty() {
        return Err(format!("{path}.name is required"));
    }
    let template = opt_str(m, "template", path)?;
    if template.is_empty() {
        return Err(format!("{path} ({name}): template is required"));
    }
    let mut depends_on = Vec::new();
    match m.get("dependsOn") {
        None | Some(Value::Null) => {}
        Some(Value::Array(deps)) => {
            for (i, d) in deps.iter().enumerate() {
                let dp = format!("{path}.dependsOn[{i}]");
                let Value::Object(dm) = d else {
                    return Err(format!("{dp} must be an object"));
                };
                depends_on.push((
                    effective_namespace(&opt_str(dm, "namespace", &dp)?),
                    opt_str(dm, "name", &dp)?,
                ));
            }
        }
        Some(_) => return Err(format!("{path}.dependsOn must be a list")),
    }
    let disable = match m.get("disable") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err(format!("{path}.disable must be a boolean")),
    };
    Ok(Svc {
        namespace: effective_namespace(&opt_str(m, "namespace", path)?),
        version: opt_str(m, "version", path)?,
        values: opt_str(m, "values", path)?,
        values_from: go_roundtrip(
            m.get("valuesFrom"),
            &F::List(VALUES_FROM),
            &format!("{path}.valuesFrom"),
        )?,
        helm_options: go_roundtrip(
            m.get("helmOptions"),
            &F::OptObj(HELM_OPTIONS),
            &format!("{path}.helmOptions"),
        )?,
        helm_action: go_roundtrip(
            m.get("helmAction"),
            &F::OptStr,
            &format!("{path}.helmAction"),
        )?,
        name,
        template,
        depends_on,
        disable,
    })
}

/// `ResolveServiceVersions` for one service: `spec.version`, then
/// `spec.helm.chartSpec.version`, then the template name. The ServiceTemplate is looked
/// up in the ServiceSet namespace. A template without `metadata.namespace` is taken to
/// be in that namespace (a manifest file). `chartSpec.version` has the CRD default `*`.
fn resolve_version(svc: &Svc, ss_namespace: &str, templates: &[Value]) -> Result<String, String> {
    if !svc.version.is_empty() {
        return Ok(svc.version.clone());
    }
    let tpl = templates.iter().find(|t| {
        let kind_ok = t
            .get("kind")
            .and_then(Value::as_str)
            .is_none_or(|k| k == ST_KIND);
        let ns = str_at(t, "/metadata/namespace");
        kind_ok
            && str_at(t, "/metadata/name") == svc.template
            && (ns.is_empty() || ns == ss_namespace)
    });
    let Some(tpl) = tpl else {
        return Err(format!(
            "failed to fetch template {ss_namespace}/{}: ServiceTemplate not found among the {} \
             given (service {}/{} has no version, so kcm reads it from the template)",
            svc.template,
            templates.len(),
            svc.namespace,
            svc.name
        ));
    };
    let mut version = str_at(tpl, "/spec/version").to_string();
    if version.is_empty()
        && let Some(Value::Object(cs)) = tpl.pointer("/spec/helm/chartSpec")
    {
        version = match cs.get("version") {
            None | Some(Value::Null) => "*".to_string(), // CRD default
            Some(Value::String(s)) => s.clone(),
            Some(_) => {
                return Err(format!(
                    "ServiceTemplate {}: spec.helm.chartSpec.version must be a string",
                    svc.template
                ));
            }
        };
    }
    if version.is_empty() {
        version = svc.template.clone();
    }
    Ok(version)
}

/// `ResolveServicesToApply` + `BuildServicesList` with no stored ServiceSet, in the
/// converged state (every dependency eventually Deployed).
fn resolve_services(
    ss: &Map<String, Value>,
    ss_namespace: &str,
    templates: &[Value],
    ctx: &str,
    notes: &mut Vec<String>,
) -> Result<Vec<Value>, String> {
    let items = match ss.get("services") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(a)) => a.clone(),
        Some(_) => return Err(format!("{ctx}: spec.serviceSpec.services must be a list")),
    };
    let mut desired = Vec::with_capacity(items.len());
    for (i, it) in items.iter().enumerate() {
        let mut svc = decode_service(it, &format!("{ctx}: spec.serviceSpec.services[{i}]"))?;
        // Versions are resolved for every desired service, disabled ones included.
        svc.version = resolve_version(&svc, ss_namespace, templates)?;
        desired.push(svc);
    }

    // FilterServiceDependencies keys services by (effective namespace, name); a duplicate
    // key keeps the last definition.
    let mut by_key: BTreeMap<(String, String), usize> = BTreeMap::new();
    for (i, s) in desired.iter().enumerate() {
        by_key.insert((s.namespace.clone(), s.name.clone()), i);
    }
    if by_key.len() != desired.len() {
        notes.push(
            "duplicate services (same namespace/name): kcm keeps the last of each".to_string(),
        );
    }
    for s in &desired {
        for d in &s.depends_on {
            if !by_key.contains_key(d) {
                return Err(format!(
                    "service {}/{} depends on {}/{} which is not present in the desired services list",
                    s.namespace, s.name, d.0, d.1
                ));
            }
        }
    }

    // Converged state: a service is deployed once all its dependencies are, and a disabled
    // service is never written (so never Deployed). Least fixpoint: cycles never deploy.
    let mut deployable: BTreeSet<(String, String)> = BTreeSet::new();
    loop {
        let before = deployable.len();
        for (k, &i) in &by_key {
            let s = &desired[i];
            if !s.disable && s.depends_on.iter().all(|d| deployable.contains(d)) {
                deployable.insert(k.clone());
            }
        }
        if deployable.len() == before {
            break;
        }
    }

    let mut out = Vec::new();
    let mut disabled = Vec::new();
    let mut blocked = Vec::new();
    let mut waits = false;
    // BTreeMap iteration = sorted by (namespace, name), as kcm sorts the eligible services.
    for (k, &i) in &by_key {
        let s = &desired[i];
        if s.disable {
            disabled.push(format!("{}/{}", k.0, k.1));
            continue;
        }
        if !deployable.contains(k) {
            blocked.push(format!("{}/{}", k.0, k.1));
            continue;
        }
        if !s.depends_on.is_empty() {
            waits = true;
        }
        out.push(make_service(s));
    }
    if !disabled.is_empty() {
        notes.push(format!("disabled, left out: {}", disabled.join(", ")));
    }
    if !blocked.is_empty() {
        notes.push(format!(
            "left out, their dependencies never deploy (disabled or cyclic): {}",
            blocked.join(", ")
        ));
    }
    if waits {
        notes.push(
            "services with dependsOn are shown as converged: kcm adds each only after its \
             dependencies are Deployed"
                .to_string(),
        );
    }
    Ok(out)
}

/// `makeService`: the `ServiceWithValues` kcm writes, as stored (ServiceSet CRD defaults
/// re-applied to helmOptions).
fn make_service(s: &Svc) -> Value {
    let mut m = Map::new();
    if let Some(Value::Object(ho)) = &s.helm_options {
        let mut ho = ho.clone();
        default_helm_options(&mut ho);
        m.insert("helmOptions".into(), Value::Object(ho));
    }
    m.insert("version".into(), s.version.clone().into());
    if let Some(a) = &s.helm_action {
        m.insert("helmAction".into(), a.clone());
    }
    m.insert("name".into(), s.name.clone().into());
    m.insert("namespace".into(), s.namespace.clone().into());
    m.insert("template".into(), s.template.clone().into());
    if !s.values.is_empty() {
        m.insert("values".into(), s.values.clone().into());
    }
    if let Some(vf) = &s.values_from {
        m.insert("valuesFrom".into(), vf.clone());
    }
    Value::Object(m)
}

// ------------------------------------------------------------------------------------------
// Go JSON round trip of typed fields (decode into the Go struct, encode with omitempty)
// ------------------------------------------------------------------------------------------

/// Field kinds of the Go structs kcm decodes and re-encodes.
enum F {
    /// `bool` + omitempty: false is dropped.
    Bool,
    /// `*bool` / `*string` + omitempty: kept whenever present.
    OptBool,
    OptStr,
    /// `string` + omitempty: "" is dropped.
    Str,
    /// `string` without omitempty: always written ("" when absent).
    ReqStr,
    /// `int`/`int32` + omitempty: 0 is dropped.
    Int,
    /// `*metav1.Duration` + omitempty: normalised by `time.Duration.String()`.
    OptDur,
    /// `[]string` + omitempty.
    StrList,
    /// `[]string` without omitempty (null when absent).
    ReqStrList,
    /// `*map[string]string` + omitempty.
    OptStrMap,
    /// struct value (not a pointer): always written.
    Obj(&'static [(&'static str, F)]),
    /// `*struct` + omitempty.
    OptObj(&'static [(&'static str, F)]),
    /// `[]struct` + omitempty.
    List(&'static [(&'static str, F)]),
}

// corev1.ObjectReference
const OBJECT_REFERENCE: &[(&str, F)] = &[
    ("kind", F::Str),
    ("namespace", F::Str),
    ("name", F::Str),
    ("uid", F::Str),
    ("apiVersion", F::Str),
    ("resourceVersion", F::Str),
    ("fieldPath", F::Str),
];
// addon-controller v1.12.0 TemplateResourceRef
const TEMPLATE_RESOURCE_REF: &[(&str, F)] = &[
    ("resource", F::Obj(OBJECT_REFERENCE)),
    ("identifier", F::ReqStr),
    ("optional", F::Bool),
    ("ignoreStatusChanges", F::Bool),
    ("watchFields", F::StrList),
];
const SECRET_REFERENCE: &[(&str, F)] = &[("name", F::Str), ("namespace", F::Str)];
const REMOTE_URL: &[(&str, F)] = &[
    ("url", F::ReqStr),
    ("interval", F::OptDur),
    ("secretRef", F::OptObj(SECRET_REFERENCE)),
    ("template", F::Bool),
];
// addon-controller v1.12.0 PolicyRef
const POLICY_REF: &[(&str, F)] = &[
    ("namespace", F::Str),
    ("name", F::Str),
    ("kind", F::Str),
    ("path", F::Str),
    ("deploymentType", F::Str),
    ("optional", F::Bool),
    ("tier", F::Int),
    ("skipNamespaceCreation", F::Bool),
    ("remoteURL", F::OptObj(REMOTE_URL)),
];
// libsveltos v1.12.0 PatchSelector / DriftExclusion
const PATCH_SELECTOR: &[(&str, F)] = &[
    ("version", F::Str),
    ("group", F::Str),
    ("kind", F::Str),
    ("namespace", F::Str),
    ("name", F::Str),
    ("annotationSelector", F::Str),
    ("labelSelector", F::Str),
];
const DRIFT_EXCLUSION: &[(&str, F)] = &[
    ("paths", F::ReqStrList),
    ("target", F::OptObj(PATCH_SELECTOR)),
];
// kcm ValuesFrom
const VALUES_FROM: &[(&str, F)] = &[("kind", F::ReqStr), ("name", F::ReqStr)];
// addon-controller v1.12.0 Helm{Install,Upgrade,Uninstall}Options
const HELM_INSTALL: &[(&str, F)] = &[
    ("createNamespace", F::OptBool),
    ("replace", F::OptBool),
    ("disableHooks", F::Bool),
    ("takeOwnership", F::Bool),
];
const HELM_UPGRADE: &[(&str, F)] = &[
    ("force", F::Bool),
    ("resetValues", F::Bool),
    ("reuseValues", F::Bool),
    ("resetThenReuseValues", F::Bool),
    ("recreate", F::Bool),
    ("maxHistory", F::Int),
    ("cleanupOnFail", F::Bool),
    ("subNotes", F::Bool),
    ("upgradeCRDs", F::Bool),
    ("disableHooks", F::Bool),
    ("takeOwnership", F::Bool),
];
const HELM_UNINSTALL: &[(&str, F)] = &[
    ("keepHistory", F::Bool),
    ("deletionPropagation", F::Str),
    ("disableHooks", F::Bool),
];
// kcm ServiceHelmOptions
const HELM_OPTIONS: &[(&str, F)] = &[
    ("enableClientCache", F::OptBool),
    ("dependencyUpdate", F::OptBool),
    ("wait", F::OptBool),
    ("waitForJobs", F::OptBool),
    ("createNamespace", F::OptBool),
    ("skipCRDs", F::OptBool),
    ("atomic", F::OptBool),
    ("disableHooks", F::OptBool),
    ("disableOpenAPIValidation", F::OptBool),
    ("timeout", F::OptDur),
    ("skipSchemaValidation", F::OptBool),
    ("replace", F::OptBool),
    ("labels", F::OptStrMap),
    ("description", F::OptStr),
    ("uninstallOptions", F::OptObj(HELM_UNINSTALL)),
    ("upgradeOptions", F::OptObj(HELM_UPGRADE)),
    ("installOptions", F::OptObj(HELM_INSTALL)),
];

/// Decode `v` as the Go type `f` and re-encode it; `None` = the key is omitted. A JSON
/// null is treated as absent (the API server prunes nulls of non-nullable fields).
fn go_roundtrip(v: Option<&Value>, f: &F, path: &str) -> Result<Option<Value>, String> {
    let v = v.filter(|v| !v.is_null());
    let bad = |t: &str| Err(format!("{path} must be {t}"));
    match f {
        F::Bool => match v {
            None | Some(Value::Bool(false)) => Ok(None),
            Some(Value::Bool(true)) => Ok(Some(Value::Bool(true))),
            _ => bad("a boolean"),
        },
        F::OptBool => match v {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(Value::Bool(*b))),
            _ => bad("a boolean"),
        },
        F::Str | F::OptStr | F::ReqStr => match v {
            None => Ok(matches!(f, F::ReqStr).then(|| Value::String(String::new()))),
            Some(Value::String(s)) if s.is_empty() && matches!(f, F::Str) => Ok(None),
            Some(Value::String(s)) => Ok(Some(Value::String(s.clone()))),
            _ => bad("a string"),
        },
        F::Int => match v {
            None => Ok(None),
            Some(Value::Number(n)) => match n.as_i64() {
                Some(0) => Ok(None),
                Some(i) => Ok(Some(Value::from(i))),
                None => bad("an integer"),
            },
            _ => bad("an integer"),
        },
        F::OptDur => match v {
            None => Ok(None),
            Some(Value::String(s)) => {
                let d = parse_go_duration(s).map_err(|e| format!("{path}: {e}"))?;
                Ok(Some(Value::String(format_go_duration(d))))
            }
            _ => bad("a duration string"),
        },
        F::StrList | F::ReqStrList => match v {
            None => Ok(matches!(f, F::ReqStrList).then_some(Value::Null)),
            Some(Value::Array(a)) => {
                if a.is_empty() && matches!(f, F::StrList) {
                    return Ok(None);
                }
                for x in a {
                    if !x.is_string() {
                        return bad("a list of strings");
                    }
                }
                Ok(Some(Value::Array(a.clone())))
            }
            _ => bad("a list of strings"),
        },
        F::OptStrMap => match v {
            None => Ok(None),
            Some(Value::Object(m)) => {
                for x in m.values() {
                    if !x.is_string() {
                        return bad("a map of strings");
                    }
                }
                Ok(Some(Value::Object(m.clone())))
            }
            _ => bad("a map of strings"),
        },
        F::Obj(fields) | F::OptObj(fields) => match v {
            None if matches!(f, F::OptObj(_)) => Ok(None),
            None => Ok(Some(Value::Object(Map::new()))),
            Some(Value::Object(m)) => {
                let mut out = Map::new();
                for (k, ff) in fields.iter() {
                    if let Some(x) = go_roundtrip(m.get(*k), ff, &format!("{path}.{k}"))? {
                        out.insert((*k).to_string(), x);
                    }
                }
                Ok(Some(Value::Object(out)))
            }
            _ => bad("an object"),
        },
        F::List(fields) => match v {
            None => Ok(None),
            Some(Value::Array(a)) if a.is_empty() => Ok(None),
            Some(Value::Array(a)) => {
                let mut out = Vec::with_capacity(a.len());
                for (i, x) in a.iter().enumerate() {
                    let item = go_roundtrip(Some(x), &F::Obj(fields), &format!("{path}[{i}]"))?;
                    out.push(item.unwrap_or(Value::Object(Map::new())));
                }
                Ok(Some(Value::Array(out)))
            }
            _ => bad("a list"),
        },
    }
}

/// Go `time.ParseDuration`, in nanoseconds.
fn parse_go_duration(orig: &str) -> Result<i64, String> {
    let err = || format!("time: invalid duration {orig:?}");
    let mut s = orig.as_bytes();
    let mut neg = false;
    if let Some(&c) = s.first()
        && (c == b'-' || c == b'+')
    {
        neg = c == b'-';
        s = &s[1..];
    }
    if s == b"0" {
        return Ok(0);
    }
    if s.is_empty() {
        return Err(err());
    }
    const LIMIT: u64 = 1 << 63;
    let mut d: u64 = 0;
    while !s.is_empty() {
        if !(s[0] == b'.' || s[0].is_ascii_digit()) {
            return Err(err());
        }
        // leading int
        let mut v: u64 = 0;
        let mut i = 0;
        while i < s.len() && s[i].is_ascii_digit() {
            if v > LIMIT / 10 {
                return Err(err());
            }
            v = v * 10 + u64::from(s[i] - b'0');
            if v > LIMIT {
                return Err(err());
            }
            i += 1;
        }
        let pre = i > 0;
        s = &s[i..];
        // fraction
        let mut post = false;
        let mut f: u64 = 0;
        let mut scale: f64 = 1.0;
        if s.first() == Some(&b'.') {
            s = &s[1..];
            let mut i = 0;
            let mut overflow = false;
            while i < s.len() && s[i].is_ascii_digit() {
                if !overflow {
                    if f > (LIMIT - 1) / 10 {
                        overflow = true;
                    } else {
                        let y = f * 10 + u64::from(s[i] - b'0');
                        if y > LIMIT {
                            overflow = true;
                        } else {
                            f = y;
                            scale *= 10.0;
                        }
                    }
                }
                i += 1;
            }
            post = i > 0;
            s = &s[i..];
        }
        if !pre && !post {
            return Err(err());
        }
        let mut i = 0;
        while i < s.len() && s[i] != b'.' && !s[i].is_ascii_digit() {
            i += 1;
        }
        if i == 0 {
            return Err(format!("time: missing unit in duration {orig:?}"));
        }
        let unit: u64 = match &s[..i] {
            b"ns" => 1,
            b"us" | [0xC2, 0xB5, b's'] | [0xCE, 0xBC, b's'] => 1_000, // us, µs (U+00B5), μs (U+03BC)
            b"ms" => 1_000_000,
            b"s" => 1_000_000_000,
            b"m" => 60_000_000_000,
            b"h" => 3_600_000_000_000,
            u => {
                return Err(format!(
                    "time: unknown unit {:?} in duration {orig:?}",
                    String::from_utf8_lossy(u)
                ));
            }
        };
        s = &s[i..];
        if v > LIMIT / unit {
            return Err(err());
        }
        v *= unit;
        if f > 0 {
            // Go: v += uint64(float64(f) * (float64(unit) / scale))
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            let add = (f as f64 * (unit as f64 / scale)) as u64;
            v += add;
            if v > LIMIT {
                return Err(err());
            }
        }
        d += v;
        if d > LIMIT {
            return Err(err());
        }
    }
    if neg {
        return Ok((d as i128).wrapping_neg() as i64);
    }
    if d > LIMIT - 1 {
        return Err(err());
    }
    Ok(d as i64)
}

/// Go `time.Duration.String()`.
fn format_go_duration(d: i64) -> String {
    let neg = d < 0;
    let u = d.unsigned_abs();
    let frac = |v: u64, prec: u32| -> (String, u64) {
        let p = 10u64.pow(prec);
        let digits = format!("{:0width$}", v % p, width = prec as usize);
        let digits = digits.trim_end_matches('0');
        let s = if digits.is_empty() {
            String::new()
        } else {
            format!(".{digits}")
        };
        (s, v / p)
    };
    let body = if u == 0 {
        return "0s".to_string();
    } else if u < 1_000 {
        format!("{u}ns")
    } else if u < 1_000_000 {
        let (f, i) = frac(u, 3);
        format!("{i}{f}\u{b5}s")
    } else if u < 1_000_000_000 {
        let (f, i) = frac(u, 6);
        format!("{i}{f}ms")
    } else {
        let (f, secs) = frac(u, 9);
        let mut out = format!("{}{f}s", secs % 60);
        let mins = secs / 60;
        if mins > 0 {
            out = format!("{}m{out}", mins % 60);
            let hours = mins / 60;
            if hours > 0 {
                out = format!("{hours}h{out}");
            }
        }
        out
    };
    if neg { format!("-{body}") } else { body }
}

// ------------------------------------------------------------------------------------------
// Label selectors (metav1.LabelSelectorAsSelector / labels.NewRequirement)
// ------------------------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq)]
enum Op {
    Equals,
    In,
    NotIn,
    Exists,
    DoesNotExist,
}

#[derive(Debug, Clone)]
struct Req {
    key: String,
    op: Op,
    values: Vec<String>,
}

impl Req {
    fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        match self.op {
            Op::Equals | Op::In => labels
                .get(&self.key)
                .is_some_and(|v| self.values.contains(v)),
            Op::NotIn => labels
                .get(&self.key)
                .is_none_or(|v| !self.values.contains(v)),
            Op::Exists => labels.contains_key(&self.key),
            Op::DoesNotExist => !labels.contains_key(&self.key),
        }
    }
}

/// The requirements of a `metav1.LabelSelector`, validated like
/// `LabelSelectorAsSelector` and stably sorted by key. Empty = `labels.Everything()`.
fn parse_selector(sel: &Value) -> Result<Vec<Req>, String> {
    let Value::Object(m) = sel else {
        return Err("a label selector must be an object".to_string());
    };
    let mut reqs = Vec::new();
    match m.get("matchLabels") {
        None | Some(Value::Null) => {}
        Some(Value::Object(ml)) => {
            for (k, v) in ml {
                let Value::String(v) = v else {
                    return Err(format!("matchLabels[{k}] must be a string"));
                };
                reqs.push(new_requirement(k, Op::Equals, vec![v.clone()])?);
            }
        }
        Some(_) => return Err("matchLabels must be an object".to_string()),
    }
    match m.get("matchExpressions") {
        None | Some(Value::Null) => {}
        Some(Value::Array(exprs)) => {
            for e in exprs {
                let key = e.get("key").and_then(Value::as_str).unwrap_or_default();
                let op_s = e
                    .get("operator")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                let op = match op_s {
                    "In" => Op::In,
                    "NotIn" => Op::NotIn,
                    "Exists" => Op::Exists,
                    "DoesNotExist" => Op::DoesNotExist,
                    other => {
                        return Err(format!("{other:?} is not a valid label selector operator"));
                    }
                };
                let values = match e.get("values") {
                    None | Some(Value::Null) => Vec::new(),
                    Some(Value::Array(a)) => a
                        .iter()
                        .map(|x| {
                            x.as_str()
                                .map(str::to_string)
                                .ok_or_else(|| format!("values of {key:?} must be strings"))
                        })
                        .collect::<Result<_, _>>()?,
                    Some(_) => return Err(format!("values of {key:?} must be a list")),
                };
                reqs.push(new_requirement(key, op, values)?);
            }
        }
        Some(_) => return Err("matchExpressions must be a list".to_string()),
    }
    // sort.Sort(ByKey): only same-key order could differ, and Go's insertion sort for
    // short inputs is stable, as is this one.
    reqs.sort_by(|a, b| a.key.cmp(&b.key));
    Ok(reqs)
}

fn new_requirement(key: &str, op: Op, values: Vec<String>) -> Result<Req, String> {
    let mut errs = Vec::new();
    if let Err(e) = validate_label_key(key) {
        errs.push(format!("key: Invalid value: {key:?}: {e}"));
    }
    match op {
        Op::In | Op::NotIn if values.is_empty() => errs.push(
            "values: Invalid value: for 'in', 'notin' operators, values set can't be empty".into(),
        ),
        Op::Equals if values.len() != 1 => errs.push(
            "values: Invalid value: exact-match compatibility requires one single value".into(),
        ),
        Op::Exists | Op::DoesNotExist if !values.is_empty() => errs.push(
            "values: Invalid value: values set must be empty for exists and does not exist".into(),
        ),
        _ => {}
    }
    for (i, v) in values.iter().enumerate() {
        if let Err(e) = validate_label_value(v) {
            errs.push(format!("values[{i}][{key}]: Invalid value: {v:?}: {e}"));
        }
    }
    if errs.is_empty() {
        Ok(Req {
            key: key.to_string(),
            op,
            values,
        })
    } else {
        Err(errs.join(", "))
    }
}

/// `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`, at most 63 characters.
fn is_qualified_name_part(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.len() <= 63
        && b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
}

/// DNS-1123 subdomain, at most 253 characters.
fn is_dns1123_subdomain(s: &str) -> bool {
    s.len() <= 253
        && !s.is_empty()
        && s.split('.').all(|l| {
            let b = l.as_bytes();
            !b.is_empty()
                && b[0].is_ascii_alphanumeric()
                && b[b.len() - 1].is_ascii_alphanumeric()
                && b.iter()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
                && !b.iter().any(u8::is_ascii_uppercase)
        })
}

fn validate_label_key(k: &str) -> Result<(), String> {
    let parts: Vec<&str> = k.split('/').collect();
    let (prefix, name) = match parts.as_slice() {
        [name] => (None, *name),
        [prefix, name] => (Some(*prefix), *name),
        _ => return Err("a qualified name must consist of alphanumeric characters, '-', '_' or '.', with an optional DNS subdomain prefix and '/'".into()),
    };
    if let Some(p) = prefix
        && !is_dns1123_subdomain(p)
    {
        return Err("prefix part must be a lowercase RFC 1123 subdomain".into());
    }
    if !is_qualified_name_part(name) {
        return Err(
            "name part must consist of alphanumeric characters, '-', '_' or '.', \
                    must start and end with an alphanumeric character, at most 63 characters"
                .into(),
        );
    }
    Ok(())
}

fn validate_label_value(v: &str) -> Result<(), String> {
    if v.is_empty() || is_qualified_name_part(v) {
        Ok(())
    } else {
        Err(
            "a valid label must be an empty string or consist of alphanumeric characters, \
             '-', '_' or '.', and must start and end with an alphanumeric character, at most \
             63 characters"
                .into(),
        )
    }
}

fn str_at<'a>(v: &'a Value, ptr: &str) -> &'a str {
    v.pointer(ptr).and_then(Value::as_str).unwrap_or_default()
}

// ------------------------------------------------------------------------------------------
// Tests
// ------------------------------------------------------------------------------------------

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn smp_default() -> Value {
        json!({
            "apiVersion": "k0rdent.mirantis.com/v1beta1",
            "kind": "StateManagementProvider",
            "metadata": {"name": "ksm-projectsveltos"},
            "spec": {"selector": {"matchLabels": {"ksm.k0rdent.mirantis.com/adapter": "kcm-controller-manager"}}}
        })
    }

    fn cd(services: Value) -> Value {
        json!({
            "apiVersion": "k0rdent.mirantis.com/v1beta1",
            "kind": "ClusterDeployment",
            "metadata": {"name": "dev-cluster", "namespace": "kcm-system", "uid": "cd-uid",
                         "labels": {"env": "dev", "region": "eu"}},
            "spec": {"template": "aws-standalone", "serviceSpec": {"services": services}}
        })
    }

    fn mcs(name: &str, service_spec: Value) -> Value {
        json!({
            "apiVersion": "k0rdent.mirantis.com/v1beta1",
            "kind": "MultiClusterService",
            "metadata": {"name": name, "uid": "mcs-uid"},
            "spec": {"clusterSelector": {"matchLabels": {"env": "dev"}}, "serviceSpec": service_spec}
        })
    }

    fn tpl(name: &str, ns: &str, spec: Value) -> Value {
        json!({"apiVersion": "k0rdent.mirantis.com/v1beta1", "kind": "ServiceTemplate",
               "metadata": {"name": name, "namespace": ns}, "spec": spec})
    }

    #[test]
    fn hash_examples() {
        assert_eq!(mcs_name_hash("my-mcs"), "6b91ac17");
        assert_eq!(mcs_name_hash("global-ingress"), "bb74fe23");
    }

    #[test]
    fn cluster_deployment_full() {
        let c = cd(json!([
            {"name": "ingress", "namespace": "ingress-nginx", "template": "ingress-nginx-4-11-0", "version": "4.11.0"}
        ]));
        let d = from_cluster_deployment(&c, Some(&smp_default()), &[]).unwrap();
        assert_eq!(
            d.service_set,
            json!({
                "apiVersion": "k0rdent.mirantis.com/v1beta1",
                "kind": "ServiceSet",
                "metadata": {
                    "name": "dev-cluster",
                    "namespace": "kcm-system",
                    "labels": {"ksm.k0rdent.mirantis.com/adapter": "kcm-controller-manager"},
                    "ownerReferences": [{
                        "apiVersion": "k0rdent.mirantis.com/v1beta1",
                        "kind": "ClusterDeployment",
                        "name": "dev-cluster",
                        "uid": "cd-uid",
                        "controller": true,
                        "blockOwnerDeletion": true
                    }]
                },
                "spec": {
                    "cluster": "dev-cluster",
                    "provider": {"config": {"syncMode": "Continuous", "priority": 100}, "name": "ksm-projectsveltos"},
                    "services": [{"version": "4.11.0", "name": "ingress", "namespace": "ingress-nginx", "template": "ingress-nginx-4-11-0"}]
                }
            })
        );
        assert!(d.explanation.starts_with(
            "derived ServiceSet kcm-system/dev-cluster from ClusterDeployment kcm-system/dev-cluster (provider ksm-projectsveltos, labels from its selector"
        ), "{}", d.explanation);
        assert!(d.service_set["spec"].get("multiClusterService").is_none());
        assert!(
            d.service_set["spec"]["provider"]
                .get("selfManagement")
                .is_none()
        );
    }

    #[test]
    fn cd_self_management_flag_is_ignored() {
        let mut c = cd(json!([]));
        c["spec"]["serviceSpec"]["provider"] = json!({"selfManagement": true});
        let d = from_cluster_deployment(&c, None, &[]).unwrap();
        assert!(
            d.service_set["spec"]["provider"]
                .get("selfManagement")
                .is_none()
        );
        assert!(d.service_set["spec"].get("services").is_none());
        assert!(d.service_set["metadata"].get("labels").is_none());
        assert!(
            d.explanation.contains("selector labels unknown"),
            "{}",
            d.explanation
        );
    }

    #[test]
    fn cd_without_service_spec_gets_empty_config() {
        let c = json!({"kind": "ClusterDeployment",
            "metadata": {"name": "a", "namespace": "ns", "uid": "u"}, "spec": {"template": "t"}});
        let d = from_cluster_deployment(&c, None, &[]).unwrap();
        assert_eq!(
            d.service_set["spec"]["provider"],
            json!({"config": {}, "name": "ksm-projectsveltos"})
        );
        assert_eq!(d.service_set["spec"]["cluster"], "a");
    }

    #[test]
    fn mcs_with_cd() {
        let m = mcs(
            "my-mcs",
            json!({"services": [{"name": "a", "template": "t-a", "version": "1.0.0"}]}),
        );
        let c = cd(json!([]));
        let d = from_multi_cluster_service(&m, Some(&c), Some(&smp_default()), &[], "kcm-system")
            .unwrap();
        let ss = &d.service_set;
        assert_eq!(ss["metadata"]["name"], "dev-cluster-6b91ac17");
        assert_eq!(ss["metadata"]["namespace"], "kcm-system");
        assert_eq!(
            ss["metadata"]["ownerReferences"][0]["kind"],
            "ClusterDeployment"
        );
        assert_eq!(ss["metadata"]["ownerReferences"][0]["uid"], "cd-uid");
        assert_eq!(ss["spec"]["cluster"], "dev-cluster");
        assert_eq!(ss["spec"]["multiClusterService"], "my-mcs");
        assert!(ss["spec"]["provider"].get("selfManagement").is_none());
        assert_eq!(ss["spec"]["services"][0]["namespace"], "default");
        assert_eq!(
            object_key(Some(&c), &m, "kcm-system"),
            ("kcm-system".to_string(), "dev-cluster-6b91ac17".to_string())
        );
        assert!(
            d.explanation.contains(
                "from MultiClusterService my-mcs for ClusterDeployment kcm-system/dev-cluster"
            ),
            "{}",
            d.explanation
        );
    }

    #[test]
    fn mcs_self_management() {
        let m = mcs(
            "global-ingress",
            json!({"provider": {"selfManagement": true}, "services": [{"name": "a", "template": "t-a", "version": "1"}]}),
        );
        let d =
            from_multi_cluster_service(&m, None, Some(&smp_default()), &[], "kcm-system").unwrap();
        let ss = &d.service_set;
        assert_eq!(ss["metadata"]["name"], "management-bb74fe23");
        assert_eq!(ss["metadata"]["namespace"], "kcm-system");
        assert_eq!(
            ss["metadata"]["ownerReferences"][0]["kind"],
            "MultiClusterService"
        );
        assert_eq!(
            ss["metadata"]["ownerReferences"][0]["name"],
            "global-ingress"
        );
        assert_eq!(ss["metadata"]["ownerReferences"][0]["uid"], "mcs-uid");
        assert_eq!(ss["spec"]["cluster"], "");
        assert_eq!(ss["spec"]["provider"]["selfManagement"], true);
        assert_eq!(
            object_key(None, &m, "sys"),
            ("sys".to_string(), "management-bb74fe23".to_string())
        );
    }

    #[test]
    fn mcs_without_cd_needs_self_management() {
        let m = mcs("my-mcs", json!({"services": []}));
        let e = from_multi_cluster_service(&m, None, None, &[], "kcm-system").unwrap_err();
        assert!(e.contains("per matching ClusterDeployment"), "{e}");
    }

    #[test]
    fn mcs_cluster_selector_must_match() {
        let mut m = mcs("my-mcs", json!({}));
        m["spec"]["clusterSelector"] = json!({"matchLabels": {"env": "prod"}});
        let e = from_multi_cluster_service(&m, Some(&cd(json!([]))), None, &[], "x").unwrap_err();
        assert!(e.contains("does not select"), "{e}");
        m["spec"]["clusterSelector"] = json!({});
        let e = from_multi_cluster_service(&m, Some(&cd(json!([]))), None, &[], "x").unwrap_err();
        assert!(e.contains("empty spec.clusterSelector"), "{e}");
        m["spec"]["clusterSelector"] = json!({"matchExpressions": [
            {"key": "region", "operator": "In", "values": ["eu", "us"]},
            {"key": "gone", "operator": "DoesNotExist"}]});
        assert!(from_multi_cluster_service(&m, Some(&cd(json!([]))), None, &[], "x").is_ok());
    }

    #[test]
    fn provider_table() {
        let base = |provider: Value| {
            let mut c = cd(json!([]));
            c["spec"]["serviceSpec"]["provider"] = provider;
            c["spec"]["serviceSpec"]["reload"] = json!(true);
            c["spec"]["serviceSpec"]["priority"] = json!(5);
            c["spec"]["serviceSpec"]["policyRefs"] =
                json!([{"kind": "ConfigMap", "name": "p", "namespace": "ns", "optional": false}]);
            c["spec"]["serviceSpec"]["driftExclusions"] = json!([{"paths": ["/spec/x"]}]);
            from_cluster_deployment(&c, None, &[]).unwrap().service_set["spec"]["provider"].clone()
        };
        // "" / nil: default provider, config from the deprecated fields.
        assert_eq!(
            base(json!({})),
            json!({"config": {
                "syncMode": "Continuous",
                "policyRefs": [{"namespace": "ns", "name": "p", "kind": "ConfigMap", "deploymentType": "Remote", "tier": 100}],
                "driftExclusions": [{"paths": ["/spec/x"]}],
                "priority": 5, "reloader": true}, "name": "ksm-projectsveltos"})
        );
        // "" / set
        assert_eq!(
            base(json!({"config": {"a": 1}})),
            json!({"config": {"a": 1}, "name": "ksm-projectsveltos"})
        );
        // set / nil
        assert_eq!(
            base(json!({"name": "ksm-flux"})),
            json!({"name": "ksm-flux"})
        );
        // set / set
        assert_eq!(
            base(json!({"name": "ksm-flux", "config": {"b": [1]}})),
            json!({"config": {"b": [1]}, "name": "ksm-flux"})
        );
        // config: null is no config
        assert_eq!(
            base(json!({"name": "ksm-flux", "config": null})),
            json!({"name": "ksm-flux"})
        );
    }

    #[test]
    fn provider_name_in_explanation_and_smp_mismatch() {
        let mut c = cd(json!([]));
        c["spec"]["serviceSpec"]["provider"] = json!({"name": "ksm-flux"});
        let smp = json!({"metadata": {"name": "ksm-flux"}, "spec": {"selector": {"matchLabels": {"a": "b"}}}});
        let d = from_cluster_deployment(&c, Some(&smp), &[]).unwrap();
        assert_eq!(
            d.explanation,
            "derived ServiceSet kcm-system/dev-cluster from ClusterDeployment kcm-system/dev-cluster (provider ksm-flux, labels from its selector; 0 service(s))"
        );
        assert_eq!(d.service_set["metadata"]["labels"], json!({"a": "b"}));
        let e = from_cluster_deployment(&c, Some(&smp_default()), &[]).unwrap_err();
        assert!(e.contains("ksm-flux"), "{e}");
        let no_sel = json!({"metadata": {"name": "ksm-flux"}, "spec": {}});
        let e = from_cluster_deployment(&c, Some(&no_sel), &[]).unwrap_err();
        assert!(e.contains("selector cannot be nil"), "{e}");
    }

    #[test]
    fn version_resolution() {
        let c = cd(json!([
            {"name": "a", "template": "t-spec-version"},
            {"name": "b", "template": "t-chart-version"},
            {"name": "c", "template": "t-chart-default"},
            {"name": "d", "template": "t-kustomize"},
            {"name": "e", "template": "t-spec-version", "version": "9.9.9"}
        ]));
        let templates = vec![
            tpl(
                "t-spec-version",
                "kcm-system",
                json!({"version": "1.2.3", "helm": {"chartSpec": {"version": "0.0.1"}}}),
            ),
            tpl(
                "t-spec-version",
                "other",
                json!({"version": "wrong-namespace"}),
            ),
            tpl(
                "t-chart-version",
                "kcm-system",
                json!({"helm": {"chartSpec": {"chart": "x", "version": "4.5.6"}}}),
            ),
            tpl(
                "t-chart-default",
                "kcm-system",
                json!({"helm": {"chartSpec": {"chart": "x"}}}),
            ),
            json!({"kind": "ServiceTemplate", "metadata": {"name": "t-kustomize"}, "spec": {"kustomize": {"path": "."}}}),
        ];
        let d = from_cluster_deployment(&c, None, &templates).unwrap();
        let versions: Vec<&str> = d.service_set["spec"]["services"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["version"].as_str().unwrap())
            .collect();
        assert_eq!(versions, ["1.2.3", "4.5.6", "*", "t-kustomize", "9.9.9"]);
        // A missing template is an error, as the Get fails in kcm.
        let e = from_cluster_deployment(&c, None, &templates[1..]).unwrap_err();
        assert!(
            e.contains("failed to fetch template kcm-system/t-spec-version"),
            "{e}"
        );
    }

    #[test]
    fn services_copy_sort_and_disable() {
        let c = cd(json!([
            {"name": "z", "namespace": "b", "template": "t", "version": "1",
             "values": "x: 1", "valuesFrom": [{"kind": "ConfigMap", "name": "v"}],
             "helmAction": "Install", "templateChain": "chain", "dependsOn": [],
             "helmOptions": {"timeout": "5m", "wait": false, "labels": {},
                             "installOptions": {"createNamespace": false},
                             "upgradeOptions": {"maxHistory": 0},
                             "uninstallOptions": {"keepHistory": false}}},
            {"name": "a", "namespace": "b", "template": "t", "version": "1"},
            {"name": "m", "template": "t", "version": "1", "namespace": ""},
            {"name": "off", "template": "t", "version": "1", "disable": true}
        ]));
        let d = from_cluster_deployment(&c, None, &[]).unwrap();
        let svcs = d.service_set["spec"]["services"].as_array().unwrap();
        let keys: Vec<String> = svcs
            .iter()
            .map(|s| {
                format!(
                    "{}/{}",
                    s["namespace"].as_str().unwrap(),
                    s["name"].as_str().unwrap()
                )
            })
            .collect();
        assert_eq!(keys, ["b/a", "b/z", "default/m"]);
        assert_eq!(
            svcs[1],
            json!({
                "helmOptions": {
                    "wait": false, "timeout": "5m0s", "labels": {},
                    "uninstallOptions": {"disableHooks": false},
                    "upgradeOptions": {"maxHistory": 2, "cleanupOnFail": false, "disableHooks": false,
                        "force": false, "recreate": false, "resetThenReuseValues": false,
                        "resetValues": false, "reuseValues": false, "subNotes": false,
                        "takeOwnership": false, "upgradeCRDs": false},
                    "installOptions": {"createNamespace": false, "replace": true,
                        "disableHooks": false, "takeOwnership": false}
                },
                "version": "1", "helmAction": "Install", "name": "z", "namespace": "b",
                "template": "t", "values": "x: 1", "valuesFrom": [{"kind": "ConfigMap", "name": "v"}]
            })
        );
        assert!(
            d.explanation.contains("disabled, left out: default/off"),
            "{}",
            d.explanation
        );
    }

    #[test]
    fn dependencies() {
        let c = cd(json!([
            {"name": "app", "template": "t", "version": "1", "dependsOn": [{"name": "db"}]},
            {"name": "db", "template": "t", "version": "1"},
            {"name": "x", "template": "t", "version": "1", "dependsOn": [{"name": "off"}]},
            {"name": "off", "template": "t", "version": "1", "disable": true},
            {"name": "c1", "template": "t", "version": "1", "dependsOn": [{"name": "c2"}]},
            {"name": "c2", "template": "t", "version": "1", "dependsOn": [{"name": "c1"}]}
        ]));
        let d = from_cluster_deployment(&c, None, &[]).unwrap();
        let names: Vec<&str> = d.service_set["spec"]["services"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["app", "db"]);
        assert!(
            d.service_set["spec"]["services"][0]
                .get("dependsOn")
                .is_none()
        );
        assert!(
            d.explanation.contains("default/c1, default/c2, default/x"),
            "{}",
            d.explanation
        );
        let bad = cd(
            json!([{"name": "app", "template": "t", "version": "1", "dependsOn": [{"name": "nope", "namespace": "x"}]}]),
        );
        let e = from_cluster_deployment(&bad, None, &[]).unwrap_err();
        assert_eq!(
            e,
            "service default/app depends on x/nope which is not present in the desired services list"
        );
    }

    #[test]
    fn selector_extraction() {
        let sel = json!({
            "matchLabels": {"a": "1"},
            "matchExpressions": [
                {"key": "b", "operator": "In", "values": ["zeta", "alpha", "mid"]},
                {"key": "c", "operator": "Exists"},
                {"key": "a", "operator": "Exists"},
                {"key": "d", "operator": "NotIn", "values": ["x"]},
                {"key": "e", "operator": "DoesNotExist"}
            ]
        });
        let l = selector_labels(&sel).unwrap();
        let want: BTreeMap<String, String> = [("a", "1"), ("b", "alpha"), ("c", "")]
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        assert_eq!(l, want);
        // In overrides a matchLabels entry of the same key (Equals sorts first).
        let l = selector_labels(&json!({"matchLabels": {"k": "v"},
            "matchExpressions": [{"key": "k", "operator": "In", "values": ["w", "u"]}]}))
        .unwrap();
        assert_eq!(l["k"], "u");
        assert!(selector_labels(&json!({})).unwrap().is_empty());
    }

    #[test]
    fn selector_errors() {
        assert_eq!(
            selector_labels(&Value::Null).unwrap_err(),
            "selector cannot be nil"
        );
        for bad in [
            json!({"matchExpressions": [{"key": "a", "operator": "In", "values": []}]}),
            json!({"matchExpressions": [{"key": "a", "operator": "Exists", "values": ["x"]}]}),
            json!({"matchExpressions": [{"key": "a", "operator": "Gt", "values": ["1"]}]}),
            json!({"matchLabels": {"bad key": "v"}}),
            json!({"matchLabels": {"k": "bad value!"}}),
            json!({"matchLabels": {"Upper.Prefix/k": "v"}}),
        ] {
            assert!(selector_labels(&bad).is_err(), "{bad}");
        }
        assert!(selector_labels(&json!({"matchLabels": {"example.com/k-1.x_y": "V-1"}})).is_ok());
    }

    #[test]
    fn missing_uid_omits_owner_reference() {
        let mut c = cd(json!([]));
        c["metadata"].as_object_mut().unwrap().remove("uid");
        let d = from_cluster_deployment(&c, None, &[]).unwrap();
        assert!(d.service_set["metadata"].get("ownerReferences").is_none());
        assert!(
            d.explanation.contains(
                "no ownerReference: ClusterDeployment kcm-system/dev-cluster has no metadata.uid"
            ),
            "{}",
            d.explanation
        );
    }

    #[test]
    fn errors() {
        let e = from_cluster_deployment(
            &json!({"kind": "MultiClusterService", "metadata": {"name": "x"}}),
            None,
            &[],
        )
        .unwrap_err();
        assert!(e.contains("expected a ClusterDeployment"), "{e}");
        let e =
            from_cluster_deployment(&json!({"metadata": {"name": "x"}}), None, &[]).unwrap_err();
        assert!(e.contains("no metadata.namespace"), "{e}");
        let e = from_cluster_deployment(&cd(json!([{"name": "a"}])), None, &[]).unwrap_err();
        assert!(e.contains("template is required"), "{e}");
        let e = from_cluster_deployment(
            &cd(json!([{"name": "a", "template": "t", "version": "1", "helmOptions": {"timeout": "5 minutes"}}])),
            None,
            &[],
        )
        .unwrap_err();
        assert!(e.contains("helmOptions.timeout: time: unknown unit"), "{e}");
        let mut deleting = cd(json!([]));
        deleting["metadata"]["deletionTimestamp"] = json!("2026-01-01T00:00:00Z");
        let m = mcs("my-mcs", json!({}));
        let e = from_multi_cluster_service(&m, Some(&deleting), None, &[], "x").unwrap_err();
        assert!(e.contains("being deleted"), "{e}");
    }

    #[test]
    fn go_durations() {
        for (i, o) in [
            ("5m", "5m0s"),
            ("300s", "5m0s"),
            ("1h", "1h0m0s"),
            ("90m", "1h30m0s"),
            ("1.5s", "1.5s"),
            ("1500ms", "1.5s"),
            ("0", "0s"),
            ("-2s", "-2s"),
            ("100us", "100\u{b5}s"),
            ("1.5ms", "1.5ms"),
            ("10ns", "10ns"),
            ("1h2m3.004s", "1h2m3.004s"),
        ] {
            assert_eq!(format_go_duration(parse_go_duration(i).unwrap()), o, "{i}");
        }
        for bad in ["", "5", "m", "1x", ".s", "-", "1.2.3s"] {
            assert!(parse_go_duration(bad).is_err(), "{bad}");
        }
    }
}

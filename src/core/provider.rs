//! Which translation a ServiceSet gets, decided in one place from its provider: kcm's own
//! adapter writes Sveltos Profiles ([`crate::core::profile`]), the adapter of
//! `kubectl ksm run` writes Flux objects ([`crate::core::render`]). `render` and `doctor`
//! ask here; `run` is the Flux adapter and renders only its own ServiceSets.

use std::fmt;

use serde_json::Value;

use crate::api::kcm::{DEFAULT_PROVIDER, Reference, StateManagementProvider};
use crate::api::kinds;
use crate::api::naming::{ADAPTER_DEPLOYMENT, FLUX_PROVIDER};
use crate::api::sveltos::KCM_ADAPTER_NAME;
use crate::core::profile;
use crate::core::render::{self, Rendered};

/// The translation of a provider.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Translator {
    /// kcm's own adapter (`ksm-projectsveltos`): a Sveltos Profile or ClusterProfile.
    Sveltos,
    /// A Flux adapter (`ksm-flux`, `kubectl ksm run`): HelmReleases and Kustomizations.
    Flux,
}

impl Translator {
    pub fn as_str(self) -> &'static str {
        match self {
            Translator::Sveltos => "Sveltos",
            Translator::Flux => "Flux",
        }
    }
}

/// The providers known by name, with what their adapter writes.
pub const KNOWN: &[(&str, Translator, &str)] = &[
    (
        DEFAULT_PROVIDER,
        Translator::Sveltos,
        "kcm's built-in provider: kcm's own adapter writes Sveltos Profiles",
    ),
    (
        FLUX_PROVIDER,
        Translator::Flux,
        "the Flux adapter of `kubectl ksm run`: HelmReleases and Kustomizations",
    ),
];

/// A provider the tool has no translation for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unknown {
    pub provider: String,
    /// The SMP's adapter, when the SMP was seen.
    pub adapter: Option<String>,
}

impl fmt::Display for Unknown {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let known: Vec<String> = KNOWN
            .iter()
            .map(|(name, _, what)| format!("{name} ({what})"))
            .collect();
        write!(
            f,
            "provider {:?} is not one the tool can render",
            self.provider
        )?;
        match &self.adapter {
            Some(a) => write!(
                f,
                ": its adapter {a} is neither kcm's controller nor a Flux adapter"
            )?,
            None => write!(f, " without its StateManagementProvider")?,
        }
        write!(
            f,
            "; known providers: {}; a StateManagementProvider whose adapter is kcm's controller ({}) renders as Sveltos, one whose provisioners are Flux's as Flux",
            known.join(", "),
            KCM_ADAPTER_NAME
        )
    }
}

/// Whether an adapter reference is kcm's controller: the adapter of the default provider
/// when it is known, else a Deployment named like kcm's.
pub fn is_kcm_adapter(adapter: &Reference, kcm_adapter: Option<&Reference>) -> bool {
    if adapter.kind != kinds::DEPLOYMENT.kind {
        return false;
    }
    match kcm_adapter {
        Some(k) => adapter.name == k.name && adapter.namespace == k.namespace,
        None => adapter.name == KCM_ADAPTER_NAME,
    }
}

/// The translation for a ServiceSet's provider. `smp` is the provider's
/// StateManagementProvider when available, `kcm_adapter` the adapter of kcm's default
/// provider when its SMP is available (kcm serves every SMP with that adapter).
pub fn translator(
    provider: &str,
    smp: Option<StateManagementProvider>,
    kcm_adapter: Option<&Reference>,
) -> Result<Translator, Unknown> {
    let by_name = KNOWN
        .iter()
        .find(|(n, _, _)| *n == provider)
        .map(|(_, t, _)| *t);
    let Some(smp) = smp else {
        return by_name.ok_or_else(|| Unknown {
            provider: provider.into(),
            adapter: None,
        });
    };
    let adapter = smp.adapter();
    if is_kcm_adapter(&adapter, kcm_adapter) {
        return Ok(Translator::Sveltos);
    }
    if adapter.kind == kinds::DEPLOYMENT.kind && adapter.name == ADAPTER_DEPLOYMENT {
        return Ok(Translator::Flux);
    }
    let flux_groups = [kinds::HELM_RELEASE.group, kinds::KUSTOMIZATION.group];
    if smp
        .provisioner_crds()
        .iter()
        .any(|c| flux_groups.contains(&c.group))
    {
        return Ok(Translator::Flux);
    }
    by_name.ok_or_else(|| Unknown {
        provider: provider.into(),
        adapter: Some(format!(
            "{}/{}/{}",
            adapter.kind, adapter.namespace, adapter.name
        )),
    })
}

/// The adapter of kcm's default provider, when its SMP is among `smps`.
pub fn kcm_adapter<'a>(
    mut smps: impl Iterator<Item = StateManagementProvider<'a>>,
) -> Option<Reference> {
    smps.find(|s| s.name() == DEFAULT_PROVIDER)
        .map(|s| s.adapter())
        .filter(|a| !a.name.is_empty())
}

/// Renders a ServiceSet with its provider's translation: `objects` holds the templates and
/// what the translation reads (sources, the ClusterDeployment, its Credential, the cluster).
pub fn render(translator: Translator, service_set: &Value, objects: &[Value]) -> Rendered {
    match translator {
        Translator::Flux => render::render(&render::Inputs {
            service_set,
            templates: objects,
        }),
        Translator::Sveltos => {
            let index = profile::Index::new(objects);
            profile::translate(&profile::Inputs {
                service_set,
                objects: &index,
            })
            .into_rendered()
        }
    }
}

/// Kinds the Sveltos translation reads besides templates (render's `--templates` may hold
/// them, and doctor lists them).
pub const SVELTOS_INPUTS: &[&kinds::Kind] = &[
    &kinds::SERVICE_TEMPLATE,
    &kinds::HELM_CHART,
    &kinds::HELM_REPOSITORY,
    &kinds::GIT_REPOSITORY,
    &kinds::CLUSTER_DEPLOYMENT,
    &kinds::CREDENTIAL,
    &kinds::CAPI_CLUSTER,
    &kinds::SVELTOS_CLUSTER,
];

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn smp(adapter: &str, groups: &[&str]) -> Value {
        let crds: Vec<Value> = groups
            .iter()
            .map(|g| json!({"group": g, "version": "v1", "resources": ["x"]}))
            .collect();
        json!({"metadata": {"name": "p"}, "spec": {"adapter": {"apiVersion": "apps/v1", "kind": "Deployment",
            "name": adapter, "namespace": "kcm-system"}, "provisionerCRDs": crds}})
    }

    #[test]
    fn by_name_without_an_smp() {
        assert_eq!(
            translator("ksm-projectsveltos", None, None),
            Ok(Translator::Sveltos)
        );
        assert_eq!(translator("ksm-flux", None, None), Ok(Translator::Flux));
        let e = translator("acme", None, None).unwrap_err();
        let text = e.to_string();
        assert!(
            text.contains("ksm-projectsveltos") && text.contains("ksm-flux"),
            "{text}"
        );
    }

    #[test]
    fn by_adapter_with_an_smp() {
        let kcm = smp("kcm-controller-manager", &["config.projectsveltos.io"]);
        let s = StateManagementProvider(&kcm);
        assert_eq!(translator("custom", Some(s), None), Ok(Translator::Sveltos));
        // kcm runs under another name: the default provider's adapter says which.
        let renamed = smp("my-kcm", &["config.projectsveltos.io"]);
        let reference = StateManagementProvider(&renamed).adapter();
        assert_eq!(
            translator(
                "custom",
                Some(StateManagementProvider(&renamed)),
                Some(&reference)
            ),
            Ok(Translator::Sveltos)
        );
        assert!(
            translator(
                "custom",
                Some(StateManagementProvider(&kcm)),
                Some(&reference)
            )
            .is_err(),
            "not kcm's adapter when kcm runs as my-kcm"
        );
        let flux = smp("flux-adapter-edge", &["helm.toolkit.fluxcd.io"]);
        assert_eq!(
            translator("edge", Some(StateManagementProvider(&flux)), None),
            Ok(Translator::Flux)
        );
        let ours = smp("kubectl-ksm", &[]);
        assert_eq!(
            translator("x", Some(StateManagementProvider(&ours)), None),
            Ok(Translator::Flux)
        );
        let argo = smp("argo-adapter", &["argoproj.io"]);
        let e = translator("argo", Some(StateManagementProvider(&argo)), None).unwrap_err();
        assert_eq!(
            e.adapter.as_deref(),
            Some("Deployment/kcm-system/argo-adapter")
        );
    }
}

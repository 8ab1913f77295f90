//! Which translation a ServiceSet gets, decided in one place from its provider: kcm's own
//! adapter writes Sveltos Profiles ([`crate::core::profile`]), the adapter of
//! `kubectl ksm run` writes Flux objects ([`crate::core::render`]). `render` and `doctor`
//! ask here; `run` is the Flux adapter and renders only its own ServiceSets.

use std::fmt;

use serde_json::Value;

use crate::api::kcm::{DEFAULT_PROVIDER, Reference, StateManagementProvider};
use crate::api::kinds;
use crate::api::listing::{self, ProviderApi};
use crate::api::naming::{ADAPTER_DEPLOYMENT, FLUX_PROVIDER};
use crate::api::sveltos::KCM_ADAPTER_NAME;
use crate::core::doctor;
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

/// What a provider supplies: its translation (and the kinds it reads), its doctor chain (which
/// maps what the provider's objects say to service states), and what doctor lists for it. A
/// provider is a room of its own (its translation, state mapping and chain) and one entry
/// here.
pub struct Provider {
    pub translator: Translator,
    /// The provider's name when a ServiceSet names it without its StateManagementProvider.
    pub name: &'static str,
    /// What its adapter writes, for the message about a provider the tool does not know.
    pub what: &'static str,
    /// The kinds its translation reads (render's `--templates` may hold them; live render
    /// lists them).
    pub inputs: &'static [&'static kinds::Kind],
    /// The translation: a ServiceSet and the objects of `inputs` to what its adapter writes.
    pub translate: fn(&Value, &[Value]) -> Rendered,
    /// What the cluster serves for it and the kinds doctor lists for it.
    pub api: &'static ProviderApi,
    /// Doctor's chain below the provider link.
    pub(crate) chain: doctor::Chain,
}

/// kcm's built-in provider and its own adapter.
pub static SVELTOS: Provider = Provider {
    translator: Translator::Sveltos,
    name: DEFAULT_PROVIDER,
    what: "kcm's built-in provider: kcm's own adapter writes Sveltos Profiles",
    inputs: &[
        &kinds::SERVICE_TEMPLATE,
        &kinds::HELM_CHART,
        &kinds::HELM_REPOSITORY,
        &kinds::GIT_REPOSITORY,
        &kinds::CLUSTER_DEPLOYMENT,
        &kinds::CREDENTIAL,
        &kinds::CAPI_CLUSTER,
        &kinds::SVELTOS_CLUSTER,
    ],
    translate: |service_set, objects| {
        let index = profile::Index::new(objects);
        profile::translate(&profile::Inputs {
            service_set,
            objects: &index,
        })
        .into_rendered()
    },
    api: &listing::SVELTOS,
    chain: doctor::sveltos_chain,
};

/// The Flux adapter of `kubectl ksm run`.
pub static FLUX: Provider = Provider {
    translator: Translator::Flux,
    name: FLUX_PROVIDER,
    what: "the Flux adapter of `kubectl ksm run`: HelmReleases and Kustomizations",
    inputs: &[&kinds::SERVICE_TEMPLATE],
    translate: |service_set, templates| {
        render::render(&render::Inputs {
            service_set,
            templates,
        })
    },
    api: &listing::FLUX,
    chain: doctor::flux_chain,
};

/// Every provider the tool knows, kcm's default first.
pub static PROVIDERS: [&Provider; 2] = [&SVELTOS, &FLUX];

impl Translator {
    /// The provider of this translation.
    pub fn provider(self) -> &'static Provider {
        match self {
            Translator::Sveltos => &SVELTOS,
            Translator::Flux => &FLUX,
        }
    }
}

/// The kinds doctor lists for every provider the tool knows.
pub fn doctor_kinds() -> Vec<listing::Listed> {
    listing::union(PROVIDERS.iter().map(|p| p.api))
}

/// What the cluster must serve for each provider the tool knows.
pub fn provider_apis() -> Vec<&'static ProviderApi> {
    PROVIDERS.iter().map(|p| p.api).collect()
}

/// A provider the tool has no translation for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unknown {
    pub provider: String,
    /// The SMP's adapter, when the SMP was seen.
    pub adapter: Option<String>,
}

impl fmt::Display for Unknown {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let known: Vec<String> = PROVIDERS
            .iter()
            .map(|p| format!("{} ({})", p.name, p.what))
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
    let by_name = PROVIDERS
        .iter()
        .find(|p| p.name == provider)
        .map(|p| p.translator);
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

impl Provider {
    /// The objects among `objects` its translation reads.
    pub fn inputs_of(&self, objects: &[Value]) -> Vec<Value> {
        objects
            .iter()
            .filter(|o| {
                let o = crate::api::Object(o);
                // Any version: the translation reads what the user saved.
                self.inputs
                    .iter()
                    .any(|k| k.is_any_version(o.api_version(), o.kind()))
            })
            .cloned()
            .collect()
    }
}

/// Renders a ServiceSet with its provider's translation; `inputs` holds what the translation
/// reads ([`Provider::inputs_of`]).
pub fn render(translator: Translator, service_set: &Value, inputs: &[Value]) -> Rendered {
    (translator.provider().translate)(service_set, inputs)
}

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
    fn a_provider_reads_its_inputs_in_any_version_and_nothing_else() {
        let objects = [
            json!({"apiVersion": "k0rdent.mirantis.com/v1alpha1", "kind": "ServiceTemplate"}),
            json!({"apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "HelmRepository"}),
            json!({"apiVersion": "example.com/v1", "kind": "HelmRepository"}),
            json!({"apiVersion": "k0rdent.mirantis.com/v1beta1", "kind": "ServiceSet"}),
        ];
        let kinds_of = |p: &Provider| -> Vec<String> {
            p.inputs_of(&objects)
                .iter()
                .map(|o| o["apiVersion"].as_str().unwrap().to_string())
                .collect()
        };
        assert_eq!(kinds_of(&FLUX), ["k0rdent.mirantis.com/v1alpha1"]);
        assert_eq!(
            kinds_of(&SVELTOS),
            [
                "k0rdent.mirantis.com/v1alpha1",
                "source.toolkit.fluxcd.io/v1"
            ]
        );
        for p in PROVIDERS {
            assert_eq!(p.translator.provider().name, p.name);
        }
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

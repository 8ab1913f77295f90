//! What `doctor` lists from a cluster: the kcm kinds every chain starts from, and per provider
//! the API groups that say it is installed, the kinds its chain follows and the lists it
//! selects by label. `core::provider` ties each provider's entry here to its translation and
//! its chain; the cluster room lists what it is handed.

use super::kinds::{self, Kind};
use super::sveltos::LABEL_HEALTH_RULE_TARGET;

/// A kind listed whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Listed {
    pub kind: &'static Kind,
    /// Listed in every namespace even with `-n`: objects of other namespaces may be
    /// referenced (sources, providers), or they live in a cluster's namespace.
    pub everywhere: bool,
}

/// A kind listed by a label selector, in every namespace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Selected {
    pub kind: &'static Kind,
    /// The label (key, or `key=value`) selecting the objects.
    pub selector: &'static str,
    /// What those objects are, for the note when they cannot be read.
    pub what: &'static str,
}

/// One provider's share of a listing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProviderApi {
    /// The provider's name in notes ("Sveltos", "Flux").
    pub label: &'static str,
    /// What the cluster serves when the provider is installed, for the error when no
    /// provider is.
    pub serves: &'static str,
    /// Whose ServiceSets its chain follows, for the note when it is not installed.
    pub whose: &'static str,
    /// The groups of which the cluster serves at least one when the provider is installed;
    /// a kind of these groups is not noted missing on its own when none is served.
    pub groups: &'static [&'static str],
    pub kinds: &'static [Listed],
    pub selected: &'static [Selected],
}

const fn listed(kind: &'static Kind, everywhere: bool) -> Listed {
    Listed { kind, everywhere }
}

/// The kcm kinds every chain starts from.
pub const KCM: &[Listed] = &[
    listed(&kinds::STATE_MANAGEMENT_PROVIDER, true),
    listed(&kinds::SERVICE_SET, false),
    listed(&kinds::SERVICE_TEMPLATE, false),
    // A ServiceSet of a MultiClusterService depends on ServiceSets of other services.
    listed(&kinds::MULTI_CLUSTER_SERVICE, true),
    // The clusters the ServiceSets deploy to (`tree`), whose Credentials Sveltos's chain reads.
    listed(&kinds::CLUSTER_DEPLOYMENT, false),
    // The chains that list a service's template and its upgrades (`trace`).
    listed(&kinds::SERVICE_TEMPLATE_CHAIN, false),
];

/// Flux sources, which may be referenced across namespaces.
const FLUX_SOURCES: [Listed; 5] = [
    listed(&kinds::HELM_CHART, true),
    listed(&kinds::HELM_REPOSITORY, true),
    listed(&kinds::GIT_REPOSITORY, true),
    listed(&kinds::OCI_REPOSITORY, true),
    listed(&kinds::BUCKET, true),
];

/// A Flux adapter: its HelmReleases and Kustomizations and their sources.
pub const FLUX: ProviderApi = ProviderApi {
    label: "Flux",
    serves: "Flux HelmReleases/Kustomizations",
    whose: "a Flux adapter",
    groups: &[kinds::HELM_RELEASE.group, kinds::KUSTOMIZATION.group],
    kinds: &[
        listed(&kinds::HELM_RELEASE, false),
        listed(&kinds::KUSTOMIZATION, false),
        FLUX_SOURCES[0],
        FLUX_SOURCES[1],
        FLUX_SOURCES[2],
        FLUX_SOURCES[3],
        FLUX_SOURCES[4],
    ],
    selected: &[],
};

/// kcm's default provider: the Profiles kcm writes, what Sveltos makes of them
/// (ClusterSummaries and ClusterConfigurations live in the cluster's namespace, `mgmt` for
/// self-management), the clusters they target, what the Profile is built from (the Flux
/// sources of Helm charts, the ClusterDeployment and its Credential) and kcm's health rules.
pub const SVELTOS: ProviderApi = ProviderApi {
    label: "Sveltos",
    serves: "Sveltos Profiles (config.projectsveltos.io, kcm's default provider)",
    whose: "kcm's default provider ksm-projectsveltos",
    groups: &[kinds::PROFILE.group],
    kinds: &[
        FLUX_SOURCES[0],
        FLUX_SOURCES[1],
        FLUX_SOURCES[2],
        listed(&kinds::PROFILE, false),
        listed(&kinds::CLUSTER_PROFILE, true),
        listed(&kinds::CLUSTER_SUMMARY, true),
        listed(&kinds::CLUSTER_CONFIGURATION, true),
        listed(&kinds::SVELTOS_CLUSTER, true),
        listed(&kinds::CAPI_CLUSTER, false),
        // The ClusterDeployments are among kcm's kinds; their Credentials here.
        listed(&kinds::CREDENTIAL, false),
    ],
    selected: &[Selected {
        kind: &kinds::CONFIG_MAP,
        selector: LABEL_HEALTH_RULE_TARGET,
        what: "kcm's health rules",
    }],
};

/// The kinds to list for these providers: kcm's, then each provider's, each kind once (in
/// every namespace when any provider wants it there).
pub fn union<'p>(providers: impl IntoIterator<Item = &'p ProviderApi>) -> Vec<Listed> {
    let mut out: Vec<Listed> = KCM.to_vec();
    for l in providers.into_iter().flat_map(|p| p.kinds) {
        match out.iter_mut().find(|o| o.kind == l.kind) {
            Some(o) => o.everywhere |= l.everywhere,
            None => out.push(*l),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_union_lists_each_kind_once_and_everywhere_when_any_provider_does() {
        let all = union([&SVELTOS, &FLUX]);
        let mut names: Vec<&str> = all.iter().map(|l| l.kind.kind).collect();
        let n = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), n, "each kind once");
        let helm_chart = all.iter().find(|l| l.kind == &kinds::HELM_CHART).unwrap();
        assert!(helm_chart.everywhere);
        // A provider's own kinds follow kcm's.
        assert_eq!(&all[..KCM.len()], KCM);
        assert!(union([&FLUX]).iter().all(|l| l.kind != &kinds::PROFILE));
    }

    #[test]
    fn a_providers_groups_serve_its_own_kinds() {
        for p in [&SVELTOS, &FLUX] {
            assert!(
                p.kinds.iter().any(|l| p.groups.contains(&l.kind.group)),
                "{}",
                p.label
            );
        }
    }
}

//! Who owns a release when several ServiceSets of this adapter deploy it.
//!
//! Pure: the caller lists every claim (one per service of every ServiceSet the adapter
//! manages, all shards included) and gets one verdict per claim. The rule follows kcm's own
//! provider (Sveltos tiers, tier = 2147483647 − priority): the higher priority wins; on equal
//! priority the older ServiceSet keeps the release (creationTimestamp, then namespace/name),
//! so every replica and every restart reaches the same decision from the same cache.
//! A loser is Failed, or Pending while the owner is being deleted (it takes over once the
//! owner is gone from the inputs).

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde_json::Value;

use crate::api::flux::FluxObject;
use crate::api::kcm::ServiceSet;
use crate::api::meta::Object;
use crate::api::naming;
use crate::api::sveltos::{DEFAULT_PRIORITY, MAX_PRIORITY, MIN_PRIORITY};
use crate::core::render::{Outcome, Rendered, ServiceResult};

/// What two claims fight over on one target cluster.
#[derive(
    Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
pub enum Target {
    /// One Helm release: (cluster, release namespace, release name).
    Release {
        cluster: String,
        namespace: String,
        name: String,
    },
    /// Two Kustomizations applying the same path of the same source (to the same namespace).
    Kustomization {
        cluster: String,
        source: String,
        path: String,
        target_namespace: String,
    },
}

/// The cluster of an object without `spec.kubeConfig`: the one the adapter runs in.
pub const MANAGEMENT_CLUSTER: &str = "the management cluster";

impl Target {
    /// The cluster the target is on: `<namespace>/<cluster>` or [`MANAGEMENT_CLUSTER`].
    pub fn cluster(&self) -> &str {
        match self {
            Target::Release { cluster, .. } | Target::Kustomization { cluster, .. } => cluster,
        }
    }
}

impl std::fmt::Display for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let on = |c: &str| {
            if c == MANAGEMENT_CLUSTER {
                c.to_string()
            } else {
                format!("cluster {c}")
            }
        };
        match self {
            Target::Release {
                cluster,
                namespace,
                name,
            } => write!(f, "Helm release {namespace}/{name} on {}", on(cluster)),
            Target::Kustomization {
                cluster,
                source,
                path,
                target_namespace,
            } => {
                write!(f, "path {path} of {source}")?;
                if !target_namespace.is_empty() {
                    write!(f, " (namespace {target_namespace})")?;
                }
                write!(f, " on {}", on(cluster))
            }
        }
    }
}

/// What a HelmRelease or Kustomization (rendered or live) deploys where; None for other
/// objects. The release is Helm's identity of it: the release name (`spec.releaseName`, or
/// Flux's default `[<targetNamespace>-]<name>`) in its storage namespace (`storageNamespace`,
/// else `targetNamespace`, else the object's). The cluster is the kubeconfig Secret's
/// ClusterDeployment (`<namespace>/<cluster>`), or the management cluster.
pub fn target_of(obj: &Value) -> Option<Target> {
    let o = Object(obj);
    let flux = FluxObject(obj);
    let ns = o.namespace();
    let cluster = match flux.kube_config_secret() {
        "" => MANAGEMENT_CLUSTER.to_string(),
        secret => format!("{ns}/{}", naming::cluster_of_kubeconfig_secret(secret)),
    };
    fn non_empty(s: &str) -> Option<&str> {
        Some(s).filter(|s| !s.is_empty())
    }
    match o.kind() {
        "HelmRelease" => {
            let target_ns = non_empty(flux.target_namespace());
            let name = match (non_empty(flux.release_name()), target_ns) {
                (Some(r), _) => r.to_string(),
                (None, Some(t)) => format!("{t}-{}", o.name()),
                (None, None) => o.name().to_string(),
            };
            let namespace = non_empty(flux.storage_namespace())
                .or(target_ns)
                .unwrap_or(ns)
                .to_string();
            Some(Target::Release {
                cluster,
                namespace,
                name,
            })
        }
        "Kustomization" => {
            let source = flux.source()?;
            // Flux reads "", "." and "./" as the source's root.
            let path = match flux.path().trim_end_matches('/') {
                "" | "." => "./".to_string(),
                p if p.starts_with("./") || p.starts_with('/') => p.to_string(),
                p => format!("./{p}"),
            };
            Some(Target::Kustomization {
                cluster,
                source: format!("{}/{}/{}", source.kind, source.namespace, source.name),
                path,
                target_namespace: flux.target_namespace().to_string(),
            })
        }
        _ => None,
    }
}

/// The cluster of every target a ServiceSet's rendered objects claim, as [`target_of`]
/// reads it from them: render puts them in the ServiceSet's namespace ("default" when it has
/// none) with the kubeconfig Secret of its cluster, or none for self-management. Only
/// ServiceSets with the same cluster can contend for a target, so who needs rendering to
/// find conflicts is known without rendering.
pub fn cluster_of(set: &Value) -> String {
    let s = ServiceSet(set);
    if s.self_management() {
        return MANAGEMENT_CLUSTER.to_string();
    }
    let ns = s.meta().namespace_or_default();
    let secret = naming::kubeconfig_secret(s.cluster());
    format!("{ns}/{}", naming::cluster_of_kubeconfig_secret(&secret))
}

/// The claims of a ServiceSet: one per rendered service, with the index of the service in
/// `rendered.services`. A service that failed to render, or uninstalls, claims nothing.
pub fn claims(set: &Value, rendered: &Rendered) -> Vec<(usize, Claim)> {
    claims_with(set, &rendered.services, |i| {
        target_of(rendered.objects.get(i)?)
    })
}

/// The claims of a ServiceSet whose rendered services are `services`, the object of index
/// `i` claiming `target(i)` (see [`claims`]).
pub fn claims_with(
    set: &Value,
    services: &[ServiceResult],
    target: impl Fn(usize) -> Option<Target>,
) -> Vec<(usize, Claim)> {
    let s = ServiceSet(set);
    let priority = priority(s.provider_config()).unwrap_or(DEFAULT_PRIORITY);
    let created = s.meta().creation_timestamp().parse().ok();
    let deleting = s.meta().is_deleting();
    services
        .iter()
        .enumerate()
        .filter_map(|(i, svc)| {
            let Outcome::Rendered { index } = svc.outcome else {
                return None;
            };
            let target = target(index)?;
            Some((
                i,
                Claim {
                    target,
                    namespace: s.meta().namespace_or_default().to_string(),
                    service_set: s.name().to_string(),
                    service: svc.name.clone(),
                    priority,
                    created,
                    deleting,
                },
            ))
        })
        .collect()
}

/// The verdict on `mine` among the rivals' claims (any target; others are ignored): None
/// when it owns its target, else the winning claim and whether it is being deleted.
pub fn verdict<'a>(mine: &'a Claim, rivals: &'a [Claim]) -> Option<(&'a Claim, bool)> {
    let mut all: Vec<Claim> = vec![mine.clone()];
    let mut refs: Vec<&Claim> = vec![mine];
    for r in rivals.iter().filter(|r| r.target == mine.target) {
        if r.namespace == mine.namespace && r.service_set == mine.service_set {
            continue; // its own claim, as the caller's index had it
        }
        all.push(r.clone());
        refs.push(r);
    }
    match decide(&all)[0] {
        Verdict::Owns => None,
        Verdict::Lost { owner, pending } => Some((refs[owner], pending)),
    }
}

/// A service that loses its target to another ServiceSet's, among several ServiceSets
/// rendered together (`render` of several ServiceSets, `doctor`).
#[derive(Debug, Clone, PartialEq)]
pub struct Conflict {
    /// Index of the ServiceSet in the input.
    pub set: usize,
    /// Index of the service in that ServiceSet's `rendered.services`.
    pub service: usize,
    /// Index of the object the adapter does not write, in `rendered.objects`.
    pub object: usize,
    pub loser: Claim,
    pub owner: Claim,
    /// The owner is being deleted: the loser takes over once it is gone.
    pub pending: bool,
}

impl Conflict {
    pub fn message(&self) -> String {
        loser_message(&self.loser, &self.owner)
    }
}

/// The services of `sets` (each a ServiceSet of the Flux adapter and its rendering) that
/// lose their release or path to another one's, as the adapter decides it.
pub fn conflicts(sets: &[(&Value, &Rendered)]) -> Vec<Conflict> {
    let mut all: Vec<(usize, usize, usize, Claim)> = Vec::new();
    for (si, (set, rendered)) in sets.iter().enumerate() {
        for (svc, claim) in claims(set, rendered) {
            let Outcome::Rendered { index } = rendered.services[svc].outcome else {
                continue;
            };
            all.push((si, svc, index, claim));
        }
    }
    let claims: Vec<Claim> = all.iter().map(|(.., c)| c.clone()).collect();
    decide(&claims)
        .into_iter()
        .zip(&all)
        .filter_map(|(v, (set, service, object, loser))| match v {
            Verdict::Owns => None,
            Verdict::Lost { owner, pending } => Some(Conflict {
                set: *set,
                service: *service,
                object: *object,
                loser: loser.clone(),
                owner: claims[owner].clone(),
                pending,
            }),
        })
        .collect()
}

/// One service of one ServiceSet laying claim to a target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claim {
    pub target: Target,
    pub namespace: String,
    pub service_set: String,
    pub service: String,
    pub priority: i64,
    pub created: Option<DateTime<Utc>>,
    /// The ServiceSet has a deletionTimestamp.
    pub deleting: bool,
}

/// The decision for one claim.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Owns,
    /// `owner` indexes the winning claim; `pending` when that owner is being deleted.
    Lost {
        owner: usize,
        pending: bool,
    },
}

/// The priority of a provider config: `priority`, default 100, valid 1…2147483646 as in kcm.
pub fn priority(config: Option<&Value>) -> Result<i64, String> {
    let Some(p) = config.and_then(|c| c.get("priority")) else {
        return Ok(DEFAULT_PRIORITY);
    };
    match p.as_i64() {
        Some(p) if (MIN_PRIORITY..=MAX_PRIORITY).contains(&p) => Ok(p),
        _ => Err(format!(
            "provider config priority {p} is not an integer in {MIN_PRIORITY}…{MAX_PRIORITY}"
        )),
    }
}

/// One verdict per claim, in input order. Independent of the input order.
pub fn decide(claims: &[Claim]) -> Vec<Verdict> {
    let mut by_target: BTreeMap<&Target, usize> = BTreeMap::new();
    for (i, c) in claims.iter().enumerate() {
        by_target
            .entry(&c.target)
            .and_modify(|w| {
                if outranks(c, &claims[*w]) {
                    *w = i;
                }
            })
            .or_insert(i);
    }
    claims
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let w = by_target[&c.target];
            if w == i {
                Verdict::Owns
            } else {
                Verdict::Lost {
                    owner: w,
                    pending: claims[w].deleting,
                }
            }
        })
        .collect()
}

/// The failureMessage of a losing claim.
pub fn loser_message(loser: &Claim, owner: &Claim) -> String {
    let what = &loser.target;
    let deleting = if owner.deleting {
        " (being deleted: this service takes over when it is gone)"
    } else {
        ""
    };
    let why = if owner.priority == loser.priority {
        let by = match (owner.created, loser.created) {
            (Some(o), Some(l)) if o < l => "the older ServiceSet",
            (Some(_), None) => "the older ServiceSet",
            _ => "the first by namespace/name",
        };
        format!("both have priority {}, and {by} keeps it", owner.priority)
    } else {
        format!(
            "its priority {} against this one's {}",
            owner.priority, loser.priority
        )
    };
    format!(
        "{what} is owned by service {} of ServiceSet {}/{}{deleting}: {why}",
        owner.service, owner.namespace, owner.service_set
    )
}

/// Higher priority, then older (a missing creationTimestamp counts as newest), then
/// namespace/name, then service name.
fn outranks(a: &Claim, b: &Claim) -> bool {
    let key = |c: &Claim| {
        (
            std::cmp::Reverse(c.priority),
            c.created.is_none(),
            c.created,
            (
                c.namespace.clone(),
                c.service_set.clone(),
                c.service.clone(),
            ),
        )
    };
    key(a) < key(b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn release() -> Target {
        Target::Release {
            cluster: "kcm-system/dev".into(),
            namespace: "ingress".into(),
            name: "nginx".into(),
        }
    }

    fn claim(set: &str, priority: i64, created: &str) -> Claim {
        Claim {
            target: release(),
            namespace: "kcm-system".into(),
            service_set: set.into(),
            service: "nginx".into(),
            priority,
            created: (!created.is_empty()).then(|| created.parse().unwrap()),
            deleting: false,
        }
    }

    #[test]
    fn higher_priority_wins_whatever_the_age() {
        let c = [
            claim("old", 100, "2026-01-01T00:00:00Z"),
            claim("new", 500, "2026-06-01T00:00:00Z"),
        ];
        assert_eq!(
            decide(&c),
            [
                Verdict::Lost {
                    owner: 1,
                    pending: false
                },
                Verdict::Owns
            ]
        );
        assert_eq!(
            loser_message(&c[0], &c[1]),
            "Helm release ingress/nginx on cluster kcm-system/dev is owned by service nginx of ServiceSet kcm-system/new: its priority 500 against this one's 100"
        );
    }

    #[test]
    fn ties_go_to_the_older_then_to_the_name_in_any_input_order() {
        let mut c = vec![
            claim("b", 100, "2026-01-01T00:00:00Z"),
            claim("a", 100, "2026-01-01T00:00:00Z"),
            claim("z", 100, "2025-12-31T00:00:00Z"),
            claim("none", 100, ""),
        ];
        assert_eq!(decide(&c)[2], Verdict::Owns);
        c.remove(2);
        let v = decide(&c);
        assert_eq!(v[1], Verdict::Owns, "same age: a before b");
        assert_eq!(
            v[2],
            Verdict::Lost {
                owner: 1,
                pending: false
            }
        );
        c.reverse(); // none, a, b
        let v = decide(&c);
        assert_eq!(v[1], Verdict::Owns, "input order does not matter");
        assert_eq!(
            v[0],
            Verdict::Lost {
                owner: 1,
                pending: false
            },
            "no creationTimestamp: newest"
        );
    }

    #[test]
    fn three_way_and_other_targets_are_independent() {
        let mut other = claim("c", 1, "2026-03-01T00:00:00Z");
        other.target = Target::Kustomization {
            cluster: "kcm-system/dev".into(),
            source: "GitRepository/kcm-system/apps".into(),
            path: "./ingress".into(),
            target_namespace: String::new(),
        };
        let c = [
            claim("a", 100, "2026-01-01T00:00:00Z"),
            claim("b", 300, "2026-02-01T00:00:00Z"),
            claim("c", 200, "2026-01-15T00:00:00Z"),
            other,
        ];
        let lost = Verdict::Lost {
            owner: 1,
            pending: false,
        };
        assert_eq!(
            decide(&c),
            [lost.clone(), Verdict::Owns, lost, Verdict::Owns]
        );
    }

    #[test]
    fn a_deleting_winner_keeps_losers_pending_and_its_removal_hands_over() {
        let mut c = vec![
            claim("winner", 300, "2026-01-01T00:00:00Z"),
            claim("second", 200, "2026-02-01T00:00:00Z"),
            claim("third", 100, "2026-03-01T00:00:00Z"),
        ];
        c[0].deleting = true;
        let pending = Verdict::Lost {
            owner: 0,
            pending: true,
        };
        assert_eq!(decide(&c), [Verdict::Owns, pending.clone(), pending]);
        assert!(loser_message(&c[1], &c[0]).contains("being deleted"));
        c.remove(0);
        assert_eq!(
            decide(&c),
            [
                Verdict::Owns,
                Verdict::Lost {
                    owner: 0,
                    pending: false
                }
            ]
        );
    }

    #[test]
    fn priority_defaults_and_range_as_kcm() {
        assert_eq!(priority(None), Ok(100));
        assert_eq!(priority(Some(&json!({"stopOnConflict": true}))), Ok(100));
        assert_eq!(priority(Some(&json!({"priority": 1}))), Ok(1));
        assert_eq!(
            priority(Some(&json!({"priority": 2147483646}))),
            Ok(2147483646)
        );
        assert!(priority(Some(&json!({"priority": 0}))).is_err());
        assert!(priority(Some(&json!({"priority": 2147483647}))).is_err());
        assert!(priority(Some(&json!({"priority": "high"}))).is_err());
    }
}

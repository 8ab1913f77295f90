//! Every lint check. Each file owns one check (or, for schema validation, one mechanism with a
//! code per kind of violation): its `RuleInfo` with documentation, its logic and its tests.

mod api_version;
mod crd_resource_name;
mod deprecated_fields;
mod duplicate_provisioner;
mod empty_rule;
pub mod health_rules;
pub mod kind_typo;
mod load;
pub mod mcs_dependencies;
mod mcs_selector;
mod missing_namespace;
mod name;
mod pause_annotations;
pub mod placeholder;
pub mod provider_config;
pub mod provider_name;
mod provisioner_crd;
pub mod repository;
mod rule_not_bool;
mod rule_syntax;
mod rule_type;
mod schema;
mod selector;
mod self_management;
mod service_dependencies;
mod service_name;
pub mod template_chain;
mod unguarded_field;

pub(crate) use unguarded_field::Analysis as UnguardedAnalysis;

use super::{Context, RuleInfo, Target, key};
use crate::core::cel;
use crate::core::schema::PathSeg;
use crate::diag::Diagnostic;

/// The path of a field below `spec.serviceSpec.services[i]` of a ClusterDeployment or
/// MultiClusterService.
pub(crate) fn service_path(i: usize, rest: &[&str]) -> Vec<PathSeg> {
    let mut path = vec![
        key("spec"),
        key("serviceSpec"),
        key("services"),
        PathSeg::Index(i),
    ];
    path.extend(rest.iter().map(|k| key(k)));
    path
}

/// What kcm does with the services of a ClusterDeployment or MultiClusterService it refuses:
/// the ClusterDeployment webhook rejects the object; a MultiClusterService (no webhook) gets
/// `condition` False and is reconciled no further.
pub(crate) fn refusal(target: Target, condition: &str) -> String {
    if target == Target::ClusterDeployment {
        "kcm's ClusterDeployment webhook rejects the object".to_string()
    } else {
        format!("kcm's MultiClusterService controller sets {condition}=False and deploys nothing")
    }
}

/// Reports the readiness rules' compile errors of one kind (KSM201 parsing, KSM202 type
/// checking), each pointing inside the rule where it is.
fn compile_errors(
    ctx: &Context,
    info: &RuleInfo,
    kind: cel::CompileErrorKind,
    out: &mut Vec<Diagnostic>,
) {
    for site in &ctx.rules {
        let Err(errors) = &*site.compiled else {
            continue;
        };
        for e in errors.iter().filter(|e| e.kind == kind) {
            let span = match &e.span {
                Some(r) => ctx.rule_span(site, r.clone()),
                None => site.node.span.clone(),
            };
            out.push(
                ctx.diag(
                    info,
                    format!("readiness rule does not compile: {}", e.message),
                    span,
                )
                .label("here")
                .help(
                    "kcm would set the condition False with reason FailedToEvaluateReadiness; try \
                     the rule with `kubectl ksm eval RULE -f object.yaml`",
                ),
            );
        }
    }
}

/// How a rule runs.
pub(crate) enum Runs {
    /// On each object of the kinds named (every kcm kind when None), in table order.
    Object {
        kinds: Option<&'static [Target]>,
        check: fn(&Context, &mut Vec<Diagnostic>),
    },
    /// On each object, after every `Object` rule, over their findings on it (from the index
    /// given): placeholders cause the findings inside them.
    AfterOthers(fn(&Context, &mut Vec<Diagnostic>, usize)),
    /// While reading a source into objects (`core::objects`).
    Loading,
    /// On a Sveltos health-rule ConfigMap, instead of the kcm checks (`lint_object`).
    HealthRuleConfigMap,
    /// On an object of a kind `lint` does not check (`lint_object`).
    UnknownKind,
    /// On a whole source, before its objects: what a repository walk meets (`lint_source`).
    Source,
    /// Once every input is read, across them (`Across`; provider names in `cli::lint`).
    AcrossFiles,
    /// While applying the suppressions (`suppress::apply`).
    Suppression,
}

/// A rule: its codes and how it runs.
pub(crate) struct Rule {
    pub infos: &'static [&'static RuleInfo],
    pub runs: Runs,
}

const SMP: Option<&[Target]> = Some(&[Target::StateManagementProvider]);
const SERVICES: Option<&[Target]> = Some(&[Target::ClusterDeployment, Target::MultiClusterService]);

/// Every rule, in code order: the source of the per-object dispatch ([`check_all`]) and of the
/// code registry ([`ALL`]: `--explain`, SARIF rules).
pub(crate) static RULES: &[Rule] = &[
    Rule {
        infos: &[&load::UNREADABLE, &load::SYNTAX, &load::NOT_OBJECT],
        runs: Runs::Loading,
    },
    Rule {
        infos: &[
            &schema::UNKNOWN_FIELD,
            &schema::REQUIRED,
            &schema::TYPE,
            &schema::ENUM,
            &schema::VALUE,
            &schema::RULE,
            &schema::VERSION,
        ],
        runs: Runs::Object {
            kinds: None,
            check: schema::check,
        },
    },
    Rule {
        infos: &[&rule_syntax::INFO],
        runs: Runs::Object {
            kinds: SMP,
            check: rule_syntax::check,
        },
    },
    Rule {
        infos: &[&rule_type::INFO],
        runs: Runs::Object {
            kinds: SMP,
            check: rule_type::check,
        },
    },
    Rule {
        infos: &[&rule_not_bool::INFO],
        runs: Runs::Object {
            kinds: SMP,
            check: rule_not_bool::check,
        },
    },
    Rule {
        infos: &[&unguarded_field::INFO],
        runs: Runs::Object {
            kinds: SMP,
            check: unguarded_field::check,
        },
    },
    Rule {
        infos: &[&empty_rule::INFO],
        runs: Runs::Object {
            kinds: SMP,
            check: empty_rule::check,
        },
    },
    Rule {
        infos: &[&api_version::INFO],
        runs: Runs::Object {
            kinds: SMP,
            check: api_version::check,
        },
    },
    Rule {
        infos: &[&missing_namespace::INFO],
        runs: Runs::Object {
            kinds: SMP,
            check: missing_namespace::check,
        },
    },
    Rule {
        infos: &[&selector::INFO],
        runs: Runs::Object {
            kinds: SMP,
            check: selector::check,
        },
    },
    Rule {
        infos: &[&provisioner_crd::INFO],
        runs: Runs::Object {
            kinds: SMP,
            check: provisioner_crd::check,
        },
    },
    Rule {
        infos: &[&crd_resource_name::INFO],
        runs: Runs::Object {
            kinds: SMP,
            check: crd_resource_name::check,
        },
    },
    Rule {
        infos: &[&duplicate_provisioner::INFO],
        runs: Runs::Object {
            kinds: SMP,
            check: duplicate_provisioner::check,
        },
    },
    Rule {
        infos: &[
            &health_rules::UNPARSABLE,
            &health_rules::KIND_VERSION,
            &health_rules::SCOPE,
            &health_rules::IGNORED_KEY,
            &health_rules::EMPTY_EXPRESSION,
            &health_rules::COMPILE_ERROR,
        ],
        runs: Runs::HealthRuleConfigMap,
    },
    Rule {
        infos: &[&name::INFO],
        runs: Runs::Object {
            kinds: None,
            check: name::check,
        },
    },
    Rule {
        infos: &[&placeholder::INFO],
        runs: Runs::AfterOthers(placeholder::check),
    },
    Rule {
        infos: &[&kind_typo::INFO],
        runs: Runs::UnknownKind,
    },
    Rule {
        infos: &[&repository::HELM_TEMPLATE, &repository::NOT_KUBERNETES],
        runs: Runs::Source,
    },
    Rule {
        infos: &[&provider_name::INFO],
        runs: Runs::AcrossFiles,
    },
    Rule {
        infos: &[&super::suppress::NO_REASON],
        runs: Runs::Suppression,
    },
    Rule {
        infos: &[
            &service_dependencies::UNDEFINED,
            &service_dependencies::CYCLE,
            &service_dependencies::NEVER_SATISFIED,
        ],
        runs: Runs::Object {
            kinds: SERVICES,
            check: service_dependencies::check,
        },
    },
    Rule {
        infos: &[&deprecated_fields::INFO],
        runs: Runs::Object {
            kinds: SERVICES,
            check: deprecated_fields::check,
        },
    },
    Rule {
        infos: &[
            &provider_config::UNKNOWN_KEY,
            &provider_config::REJECTED,
            &provider_config::FALLBACK,
        ],
        runs: Runs::Object {
            kinds: None,
            check: provider_config::check,
        },
    },
    Rule {
        infos: &[
            &pause_annotations::VALUE_IGNORED,
            &pause_annotations::NOT_READ,
        ],
        runs: Runs::Object {
            kinds: None,
            check: pause_annotations::check,
        },
    },
    Rule {
        infos: &[&mcs_selector::INFO],
        runs: Runs::Object {
            kinds: Some(&[Target::MultiClusterService]),
            check: mcs_selector::check,
        },
    },
    Rule {
        infos: &[&self_management::INFO],
        runs: Runs::Object {
            kinds: Some(&[Target::ClusterDeployment]),
            check: self_management::check,
        },
    },
    Rule {
        infos: &[&service_name::INFO],
        runs: Runs::Object {
            kinds: SERVICES,
            check: service_name::check,
        },
    },
    Rule {
        infos: &[&template_chain::INVALID],
        runs: Runs::Object {
            kinds: Some(&[Target::ServiceTemplateChain, Target::ClusterTemplateChain]),
            check: template_chain::check,
        },
    },
    Rule {
        infos: &[&template_chain::UNSUPPORTED],
        runs: Runs::AcrossFiles,
    },
    Rule {
        infos: &[
            &mcs_dependencies::CYCLE,
            &mcs_dependencies::DISABLED,
            &mcs_dependencies::NO_EFFECT,
        ],
        runs: Runs::AcrossFiles,
    },
];

const fn count_infos(rules: &[Rule]) -> usize {
    let mut n = 0;
    let mut i = 0;
    while i < rules.len() {
        n += rules[i].infos.len();
        i += 1;
    }
    n
}

const fn flatten<const N: usize>(rules: &[Rule]) -> [&'static RuleInfo; N] {
    let mut all: [&RuleInfo; N] = [&load::UNREADABLE; N];
    let (mut n, mut i) = (0, 0);
    while i < rules.len() {
        let mut j = 0;
        while j < rules[i].infos.len() {
            all[n] = rules[i].infos[j];
            n += 1;
            j += 1;
        }
        i += 1;
    }
    all
}

/// Every check, in code order (the `RuleInfo`s of [`RULES`]).
pub static ALL: &[&RuleInfo] = &ALL_ARRAY;
static ALL_ARRAY: [&RuleInfo; count_infos(RULES)] = flatten(RULES);

/// Runs every check that applies to the object's kind.
pub fn check_all(ctx: &Context, out: &mut Vec<Diagnostic>) {
    let first = out.len();
    for rule in RULES {
        if let Runs::Object { kinds, check } = rule.runs
            && kinds.is_none_or(|k| k.contains(&ctx.target))
        {
            check(ctx, out);
        }
    }
    for rule in RULES {
        if let Runs::AfterOthers(check) = rule.runs {
            check(ctx, out, first);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_unique_sorted_and_documented() {
        let mut prev = "";
        for r in ALL {
            assert!(r.code > prev, "{} after {prev}", r.code);
            prev = r.code;
            for section in [
                "## What it finds",
                "## Why it matters",
                "## Example",
                "## Fix",
            ] {
                assert!(r.docs.contains(section), "{} docs lack {section}", r.code);
            }
            assert!(!r.title.ends_with('.'), "{} title", r.code);
        }
    }
}

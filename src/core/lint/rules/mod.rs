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

pub(crate) use unguarded_field::Unguarded;

use super::{Context, RuleInfo, Target, key};
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

/// Every check, in code order.
pub static ALL: &[&RuleInfo] = &[
    &load::UNREADABLE,
    &load::SYNTAX,
    &load::NOT_OBJECT,
    &schema::UNKNOWN_FIELD,
    &schema::REQUIRED,
    &schema::TYPE,
    &schema::ENUM,
    &schema::VALUE,
    &schema::RULE,
    &schema::VERSION,
    &rule_syntax::INFO,
    &rule_type::INFO,
    &rule_not_bool::INFO,
    &unguarded_field::INFO,
    &empty_rule::INFO,
    &api_version::INFO,
    &missing_namespace::INFO,
    &selector::INFO,
    &provisioner_crd::INFO,
    &crd_resource_name::INFO,
    &duplicate_provisioner::INFO,
    &health_rules::UNPARSABLE,
    &health_rules::KIND_VERSION,
    &health_rules::SCOPE,
    &health_rules::IGNORED_KEY,
    &health_rules::EMPTY_EXPRESSION,
    &health_rules::COMPILE_ERROR,
    &name::INFO,
    &placeholder::INFO,
    &kind_typo::INFO,
    &repository::HELM_TEMPLATE,
    &repository::NOT_KUBERNETES,
    &provider_name::INFO,
    &crate::core::lint::suppress::NO_REASON,
    &service_dependencies::UNDEFINED,
    &service_dependencies::CYCLE,
    &service_dependencies::NEVER_SATISFIED,
    &deprecated_fields::INFO,
    &provider_config::UNKNOWN_KEY,
    &provider_config::REJECTED,
    &provider_config::FALLBACK,
    &pause_annotations::VALUE_IGNORED,
    &pause_annotations::NOT_READ,
    &mcs_selector::INFO,
    &self_management::INFO,
    &service_name::INFO,
    &template_chain::INVALID,
    &template_chain::UNSUPPORTED,
    &mcs_dependencies::CYCLE,
    &mcs_dependencies::DISABLED,
    &mcs_dependencies::NO_EFFECT,
];

/// Runs every check that applies to the object's kind.
pub fn check_all(ctx: &Context, out: &mut Vec<Diagnostic>) {
    let first = out.len();
    schema::check(ctx, out);
    name::check(ctx, out);
    if ctx.target == Target::StateManagementProvider {
        rule_syntax::check(ctx, out);
        rule_type::check(ctx, out);
        rule_not_bool::check(ctx, out);
        unguarded_field::check(ctx, out);
        empty_rule::check(ctx, out);
        api_version::check(ctx, out);
        missing_namespace::check(ctx, out);
        selector::check(ctx, out);
        provisioner_crd::check(ctx, out);
        crd_resource_name::check(ctx, out);
        duplicate_provisioner::check(ctx, out);
    }
    service_dependencies::check(ctx, out);
    deprecated_fields::check(ctx, out);
    provider_config::check(ctx, out);
    pause_annotations::check(ctx, out);
    mcs_selector::check(ctx, out);
    self_management::check(ctx, out);
    service_name::check(ctx, out);
    template_chain::check(ctx, out);
    placeholder::check(ctx, out, first);
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

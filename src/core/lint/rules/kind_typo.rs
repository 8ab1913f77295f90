//! KSM403: a k0rdent object with a misspelled `kind` or `apiVersion`, which lint would
//! otherwise skip as a kind it does not check.

use serde_json::Value;

use super::schema::edit_distance;
use crate::core::lint::{KCM_GROUP, RuleInfo, Target, key, node_at};
use crate::core::objects::LoadedObject;
use crate::diag::{Diagnostic, Severity};

pub static INFO: RuleInfo = RuleInfo {
    code: "KSM403",
    name: "misspelled-kind",
    severity: Severity::Error,
    title: "A k0rdent object's kind or apiVersion is misspelled",
    docs: "\
## What it finds
An object that is almost a k0rdent object lint checks: a `kind` one or two letters away from
a kind of the kcm group (StateManagementProvider, ServiceSet, ServiceTemplate,
ClusterDeployment, MultiClusterService, ServiceTemplateChain, ClusterTemplate, Credential...)
or in the wrong case, or an `apiVersion` whose group is almost
`k0rdent.mirantis.com` or that lacks its version. Without this check such an object is
counted as skipped, and its mistakes go unseen.

## Why it matters
The API server refuses it (`no matches for kind \"ServiceTempalte\" in version
\"k0rdent.mirantis.com/v1beta1\"`), or it is applied as some other group's resource.

## Example
```yaml
apiVersion: k0rdent.mirantis.com/v1beta1
kind: ServiceTempalte
```

## Fix
Use the kind and apiVersion the suggestion names.
",
};

/// The checked kind `kind` is a misspelling of (not itself).
fn near_kind(kind: &str) -> Option<&'static str> {
    let lower = kind.to_ascii_lowercase();
    Target::all()
        .map(|t| t.kind())
        .filter(|k| *k != kind)
        .map(|k| (edit_distance(&k.to_ascii_lowercase(), &lower), k))
        .filter(|(d, _)| *d <= 2)
        .min()
        .map(|(_, k)| k)
}

fn group_is_near(group: &str) -> bool {
    group != KCM_GROUP && edit_distance(group, KCM_GROUP) <= 3
}

/// The finding for an object lint does not check, when it looks like one it does.
pub fn check(object: &LoadedObject) -> Option<Diagnostic> {
    let s = |k: &str| object.json.get(k).and_then(Value::as_str).unwrap_or("");
    let (api_version, kind) = (s("apiVersion"), s("kind"));
    let (group, version) = match api_version.split_once('/') {
        Some((g, v)) => (g, Some(v)),
        None => (api_version, None),
    };
    let kind_is_checked = Target::of_kind(kind).is_some();
    let in_group = group == KCM_GROUP;
    let (field, message, help) = if (in_group || group_is_near(group)) && !kind_is_checked {
        let suggestion = near_kind(kind)?;
        (
            "kind",
            format!("no kind {kind:?} in {KCM_GROUP}: a misspelling of {suggestion}?"),
            format!("did you mean `kind: {suggestion}`?"),
        )
    } else if kind_is_checked && group_is_near(group) {
        (
            "apiVersion",
            format!("{kind} is in the group {KCM_GROUP}, not {group:?}"),
            format!(
                "did you mean `apiVersion: {KCM_GROUP}/{}`?",
                version.unwrap_or("v1beta1")
            ),
        )
    } else if kind_is_checked && in_group && version.is_none() {
        (
            "apiVersion",
            format!("apiVersion {api_version:?} has no version"),
            format!("did you mean `apiVersion: {KCM_GROUP}/v1beta1`?"),
        )
    } else {
        return None;
    };
    let span = node_at(&object.node, &[key(field)])
        .map(|n| n.span.clone())
        .unwrap_or_else(|| object.node.span.clone());
    Some(
        Diagnostic::new(INFO.code, INFO.severity, message)
            .at(&object.source, object.source.first_line(span))
            .help(help),
    )
}

#[cfg(test)]
mod tests {
    use crate::core::lint::test_support::lint_code;

    fn obj(api_version: &str, kind: &str) -> String {
        format!("apiVersion: {api_version}\nkind: {kind}\nmetadata:\n  name: x\nspec: {{}}\n")
    }

    #[test]
    fn misspelled_kinds_and_groups_are_reported_not_skipped() {
        let kcm = "k0rdent.mirantis.com/v1beta1";
        let f = lint_code(&obj(kcm, "ServiceTempalte"), "KSM403");
        assert_eq!(
            f,
            [
                "KSM403 2:7 no kind \"ServiceTempalte\" in k0rdent.mirantis.com: a misspelling of ServiceTemplate?"
            ]
        );
        assert_eq!(lint_code(&obj(kcm, "servicetemplate"), "KSM403").len(), 1);
        assert_eq!(lint_code(&obj(kcm, "ClusterDeploymnt"), "KSM403").len(), 1);
        let f = lint_code(
            &obj("kordent.mirantis.com/v1beta1", "ServiceTemplate"),
            "KSM403",
        );
        assert_eq!(
            f,
            [
                "KSM403 1:13 ServiceTemplate is in the group k0rdent.mirantis.com, not \"kordent.mirantis.com\""
            ]
        );
        assert_eq!(
            lint_code(&obj("k0rdent.mirantis.com", "ServiceSet"), "KSM403").len(),
            1
        );
        // Other kcm kinds and other groups' kinds are not misspellings.
        for (a, k) in [
            (kcm, "Credential"),
            (kcm, "ClusterTemplate"),
            ("apps/v1", "Deployment"),
            ("v1", "Service"),
        ] {
            assert_eq!(lint_code(&obj(a, k), "KSM403"), Vec::<String>::new(), "{k}");
        }
    }
}

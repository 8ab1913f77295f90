//! KSM101–KSM107: validation against the real kcm CRDs' openAPIV3Schema, as the API server
//! validates (and prunes) a custom resource. Unknown fields are the dangerous case: the API
//! server drops them silently, so a misspelled `readinesRule` leaves the rule empty (always ready).

use serde_json::Value;

use crate::core::crds;
use crate::core::lint::{Context, RuleInfo};
use crate::core::schema::{PathSeg, ViolationKind, format_path};
use crate::diag::{Diagnostic, Severity};

pub static UNKNOWN_FIELD: RuleInfo = RuleInfo {
    code: "KSM101",
    name: "unknown-field",
    severity: Severity::Error,
    title: "A field the CRD does not define (the API server drops it silently)",
    docs: "\
## What it finds
A field that the kcm CRD's schema does not define at that place, such as a misspelled
`readinesRule` or a field indented one level too deep.

## Why it matters
The API server prunes unknown fields of custom resources without an error: the object is
stored without them. A misspelled `readinessRule` becomes an empty rule, and kcm treats an
empty rule as \"ready\": the adapter is reported ready whatever its state.

## Example
```yaml
spec:
  adapter:
    readinesRule: self.status.readyReplicas == self.status.replicas
```

## Fix
Spell the field as the CRD does (the help names the closest known field), or move it to the
level where it belongs.
",
};

pub static REQUIRED: RuleInfo = RuleInfo {
    code: "KSM102",
    name: "missing-required-field",
    severity: Severity::Error,
    title: "A field the CRD requires is missing",
    docs: "\
## What it finds
A field listed as `required` in the CRD schema that the object does not set.

## Why it matters
The API server rejects the object (`Required value`), so `kubectl apply` fails.

## Example
```yaml
spec:
  adapter:
    apiVersion: apps/v1
    kind: Deployment
    name: flux-adapter
    # namespace and readinessRule are required
```

## Fix
Add the field. For an SMP reference, `namespace` may be `\"\"` for a cluster-scoped kind and
`readinessRule` may be `\"\"` (always ready), but both must be present.
",
};

pub static TYPE: RuleInfo = RuleInfo {
    code: "KSM103",
    name: "wrong-type",
    severity: Severity::Error,
    title: "A field has the wrong type",
    docs: "\
## What it finds
A value whose type differs from the schema's: a string where a list is expected, a number
where a string is expected, `null` for a field that is not nullable.

## Why it matters
The API server rejects the object with `Invalid value: ... must be of type ...`.

## Example
```yaml
spec:
  provisionerCRDs:
  - group: helm.toolkit.fluxcd.io
    version: v2
    resources: helmreleases
```

## Fix
Write the value with the type the schema asks for (here a list: `resources: [helmreleases]`).
Quote strings that YAML would read as numbers or booleans (`version: \"1.0\"`, `value: \"yes\"`).
",
};

pub static ENUM: RuleInfo = RuleInfo {
    code: "KSM104",
    name: "unsupported-value",
    severity: Severity::Error,
    title: "A value is not one of those the CRD allows",
    docs: "\
## What it finds
A value outside the schema's `enum`, such as `helmAction: Remove`.

## Why it matters
The API server rejects the object with `Unsupported value`.

## Example
```yaml
spec:
  services:
  - name: ingress
    template: ingress-nginx-4-11-0
    helmAction: Remove
```

## Fix
Use one of the values listed in the message (here `Install` or `Uninstall`).
",
};

pub static VALUE: RuleInfo = RuleInfo {
    code: "KSM105",
    name: "invalid-value",
    severity: Severity::Error,
    title: "A value breaks a constraint of the CRD (pattern, length, range, format)",
    docs: "\
## What it finds
A value that breaks a schema constraint: `pattern`, `minLength`/`maxLength`,
`minimum`/`maximum`, `minItems`/`maxItems`, `format`, duplicate keys in a list map, or a
`oneOf`/`anyOf`/`not` combination.

## Why it matters
The API server rejects the object with `Invalid value`.

## Example
```yaml
spec:
  services:
  - name: Ingress_NGINX
```

## Fix
Change the value to satisfy the constraint named in the message.
",
};

pub static RULE: RuleInfo = RuleInfo {
    code: "KSM106",
    name: "crd-validation-rule",
    severity: Severity::Error,
    title: "A CEL validation rule of the CRD (x-kubernetes-validations) fails",
    docs: "\
## What it finds
An object that fails one of the CRD's own CEL validation rules, such as a ServiceTemplate that
sets both `helm` and `kustomize`, or a source with both `localSourceRef` and `remoteSourceSpec`.
Transition rules (those that use `oldSelf`) need the stored object and are not checked.

## Why it matters
The API server rejects the object with the rule's message.

## Example
```yaml
spec:
  helm:
    chartSpec: {chart: ingress-nginx, version: 4.11.0, sourceRef: {kind: HelmRepository, name: ingress}}
  kustomize:
    path: ./deploy
```

## Fix
Follow the rule's message: keep exactly one of the alternatives.
",
};

pub static VERSION: RuleInfo = RuleInfo {
    code: "KSM107",
    name: "unserved-version",
    severity: Severity::Error,
    title: "The apiVersion is not served by the kcm CRD",
    docs: "\
## What it finds
A kcm object whose `apiVersion` names a version the installed CRD does not serve, such as
`k0rdent.mirantis.com/v1alpha1` for a StateManagementProvider.

## Why it matters
The API server answers `no matches for kind ... in version ...`, and kubectl refuses the file.

## Example
```yaml
apiVersion: k0rdent.mirantis.com/v1alpha1
kind: StateManagementProvider
```

## Fix
Use the served version shown in the message (`k0rdent.mirantis.com/v1beta1`).
",
};

pub fn check(ctx: &Context, out: &mut Vec<Diagnostic>) {
    let Some(crd) = crds::crd(ctx.target.kind()) else {
        return;
    };
    let api_version = ctx
        .json()
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or("");
    let version = api_version.rsplit_once('/').map_or("", |(_, v)| v);
    let Some(schema) = crd
        .versions
        .iter()
        .find(|v| v.served && v.name == version)
        .map(|v| &v.schema)
    else {
        let served: Vec<_> = crd
            .versions
            .iter()
            .filter(|v| v.served)
            .map(|v| format!("{}/{}", crd.group, v.name))
            .collect();
        out.push(
            ctx.diag(
                &VERSION,
                format!(
                    "{} is not served in version {api_version:?}",
                    ctx.target.kind()
                ),
                ctx.span_at(&[PathSeg::Key("apiVersion".into())]),
            )
            .help(format!("use apiVersion: {}", served.join(" or "))),
        );
        return;
    };
    for v in schema.validate(ctx.json(), crds::rule_evaluator()) {
        let info = match v.kind {
            ViolationKind::UnknownField => &UNKNOWN_FIELD,
            ViolationKind::Required => &REQUIRED,
            ViolationKind::Type => &TYPE,
            ViolationKind::Enum => &ENUM,
            ViolationKind::Rule => &RULE,
            _ => &VALUE,
        };
        let span = if v.kind == ViolationKind::UnknownField {
            ctx.key_span_at(&v.path)
        } else {
            ctx.span_at(&v.path)
        };
        let mut d = ctx.diag(info, v.message.clone(), span);
        if v.kind == ViolationKind::UnknownField {
            if let Some(hint) = closest_known_field(ctx, &v.path) {
                d = d.help(hint);
            } else {
                d = d.help(format!(
                    "remove `{}` or move it where the CRD defines it: the API server drops unknown fields silently",
                    format_path(&v.path)
                ));
            }
        }
        out.push(d);
    }
}

/// "did you mean `readinessRule`?" for a misspelled field, from the sibling fields the
/// schema defines.
fn closest_known_field(ctx: &Context, path: &[PathSeg]) -> Option<String> {
    let (PathSeg::Key(name), parent) = path.split_last()? else {
        return None;
    };
    let crd = crds::crd(ctx.target.kind())?;
    let version = ctx
        .json()
        .get("apiVersion")
        .and_then(Value::as_str)?
        .rsplit_once('/')?
        .1;
    let schema = &crd.versions.iter().find(|v| v.name == version)?.schema;
    let known = schema.known_fields(parent);
    let best = closest(name, known.iter().copied())?;
    Some(format!(
        "did you mean `{best}`? The API server drops `{name}` silently"
    ))
}

/// The known name closest to a misspelled one (case ignored), if close enough: at most two
/// edits, or a quarter of the name's length.
pub(crate) fn closest<'a>(name: &str, known: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let lower = name.to_lowercase();
    let chars = lower.chars().count();
    known
        .into_iter()
        .filter(|k| *k != name)
        .filter_map(|k| {
            let bound = 2.max(k.len() / 4);
            let k_lower = k.to_lowercase();
            // The distance is at least the difference in length: no need to compute it.
            if k_lower.chars().count().abs_diff(chars) > bound {
                return None;
            }
            let d = edit_distance(&k_lower, &lower);
            (d <= bound).then_some((d, k))
        })
        .min()
        .map(|(_, k)| k)
}

pub(crate) fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            cur[j + 1] = (prev[j] + usize::from(ca != *cb))
                .min(prev[j + 1] + 1)
                .min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use crate::core::lint::test_support::{lint_code, smp_with_rule};

    fn smp() -> String {
        smp_with_rule("has(self.status.readyReplicas)")
    }

    #[test]
    fn valid_smp_has_no_schema_findings() {
        for code in ["KSM101", "KSM102", "KSM103", "KSM104", "KSM105", "KSM107"] {
            assert_eq!(lint_code(&smp(), code), Vec::<String>::new(), "{code}");
        }
    }

    #[test]
    fn misspelled_readiness_rule_is_an_unknown_field_at_the_key() {
        let text = smp().replace("readinessRule:", "readinesRule:");
        let found = lint_code(&text, "KSM101");
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].starts_with("KSM101 11:5 "), "{found:?}");
        // and the real field is then missing
        assert_eq!(lint_code(&text, "KSM102").len(), 1);
    }

    #[test]
    fn wrong_type_and_unserved_version() {
        let text = smp().replace("provisioner: []", "provisioner: flux");
        assert_eq!(lint_code(&text, "KSM103").len(), 1);
        let text = smp().replace("v1beta1", "v1alpha1");
        let found = lint_code(&text, "KSM107");
        assert!(found[0].starts_with("KSM107 1:13"), "{found:?}");
    }

    #[test]
    fn unsupported_enum_value_in_a_serviceset() {
        let text = "\
apiVersion: k0rdent.mirantis.com/v1beta1
kind: ServiceSet
metadata: {name: s, namespace: default}
spec:
  provider: {name: ksm-flux}
  services:
  - name: ingress
    namespace: ingress
    template: ingress-nginx
    helmAction: Remove
";
        let found = lint_code(text, "KSM104");
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].starts_with("KSM104 10:17"), "{found:?}");
    }

    #[test]
    fn crd_cel_rule_is_checked_for_service_templates() {
        let text = "\
apiVersion: k0rdent.mirantis.com/v1beta1
kind: ServiceTemplate
metadata: {name: t, namespace: kcm-system}
spec:
  helm:
    chartSpec: {chart: nginx, version: 1.0.0, sourceRef: {kind: HelmRepository, name: r}}
  kustomize:
    deploymentType: Remote
    localSourceRef: {kind: GitRepository, name: g}
    path: ./deploy
";
        let found = lint_code(text, "KSM106");
        assert!(!found.is_empty(), "no KSM106 finding");
    }

    #[test]
    fn every_kcm_kind_is_validated_against_its_crd() {
        let chain = "\
apiVersion: k0rdent.mirantis.com/v1beta1
kind: ServiceTemplateChain
metadata: {name: ingress-nginx, namespace: kcm-system}
spec:
  supportedTemplates:
  - name: ingress-nginx-4-12-0
    availableUpgrades:
    - {name: ingress-nginx-4-13-0}
  - name: ingress-nginx-4-13-0
";
        assert_eq!(lint_code(chain, "KSM1"), Vec::<String>::new());
        let typo = chain.replace("availableUpgrades", "availableUpgrade");
        let found = lint_code(&typo, "KSM101");
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].starts_with("KSM101 7:5 "), "{found:?}");
        let credential = "\
apiVersion: k0rdent.mirantis.com/v1beta1
kind: Credential
metadata: {name: aws-cred, namespace: kcm-system}
spec:
  identityRef: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta2, kind: AWSClusterStaticIdentity, name: aws-identity}
  region: 3
";
        let found = lint_code(credential, "KSM103");
        assert_eq!(found.len(), 1, "{found:?}");
        let region = "apiVersion: k0rdent.mirantis.com/v1alpha1\nkind: Region\nmetadata: {name: eu}\nspec: {}\n";
        assert_eq!(lint_code(region, "KSM107").len(), 1);
    }
}

//! KSM417–KSM418: pause annotations read in a way their name does not suggest: kcm reads
//! `k0rdent.mirantis.com/service-set-paused` from ServiceSets only and by presence
//! (`internal/controller/adapters/sveltos/serviceset_controller.go` `handlePauseAnnotations`),
//! `k0rdent.mirantis.com/region-pause` from Regions only, and Sveltos's
//! `profile.projectsveltos.io/paused` from Profiles only.

use crate::api::naming::{self, ANNOTATION_PAUSED, ANNOTATION_REGION_PAUSE};
use crate::api::sveltos::ANNOTATION_PROFILE_PAUSED;
use crate::core::lint::{Context, RuleInfo, Target, key};
use crate::diag::{Diagnostic, Severity};

pub static VALUE_IGNORED: RuleInfo = RuleInfo {
    code: "KSM417",
    name: "pause-value-ignored",
    severity: Severity::Warning,
    title: "A pause annotation whose value says no, which pauses anyway",
    docs: "\
## What it finds
A ServiceSet with the annotation `k0rdent.mirantis.com/service-set-paused` set to a value that
reads as \"not paused\": `\"false\"`, `\"0\"`, `\"no\"`, `\"off\"`.

## Why it matters
kcm looks only at whether the annotation is there, never at its value (kcm
`internal/controller/adapters/sveltos/serviceset_controller.go` `handlePauseAnnotations`:
`_, paused := annotations[ServiceSetPausedAnnotation]`): `\"false\"` pauses the ServiceSet. kcm
then pauses its Sveltos Profile (`profile.projectsveltos.io/paused: \"true\"`) and nothing of
it is deployed or updated; the Flux adapter `ksm-flux` suspends its objects the same way.

## Example
```yaml
metadata:
  annotations:
    k0rdent.mirantis.com/service-set-paused: \"false\"
```

## Fix
Remove the annotation to resume the ServiceSet (`kubectl annotate serviceset NAME
k0rdent.mirantis.com/service-set-paused-`).
",
};

pub static NOT_READ: RuleInfo = RuleInfo {
    code: "KSM418",
    name: "pause-not-read-here",
    severity: Severity::Warning,
    title: "A pause annotation on an object kcm does not read it from",
    docs: "\
## What it finds
A pause annotation on a kcm object that is not the one it is read from:
- `k0rdent.mirantis.com/service-set-paused` anywhere but on a ServiceSet, typically on the
  ClusterDeployment or MultiClusterService the ServiceSet comes from;
- `k0rdent.mirantis.com/region-pause` anywhere but on a Region;
- `profile.projectsveltos.io/paused`, Sveltos's annotation of a Profile, on a kcm object.

## Why it matters
kcm reads `service-set-paused` from ServiceSets only (kcm
`internal/controller/adapters/sveltos/serviceset_controller.go` `handlePauseAnnotations`;
`api/v1beta1/serviceset_types.go` `ServiceSetPausedAnnotation`) and does not copy a
ClusterDeployment's or MultiClusterService's annotations to their ServiceSets
(`internal/serviceset/builder.go` `Build`); it reads `region-pause` from the Region of a
ClusterDeployment (`clusterdeployment_controller.go`, `RegionPauseAnnotation`); Sveltos reads
`profile.projectsveltos.io/paused` from the Profile kcm writes. Elsewhere the annotation does
nothing: the services the author meant to pause keep being deployed and updated.

## Example
```yaml
kind: ClusterDeployment
metadata:
  annotations:
    k0rdent.mirantis.com/service-set-paused: \"true\"
```

## Fix
Annotate the ServiceSet: a ClusterDeployment's has its name and namespace; a
MultiClusterService's are named `<clusterdeployment>-<hash>` (the finding names the hash).
",
};

/// A value that says "not paused".
fn says_no(v: &str) -> bool {
    matches!(
        v.trim().to_ascii_lowercase().as_str(),
        "false" | "0" | "no" | "off" | "n"
    )
}

fn annotation_span(ctx: &Context, name: &str) -> std::ops::Range<usize> {
    ctx.key_span_at(&[key("metadata"), key("annotations"), key(name)])
}

pub fn check(ctx: &Context, out: &mut Vec<Diagnostic>) {
    let meta = crate::api::meta::Object(ctx.json());
    let Some(annotations) = meta.annotations() else {
        return;
    };
    for (name, value) in annotations {
        let v = value.as_str().unwrap_or("");
        match name.as_str() {
            ANNOTATION_PAUSED if ctx.target == Target::ServiceSet && says_no(v) => {
                out.push(
                    ctx.diag(
                        &VALUE_IGNORED,
                        format!(
                            "{ANNOTATION_PAUSED}: {v:?} pauses the ServiceSet: kcm reads whether the annotation is there, not its value"
                        ),
                        annotation_span(ctx, name),
                    )
                    .help(format!(
                        "remove the annotation to resume it: kubectl annotate serviceset -n {} {} {ANNOTATION_PAUSED}-",
                        meta.namespace(),
                        meta.name()
                    )),
                );
            }
            ANNOTATION_PAUSED if ctx.target == Target::ServiceSet => {}
            ANNOTATION_PAUSED => {
                let where_ = match ctx.target {
                    Target::ClusterDeployment => format!(
                        "annotate its ServiceSet {}/{} (same name and namespace) instead",
                        meta.namespace(),
                        meta.name()
                    ),
                    Target::MultiClusterService => {
                        let (_, set) = naming::mcs_service_set_key(
                            Some(("", "<clusterdeployment>")),
                            meta.name(),
                            "",
                        );
                        let (_, mgmt) = naming::mcs_service_set_key(None, meta.name(), "");
                        format!(
                            "annotate its ServiceSets instead: {set} in each ClusterDeployment's namespace ({mgmt} in the system namespace for self-management)"
                        )
                    }
                    _ => "annotate the ServiceSet to pause instead".to_string(),
                };
                let where_ = if says_no(v) {
                    format!(
                        "{where_}; and to resume, remove the annotation from the ServiceSet: there its presence pauses, whatever the value ({v:?} too)"
                    )
                } else {
                    where_
                };
                out.push(
                    ctx.diag(
                        &NOT_READ,
                        format!(
                            "{ANNOTATION_PAUSED} on a {} does nothing: kcm reads it from ServiceSets only (and does not copy it to them)",
                            ctx.target.kind()
                        ),
                        annotation_span(ctx, name),
                    )
                    .help(where_),
                );
            }
            ANNOTATION_REGION_PAUSE if ctx.target != Target::Other("Region") => {
                out.push(
                    ctx.diag(
                        &NOT_READ,
                        format!(
                            "{ANNOTATION_REGION_PAUSE} on a {} does nothing: kcm reads it from Regions only",
                            ctx.target.kind()
                        ),
                        annotation_span(ctx, name),
                    )
                    .help("annotate the Region the ClusterDeployment's Credential names"),
                );
            }
            ANNOTATION_PROFILE_PAUSED => {
                out.push(
                    ctx.diag(
                        &NOT_READ,
                        format!(
                            "{ANNOTATION_PROFILE_PAUSED} on a {} does nothing: Sveltos reads it from Profiles, and kcm sets it there from the ServiceSet's {ANNOTATION_PAUSED}",
                            ctx.target.kind()
                        ),
                        annotation_span(ctx, name),
                    )
                    .help(format!("annotate the ServiceSet with {ANNOTATION_PAUSED} instead")),
                );
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::core::lint::test_support::lint_text;

    fn obj(kind: &str, annotations: &str) -> String {
        let ns = if kind == "MultiClusterService" || kind == "Region" {
            ""
        } else {
            "\n  namespace: kcm-system"
        };
        let spec = match kind {
            "ServiceSet" => "spec:\n  cluster: dev\n  provider: {name: ksm-projectsveltos}\n",
            "ClusterDeployment" => "spec:\n  template: t\n  credential: c\n",
            "MultiClusterService" => "spec:\n  clusterSelector: {matchLabels: {env: dev}}\n",
            "Region" => "spec:\n  kubeConfig: {name: eu-kubeconfig, key: value}\n",
            _ => "spec: {}\n",
        };
        format!(
            "apiVersion: k0rdent.mirantis.com/v1beta1\nkind: {kind}\nmetadata:\n  name: dev{ns}\n  annotations:\n    {annotations}\n{spec}"
        )
    }

    #[test]
    fn the_value_of_the_serviceset_pause_is_ignored() {
        let found = lint_text(&obj(
            "ServiceSet",
            "k0rdent.mirantis.com/service-set-paused: \"false\"",
        ));
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(
            found[0].starts_with("KSM417 7:5 k0rdent.mirantis.com/service-set-paused: \"false\" pauses the ServiceSet"),
            "{found:?}"
        );
        for fine in ["\"true\"", "\"\"", "\"yes\""] {
            let text = obj(
                "ServiceSet",
                &format!("k0rdent.mirantis.com/service-set-paused: {fine}"),
            );
            assert_eq!(lint_text(&text), Vec::<String>::new(), "{fine}");
        }
    }

    #[test]
    fn pause_annotations_where_nothing_reads_them() {
        let found = lint_text(&obj(
            "ClusterDeployment",
            "k0rdent.mirantis.com/service-set-paused: \"true\"",
        ));
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].starts_with("KSM418 7:5 k0rdent.mirantis.com/service-set-paused on a ClusterDeployment does nothing"), "{found:?}");
        let found = lint_text(&obj(
            "MultiClusterService",
            "k0rdent.mirantis.com/service-set-paused: \"false\"",
        ));
        assert_eq!(found.len(), 1, "{found:?}");
        let found = lint_text(&obj(
            "ClusterDeployment",
            "k0rdent.mirantis.com/region-pause: \"true\"",
        ));
        assert!(
            found[0]
                .starts_with("KSM418 7:5 k0rdent.mirantis.com/region-pause on a ClusterDeployment"),
            "{found:?}"
        );
        let found = lint_text(&obj(
            "ServiceSet",
            "profile.projectsveltos.io/paused: \"true\"",
        ));
        assert!(
            found[0].starts_with("KSM418 7:5 profile.projectsveltos.io/paused on a ServiceSet"),
            "{found:?}"
        );
        // Where they are read.
        assert_eq!(
            lint_text(&obj(
                "Region",
                "k0rdent.mirantis.com/region-pause: \"true\""
            )),
            Vec::<String>::new()
        );
        assert_eq!(
            lint_text(&obj(
                "ServiceSet",
                "k0rdent.mirantis.com/service-set-paused: \"true\""
            )),
            Vec::<String>::new()
        );
    }
}

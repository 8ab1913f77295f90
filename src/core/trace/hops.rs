//! The hops of one service's chain: the provider's objects, the ServiceSet, where it comes
//! from, the template; and doctor's verdict.

use chrono::{DateTime, Utc};
use serde_json::Value;

use super::{Facts, Finding, Hop, Index, Options, ServiceTrace, Verdict};
use crate::api::Object;
use crate::api::kcm::{
    Service, ServiceSet, ServiceSource, ServiceStatus, ServiceTemplate, ServiceType, TemplateChain,
    TemplateSource,
};
use crate::api::kinds;
use crate::api::meta::ObjectRef;
use crate::api::sveltos::{ClusterSummary, ProfileView};
use crate::core::doctor::{Report, ServiceSetView, ServiceView};
use crate::diag::Severity;

fn hop(kind: &str, namespace: &str, name: &str, found: Option<&Value>, facts: Facts) -> Hop {
    Hop {
        kind: kind.to_string(),
        name: if namespace.is_empty() {
            name.to_string()
        } else {
            format!("{namespace}/{name}")
        },
        missing: found.is_none(),
        facts,
    }
}

/// `status (reason): message` of a condition, when it has one.
fn condition_words(o: Object, type_: &str) -> String {
    o.condition(type_)
        .map(|c| {
            let mut w = c.status().to_string();
            if !c.reason().is_empty() {
                w.push_str(&format!(" ({})", c.reason()));
            }
            if !c.message().is_empty() {
                w.push_str(&format!(": {}", c.message()));
            }
            w
        })
        .unwrap_or_default()
}

pub(super) fn service_trace(
    index: &Index,
    report: &Report,
    ss: ServiceSet,
    svc: Service,
    view: Option<&ServiceSetView>,
    sv: Option<&ServiceView>,
    options: &Options,
) -> ServiceTrace {
    let status = ss
        .service_statuses()
        .find(|st| st.name() == svc.name() && st.namespace() == svc.namespace());
    let mut hops = Vec::new();
    provider_hops(index, ss, svc.name(), view, sv, &mut hops);
    hops.push(set_hop(ss, svc, status, view, sv, options.now));
    origin_hops(index, ss, &mut hops);
    template_hops(index, ss, svc, &mut hops);
    let (svc_ns, svc_name) = svc.key();
    ServiceTrace {
        service: format!("{svc_ns}/{svc_name}"),
        hops,
        verdict: verdict(report, view, sv),
    }
}

/// What the provider wrote for the service: the Flux object (and its source), or the
/// ClusterSummary and the Profile or ClusterProfile. Doctor's chain names them when it got
/// that far; otherwise they are found by the labels that tie them to the ServiceSet.
fn provider_hops(
    index: &Index,
    ss: ServiceSet,
    svc_name: &str,
    view: Option<&ServiceSetView>,
    sv: Option<&ServiceView>,
    hops: &mut Vec<Hop>,
) {
    let sveltos = match view {
        Some(v) => v.translation == "Sveltos",
        None => ss.provider_name() != crate::api::naming::FLUX_PROVIDER,
    };
    let seen = sv.and_then(|s| s.flux_object.as_deref());
    let observed = sv.and_then(|s| s.observed.clone()).unwrap_or_default();
    if sveltos {
        let cs = match sv.and_then(|s| s.provider_object.as_ref()) {
            Some(id) => index.find(&kinds::CLUSTER_SUMMARY, &id.namespace, &id.name),
            None => index.summary_of(ss),
        };
        if let Some(cs) = cs {
            let summary = ClusterSummary(cs);
            let mut facts = Facts::default();
            let svc = ss.service(svc_name);
            if let Some(rel) = svc.and_then(|s| {
                let (ns, name) = s.key();
                summary.helm_release(ns, name)
            }) {
                facts.add(
                    "release",
                    format!(
                        "{}/{}: {}",
                        rel.release_namespace(),
                        rel.release_name(),
                        rel.status()
                    ),
                );
                facts.add("failure", rel.failure_message().unwrap_or_default());
            }
            if let Some((_, feature)) = seen.and_then(|s| s.split_once(" feature "))
                && let Some(f) = summary.feature(feature)
            {
                facts.add("feature", format!("{feature}: {}", f.status_text()));
                facts.add("failure", f.failure_message().unwrap_or_default());
            }
            let (cns, cname, ctype) = summary.cluster();
            facts.add("cluster", format!("{ctype} {cns}/{cname}"));
            facts.add("state", observed);
            let m = Object(cs);
            hops.push(hop(m.kind(), m.namespace(), m.name(), Some(cs), facts));
        }
        let (kind, ns) = if ss.self_management() {
            (&kinds::CLUSTER_PROFILE, "")
        } else {
            (&kinds::PROFILE, ss.namespace())
        };
        let profile = index.find(kind, ns, ss.name());
        let mut facts = Facts::default();
        if let Some(p) = profile {
            let p = ProfileView(p);
            facts.add(
                "tier",
                format!(
                    "{} (priority {})",
                    p.tier(),
                    crate::api::sveltos::tier_to_priority(p.tier())
                ),
            );
            facts.add("syncMode", p.sync_mode());
            if p.paused() {
                facts.add("paused", "yes");
            }
        }
        hops.push(hop(kind.kind, ns, ss.name(), profile, facts));
        return;
    }
    let flux = match sv.and_then(|s| s.provider_object.as_ref()) {
        Some(id) => {
            kinds::flux_object(&id.kind).and_then(|k| index.find(k, &id.namespace, &id.name))
        }
        None => index.flux_of(ss, svc_name),
    };
    let Some(flux) = flux else {
        // The adapter renders a Helm template as a HelmRelease, any other as a Kustomization.
        let helm = ss
            .service(svc_name)
            .and_then(|s| index.find(&kinds::SERVICE_TEMPLATE, ss.namespace(), s.template()))
            .and_then(|t| ServiceTemplate(t).service_type())
            .is_none_or(|t| t == ServiceType::Helm);
        let kind = if helm {
            &kinds::HELM_RELEASE
        } else {
            &kinds::KUSTOMIZATION
        };
        let name = crate::api::naming::flux_object_name(ss.name(), svc_name);
        hops.push(hop(
            kind.kind,
            ss.namespace(),
            &name,
            None,
            Facts::default(),
        ));
        return;
    };
    let m = Object(flux);
    let mut facts = Facts::default();
    facts.add("state", observed);
    facts.add("ready", condition_words(m, "Ready"));
    facts.add(
        "source",
        sv.and_then(|s| s.source.clone()).unwrap_or_default(),
    );
    hops.push(hop(m.kind(), m.namespace(), m.name(), Some(flux), facts));
}

fn set_hop(
    ss: ServiceSet,
    svc: Service,
    status: Option<ServiceStatus>,
    view: Option<&ServiceSetView>,
    sv: Option<&ServiceView>,
    now: DateTime<Utc>,
) -> Hop {
    let mut facts = Facts::default();
    facts.add(
        "provider",
        match view {
            Some(v) => format!("{} ({})", v.provider, v.translation),
            None => ss.provider_name().to_string(),
        },
    );
    facts.add("service", format!("{}/{}", svc.namespace(), svc.name()));
    if let Some(st) = status {
        let mut state = st.state().to_string();
        let since = st.last_state_transition_time();
        if !since.is_empty() {
            state.push_str(&format!(" since {since}"));
            if let Some(age) = DateTime::parse_from_rfc3339(since)
                .ok()
                .and_then(|t| (now - t.with_timezone(&Utc)).to_std().ok())
            {
                state.push_str(&format!(" ({})", crate::api::duration::human(age)));
            }
        }
        facts.add("state", state);
        facts.add("failure", st.failure_message());
    } else {
        facts.add("state", "none reported yet");
    }
    let deps: Vec<String> = svc
        .dependency_keys()
        .into_iter()
        .map(|(ns, n)| format!("{ns}/{n}"))
        .collect();
    facts.add("dependsOn", deps.join(", "));
    if let Some(owner) = sv.and_then(|s| s.owner.as_deref()) {
        facts.add("releaseOwnedBy", owner);
    }
    if ss.paused() {
        facts.add("paused", "yes");
    }
    hop(
        kinds::SERVICE_SET.kind,
        ss.namespace(),
        ss.name(),
        Some(ss.0),
        facts,
    )
}

/// The MultiClusterService the ServiceSet comes from (with its status for the cluster), and
/// the cluster: a ClusterDeployment, or the management cluster.
fn origin_hops(index: &Index, ss: ServiceSet, hops: &mut Vec<Hop>) {
    let mcs_name = ss.multi_cluster_service();
    if !mcs_name.is_empty() {
        let mcs = index.find(&kinds::MULTI_CLUSTER_SERVICE, "", mcs_name);
        let mut facts = Facts::default();
        if let Some(m) = mcs {
            let m = ServiceSource(m);
            let entry = index.target(mcs_name, ss);
            facts.add(
                "matched",
                match entry {
                    Some(t) => {
                        let mut w = if t.deployed() {
                            "deployed".to_string()
                        } else {
                            "not deployed".to_string()
                        };
                        if !t.reason().is_empty() {
                            w.push_str(&format!(" ({})", t.reason()));
                        }
                        if !t.message().is_empty() {
                            w.push_str(&format!(": {}", t.message()));
                        }
                        w
                    }
                    None => "kcm has no matchingClusters entry for this cluster".to_string(),
                },
            );
            facts.add("dependsOn", m.depends_on().join(", "));
        }
        hops.push(hop(
            kinds::MULTI_CLUSTER_SERVICE.kind,
            "",
            mcs_name,
            mcs,
            facts,
        ));
    }
    if ss.self_management() {
        let mut facts = Facts::default();
        facts.add("via", "self-management");
        hops.push(Hop {
            kind: "Cluster".into(),
            name: "management".into(),
            missing: false,
            facts,
        });
        return;
    }
    let cd = index.find(&kinds::CLUSTER_DEPLOYMENT, ss.namespace(), ss.cluster());
    let mut facts = Facts::default();
    if let Some(cd) = cd {
        let source = ServiceSource(cd);
        facts.add("template", source.cluster_template());
        facts.add("credential", source.credential());
        facts.add("ready", condition_words(Object(cd), "Ready"));
    }
    hops.push(hop(
        kinds::CLUSTER_DEPLOYMENT.kind,
        ss.namespace(),
        ss.cluster(),
        cd,
        facts,
    ));
}

/// The ServiceTemplate: its type and version, whether kcm found it valid, the chain that
/// lists it (and the upgrades it allows), and where its chart or manifests come from.
fn template_hops(index: &Index, ss: ServiceSet, svc: Service, hops: &mut Vec<Hop>) {
    let ns = ss.namespace();
    let tpl = index.find(&kinds::SERVICE_TEMPLATE, ns, svc.template());
    let mut facts = Facts::default();
    if let Some(t) = tpl {
        let t = ServiceTemplate(t);
        let ty = t.service_type();
        facts.add(
            "type",
            match ty {
                Some(ServiceType::Helm) => "Helm",
                Some(ServiceType::Kustomize) => "Kustomize",
                Some(ServiceType::Resource) => "Resources",
                None => "",
            },
        );
        let version = [
            t.version(),
            t.status_chart_version(),
            t.chart_spec_version(),
        ]
        .into_iter()
        .find(|v| !v.is_empty())
        .unwrap_or_default();
        facts.add("version", version);
        facts.add(
            "valid",
            match t.valid() {
                Some(true) => "true".to_string(),
                Some(false) => format!("false: {}", t.validation_error()),
                None => "not validated yet".to_string(),
            },
        );
        facts.add("source", template_source(t, ty));
    }
    facts.add("chain", chain_words(index, ns, svc));
    hops.push(hop(
        kinds::SERVICE_TEMPLATE.kind,
        ns,
        svc.template(),
        tpl,
        facts,
    ));
}

fn ref_words(r: ObjectRef, default_ns: &str) -> String {
    let ns = if r.namespace().is_empty() {
        default_ns
    } else {
        r.namespace()
    };
    format!("{}/{ns}/{}", r.kind(), r.name())
}

fn template_source(t: ServiceTemplate, ty: Option<ServiceType>) -> String {
    let ns = t.namespace();
    let from_source = |s: TemplateSource| -> String {
        let path = match s.path() {
            "" => String::new(),
            p => format!(" path {p}"),
        };
        match (s.local_source_ref(), s.remote_source()) {
            (Some(r), _) => format!("{}{path}", ref_words(r, ns)),
            (None, Some((kind, url))) => format!("{kind} {url}{path}"),
            (None, None) => path.trim_start().to_string(),
        }
    };
    match ty {
        Some(ServiceType::Helm) => {
            if let Some(r) = t.chart_ref() {
                return format!("chart {}", ref_words(r, ns));
            }
            if let Some(s) = t.chart_source() {
                return format!("chart from {}", from_source(s));
            }
            let chart = t.chart_spec_chart();
            let mut w = format!("chart {chart}");
            if !t.chart_spec_version().is_empty() {
                w.push_str(&format!(" {}", t.chart_spec_version()));
            }
            if let Some(r) = t.chart_spec_source_ref() {
                w.push_str(&format!(" from {}", ref_words(r, ns)));
            }
            if let Some(r) = t.status_chart_ref() {
                w.push_str(&format!(" (as {})", ref_words(r, ns)));
            }
            w
        }
        Some(ty) => from_source(TemplateSource(t.source_spec(ty))),
        None => String::new(),
    }
}

/// The ServiceTemplateChain the service names (or, when it names none, the chains of the
/// namespace that list the template), and the upgrades each allows from it.
fn chain_words(index: &Index, ns: &str, svc: crate::api::kcm::Service) -> String {
    let chains: Vec<&Value> = match svc.template_chain() {
        "" => index
            .all(&kinds::SERVICE_TEMPLATE_CHAIN)
            .iter()
            .copied()
            .filter(|c| Object(c).namespace() == ns && TemplateChain(c).supports(svc.template()))
            .collect(),
        named => match index.find(&kinds::SERVICE_TEMPLATE_CHAIN, ns, named) {
            Some(c) => vec![c],
            None => return format!("{named} (not found)"),
        },
    };
    chains
        .iter()
        .map(|c| {
            let chain = TemplateChain(c);
            let upgrades: Vec<&str> = chain
                .supported_templates()
                .filter(|t| t.name() == svc.template())
                .flat_map(|t| t.available_upgrades().map(|(n, _)| n))
                .collect();
            let name = Object(c).name();
            match (chain.supports(svc.template()), upgrades.is_empty()) {
                (false, _) => format!("{name} (does not list the template)"),
                (true, true) => name.to_string(),
                (true, false) => format!("{name} (upgrades to {})", upgrades.join(", ")),
            }
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// Doctor's first error or warning on the service, else on its ServiceSet; else its first
/// note.
fn verdict(report: &Report, view: Option<&ServiceSetView>, sv: Option<&ServiceView>) -> Verdict {
    let ids: Vec<usize> = sv
        .map(|s| s.findings.clone())
        .unwrap_or_default()
        .into_iter()
        .chain(view.map(|v| v.findings.clone()).unwrap_or_default())
        .collect();
    let serious = |i: &&usize| {
        report
            .findings
            .get(**i)
            .is_some_and(|f| matches!(f.severity, Severity::Error | Severity::Warning))
    };
    let first = ids.iter().find(serious).or(ids.first());
    let finding = first
        .and_then(|i| report.findings.get(*i))
        .map(|f| Finding {
            code: f.code.to_string(),
            severity: f.severity.as_str().to_string(),
            message: f.message.clone(),
            hint: f.help.clone(),
        });
    Verdict {
        healthy: !ids.iter().any(|i| serious(&i)),
        state: sv.and_then(|s| s.reported.clone()),
        finding,
    }
}

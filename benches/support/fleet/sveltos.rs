//! The default-provider variant of the live doctor benchmark (`KSM_BENCH_PROVIDER=sveltos`):
//! ServiceSets of kcm's `ksm-projectsveltos` with, per ServiceSet, the Profile kcm writes, the
//! ClusterSummary and ClusterConfiguration Sveltos writes, the CAPI Cluster they target and its
//! kubeconfig Secret; all healthy. The objects are generated from those of
//! testdata/doctor/sveltos-healthy-profile/dump.yaml.

use serde_json::{Value, json};

use super::{NAMESPACES, SERVICES, instance, service_name, template_name, uid};

/// The kinds doctor lists on a cluster with kcm, Flux and Sveltos (core::provider::doctor_kinds),
/// plus Secrets, for `kubectl get`.
pub const KUBECTL_KINDS: &str = "statemanagementproviders,servicesets,servicetemplates,helmreleases,kustomizations,helmcharts,helmrepositories,gitrepositories,ocirepositories,buckets,profiles,clusterprofiles,clustersummaries,clusterconfigurations,sveltosclusters,clusters.cluster.x-k8s.io,clusterdeployments,multiclusterservices,secrets";

struct Templates {
    seed: Vec<Value>,
    service_set: Value,
    template: Value,
    helm_chart: Value,
    helm_repository: Value,
    profile: Value,
    summary: Value,
    configuration: Value,
    cluster: Value,
}

impl Templates {
    fn load() -> Templates {
        let dump = super::Dump::load("testdata/doctor/sveltos-healthy-profile/dump.yaml");
        Templates {
            seed: dump.seed(),
            service_set: dump.pick("ServiceSet", "dev-cluster"),
            template: dump.pick("ServiceTemplate", "ingress-nginx-4-13-0"),
            helm_chart: dump.pick("HelmChart", "ingress-nginx-4-13-0"),
            helm_repository: dump.pick("HelmRepository", "k0rdent-catalog"),
            profile: dump.pick("Profile", "dev-cluster"),
            summary: dump.pick("ClusterSummary", "p--dev-cluster-capi-dev-cluster"),
            configuration: dump.pick("ClusterConfiguration", "capi--dev-cluster"),
            cluster: dump.pick("Cluster", "dev-cluster"),
        }
    }
}

/// The Sveltos helmCharts entry of service k (from the Profile's first chart).
fn chart(base: &Value, k: usize) -> Value {
    let mut c = base.clone();
    let svc = service_name(k);
    c["repositoryName"] = svc.clone().into();
    c["chartName"] = svc.clone().into();
    c["chartVersion"] = format!("1.0.{k}").into();
    c["releaseName"] = svc.clone().into();
    c["releaseNamespace"] = svc.into();
    if let Some(m) = c.as_object_mut() {
        m.remove("values");
    }
    c
}

/// The SMP, its Deployments and CRDs, then `sets` ServiceSets of 5 Helm services over 20
/// namespaces with their Sveltos objects.
pub fn populate(sets: usize) -> Vec<Value> {
    let t = Templates::load();
    let mut out = t.seed.clone();
    let mut next = 1usize;
    let mut new_uid = || {
        next += 1;
        uid(next)
    };
    for i in 0..NAMESPACES {
        let ns = format!("team-{i:02}");
        out.push(instance(&t.helm_repository, &ns, "charts", &new_uid()));
        for k in 0..SERVICES {
            let name = template_name(k);
            let version = format!("1.0.{k}");
            let mut st = instance(&t.template, &ns, &name, &new_uid());
            st["spec"]["helm"]["chartSpec"]["chart"] = service_name(k).into();
            st["spec"]["helm"]["chartSpec"]["sourceRef"]["name"] = "charts".into();
            st["spec"]["helm"]["chartSpec"]["version"] = version.clone().into();
            st["spec"]["version"] = version.clone().into();
            st["status"]["chartRef"]["name"] = name.clone().into();
            st["status"]["chartRef"]["namespace"] = ns.clone().into();
            out.push(st);
            let mut hc = instance(&t.helm_chart, &ns, &name, &new_uid());
            hc["spec"]["chart"] = service_name(k).into();
            hc["spec"]["sourceRef"]["name"] = "charts".into();
            hc["spec"]["version"] = version.clone().into();
            hc["status"]["artifact"]["revision"] = version.into();
            out.push(hc);
        }
    }
    let base_chart = t.profile["spec"]["helmCharts"][0].clone();
    for s in 0..sets {
        let ns = format!("team-{:02}", s % NAMESPACES);
        let set = format!("cluster-{s:05}");
        let (set_uid, profile_uid) = (new_uid(), new_uid());
        let charts: Vec<Value> = (0..SERVICES).map(|k| chart(&base_chart, k)).collect();
        let cluster_ref = json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
            "namespace": ns, "name": set});

        let mut ss = instance(&t.service_set, &ns, &set, &set_uid);
        ss["spec"]["cluster"] = set.clone().into();
        ss["metadata"]["ownerReferences"][0]["name"] = set.clone().into();
        super::set_services(&mut ss, &t.service_set["status"]["services"][0]);
        ss["status"]["cluster"]["name"] = set.clone().into();
        ss["status"]["cluster"]["namespace"] = ns.clone().into();
        out.push(ss);

        let mut p = instance(&t.profile, &ns, &set, &profile_uid);
        p["metadata"]["ownerReferences"][0]["name"] = set.clone().into();
        p["metadata"]["ownerReferences"][0]["uid"] = set_uid.into();
        p["spec"]["clusterRefs"] = json!([cluster_ref]);
        p["spec"]["helmCharts"] = charts.clone().into();
        p["status"]["matchingClusters"] = json!([cluster_ref]);
        out.push(p);

        let cs_name = format!("p--{set}-capi-{set}");
        let mut cs = instance(&t.summary, &ns, &cs_name, &new_uid());
        cs["metadata"]["labels"]["projectsveltos.io/profile-name"] = set.clone().into();
        cs["metadata"]["labels"]["projectsveltos.io/cluster-name"] = set.clone().into();
        cs["metadata"]["ownerReferences"][0]["name"] = set.clone().into();
        cs["metadata"]["ownerReferences"][0]["uid"] = profile_uid.clone().into();
        cs["spec"]["clusterName"] = set.clone().into();
        cs["spec"]["clusterNamespace"] = ns.clone().into();
        cs["spec"]["clusterProfileSpec"]["clusterRefs"] = json!([cluster_ref]);
        cs["spec"]["clusterProfileSpec"]["helmCharts"] = charts.into();
        let release_tpl = t.summary["status"]["helmReleaseSummaries"][0].clone();
        let releases: Vec<Value> = (0..SERVICES)
            .map(|k| {
                let mut r = release_tpl.clone();
                r["releaseName"] = service_name(k).into();
                r["releaseNamespace"] = service_name(k).into();
                r
            })
            .collect();
        cs["status"]["helmReleaseSummaries"] = releases.into();
        out.push(cs);

        let mut cc = instance(&t.configuration, &ns, &format!("capi--{set}"), &new_uid());
        cc["metadata"]["ownerReferences"][0]["name"] = set.clone().into();
        cc["metadata"]["ownerReferences"][0]["uid"] = profile_uid.into();
        let entry_tpl =
            t.configuration["status"]["profileResources"][0]["Features"][0]["charts"][0].clone();
        let entries: Vec<Value> = (0..SERVICES)
            .map(|k| {
                let mut e = entry_tpl.clone();
                e["releaseName"] = service_name(k).into();
                e["namespace"] = service_name(k).into();
                e["chartVersion"] = format!("1.0.{k}").into();
                e
            })
            .collect();
        cc["status"]["profileResources"][0]["profileName"] = set.clone().into();
        cc["status"]["profileResources"][0]["Features"][0]["charts"] = entries.into();
        out.push(cc);

        out.push(instance(&t.cluster, &ns, &set, &new_uid()));
        out.push(json!({"apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": format!("{set}-kubeconfig"), "namespace": ns,
                "labels": {"cluster.x-k8s.io/cluster-name": set}},
            "type": "cluster.x-k8s.io/secret",
            "data": {"value": "YXBpVmVyc2lvbjogdjEK"}}));
    }
    out
}

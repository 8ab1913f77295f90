//! The HTTP API of the fake server, exercised over 127.0.0.1.

mod fakeapi;
mod fakeapi_client;

use std::time::{Duration, Instant};

use fakeapi::{FakeApiServer, Fault};
use fakeapi_client::*;
use serde_json::{Value, json};

fn server_with_hr() -> (FakeApiServer, String) {
    let api = FakeApiServer::start();
    api.load_crd(&helmrelease_crd());
    let url = api.url();
    (api, url)
}

fn names(list: &Value) -> Vec<String> {
    list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["metadata"]["name"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn binds_loopback_with_an_os_port() {
    let api = FakeApiServer::start();
    assert!(api.addr().ip().is_loopback());
    assert_ne!(api.addr().port(), 0);
    assert!(api.url().starts_with("http://127.0.0.1:"));
    let kc = api.kubeconfig_yaml("team-a");
    assert!(kc.contains(&format!("server: {}", api.url())) && kc.contains("namespace: team-a"));
}

#[test]
fn discovery() {
    let (api, u) = server_with_hr();
    assert_eq!(get(&u, "/version").body["major"], "1");
    assert_eq!(get(&u, "/api").body["versions"], json!(["v1"]));
    let core = get(&u, "/api/v1").body;
    assert_eq!(core["kind"], "APIResourceList");
    let cm = core["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "configmaps")
        .unwrap()
        .clone();
    assert_eq!(cm["kind"], "ConfigMap");
    assert_eq!(cm["namespaced"], true);
    assert_eq!(cm["shortNames"], json!(["cm"]));
    // The aggregated-discovery Accept is answered with the plain APIGroupList.
    let groups = get_accept(
        &u,
        "/apis",
        "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json",
    );
    assert_eq!(groups.status, 200);
    assert_eq!(groups.header("content-type"), Some("application/json"));
    assert_eq!(groups.body["kind"], "APIGroupList");
    let gnames: Vec<&str> = groups.body["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["name"].as_str().unwrap())
        .collect();
    for g in [
        "apps",
        "apiextensions.k8s.io",
        "coordination.k8s.io",
        "helm.toolkit.fluxcd.io",
    ] {
        assert!(gnames.contains(&g), "{g} in {gnames:?}");
    }
    let hr = get(&u, HR_PATH).body;
    let res = hr["resources"].as_array().unwrap();
    assert_eq!(res[0]["name"], "helmreleases");
    assert_eq!(res[0]["singularName"], "helmrelease");
    assert_eq!(res[0]["shortNames"], json!(["hr"]));
    assert!(
        res[0]["verbs"]
            .as_array()
            .unwrap()
            .contains(&json!("watch"))
    );
    assert_eq!(res[1]["name"], "helmreleases/status");
    assert_eq!(
        get(&u, "/apis/helm.toolkit.fluxcd.io").body["preferredVersion"]["version"],
        "v2"
    );
    assert_eq!(get(&u, "/apis/nope.example.com/v1").status, 404);
    // The CRD object itself is served.
    let crd = get(
        &u,
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/helmreleases.helm.toolkit.fluxcd.io",
    );
    assert_eq!(crd.status, 200);
    assert!(
        crd.body["status"]["conditions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["type"] == "Established" && c["status"] == "True")
    );
    // OpenAPI v3 index lists the group-version.
    let oa = get(&u, "/openapi/v3").body;
    assert!(oa["paths"]["apis/helm.toolkit.fluxcd.io/v2"]["serverRelativeURL"].is_string());
    drop(api);
}

#[test]
fn create_get_and_errors() {
    let (api, u) = server_with_hr();
    let r = post(
        &u,
        "/api/v1/namespaces/default/configmaps",
        &cm("default", "a", json!({})),
    );
    assert_eq!(r.status, 201);
    let m = &r.body["metadata"];
    assert!(m["uid"].as_str().unwrap().len() >= 32);
    assert!(m["creationTimestamp"].is_string());
    assert!(
        m["resourceVersion"]
            .as_str()
            .unwrap()
            .parse::<u64>()
            .unwrap()
            > 0
    );
    assert!(
        m["generation"].is_null(),
        "a ConfigMap has no spec, so no generation"
    );
    assert_eq!(m["managedFields"][0]["manager"], "ureq");
    assert_eq!(m["managedFields"][0]["operation"], "Update");
    let g = get(&u, "/api/v1/namespaces/default/configmaps/a");
    assert_eq!(g.status, 200);
    assert_eq!(g.body["data"]["k"], "v");

    let dup = post(
        &u,
        "/api/v1/namespaces/default/configmaps",
        &cm("default", "a", json!({})),
    );
    assert_eq!(dup.status, 409);
    assert_eq!(dup.body["reason"], "AlreadyExists");
    assert_eq!(dup.body["message"], "configmaps \"a\" already exists");

    let nf = get(
        &u,
        "/apis/helm.toolkit.fluxcd.io/v2/namespaces/default/helmreleases/missing",
    );
    assert_eq!(nf.status, 404);
    assert_eq!(nf.body["kind"], "Status");
    assert_eq!(nf.body["reason"], "NotFound");
    assert_eq!(
        nf.body["message"],
        "helmreleases.helm.toolkit.fluxcd.io \"missing\" not found"
    );
    assert_eq!(
        nf.body["details"],
        json!({"name": "missing", "group": "helm.toolkit.fluxcd.io", "kind": "helmreleases"})
    );

    // generateName
    let mut generated = hr("default", "");
    generated["metadata"] = json!({"generateName": "hr-", "namespace": "default"});
    let r = post(
        &u,
        "/apis/helm.toolkit.fluxcd.io/v2/namespaces/default/helmreleases",
        &generated,
    );
    assert_eq!(r.status, 201);
    let name = r.body["metadata"]["name"].as_str().unwrap();
    assert!(name.starts_with("hr-") && name.len() == 8, "{name}");
    assert_eq!(r.body["metadata"]["generation"], 1);

    // missing namespace, bad body, bad name
    assert_eq!(
        post(
            &u,
            "/api/v1/namespaces/nope/configmaps",
            &cm("nope", "a", json!({}))
        )
        .status,
        404
    );
    let bad = send(
        &u,
        "POST",
        "/api/v1/namespaces/default/configmaps",
        "application/json",
        "{not json",
    );
    assert_eq!(bad.status, 400);
    let invalid = post(
        &u,
        "/api/v1/namespaces/default/configmaps",
        &cm("default", "Bad_Name", json!({})),
    );
    assert_eq!(invalid.status, 422);
    assert_eq!(invalid.body["reason"], "Invalid");
    let noname = post(
        &u,
        "/api/v1/namespaces/default/configmaps",
        &json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {}}),
    );
    assert_eq!(noname.status, 422);
    // method not allowed
    assert_eq!(
        send(
            &u,
            "POST",
            "/api/v1/namespaces/default/configmaps/a",
            "application/json",
            "{}"
        )
        .status,
        405
    );
    // namespaced resource by name without namespace: no such route
    assert_eq!(get(&u, "/api/v1/configmaps/a").status, 404);
    drop(api);
}

#[test]
fn helpers_seed_and_read() {
    let (api, _u) = server_with_hr();
    let mut obj = hr("flux", "seeded");
    obj["status"] = json!({"observedGeneration": 1});
    let created = api.create(obj);
    assert_eq!(
        created["status"]["observedGeneration"], 1,
        "seeding keeps status"
    );
    assert_eq!(created["metadata"]["generation"], 1);
    let got = api
        .get("helm.toolkit.fluxcd.io/v2", "HelmRelease", "flux", "seeded")
        .unwrap();
    assert_eq!(got["metadata"]["uid"], created["metadata"]["uid"]);
    assert_eq!(
        api.list("helm.toolkit.fluxcd.io/v2", "HelmRelease").len(),
        1
    );
    assert!(
        api.get("helm.toolkit.fluxcd.io/v2", "HelmRelease", "flux", "nope")
            .is_none()
    );
    let mut st = got.clone();
    st["status"] = json!({"conditions": [{"type": "Ready", "status": "True"}]});
    st["spec"]["interval"] = json!("1h");
    let after = api.update_status(st);
    assert_eq!(after["status"]["conditions"][0]["type"], "Ready");
    assert_eq!(after["spec"]["interval"], "5m", "status writes ignore spec");
    assert_eq!(after["metadata"]["generation"], 1);
    assert!(api.resource_version() >= 2);
}

#[test]
fn list_selectors() {
    let (api, u) = server_with_hr();
    api.create(cm("default", "a", json!({"app": "x", "tier": "web"})));
    api.create(cm("default", "b", json!({"app": "y"})));
    api.create(cm("kube-system", "c", json!({"app": "x", "tier": "db"})));
    api.create(cm("kube-system", "d", json!({})));
    let l = |q: &str| names(&get(&u, &format!("/api/v1/configmaps?{q}")).body);
    assert_eq!(l(""), ["a", "b", "c", "d"]);
    assert_eq!(l("labelSelector=app%3Dx"), ["a", "c"]);
    assert_eq!(l("labelSelector=app%3D%3Dy"), ["b"]);
    assert_eq!(l("labelSelector=app!%3Dx"), ["b", "d"]);
    assert_eq!(l("labelSelector=tier%20in%20(web,cache)"), ["a"]);
    assert_eq!(l("labelSelector=tier%20notin%20(web)"), ["b", "c", "d"]);
    assert_eq!(l("labelSelector=tier"), ["a", "c"]);
    assert_eq!(l("labelSelector=!tier"), ["b", "d"]);
    assert_eq!(l("labelSelector=app%3Dx,tier%3Ddb"), ["c"]);
    assert_eq!(l("fieldSelector=metadata.name%3Db"), ["b"]);
    assert_eq!(
        l("fieldSelector=metadata.namespace%3Dkube-system"),
        ["c", "d"]
    );
    assert_eq!(
        l("fieldSelector=metadata.namespace!%3Dkube-system"),
        ["a", "b"]
    );
    assert_eq!(
        names(&get(&u, "/api/v1/namespaces/default/configmaps").body),
        ["a", "b"]
    );
    let list = get(&u, "/api/v1/namespaces/default/configmaps").body;
    assert_eq!(list["kind"], "ConfigMapList");
    assert_eq!(list["apiVersion"], "v1");
    assert_eq!(
        list["metadata"]["resourceVersion"],
        api.resource_version().to_string()
    );
    assert_eq!(
        get(&u, "/api/v1/configmaps?labelSelector=a%20in%20(b").status,
        400
    );
    // custom resources only select on metadata.name / metadata.namespace
    let bad = get(
        &u,
        &format!("{HR_PATH}/helmreleases?fieldSelector=spec.interval%3D5m"),
    );
    assert_eq!(bad.status, 400);
    assert!(
        bad.body["message"]
            .as_str()
            .unwrap()
            .contains("field label not supported")
    );
}

#[test]
fn pagination_is_consistent() {
    let (api, u) = server_with_hr();
    for i in 0..5 {
        api.create(cm("default", &format!("cm-{i}"), json!({})));
    }
    let p1 = get(&u, "/api/v1/namespaces/default/configmaps?limit=2").body;
    assert_eq!(names(&p1), ["cm-0", "cm-1"]);
    assert_eq!(p1["metadata"]["remainingItemCount"], 3);
    let rv = p1["metadata"]["resourceVersion"].clone();
    let tok = p1["metadata"]["continue"].as_str().unwrap().to_string();
    // A write between pages does not show up: the pages are of one snapshot.
    api.create(cm("default", "cm-00", json!({})));
    let p2 = get(
        &u,
        &format!("/api/v1/namespaces/default/configmaps?limit=2&continue={tok}"),
    )
    .body;
    assert_eq!(names(&p2), ["cm-2", "cm-3"]);
    assert_eq!(p2["metadata"]["resourceVersion"], rv);
    let tok2 = p2["metadata"]["continue"].as_str().unwrap();
    let p3 = get(
        &u,
        &format!("/api/v1/namespaces/default/configmaps?limit=2&continue={tok2}"),
    )
    .body;
    assert_eq!(names(&p3), ["cm-4"]);
    assert!(p3["metadata"]["continue"].is_null());
    assert_eq!(
        get(
            &u,
            "/api/v1/namespaces/default/configmaps?limit=2&continue=7b227022"
        )
        .status,
        400
    );
    let stale = get(
        &u,
        "/api/v1/namespaces/default/configmaps?limit=2&continue=7b2270223a393939392c226f223a317d",
    );
    assert_eq!(stale.status, 410);
    assert_eq!(stale.body["reason"], "Expired");
}

#[test]
fn update_conflicts_status_and_generation() {
    let (api, u) = server_with_hr();
    let p = format!("{HR_PATH}/namespaces/default/helmreleases/r");
    let created = post(
        &u,
        &format!("{HR_PATH}/namespaces/default/helmreleases"),
        &hr("default", "r"),
    )
    .body;
    let rv1 = created["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_string();

    // metadata-only change: generation stays
    let mut o = created.clone();
    o["metadata"]["labels"] = json!({"x": "1"});
    let r = put(&u, &p, &o);
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["metadata"]["generation"], 1);
    let rv2 = r.body["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(rv2.parse::<u64>().unwrap() > rv1.parse::<u64>().unwrap());

    // stale resourceVersion
    let mut stale = created.clone();
    stale["spec"]["interval"] = json!("1m");
    let c = put(&u, &p, &stale);
    assert_eq!(c.status, 409);
    assert_eq!(c.body["reason"], "Conflict");
    assert_eq!(
        c.body["message"],
        "Operation cannot be fulfilled on helmreleases.helm.toolkit.fluxcd.io \"r\": the object has been modified; please apply your changes to the latest version and try again"
    );

    // spec change bumps generation; status in a main-resource update is ignored
    let mut o = r.body.clone();
    o["spec"]["interval"] = json!("1m");
    o["status"] = json!({"observedGeneration": 9});
    let r = put(&u, &p, &o);
    assert_eq!(r.body["metadata"]["generation"], 2);
    // (The CRD's default, as the real server fills it in, not the 9 sent.)
    assert_eq!(r.body["status"], json!({"observedGeneration": -1}));

    // status subresource: only status changes, generation stays
    let mut s = r.body.clone();
    s["status"] = json!({"observedGeneration": 2});
    s["spec"]["interval"] = json!("9m");
    let r = put(&u, &format!("{p}/status"), &s);
    assert_eq!(r.status, 200);
    assert_eq!(r.body["status"]["observedGeneration"], 2);
    assert_eq!(r.body["spec"]["interval"], "1m");
    assert_eq!(r.body["metadata"]["generation"], 2);
    assert!(
        r.body["metadata"]["managedFields"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["subresource"] == "status")
    );
    let st = get(&u, &format!("{p}/status"));
    assert_eq!(st.body["status"]["observedGeneration"], 2);

    // unconditional update (no resourceVersion) is allowed
    let mut o = r.body.clone();
    o["metadata"]
        .as_object_mut()
        .unwrap()
        .remove("resourceVersion");
    o["spec"]["interval"] = json!("2m");
    assert_eq!(put(&u, &p, &o).status, 200);

    // a no-op update does not bump the resourceVersion
    let cur = get(&u, &p).body;
    let again = put(&u, &p, &cur).body;
    assert_eq!(
        again["metadata"]["resourceVersion"],
        cur["metadata"]["resourceVersion"]
    );
    // PUT to a missing object, mismatched name
    assert_eq!(
        put(
            &u,
            &format!("{HR_PATH}/namespaces/default/helmreleases/zz"),
            &hr("default", "zz")
        )
        .status,
        404
    );
    assert_eq!(put(&u, &p, &hr("default", "other")).status, 400);
    drop(api);
}

#[test]
fn patch_types() {
    let (api, u) = server_with_hr();
    let p = format!("{HR_PATH}/namespaces/default/helmreleases/r");
    api.create(hr("default", "r"));
    let r = patch(
        &u,
        &p,
        "application/merge-patch+json",
        r#"{"spec":{"interval":"3m","suspend":true}}"#,
    );
    assert_eq!(r.status, 200);
    assert_eq!(r.body["spec"]["interval"], "3m");
    assert_eq!(r.body["metadata"]["generation"], 2);
    let r = patch(
        &u,
        &p,
        "application/merge-patch+json",
        r#"{"spec":{"suspend":null}}"#,
    );
    assert!(r.body["spec"].get("suspend").is_none());
    let r = patch(
        &u,
        &p,
        "application/json-patch+json",
        r#"[{"op":"replace","path":"/spec/interval","value":"4m"},{"op":"add","path":"/metadata/labels","value":{"a":"b"}}]"#,
    );
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["spec"]["interval"], "4m");
    assert_eq!(r.body["metadata"]["labels"]["a"], "b");
    let r = patch(
        &u,
        &p,
        "application/json-patch+json",
        r#"[{"op":"test","path":"/spec/interval","value":"nope"}]"#,
    );
    assert_eq!(r.status, 422);
    let r = patch(
        &u,
        &p,
        "application/strategic-merge-patch+json",
        r#"{"spec":{"interval":"5m"}}"#,
    );
    assert_eq!(
        r.status, 415,
        "custom resources refuse strategic merge patch"
    );
    assert_eq!(r.body["reason"], "UnsupportedMediaType");
    let r = patch(&u, &p, "text/plain", "x");
    assert_eq!(r.status, 415);
    // resourceVersion in a patch is a precondition
    let r = patch(
        &u,
        &p,
        "application/merge-patch+json",
        r#"{"metadata":{"resourceVersion":"1"},"spec":{"interval":"6m"}}"#,
    );
    assert_eq!(r.status, 409);
    // built-ins take strategic merge patch (as a merge patch, directives dropped)
    api.create(cm("default", "c", json!({})));
    let r = patch(
        &u,
        "/api/v1/namespaces/default/configmaps/c",
        "application/strategic-merge-patch+json",
        r#"{"data":{"k2":"v2"},"$setElementOrder/x":[]}"#,
    );
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["data"], json!({"k": "v", "k2": "v2"}));
    // status through a patch of the subresource
    let r = patch(
        &u,
        &format!("{p}/status"),
        "application/merge-patch+json",
        r#"{"status":{"observedGeneration":3}}"#,
    );
    assert_eq!(r.body["status"]["observedGeneration"], 3);
    // a patch on a missing object
    assert_eq!(
        patch(
            &u,
            &format!("{HR_PATH}/namespaces/default/helmreleases/nope"),
            "application/merge-patch+json",
            "{}"
        )
        .status,
        404
    );
}

fn managers(obj: &Value) -> Vec<(String, String)> {
    obj["metadata"]["managedFields"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|e| {
                    (
                        e["manager"].as_str().unwrap().to_string(),
                        e["operation"].as_str().unwrap().to_string(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn server_side_apply() {
    let (api, u) = server_with_hr();
    let p = format!("{HR_PATH}/namespaces/default/helmreleases/r");
    let apply = |mgr: &str, force: bool, body: &str| {
        patch(
            &u,
            &format!("{p}?fieldManager={mgr}&force={force}"),
            "application/apply-patch+yaml",
            body,
        )
    };
    let yaml = "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: r\n  namespace: default\n  labels:\n    team: a\nspec:\n  interval: 5m\n  suspend: false\n  values:\n    replicas: 2\n";
    let r = apply("alice", false, yaml);
    assert_eq!(r.status, 201, "{}", r.text);
    assert_eq!(r.body["metadata"]["generation"], 1);
    assert_eq!(managers(&r.body), [("alice".into(), "Apply".into())]);
    let f = &r.body["metadata"]["managedFields"][0];
    assert_eq!(f["fieldsType"], "FieldsV1");
    assert_eq!(f["fieldsV1"]["f:spec"]["f:values"]["f:replicas"], json!({}));
    assert_eq!(f["fieldsV1"]["f:metadata"]["f:labels"]["f:team"], json!({}));

    // Same apply again: no change, no new resourceVersion.
    let again = apply("alice", false, yaml);
    assert_eq!(again.status, 200);
    assert_eq!(
        again.body["metadata"]["resourceVersion"],
        r.body["metadata"]["resourceVersion"]
    );

    // Another manager changing an owned field: conflict.
    let bob = "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: r\n  namespace: default\nspec:\n  interval: 1m\n  timeout: 3m\n";
    let c = apply("bob", false, bob);
    assert_eq!(c.status, 409, "{}", c.text);
    assert_eq!(c.body["reason"], "Conflict");
    assert_eq!(
        c.body["message"],
        "Apply failed with 1 conflict: conflict with \"alice\": .spec.interval"
    );
    assert_eq!(c.body["details"]["causes"][0]["field"], ".spec.interval");
    assert_eq!(
        c.body["details"]["causes"][0]["reason"],
        "FieldManagerConflict"
    );
    // Co-owning with the same value is no conflict.
    let share = apply(
        "bob",
        false,
        "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: r\nspec:\n  interval: 5m\n",
    );
    assert_eq!(share.status, 200, "{}", share.text);
    // Forced: ownership moves to bob.
    let f = apply("bob", true, bob);
    assert_eq!(f.status, 200, "{}", f.text);
    assert_eq!(f.body["spec"]["interval"], "1m");
    assert_eq!(f.body["spec"]["timeout"], "3m");
    assert_eq!(f.body["metadata"]["generation"], 2);
    let alice_fields = &f.body["metadata"]["managedFields"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["manager"] == "alice")
        .unwrap()["fieldsV1"];
    assert!(
        alice_fields["f:spec"].get("f:interval").is_none(),
        "{alice_fields}"
    );

    // Alice drops `suspend` and `values` and the label: removed, as nobody else owns them.
    let alice2 = "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: r\nspec:\n  interval: 1m\n";
    let r = apply("alice", false, alice2);
    assert_eq!(r.status, 200, "{}", r.text);
    assert!(
        r.body["spec"].get("suspend").is_none(),
        "{}",
        r.body["spec"]
    );
    assert!(r.body["spec"].get("values").is_none(), "{}", r.body["spec"]);
    assert!(
        r.body["metadata"].get("labels").is_none(),
        "{}",
        r.body["metadata"]
    );
    assert_eq!(r.body["spec"]["timeout"], "3m", "bob's field stays");
    // Bob drops interval: alice still owns it (she re-applied the same value), so it stays.
    let r = apply(
        "bob",
        false,
        "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: r\nspec:\n  timeout: 3m\n",
    );
    assert_eq!(r.body["spec"]["interval"], "1m");

    // An Update-operation manager (merge patch) is also a conflict for apply.
    patch(
        &u,
        &format!("{p}?fieldManager=kubectl-edit"),
        "application/merge-patch+json",
        r#"{"spec":{"timeout":"9m"}}"#,
    );
    let c = apply(
        "bob",
        false,
        "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: r\nspec:\n  timeout: 3m\n",
    );
    assert_eq!(c.status, 409);
    assert!(c.body["message"].as_str().unwrap().contains("kubectl-edit"));

    // JSON bodies are YAML too; status in an apply of the main resource is ignored.
    let j = apply(
        "carol",
        false,
        r#"{"apiVersion":"helm.toolkit.fluxcd.io/v2","kind":"HelmRelease","metadata":{"name":"r"},"spec":{"maxHistory":3},"status":{"x":1}}"#,
    );
    assert_eq!(j.status, 200, "{}", j.text);
    assert_eq!(j.body["spec"]["maxHistory"], 3);
    assert_eq!(
        j.body["status"],
        json!({"observedGeneration": -1}),
        "the default only"
    );
    // Apply to the status subresource.
    let s = patch(
        &u,
        &format!("{p}/status?fieldManager=ctrl"),
        "application/apply-patch+yaml",
        "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: r\nstatus:\n  observedGeneration: 4\n",
    );
    assert_eq!(s.status, 200, "{}", s.text);
    assert_eq!(s.body["status"]["observedGeneration"], 4);

    // fieldManager is required; force only with apply.
    let m = patch(&u, &p, "application/apply-patch+yaml", alice2);
    assert_eq!(m.status, 422);
    assert_eq!(
        patch(
            &u,
            &format!("{p}?force=true"),
            "application/merge-patch+json",
            "{}"
        )
        .status,
        400
    );
    // Clearing managedFields with [{}] as a client may.
    let r = patch(
        &u,
        &p,
        "application/merge-patch+json",
        r#"{"metadata":{"managedFields":[{}]}}"#,
    );
    assert!(
        r.body["metadata"].get("managedFields").is_none(),
        "{}",
        r.body["metadata"]
    );
    drop(api);
}

#[test]
fn delete_finalizers_and_gc() {
    let (api, u) = server_with_hr();
    let base = format!("{HR_PATH}/namespaces/default/helmreleases");
    // no finalizers: gone, Status Success
    api.create(hr("default", "plain"));
    let d = delete(&u, &format!("{base}/plain"));
    assert_eq!(d.status, 200);
    assert_eq!(d.body["kind"], "Status");
    assert_eq!(d.body["status"], "Success");
    assert_eq!(get(&u, &format!("{base}/plain")).status, 404);
    assert_eq!(delete(&u, &format!("{base}/plain")).status, 404);

    // finalizers: deletionTimestamp set, object stays until the last finalizer goes
    let mut f = hr("default", "fin");
    f["metadata"]["finalizers"] = json!(["a/b", "c/d"]);
    api.create(f);
    let d = delete(&u, &format!("{base}/fin"));
    assert_eq!(d.status, 200);
    assert!(d.body["metadata"]["deletionTimestamp"].is_string());
    assert_eq!(d.body["metadata"]["deletionGracePeriodSeconds"], 0);
    assert_eq!(
        d.body["metadata"]["generation"], 2,
        "setting deletionTimestamp bumps generation"
    );
    let again = delete(&u, &format!("{base}/fin"));
    assert_eq!(
        again.body["metadata"]["deletionTimestamp"],
        d.body["metadata"]["deletionTimestamp"]
    );
    patch(
        &u,
        &format!("{base}/fin"),
        "application/json-patch+json",
        r#"[{"op":"remove","path":"/metadata/finalizers/0"}]"#,
    );
    assert_eq!(get(&u, &format!("{base}/fin")).status, 200);
    let r = patch(
        &u,
        &format!("{base}/fin"),
        "application/merge-patch+json",
        r#"{"metadata":{"finalizers":null}}"#,
    );
    assert_eq!(r.status, 200);
    assert_eq!(get(&u, &format!("{base}/fin")).status, 404);

    // preconditions
    let o = api.create(hr("default", "pre"));
    let bad = send(
        &u,
        "DELETE",
        &format!("{base}/pre"),
        "application/json",
        r#"{"preconditions":{"uid":"nope"}}"#,
    );
    assert_eq!(bad.status, 409);
    let ok = send(
        &u,
        "DELETE",
        &format!("{base}/pre"),
        "application/json",
        &json!({"preconditions": {"uid": o["metadata"]["uid"]}}).to_string(),
    );
    assert_eq!(ok.status, 200);

    // garbage collection: background deletes dependents, orphan strips the reference
    let owner_ref = |o: &Value| json!([{"apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease", "name": o["metadata"]["name"], "uid": o["metadata"]["uid"], "controller": true}]);
    let o1 = api.create(hr("default", "owner1"));
    let mut dep = cm("default", "dep1", json!({}));
    dep["metadata"]["ownerReferences"] = owner_ref(&o1);
    api.create(dep);
    let mut dep2 = cm("default", "dep1b", json!({}));
    dep2["metadata"]["ownerReferences"] = owner_ref(&o1);
    dep2["metadata"]["finalizers"] = json!(["keep/me"]);
    api.create(dep2);
    delete(&u, &format!("{base}/owner1"));
    assert!(api.get("v1", "ConfigMap", "default", "dep1").is_none());
    let waiting = api.get("v1", "ConfigMap", "default", "dep1b").unwrap();
    assert!(waiting["metadata"]["deletionTimestamp"].is_string());

    let o2 = api.create(hr("default", "owner2"));
    let mut dep = cm("default", "dep2", json!({}));
    dep["metadata"]["ownerReferences"] = owner_ref(&o2);
    api.create(dep);
    delete(&u, &format!("{base}/owner2?propagationPolicy=Orphan"));
    let orphan = api.get("v1", "ConfigMap", "default", "dep2").unwrap();
    assert!(orphan["metadata"].get("ownerReferences").is_none());

    let o3 = api.create(hr("default", "owner3"));
    let mut dep = cm("default", "dep3", json!({}));
    dep["metadata"]["ownerReferences"] = owner_ref(&o3);
    api.create(dep);
    send(
        &u,
        "DELETE",
        &format!("{base}/owner3"),
        "application/json",
        r#"{"propagationPolicy":"Foreground"}"#,
    );
    assert!(api.get("v1", "ConfigMap", "default", "dep3").is_none());
    assert!(
        api.get(
            "helm.toolkit.fluxcd.io/v2",
            "HelmRelease",
            "default",
            "owner3"
        )
        .is_none()
    );
    assert_eq!(
        send(
            &u,
            "DELETE",
            &format!("{base}/x"),
            "application/json",
            r#"{"propagationPolicy":"Sideways"}"#
        )
        .status,
        400
    );

    // deletecollection with a selector
    api.create(cm("default", "l1", json!({"del": "yes"})));
    api.create(cm("default", "l2", json!({"del": "yes"})));
    let dc = delete(
        &u,
        "/api/v1/namespaces/default/configmaps?labelSelector=del%3Dyes",
    );
    assert_eq!(dc.status, 200);
    assert!(
        api.get("v1", "ConfigMap", "default", "l1").is_none()
            && api.get("v1", "ConfigMap", "default", "l2").is_none()
    );
}

#[test]
fn namespace_deletion_and_crd_lifecycle() {
    let (api, u) = server_with_hr();
    assert_eq!(
        post(
            &u,
            "/api/v1/namespaces",
            &json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}})
        )
        .status,
        201
    );
    let ns = get(&u, "/api/v1/namespaces/team").body;
    assert_eq!(ns["status"]["phase"], "Active");
    assert_eq!(
        ns["metadata"]["labels"]["kubernetes.io/metadata.name"],
        "team"
    );
    post(
        &u,
        "/api/v1/namespaces/team/configmaps",
        &cm("team", "a", json!({})),
    );
    let mut f = hr("team", "held");
    f["metadata"]["finalizers"] = json!(["x/y"]);
    api.create(f);
    delete(&u, "/api/v1/namespaces/team");
    assert!(api.get("v1", "ConfigMap", "team", "a").is_none());
    let ns = get(&u, "/api/v1/namespaces/team").body;
    assert_eq!(ns["status"]["phase"], "Terminating");
    assert_eq!(
        post(
            &u,
            "/api/v1/namespaces/team/configmaps",
            &cm("team", "b", json!({}))
        )
        .status,
        403
    );
    patch(
        &u,
        &format!("{HR_PATH}/namespaces/team/helmreleases/held"),
        "application/merge-patch+json",
        r#"{"metadata":{"finalizers":[]}}"#,
    );
    assert_eq!(
        get(&u, "/api/v1/namespaces/team").status,
        404,
        "the namespace goes with its last object"
    );

    // A CRD created over HTTP is served; deleting it stops serving it.
    let crd = json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {"group": "example.com", "scope": "Cluster",
                 "names": {"kind": "Widget", "plural": "widgets", "singular": "widget", "shortNames": ["wd"]},
                 "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]}
    });
    assert_eq!(
        post(
            &u,
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
            &crd
        )
        .status,
        201
    );
    let w = post(
        &u,
        "/apis/example.com/v1/widgets",
        &json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w1"}, "spec": {"size": 1}}),
    );
    assert_eq!(w.status, 201, "{}", w.text);
    assert!(w.body["metadata"].get("namespace").is_none());
    // no status subresource: status is part of the main resource
    let mut o = w.body.clone();
    o["status"] = json!({"ok": true});
    assert_eq!(
        put(&u, "/apis/example.com/v1/widgets/w1", &o).body["status"]["ok"],
        true
    );
    assert_eq!(
        get(&u, "/apis/example.com/v1/widgets/w1/status").status,
        404
    );
    assert_eq!(
        get(&u, "/apis/example.com/v1/namespaces/default/widgets").status,
        404,
        "cluster-scoped"
    );
    let mut bad = crd.clone();
    bad["metadata"]["name"] = json!("wrong.example.com");
    assert_eq!(
        post(
            &u,
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
            &bad
        )
        .status,
        422
    );
    delete(
        &u,
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com",
    );
    assert_eq!(get(&u, "/apis/example.com/v1/widgets").status, 404);
    assert_eq!(get(&u, "/apis/example.com/v1").status, 404);
}

#[test]
fn watch_streams_events() {
    let (api, u) = server_with_hr();
    api.create(hr("default", "pre"));
    // From now: synthetic ADDED for what exists.
    let mut w = watch(
        &u,
        &format!("{HR_PATH}/namespaces/default/helmreleases?watch=true&timeoutSeconds=120"),
    );
    assert_eq!(w.status, 200);
    let e = w.next().unwrap();
    assert_eq!(
        (e["type"].as_str(), e["object"]["metadata"]["name"].as_str()),
        (Some("ADDED"), Some("pre"))
    );
    let rv_start = api.resource_version();
    api.create(hr("default", "new"));
    api.create(hr("other", "elsewhere"));
    patch(
        &u,
        &format!("{HR_PATH}/namespaces/default/helmreleases/new"),
        "application/merge-patch+json",
        r#"{"spec":{"interval":"1m"}}"#,
    );
    delete(
        &u,
        &format!("{HR_PATH}/namespaces/default/helmreleases/new"),
    );
    let types: Vec<(String, String)> = (0..3)
        .map(|_| {
            let e = w.next().unwrap();
            (
                e["type"].as_str().unwrap().to_string(),
                e["object"]["metadata"]["name"]
                    .as_str()
                    .unwrap()
                    .to_string(),
            )
        })
        .collect();
    assert_eq!(
        types,
        [
            ("ADDED".into(), "new".into()),
            ("MODIFIED".into(), "new".into()),
            ("DELETED".into(), "new".into())
        ]
    );
    assert_eq!(api.watch_count(), 1);

    // Resuming from a resourceVersion replays what came after it.
    let mut w2 = watch(
        &u,
        &format!("{HR_PATH}/helmreleases?watch=1&resourceVersion={rv_start}&timeoutSeconds=120"),
    );
    let got: Vec<String> = (0..4)
        .map(|_| w2.next().unwrap()["type"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(got, ["ADDED", "ADDED", "MODIFIED", "DELETED"]);

    // A single object by name.
    let mut w3 = watch(
        &u,
        &format!(
            "{HR_PATH}/namespaces/default/helmreleases?watch=true&fieldSelector=metadata.name%3Dpre&timeoutSeconds=120"
        ),
    );
    assert_eq!(w3.next().unwrap()["object"]["metadata"]["name"], "pre");
    drop(api);
}

#[test]
fn watch_selector_transitions_and_timeout() {
    let api = FakeApiServer::start();
    let u = api.url();
    api.create(cm("default", "a", json!({"app": "x"})));
    let rv = api.resource_version();
    // The changes come first; the watch from before them replays them, then times out: what
    // it sees does not depend on how fast the changes are made.
    patch(
        &u,
        "/api/v1/namespaces/default/configmaps/a",
        "application/merge-patch+json",
        r#"{"metadata":{"labels":{"app":"y"}}}"#,
    );
    patch(
        &u,
        "/api/v1/namespaces/default/configmaps/a",
        "application/merge-patch+json",
        r#"{"data":{"k":"w"}}"#,
    );
    patch(
        &u,
        "/api/v1/namespaces/default/configmaps/a",
        "application/merge-patch+json",
        r#"{"metadata":{"labels":{"app":"z"}}}"#,
    );
    let mut w = watch(
        &u,
        &format!(
            "/api/v1/namespaces/default/configmaps?watch=true&labelSelector=app%3Dy&resourceVersion={rv}&timeoutSeconds=1"
        ),
    );
    let t: Vec<String> = (0..3)
        .map(|_| w.next().unwrap()["type"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(t, ["ADDED", "MODIFIED", "DELETED"]);
    assert!(
        w.ended_by_server(),
        "timeoutSeconds ends the stream: {:?}",
        w.error
    );
    // The server lets go of the watcher once the stream ended.
    let start = Instant::now();
    while api.watch_count() != 0 {
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "the watcher is gone"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn watch_too_old_resource_version_is_expired() {
    let api = FakeApiServer::builder().history_window(3).start();
    let u = api.url();
    let rv0 = api.resource_version();
    for i in 0..5 {
        api.create(cm("default", &format!("c{i}"), json!({})));
    }
    let mut w = watch(
        &u,
        &format!("/api/v1/configmaps?watch=true&resourceVersion={rv0}"),
    );
    assert_eq!(w.status, 200);
    let e = w.next().unwrap();
    assert_eq!(e["type"], "ERROR");
    assert_eq!(e["object"]["kind"], "Status");
    assert_eq!(e["object"]["code"], 410);
    assert_eq!(e["object"]["reason"], "Expired");
    assert!(
        e["object"]["message"]
            .as_str()
            .unwrap()
            .starts_with("too old resource version")
    );
    assert!(w.next().is_none());
    // Within the window is fine.
    let recent = api.resource_version() - 2;
    let mut w = watch(
        &u,
        &format!("/api/v1/configmaps?watch=true&resourceVersion={recent}&timeoutSeconds=120"),
    );
    assert_eq!(w.next().unwrap()["type"], "ADDED");
    // A list at a compacted resourceVersion too.
    assert_eq!(
        get(
            &u,
            &format!("/api/v1/configmaps?resourceVersion={rv0}&resourceVersionMatch=Exact")
        )
        .status,
        410
    );
}

#[test]
fn watch_bookmarks() {
    let api = FakeApiServer::builder()
        .bookmark_interval(Duration::from_millis(200))
        .start();
    let u = api.url();
    let rv = api.resource_version();
    let mut w = watch(
        &u,
        &format!(
            "/api/v1/namespaces/default/configmaps?watch=true&allowWatchBookmarks=true&resourceVersion={rv}&timeoutSeconds=60"
        ),
    );
    api.create(cm("default", "a", json!({})));
    let mut seen_add = false;
    loop {
        let e = w.next().expect("a bookmark before the timeout");
        match e["type"].as_str().unwrap() {
            "ADDED" => seen_add = true,
            "BOOKMARK" => {
                assert!(seen_add, "events come before a bookmark covering them");
                assert_eq!(e["object"]["kind"], "ConfigMap");
                assert_eq!(
                    e["object"]["metadata"]["resourceVersion"],
                    api.resource_version().to_string()
                );
                break;
            }
            t => panic!("unexpected {t}"),
        }
    }
    // Without allowWatchBookmarks: none.
    let mut w = watch(
        &u,
        &format!(
            "/api/v1/namespaces/default/configmaps?watch=true&resourceVersion={}&timeoutSeconds=1",
            api.resource_version()
        ),
    );
    assert!(w.next().is_none());
}

#[test]
fn faults() {
    let (api, u) = server_with_hr();
    api.inject(Fault::Status {
        verb: Some("list".into()),
        resource: Some("helmreleases".into()),
        code: 500,
        times: 2,
    });
    let lp = format!("{HR_PATH}/helmreleases");
    let r = get(&u, &lp);
    assert_eq!(r.status, 500);
    assert_eq!(r.body["reason"], "InternalError");
    assert_eq!(
        get(&u, "/api/v1/configmaps").status,
        200,
        "other resources unaffected"
    );
    assert_eq!(get(&u, &lp).status, 500);
    assert_eq!(get(&u, &lp).status, 200, "spent after `times`");

    api.inject(Fault::Status {
        verb: None,
        resource: None,
        code: 429,
        times: 1,
    });
    let r = get(&u, &lp);
    assert_eq!(r.status, 429);
    assert_eq!(r.header("retry-after"), Some("1"));
    assert_eq!(r.body["reason"], "TooManyRequests");
    assert_eq!(r.body["details"]["retryAfterSeconds"], 1);

    api.inject(Fault::Status {
        verb: Some("update".into()),
        resource: None,
        code: 409,
        times: 1,
    });
    let o = api.create(hr("default", "r"));
    assert_eq!(
        put(
            &u,
            &format!("{HR_PATH}/namespaces/default/helmreleases/r"),
            &o
        )
        .status,
        409
    );

    api.inject(Fault::Delay {
        verb: Some("get".into()),
        resource: None,
        delay: Duration::from_millis(300),
        times: 1,
    });
    let t = Instant::now();
    assert_eq!(
        get(&u, &format!("{HR_PATH}/namespaces/default/helmreleases/r")).status,
        200
    );
    assert!(t.elapsed() >= Duration::from_millis(300));
    assert_eq!(api.faults_left(), 0, "the delay was for one request only");

    api.inject(Fault::DropWatch {
        resource: Some("helmreleases".into()),
        after_events: 2,
    });
    api.create(hr("default", "r2"));
    api.create(hr("default", "r3"));
    // (A timeout longer than the client's: only the fault can end this one.)
    let mut w = watch(&u, &format!("{lp}?watch=true&timeoutSeconds=600"));
    assert!(w.next().is_some() && w.next().is_some());
    assert!(w.ended_by_server(), "dropped after 2 events: {:?}", w.error);
    let mut w = watch(&u, &format!("{lp}?watch=true&timeoutSeconds=120"));
    assert_eq!(
        (0..3).filter_map(|_| w.next()).count(),
        3,
        "one-shot: the next watch is whole"
    );

    api.inject(Fault::Status {
        verb: None,
        resource: None,
        code: 503,
        times: 5,
    });
    api.clear_faults();
    assert_eq!(get(&u, &lp).status, 200);
}

#[test]
fn request_log() {
    let (api, u) = server_with_hr();
    api.clear_requests();
    get(&u, "/apis");
    get(&u, &format!("{HR_PATH}/helmreleases?limit=500"));
    post(
        &u,
        &format!("{HR_PATH}/namespaces/default/helmreleases"),
        &hr("default", "r"),
    );
    get(&u, &format!("{HR_PATH}/namespaces/default/helmreleases/r"));
    patch(
        &u,
        &format!("{HR_PATH}/namespaces/default/helmreleases/r/status"),
        "application/merge-patch+json",
        "{}",
    );
    delete(&u, &format!("{HR_PATH}/namespaces/default/helmreleases/r"));
    get(&u, &format!("{HR_PATH}/namespaces/default/helmreleases/r"));
    let mut w = watch(
        &u,
        &format!("{HR_PATH}/helmreleases?watch=true&timeoutSeconds=1"),
    );
    while w.next().is_some() {}
    let reqs = api.requests();
    let vr: Vec<(&str, &str)> = reqs.iter().map(|r| r.verb_resource()).collect();
    assert_eq!(
        vr,
        [
            ("get", ""),
            ("list", "helmreleases"),
            ("create", "helmreleases"),
            ("get", "helmreleases"),
            ("patch", "helmreleases"),
            ("delete", "helmreleases"),
            ("get", "helmreleases"),
            ("watch", "helmreleases")
        ]
    );
    assert_eq!(reqs[1].query, "limit=500");
    assert_eq!(reqs[1].namespace, None);
    assert_eq!(reqs[2].status, 201);
    assert_eq!(reqs[3].namespace.as_deref(), Some("default"));
    assert_eq!(reqs[3].name.as_deref(), Some("r"));
    assert_eq!(reqs[4].subresource.as_deref(), Some("status"));
    assert_eq!(
        reqs[4].content_type.as_deref(),
        Some("application/merge-patch+json")
    );
    assert_eq!(reqs[6].status, 404);
    assert_eq!(reqs[7].status, 200);
    assert_eq!(reqs[2].group.as_deref(), Some("helm.toolkit.fluxcd.io"));
    assert!(reqs[0].user_agent.as_deref().unwrap().starts_with("ureq"));
    assert!(reqs.windows(2).all(|w| w[0].time <= w[1].time));
    api.clear_requests();
    assert!(api.requests().is_empty());
}

#[test]
fn table_output_for_kubectl_get() {
    let (api, u) = server_with_hr();
    let mut o = hr("default", "r");
    o["status"] = json!({"conditions": [{"type": "Ready", "status": "True", "message": "done", "lastTransitionTime": "2025-01-01T00:00:00Z"}]});
    api.create(o);
    let t = get_accept(
        &u,
        &format!("{HR_PATH}/namespaces/default/helmreleases"),
        "application/json;as=Table;v=v1;g=meta.k8s.io,application/json",
    )
    .body;
    assert_eq!(t["kind"], "Table");
    let cols: Vec<&str> = t["columnDefinitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(cols[0], "Name");
    assert!(cols.contains(&"Ready"), "{cols:?}");
    let ready = cols.iter().position(|c| *c == "Ready").unwrap();
    assert_eq!(t["rows"][0]["cells"][0], "r");
    assert_eq!(t["rows"][0]["cells"][ready], "True");
    assert_eq!(t["rows"][0]["object"]["kind"], "PartialObjectMetadata");
}

#[test]
fn shutdown_closes_the_port() {
    let api = FakeApiServer::start();
    let addr = api.addr();
    let u = api.url();
    let mut w = watch(&u, "/api/v1/configmaps?watch=true");
    api.shutdown();
    assert!(w.next().is_none(), "open watches are cut");
    assert!(std::net::TcpStream::connect_timeout(&addr, Duration::from_millis(500)).is_err());
}

fn testdata(rel: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata")
        .join(rel)
}

/// The objects of a saved dump (a `kind: List` or several documents), flattened.
fn dump_objects(text: &str) -> Vec<Value> {
    let docs: Vec<Value> = serde_saphyr::from_multiple(text).unwrap();
    let mut out = Vec::new();
    for d in docs {
        if d["kind"] == "List" {
            out.extend(d["items"].as_array().unwrap().iter().cloned());
        } else if d.is_object() {
            out.push(d);
        }
    }
    out
}

#[test]
fn load_crds_dir_serves_every_kcm_and_flux_kind() {
    let api = FakeApiServer::start();
    api.load_crds_dir(testdata("../crds/kcm"));
    api.load_crds_dir(testdata("../crds/flux"));
    let crds = api.list("apiextensions.k8s.io/v1", "CustomResourceDefinition");
    assert_eq!(crds.len(), 29, "21 kcm + 8 flux CRDs");
    let u = api.url();
    for (group_version, plural) in [
        ("k0rdent.mirantis.com/v1beta1", "servicesets"),
        ("k0rdent.mirantis.com/v1beta1", "statemanagementproviders"),
        ("helm.toolkit.fluxcd.io/v2", "helmreleases"),
        ("kustomize.toolkit.fluxcd.io/v1", "kustomizations"),
        ("source.toolkit.fluxcd.io/v1", "gitrepositories"),
    ] {
        let r = get(&u, &format!("/apis/{group_version}/{plural}"));
        assert_eq!(r.status, 200, "{group_version} {plural}: {}", r.text);
    }
    // loading again replaces them
    api.load_crds_dir(testdata("../crds/flux"));
    assert_eq!(
        api.list("apiextensions.k8s.io/v1", "CustomResourceDefinition")
            .len(),
        29
    );
}

#[test]
fn load_objects_yaml_seeds_every_doctor_dump_with_its_status() {
    let mut dirs: Vec<_> = std::fs::read_dir(testdata("doctor"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("dump.yaml").is_file())
        .collect();
    dirs.sort();
    assert!(dirs.len() >= 20, "{dirs:?}");
    for dir in dirs {
        let text = std::fs::read_to_string(dir.join("dump.yaml")).unwrap();
        let api = FakeApiServer::start();
        let want = dump_objects(&text);
        let sveltos = dir
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with("sveltos-"));
        if sveltos || !want.iter().any(|o| o["kind"] == "CustomResourceDefinition") {
            // multi-problem holds no CRDs, and the Sveltos dumps only a few (reduced to open
            // objects): the real ones serve the other kinds; a dump's own CRD replaces one.
            let own: Vec<&Value> = want
                .iter()
                .filter(|o| o["kind"] == "CustomResourceDefinition")
                .map(|o| &o["metadata"]["name"])
                .collect();
            for dir in ["../crds/kcm", "../crds/flux", "../crds/sveltos"] {
                for f in std::fs::read_dir(testdata(dir)).unwrap() {
                    let crd: Value = serde_saphyr::from_str(
                        &std::fs::read_to_string(f.unwrap().path()).unwrap(),
                    )
                    .unwrap();
                    if !own.contains(&&crd["metadata"]["name"]) {
                        api.load_crd(&crd);
                    }
                }
            }
        }
        assert_eq!(api.load_objects_yaml(&text), want.len(), "{dir:?}");
        for o in &want {
            let m = &o["metadata"];
            let (av, kind) = (
                o["apiVersion"].as_str().unwrap(),
                o["kind"].as_str().unwrap(),
            );
            let ns = m["namespace"].as_str().unwrap_or("");
            let name = m["name"].as_str().unwrap();
            let got = api
                .get(av, kind, ns, name)
                .unwrap_or_else(|| panic!("{dir:?}: {kind} {ns}/{name} not loaded"));
            // Stored as the real server stores it: with the defaults of the CRD it is served
            // by (the real one; a dump's own reduced CRD has none).
            let mut o = o.clone();
            let own_crd = want.iter().any(|c| {
                c["kind"] == "CustomResourceDefinition" && c["spec"]["names"]["kind"] == o["kind"]
            });
            if !own_crd {
                kubectl_ksm::core::crds::default_and_prune(&mut o);
            }
            assert_eq!(got["status"], o["status"], "{dir:?}: {kind} {ns}/{name}");
            assert_eq!(got["spec"], o["spec"], "{dir:?}: {kind} {ns}/{name}");
            if !m["uid"].is_null() {
                assert_eq!(got["metadata"]["uid"], m["uid"], "{kind} {ns}/{name}");
            }
        }
    }
}

#[test]
fn load_objects_yaml_serves_the_seeded_objects_over_http() {
    let api = FakeApiServer::start();
    let text = std::fs::read_to_string(testdata("doctor/healthy/dump.yaml")).unwrap();
    // the healthy dump carries its own CRDs
    api.load_objects_yaml(&text);
    let u = api.url();
    let l = get(
        &u,
        "/apis/k0rdent.mirantis.com/v1beta1/namespaces/kcm-system/servicesets",
    );
    assert_eq!(l.status, 200, "{}", l.text);
    assert_eq!(l.body["items"][0]["metadata"]["name"], "dev-cluster");
    assert!(l.body["items"][0]["status"].is_object(), "{}", l.text);
    let hrs = get(&u, &format!("{HR_PATH}/helmreleases")).body;
    assert!(!hrs["items"].as_array().unwrap().is_empty(), "{hrs}");
}

#[test]
fn load_objects_yaml_takes_several_documents_and_nested_lists() {
    let api = FakeApiServer::start();
    api.load_crd(&helmrelease_crd());
    let n = api.load_objects_yaml(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: x}\ndata: {k: v}\n---\n\
         apiVersion: v1\nkind: List\nitems:\n\
         - apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: b, namespace: x}\n\
         - apiVersion: helm.toolkit.fluxcd.io/v2\n  kind: HelmRelease\n  metadata: {name: r, namespace: x, generation: 3}\n  spec: {interval: 5m}\n  status: {observedGeneration: 2}\n",
    );
    assert_eq!(n, 3);
    assert_eq!(api.list("v1", "ConfigMap").len(), 2);
    let r = api
        .get("helm.toolkit.fluxcd.io/v2", "HelmRelease", "x", "r")
        .unwrap();
    assert_eq!(r["status"]["observedGeneration"], 2);
    assert_eq!(r["metadata"]["generation"], 3);
}

//! The HTTP side: routing, discovery, resource verbs, watch streams, faults and the request log.

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use bytes::Bytes;
use http_body_util::{BodyExt, Full, StreamBody, combinators::BoxBody};
use hyper::body::{Frame, Incoming};
use hyper::header::{CONTENT_TYPE, HeaderValue};
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use tokio::sync::{mpsc, watch};

use super::registry::ResourceType;
use super::selector::{FieldSelector, LabelSelector};
use super::status::{ApiError, ApiResult};
use super::store::{DeleteOpts, PatchType, WriteCtx};
use super::{Fault, RequestRecord, Shared};

type Body = BoxBody<Bytes, Infallible>;

pub async fn serve(
    shared: Arc<Shared>,
    listener: std::net::TcpListener,
    mut stop: watch::Receiver<bool>,
) {
    let listener = tokio::net::TcpListener::from_std(listener).expect("tokio listener");
    loop {
        tokio::select! {
            _ = stop.changed() => break,
            acc = listener.accept() => {
                let Ok((stream, _)) = acc else { continue };
                // As the real API server (Go's net package turns Nagle's algorithm off on every
                // TCP connection): each response and watch event goes out at once.
                let _ = stream.set_nodelay(true);
                let shared = shared.clone();
                let stop = stop.clone();
                tokio::spawn(async move {
                    let svc = service_fn(move |req| {
                        let shared = shared.clone();
                        let stop = stop.clone();
                        async move { Ok::<_, Infallible>(handle(shared, req, stop).await) }
                    });
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), svc)
                        .await;
                });
            }
        }
    }
}

fn full(b: impl Into<Bytes>) -> Body {
    Full::new(b.into()).boxed()
}

fn json_response(code: u16, v: &Value) -> Response<Body> {
    let mut r = Response::new(full(serde_json::to_vec(v).expect("json")));
    *r.status_mut() = StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    r.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    r
}

fn error_response(e: &ApiError) -> Response<Body> {
    let mut r = json_response(e.code, &e.to_status());
    if let Some(s) = e.retry_after {
        r.headers_mut().insert("Retry-After", HeaderValue::from(s));
    }
    r
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < b.len() => match s
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
            {
                Some(v) => {
                    out.push(v);
                    i += 2;
                }
                None => out.push(b'%'),
            },
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn parse_query(q: &str) -> HashMap<String, String> {
    q.split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (percent_decode(k), percent_decode(v))
        })
        .collect()
}

/// What a request is about, in the terms of the real server's `RequestInfo`.
#[derive(Debug, Default, Clone)]
struct Info {
    verb: String,
    group: Option<String>,
    version: Option<String>,
    resource: Option<String>,
    subresource: Option<String>,
    namespace: Option<String>,
    name: Option<String>,
}

/// `rest` after `/api/v1` or `/apis/{g}/{v}`.
fn resource_info(
    method: &Method,
    group: &str,
    version: &str,
    rest: &[&str],
    watch: bool,
) -> Option<Info> {
    let mut parts = rest;
    let mut namespace = None;
    if parts.first() == Some(&"namespaces")
        && parts.len() > 2
        && !["status", "finalize"].contains(&parts[2])
    {
        namespace = Some(parts[1].to_string());
        parts = &parts[2..];
    }
    if parts.is_empty() || parts.len() > 3 {
        return None;
    }
    let name = parts.get(1).map(|s| s.to_string());
    let verb = match (method.as_str(), name.is_some()) {
        ("GET", _) if watch => "watch",
        ("GET", true) => "get",
        ("GET", false) => "list",
        ("POST", false) => "create",
        ("PUT", true) => "update",
        ("PATCH", true) => "patch",
        ("DELETE", true) => "delete",
        ("DELETE", false) => "deletecollection",
        (m, _) => {
            return Some(Info {
                verb: m.to_lowercase(),
                ..Default::default()
            });
        }
    };
    Some(Info {
        verb: verb.into(),
        group: Some(group.to_string()),
        version: Some(version.to_string()),
        resource: Some(parts[0].to_string()),
        subresource: parts.get(2).map(|s| s.to_string()),
        namespace,
        name,
    })
}

struct Req {
    method: Method,
    path: String,
    query: HashMap<String, String>,
    content_type: String,
    accept: String,
    user_agent: Option<String>,
    /// Impersonate-User and Impersonate-Group headers (recorded, not enforced).
    impersonate_user: Option<String>,
    impersonate_groups: Vec<String>,
    body: Bytes,
}

async fn handle(
    shared: Arc<Shared>,
    req: Request<Incoming>,
    stop: watch::Receiver<bool>,
) -> Response<Body> {
    let (parts, body) = req.into_parts();
    let body = body
        .collect()
        .await
        .map(|c| c.to_bytes())
        .unwrap_or_default();
    let h = |n: hyper::header::HeaderName| {
        parts
            .headers
            .get(n)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
    };
    let raw_query = parts.uri.query().unwrap_or("").to_string();
    let r = Req {
        method: parts.method.clone(),
        path: parts.uri.path().to_string(),
        query: parse_query(&raw_query),
        content_type: h(CONTENT_TYPE).unwrap_or_default(),
        accept: h(hyper::header::ACCEPT).unwrap_or_default(),
        user_agent: h(hyper::header::USER_AGENT),
        impersonate_user: parts
            .headers
            .get("impersonate-user")
            .and_then(|v| v.to_str().ok())
            .map(str::to_string),
        impersonate_groups: parts
            .headers
            .get_all("impersonate-group")
            .iter()
            .filter_map(|v| v.to_str().ok().map(str::to_string))
            .collect(),
        body,
    };
    let watch = matches!(r.query.get("watch").map(String::as_str), Some("true" | "1"));
    let segs: Vec<&str> = r.path.split('/').filter(|s| !s.is_empty()).collect();
    let info = match segs.as_slice() {
        ["api", "v1", rest @ ..] if !rest.is_empty() => {
            resource_info(&r.method, "", "v1", rest, watch)
        }
        ["apis", g, v, rest @ ..] if !rest.is_empty() => {
            resource_info(&r.method, g, v, rest, watch)
        }
        _ => None,
    }
    .unwrap_or_else(|| Info {
        verb: r.method.as_str().to_lowercase(),
        ..Default::default()
    });

    // Faults.
    let mut drop_watch_after = None;
    let mut drop_list = false;
    if info.resource.is_some() {
        let (delay, status) = take_faults(&shared, &info, &mut drop_watch_after, &mut drop_list);
        if let Some(d) = delay {
            tokio::time::sleep(d).await;
        }
        if let Some(code) = status {
            let resp = error_response(&ApiError::injected(code));
            log(&shared, &r, &raw_query, &info, code);
            return resp;
        }
    }

    let resp = if info.resource.is_some() {
        match resource_request(&shared, &r, &info, drop_watch_after, stop).await {
            Ok(resp) => resp,
            Err(e) => error_response(&e),
        }
    } else {
        non_resource(&shared, &r, &segs)
    };
    log(&shared, &r, &raw_query, &info, resp.status().as_u16());
    if drop_list && info.verb == "list" {
        return truncated(resp).await;
    }
    resp
}

/// The response with only the first half of its body, under a Content-Length of the whole:
/// the server closes the connection mid-body, as a dropped connection looks to the client.
async fn truncated(resp: Response<Body>) -> Response<Body> {
    let (mut parts, body) = resp.into_parts();
    let bytes = body
        .collect()
        .await
        .map(|c| c.to_bytes())
        .unwrap_or_default();
    parts.headers.insert(
        hyper::header::CONTENT_LENGTH,
        HeaderValue::from(bytes.len()),
    );
    let half = bytes.slice(..bytes.len() / 2);
    let stream = futures_util::stream::iter([Ok::<_, Infallible>(Frame::data(half))]);
    Response::from_parts(parts, BodyExt::boxed(StreamBody::new(stream)))
}

fn take_faults(
    shared: &Shared,
    info: &Info,
    drop_after: &mut Option<usize>,
    drop_list: &mut bool,
) -> (Option<Duration>, Option<u16>) {
    let mut st = shared.lock();
    let st = &mut *st;
    let res = info.resource.as_deref().unwrap_or("");
    let full_res = match &info.subresource {
        Some(s) => format!("{res}/{s}"),
        None => res.to_string(),
    };
    let matches = |v: &Option<String>, r: &Option<String>| {
        v.as_deref().is_none_or(|v| v == info.verb)
            && r.as_deref().is_none_or(|r| r == res || r == full_res)
    };
    let mut delay = None;
    let mut status = None;
    let mut dropw = None;
    for f in st.faults.iter_mut() {
        match f {
            Fault::Delay {
                verb,
                resource,
                delay: d,
                times,
            } if *times > 0 && delay.is_none() && matches(verb, resource) => {
                *times -= 1;
                delay = Some(*d);
            }
            Fault::Status {
                verb,
                resource,
                code,
                times,
            } if *times > 0 && status.is_none() && matches(verb, resource) => {
                *times -= 1;
                status = Some(*code);
            }
            Fault::DropList { resource, times }
                if *times > 0 && info.verb == "list" && matches(&None, resource) =>
            {
                *times -= 1;
                *drop_list = true;
            }
            Fault::ConflictOnFirstWrite { resource }
                if status.is_none()
                    && ["create", "update", "patch", "delete"].contains(&info.verb.as_str())
                    && matches(&None, resource) =>
            {
                let object = format!(
                    "{full_res}/{}/{}",
                    info.namespace.as_deref().unwrap_or(""),
                    info.name.as_deref().unwrap_or("")
                );
                if st.first_writes.insert(object) {
                    status = Some(409);
                }
            }
            Fault::DropWatch {
                resource,
                after_events,
            } if info.verb == "watch"
                && dropw.is_none()
                && *after_events != usize::MAX
                && matches(&None, resource) =>
            {
                dropw = Some(*after_events);
                *after_events = usize::MAX; // spent
            }
            _ => {}
        }
    }
    st.faults.retain(|f| match f {
        Fault::Delay { times, .. }
        | Fault::Status { times, .. }
        | Fault::DropList { times, .. } => *times > 0,
        Fault::ConflictOnFirstWrite { .. } => true,
        Fault::DropWatch { after_events, .. } => *after_events != usize::MAX,
    });
    *drop_after = dropw;
    (delay, status)
}

fn log(shared: &Shared, r: &Req, raw_query: &str, info: &Info, status: u16) {
    let rec = RequestRecord {
        method: r.method.to_string(),
        path: r.path.clone(),
        query: raw_query.to_string(),
        verb: info.verb.clone(),
        resource: info.resource.clone(),
        subresource: info.subresource.clone(),
        group: info.group.clone(),
        version: info.version.clone(),
        namespace: info.namespace.clone(),
        name: info.name.clone(),
        status,
        user_agent: r.user_agent.clone(),
        impersonate_user: r.impersonate_user.clone(),
        impersonate_groups: r.impersonate_groups.clone(),
        content_type: (!r.content_type.is_empty()).then(|| r.content_type.clone()),
        time: SystemTime::now(),
    };
    shared.lock().requests.push(rec);
}

// ---- discovery and other non-resource paths -------------------------------------------------

fn non_resource(shared: &Shared, r: &Req, segs: &[&str]) -> Response<Body> {
    if r.method != Method::GET {
        return error_response(&ApiError::method_not_allowed(
            "the server does not allow this method on the requested resource",
        ));
    }
    let st = shared.lock();
    let resource_list = |group: &str, version: &str| -> Option<Value> {
        let types: Vec<&ResourceType> = st
            .types
            .iter()
            .filter(|t| t.group == group && t.serves(version))
            .collect();
        if types.is_empty() {
            return None;
        }
        let resources: Vec<Value> = types.iter().flat_map(|t| t.discovery_entries()).collect();
        let gv = if group.is_empty() {
            version.to_string()
        } else {
            format!("{group}/{version}")
        };
        Some(
            json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": resources}),
        )
    };
    let group_of = |g: &str| -> Option<Value> {
        let mut versions: Vec<String> = Vec::new();
        for t in st.types.iter().filter(|t| t.group == g) {
            for v in &t.versions {
                if !versions.contains(v) {
                    versions.push(v.clone());
                }
            }
        }
        let pref = versions.first()?.clone();
        let gv = |v: &str| json!({"groupVersion": format!("{g}/{v}"), "version": v});
        Some(json!({
            "name": g,
            "versions": versions.iter().map(|v| gv(v)).collect::<Vec<_>>(),
            "preferredVersion": gv(&pref),
        }))
    };
    match segs {
        [] => {
            let mut paths = vec![
                "/api".to_string(),
                "/api/v1".into(),
                "/apis".into(),
                "/version".into(),
            ];
            paths.extend(
                st.types
                    .iter()
                    .filter(|t| !t.group.is_empty())
                    .flat_map(|t| {
                        t.versions
                            .iter()
                            .map(|v| format!("/apis/{}/{v}", t.group))
                            .collect::<Vec<_>>()
                    }),
            );
            paths.sort();
            paths.dedup();
            json_response(200, &json!({"paths": paths}))
        }
        ["version"] => json_response(
            200,
            &json!({
                "major": "1", "minor": "32", "gitVersion": "v1.32.0-fakeapi", "gitCommit": "0000000000000000000000000000000000000000",
                "gitTreeState": "clean", "buildDate": "2025-01-01T00:00:00Z", "goVersion": "go1.23.0", "compiler": "gc", "platform": "linux/amd64"
            }),
        ),
        ["healthz" | "livez" | "readyz"] => {
            let mut resp = Response::new(full("ok"));
            resp.headers_mut()
                .insert(CONTENT_TYPE, HeaderValue::from_static("text/plain"));
            resp
        }
        ["api"] => json_response(
            200,
            &json!({
                "kind": "APIVersions", "versions": ["v1"],
                "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": shared.addr.to_string()}]
            }),
        ),
        ["api", "v1"] => resource_list("", "v1").map_or_else(
            || error_response(&ApiError::plain_not_found()),
            |v| json_response(200, &v),
        ),
        ["apis"] => {
            let mut groups: Vec<String> = Vec::new();
            for t in st.types.iter().filter(|t| !t.group.is_empty()) {
                if !groups.contains(&t.group) {
                    groups.push(t.group.clone());
                }
            }
            let groups: Vec<Value> = groups.iter().filter_map(|g| group_of(g)).collect();
            json_response(
                200,
                &json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}),
            )
        }
        ["apis", g] => match group_of(g) {
            Some(mut v) => {
                v["kind"] = json!("APIGroup");
                v["apiVersion"] = json!("v1");
                json_response(200, &v)
            }
            None => error_response(&ApiError::plain_not_found()),
        },
        ["apis", g, v] => resource_list(g, v).map_or_else(
            || error_response(&ApiError::plain_not_found()),
            |v| json_response(200, &v),
        ),
        ["openapi", "v3"] => json_response(200, &openapi_v3_index(&st.types)),
        ["openapi", "v3", rest @ ..] => {
            let gv = rest.join("/");
            let (group, version) = match rest {
                ["api", v] => ("", *v),
                ["apis", g, v] => (*g, *v),
                _ => return error_response(&ApiError::plain_not_found()),
            };
            let types: Vec<&ResourceType> = st
                .types
                .iter()
                .filter(|t| t.group == group && t.serves(version))
                .collect();
            if types.is_empty() {
                return error_response(&ApiError::plain_not_found());
            }
            let _ = gv;
            json_response(200, &openapi_v3_doc(&types, version))
        }
        _ => error_response(&ApiError::plain_not_found()),
    }
}

// ---- OpenAPI v3 ---------------------------------------------------------------------------------

fn group_versions(types: &[ResourceType]) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for t in types {
        for v in &t.versions {
            let gv = (t.group.clone(), v.clone());
            if !out.contains(&gv) {
                out.push(gv);
            }
        }
    }
    out
}

fn fnv(s: &str) -> String {
    let mut h: u64 = 0xcbf29ce484222325;
    for b in s.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x100000001b3);
    }
    format!("{h:016X}")
}

/// `/openapi/v3`: one entry per group-version, as the real server lists them. kubectl reads it
/// to learn that PATCH supports `fieldValidation` (server-side validation), without which
/// `kubectl apply` falls back to client-side validation against `/openapi/v2`.
fn openapi_v3_index(types: &[ResourceType]) -> Value {
    let mut paths = serde_json::Map::new();
    for (g, v) in group_versions(types) {
        let key = if g.is_empty() {
            format!("api/{v}")
        } else {
            format!("apis/{g}/{v}")
        };
        let sig: Vec<String> = types
            .iter()
            .filter(|t| t.group == g && t.serves(&v))
            .map(|t| format!("{t:?}"))
            .collect();
        paths.insert(
            key.clone(),
            json!({"serverRelativeURL": format!("/openapi/v3/{key}?hash={}", fnv(&sig.join(";")))}),
        );
    }
    json!({"paths": paths})
}

/// A minimal OpenAPI v3 document for a group-version: each resource's item path with a PATCH
/// operation tagged with its group-version-kind and the usual query parameters. No schemas:
/// clients fall back to treating custom resources as unstructured (JSON merge patch).
fn openapi_v3_doc(types: &[&ResourceType], version: &str) -> Value {
    let mut paths = serde_json::Map::new();
    let param = |n: &str| json!({"name": n, "in": "query", "schema": {"type": "string", "uniqueItems": true}});
    for t in types {
        let base = if t.group.is_empty() {
            format!("/api/{version}")
        } else {
            format!("/apis/{}/{version}", t.group)
        };
        let item = if t.namespaced {
            format!("{base}/namespaces/{{namespace}}/{}/{{name}}", t.plural)
        } else {
            format!("{base}/{}/{{name}}", t.plural)
        };
        let gvk = json!({"group": t.group, "version": version, "kind": t.kind});
        let op = |verb: &str, action: &str| {
            json!({
                "operationId": format!("{verb}{}", t.kind),
                "x-kubernetes-action": action,
                "x-kubernetes-group-version-kind": gvk,
                "parameters": [param("dryRun"), param("fieldManager"), param("fieldValidation"), param("force")],
                "responses": {"200": {"description": "OK"}}
            })
        };
        paths.insert(
            item,
            json!({"patch": op("patch", "patch"), "put": op("replace", "put")}),
        );
    }
    json!({
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": "v1.32.0-fakeapi"},
        "paths": paths,
        "components": {"schemas": {}}
    })
}

// ---- resources ------------------------------------------------------------------------------

fn field_manager(r: &Req) -> String {
    match r.query.get("fieldManager") {
        Some(m) => m.clone(),
        None => r
            .user_agent
            .as_deref()
            .map(|ua| ua.split('/').next().unwrap_or(ua).to_string())
            .unwrap_or_else(|| "unknown".into()),
    }
}

fn parse_body(r: &Req) -> ApiResult<Value> {
    if r.body.is_empty() {
        return Err(ApiError::bad_request("the body of the request is empty"));
    }
    if let Ok(v) = serde_json::from_slice::<Value>(&r.body) {
        return Ok(v);
    }
    if r.content_type.contains("yaml")
        && let Ok(text) = std::str::from_utf8(&r.body)
        && let Ok(v) = serde_saphyr::from_str::<Value>(text)
    {
        return Ok(v);
    }
    if r.content_type.contains("protobuf") || r.content_type.contains("cbor") {
        // The real server decodes these; this one answers 415 like a server without them.
        return Err(ApiError::unsupported_media(format!(
            "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml (got {:?})",
            r.content_type
        )));
    }
    Err(ApiError::bad_request(format!(
        "the body of the request is not valid JSON or YAML (content-type {:?})",
        r.content_type
    )))
}

async fn resource_request(
    shared: &Arc<Shared>,
    r: &Req,
    info: &Info,
    drop_watch_after: Option<usize>,
    stop: watch::Receiver<bool>,
) -> ApiResult<Response<Body>> {
    let group = info.group.as_deref().unwrap_or("");
    let version = info.version.as_deref().unwrap_or("");
    let plural = info.resource.as_deref().unwrap_or("");
    let rt = shared
        .lock()
        .type_for(group, version, plural)
        .ok_or_else(ApiError::plain_not_found)?;
    if rt.namespaced != info.namespace.is_some() {
        let all_ns =
            rt.namespaced && matches!(info.verb.as_str(), "list" | "watch" | "deletecollection");
        if !all_ns {
            return Err(ApiError::plain_not_found());
        }
    }
    match info.subresource.as_deref() {
        None => {}
        Some("status")
            if rt.status_subresource
                && matches!(info.verb.as_str(), "get" | "update" | "patch") => {}
        Some(_) => return Err(ApiError::plain_not_found()),
    }
    let ns = info.namespace.as_deref();
    let name = info.name.as_deref().unwrap_or("");
    let sub = info.subresource.as_deref();
    let table = r.accept.contains("as=Table");
    let labels = LabelSelector::parse(r.query.get("labelSelector").map_or("", String::as_str))
        .map_err(ApiError::bad_request)?;
    let mut fields = FieldSelector::parse(
        r.query.get("fieldSelector").map_or("", String::as_str),
        rt.custom,
    )
    .map_err(ApiError::bad_request)?;
    let dry_run = r.query.get("dryRun").is_some_and(|d| d == "All");
    let ctx = WriteCtx {
        manager: field_manager(r),
        dry_run,
        seed: false,
    };
    let ok = |code: u16, v: &Value| {
        if table {
            json_response(code, &to_table(&rt, version, v))
        } else {
            json_response(code, v)
        }
    };
    match info.verb.as_str() {
        "get" => {
            let obj = shared.lock().get(&rt, version, ns.unwrap_or(""), name)?;
            Ok(ok(200, &obj))
        }
        "list" => {
            let limit = r.query.get("limit").and_then(|l| l.parse().ok());
            let v = shared.lock().list(
                &rt,
                version,
                ns,
                &labels,
                &fields,
                limit,
                r.query.get("continue").map(String::as_str),
                r.query.get("resourceVersion").map(String::as_str),
            )?;
            Ok(ok(200, &v))
        }
        "watch" => {
            if let Some(n) = &info.name {
                fields = FieldSelector::parse(&format!("metadata.name={n}"), true)
                    .map_err(ApiError::bad_request)?;
            }
            Ok(start_watch(
                shared,
                r,
                &rt,
                version,
                ns,
                labels,
                fields,
                drop_watch_after,
                table,
                stop,
            ))
        }
        "create" => {
            let body = parse_body(r)?;
            let obj = shared.lock().create(&rt, version, ns, body, &ctx, None)?;
            Ok(ok(201, &obj))
        }
        "update" => {
            let body = parse_body(r)?;
            let obj =
                shared
                    .lock()
                    .update(&rt, version, ns.unwrap_or(""), name, sub, body, &ctx)?;
            Ok(ok(200, &obj))
        }
        "patch" => {
            let ct = r.content_type.split(';').next().unwrap_or("").trim();
            let ptype = match ct {
                "application/json-patch+json" => PatchType::Json,
                "application/merge-patch+json" => PatchType::Merge,
                "application/strategic-merge-patch+json" => PatchType::Strategic,
                "application/apply-patch+yaml"
                | "application/apply-patch+json"
                | "application/apply-patch+cbor" => PatchType::Apply,
                other => {
                    return Err(ApiError::unsupported_media(format!(
                        "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml (got {other:?})"
                    )));
                }
            };
            let force = r.query.get("force").is_some_and(|f| f == "true");
            if force && ptype != PatchType::Apply {
                return Err(ApiError::bad_request(
                    "force is only allowed for apply patches",
                ));
            }
            let ctx = if ptype == PatchType::Apply {
                WriteCtx {
                    manager: r.query.get("fieldManager").cloned().unwrap_or_default(),
                    ..ctx
                }
            } else {
                ctx
            };
            let (obj, created) = shared.lock().patch(
                &rt,
                version,
                ns.unwrap_or(""),
                name,
                sub,
                ptype,
                &r.body,
                &ctx,
                force,
            )?;
            Ok(ok(if created { 201 } else { 200 }, &obj))
        }
        "delete" | "deletecollection" => {
            let mut opts = DeleteOpts {
                dry_run,
                ..Default::default()
            };
            if !r.body.is_empty() {
                let b: Value = serde_json::from_slice(&r.body)
                    .map_err(|e| ApiError::bad_request(format!("invalid DeleteOptions: {e}")))?;
                opts.propagation = b
                    .get("propagationPolicy")
                    .and_then(Value::as_str)
                    .map(str::to_string);
                if b.get("orphanDependents").and_then(Value::as_bool) == Some(true) {
                    opts.propagation = Some("Orphan".into());
                }
                opts.precondition_uid = b
                    .pointer("/preconditions/uid")
                    .and_then(Value::as_str)
                    .map(str::to_string);
                opts.precondition_rv = b
                    .pointer("/preconditions/resourceVersion")
                    .and_then(Value::as_str)
                    .map(str::to_string);
                if b.get("dryRun")
                    .and_then(Value::as_array)
                    .is_some_and(|a| a.iter().any(|d| d == "All"))
                {
                    opts.dry_run = true;
                }
            }
            if let Some(p) = r.query.get("propagationPolicy") {
                opts.propagation = Some(p.clone());
            }
            if r.query.get("orphanDependents").is_some_and(|o| o == "true") {
                opts.propagation = Some("Orphan".into());
            }
            if let Some(p) = &opts.propagation
                && !["Background", "Foreground", "Orphan"].contains(&p.as_str())
            {
                return Err(ApiError::bad_request(format!(
                    "invalid propagationPolicy: {p}"
                )));
            }
            let mut st = shared.lock();
            let v = if info.verb == "delete" {
                st.delete(&rt, version, ns.unwrap_or(""), name, &opts)?
            } else {
                st.delete_collection(&rt, version, ns, &labels, &fields, &opts)?
            };
            Ok(json_response(200, &v))
        }
        other => Err(ApiError::method_not_allowed(format!(
            "verb {other} is not supported"
        ))),
    }
}

#[allow(clippy::too_many_arguments)]
fn start_watch(
    shared: &Arc<Shared>,
    r: &Req,
    rt: &ResourceType,
    version: &str,
    ns: Option<&str>,
    labels: LabelSelector,
    fields: FieldSelector,
    drop_after: Option<usize>,
    table: bool,
    mut stop: watch::Receiver<bool>,
) -> Response<Body> {
    let (etx, mut erx) = mpsc::unbounded_channel::<(u64, Value)>();
    let (btx, brx) = mpsc::channel::<Bytes>(64);
    let bookmarks = r
        .query
        .get("allowWatchBookmarks")
        .is_some_and(|b| b == "true");
    let timeout = r
        .query
        .get("timeoutSeconds")
        .and_then(|t| t.parse::<u64>().ok())
        .map_or(Duration::from_secs(1800), Duration::from_secs);
    let started = shared.lock().watch(
        rt,
        version,
        ns,
        labels,
        fields,
        r.query.get("resourceVersion").map(String::as_str),
        etx,
    );
    let shared = shared.clone();
    let rt = rt.clone();
    let version = version.to_string();
    let (rt2, version2) = (rt.clone(), version.clone());
    let line = move |v: &Value| {
        let mut v = v.clone();
        if table
            && let Some(o) = v.get("object").cloned()
            && v["type"] != "ERROR"
            && v["type"] != "BOOKMARK"
        {
            v["object"] = to_table(&rt2, &version2, &o);
        }
        let mut b = serde_json::to_vec(&v).expect("json");
        b.push(b'\n');
        Bytes::from(b)
    };
    tokio::spawn(async move {
        let (id, initial) = match started {
            Ok(x) => x,
            Err(e) => {
                let _ = btx
                    .send(line(&json!({"type": "ERROR", "object": e.to_status()})))
                    .await;
                return;
            }
        };
        let mut sent = 0usize;
        let deadline = tokio::time::Instant::now() + timeout;
        let dropped = |sent: usize| drop_after.is_some_and(|n| sent >= n);
        let mut alive = !dropped(sent);
        for ev in &initial {
            if !alive || btx.send(line(ev)).await.is_err() {
                alive = false;
                break;
            }
            sent += 1;
            alive = !dropped(sent);
        }
        let interval = shared.bookmark_interval;
        let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + interval, interval);
        if alive {
            loop {
                tokio::select! {
                    ev = erx.recv() => {
                        let Some((_, ev)) = ev else { break };
                        if btx.send(line(&ev)).await.is_err() { break }
                        sent += 1;
                        if dropped(sent) { break }
                    }
                    _ = tick.tick(), if bookmarks => {
                        // Everything up to `rv` is already queued to this watcher: send it first.
                        let rv = shared.lock().rv;
                        let mut ok = true;
                        while let Ok((_, ev)) = erx.try_recv() {
                            if btx.send(line(&ev)).await.is_err() { ok = false; break }
                            sent += 1;
                        }
                        let bm = json!({"type": "BOOKMARK", "object": {
                            "kind": rt.kind, "apiVersion": rt.api_version(&version),
                            "metadata": {"resourceVersion": rv.to_string()}
                        }});
                        if !ok || dropped(sent) || btx.send(line(&bm)).await.is_err() { break }
                    }
                    _ = tokio::time::sleep_until(deadline) => break,
                    _ = btx.closed() => break,
                    _ = stop.changed() => break,
                }
            }
        }
        shared.lock().unwatch(id);
    });
    let stream = futures_util::stream::unfold(brx, |mut rx| async move {
        rx.recv()
            .await
            .map(|b| (Ok::<_, Infallible>(Frame::data(b)), rx))
    });
    let mut resp = Response::new(BodyExt::boxed(StreamBody::new(stream)));
    resp.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    resp.headers_mut()
        .insert("Transfer-Encoding", HeaderValue::from_static("chunked"));
    resp
}

// ---- Table output (kubectl get) ---------------------------------------------------------------

fn age(ts: Option<&str>) -> String {
    let Some(t) = ts.and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok()) else {
        return "<unknown>".into();
    };
    let secs = (chrono::Utc::now() - t.with_timezone(&chrono::Utc))
        .num_seconds()
        .max(0);
    match secs {
        s if s < 120 => format!("{s}s"),
        s if s < 7200 => format!("{}m", s / 60),
        s if s < 172800 => format!("{}h", s / 3600),
        s => format!("{}d", s / 86400),
    }
}

/// A simple JSONPath (`.a.b`, `.a[0].b`, `.a[?(@.type=="Ready")].status`) for printer columns.
fn json_path(obj: &Value, path: &str) -> Option<Value> {
    let mut cur = vec![obj.clone()];
    let mut rest = path
        .trim()
        .trim_start_matches('{')
        .trim_end_matches('}')
        .trim_start_matches('$');
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix('.') {
            let end = r.find(['.', '[']).unwrap_or(r.len());
            let key = &r[..end];
            cur = cur.iter().filter_map(|c| c.get(key).cloned()).collect();
            rest = &r[end..];
        } else if let Some(r) = rest.strip_prefix('[') {
            let end = r.find(']')?;
            let sel = &r[..end];
            rest = &r[end + 1..];
            let mut next = Vec::new();
            for c in &cur {
                let Some(a) = c.as_array() else { continue };
                if let Some(f) = sel.strip_prefix("?(@.").and_then(|f| f.strip_suffix(')')) {
                    let (k, v) = f.split_once("==")?;
                    let v = v.trim().trim_matches(|c| c == '"' || c == '\'');
                    next.extend(
                        a.iter()
                            .filter(|e| e.get(k.trim()).and_then(Value::as_str) == Some(v))
                            .cloned(),
                    );
                } else if sel == "*" {
                    next.extend(a.iter().cloned());
                } else {
                    let i: usize = sel.parse().ok()?;
                    next.extend(a.get(i).cloned());
                }
            }
            cur = next;
        } else {
            return None;
        }
    }
    cur.into_iter().next()
}

fn cell(v: Option<Value>, ty: &str) -> Value {
    match v {
        None | Some(Value::Null) if matches!(ty, "integer" | "number" | "boolean") => Value::Null,
        None | Some(Value::Null) => json!("<none>"),
        Some(Value::String(s)) if ty == "date" => json!(age(Some(&s))),
        Some(v) => v,
    }
}

/// A `meta.k8s.io/v1` Table for an object or a list, as the real server answers `kubectl get`:
/// Name, the CRD's additionalPrinterColumns (or Age), and the objects as partial metadata.
fn to_table(rt: &ResourceType, version: &str, v: &Value) -> Value {
    if v.get("kind").and_then(Value::as_str) == Some("Status") {
        return v.clone();
    }
    let cols = rt.columns(version);
    let mut defs = vec![
        json!({"name": "Name", "type": "string", "format": "name", "description": "Name must be unique within a namespace.", "priority": 0}),
    ];
    if cols.is_empty() {
        defs.push(json!({"name": "Age", "type": "string", "format": "", "description": "CreationTimestamp", "priority": 0}));
    } else {
        for c in cols {
            defs.push(json!({
                "name": c.get("name").cloned().unwrap_or(json!("")),
                "type": c.get("type").cloned().unwrap_or(json!("string")),
                "format": c.get("format").cloned().unwrap_or(json!("")),
                "description": c.get("description").cloned().unwrap_or(json!("")),
                "priority": c.get("priority").cloned().unwrap_or(json!(0)),
            }));
        }
    }
    let row = |o: &Value| {
        let mut cells = vec![o.pointer("/metadata/name").cloned().unwrap_or(json!(""))];
        if cols.is_empty() {
            cells.push(json!(age(o
                .pointer("/metadata/creationTimestamp")
                .and_then(Value::as_str))));
        } else {
            for c in cols {
                let ty = c.get("type").and_then(Value::as_str).unwrap_or("string");
                let p = c.get("jsonPath").and_then(Value::as_str).unwrap_or("");
                cells.push(cell(json_path(o, p), ty));
            }
        }
        let meta = o.get("metadata").cloned().unwrap_or(json!({}));
        json!({"cells": cells, "object": {
            "kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": meta
        }})
    };
    let (rows, meta) = match v.get("items").and_then(Value::as_array) {
        Some(items) => (
            items.iter().map(row).collect::<Vec<_>>(),
            v.get("metadata").cloned().unwrap_or(json!({})),
        ),
        None => (
            vec![row(v)],
            json!({"resourceVersion": v.pointer("/metadata/resourceVersion").cloned().unwrap_or(json!(""))}),
        ),
    };
    json!({"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": meta, "columnDefinitions": defs, "rows": rows})
}

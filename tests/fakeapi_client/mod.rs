//! A small blocking HTTP client for the fake API server tests (ureq, statuses not treated as
//! errors), and shared fixtures.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read};
use std::time::Duration;

use serde_json::Value;

pub struct Resp {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Value,
    pub text: String,
}

impl Resp {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

pub fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(20)))
        .build()
        .into()
}

fn finish(r: Result<ureq::http::Response<ureq::Body>, ureq::Error>) -> Resp {
    let mut r = r.expect("request");
    let status = r.status().as_u16();
    let headers = r
        .headers()
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_str().unwrap_or("").to_string()))
        .collect();
    let text = r.body_mut().read_to_string().unwrap_or_default();
    let body = serde_json::from_str(&text).unwrap_or(Value::Null);
    Resp {
        status,
        headers,
        body,
        text,
    }
}

pub fn get(base: &str, path: &str) -> Resp {
    finish(agent().get(format!("{base}{path}")).call())
}

pub fn get_accept(base: &str, path: &str, accept: &str) -> Resp {
    finish(
        agent()
            .get(format!("{base}{path}"))
            .header("Accept", accept)
            .call(),
    )
}

pub fn send(base: &str, method: &str, path: &str, content_type: &str, body: &str) -> Resp {
    let url = format!("{base}{path}");
    let a = agent();
    let r = match method {
        "POST" => a.post(url).content_type(content_type).send(body),
        "PUT" => a.put(url).content_type(content_type).send(body),
        "PATCH" => a.patch(url).content_type(content_type).send(body),
        "DELETE" => a
            .delete(url)
            .force_send_body()
            .content_type(content_type)
            .send(body),
        m => panic!("method {m}"),
    };
    finish(r)
}

pub fn post(base: &str, path: &str, v: &Value) -> Resp {
    send(base, "POST", path, "application/json", &v.to_string())
}

pub fn put(base: &str, path: &str, v: &Value) -> Resp {
    send(base, "PUT", path, "application/json", &v.to_string())
}

pub fn patch(base: &str, path: &str, ty: &str, body: &str) -> Resp {
    send(base, "PATCH", path, ty, body)
}

pub fn delete(base: &str, path: &str) -> Resp {
    finish(agent().delete(format!("{base}{path}")).call())
}

/// A watch stream: one JSON event per `next()`.
pub struct Watch {
    lines: std::io::Lines<BufReader<Box<dyn Read + Send>>>,
    pub status: u16,
    /// Why the stream ended, when it did not end cleanly (the client's own timeout, a
    /// connection cut).
    pub error: Option<String>,
}

impl Watch {
    pub fn next(&mut self) -> Option<Value> {
        match self.lines.next()? {
            Ok(line) => Some(serde_json::from_str(&line).expect("event JSON")),
            Err(e) => {
                self.error = Some(e.to_string());
                None
            }
        }
    }

    /// True when the server ended the stream: a clean end of the response, not the client
    /// giving up.
    pub fn ended_by_server(&mut self) -> bool {
        self.next().is_none() && self.error.is_none()
    }
}

pub fn watch(base: &str, path: &str) -> Watch {
    let a: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        // A guard against a hang: the tests end their watches with timeoutSeconds or faults.
        .timeout_global(Some(Duration::from_secs(120)))
        .build()
        .into();
    let r = a.get(format!("{base}{path}")).call().expect("watch");
    let status = r.status().as_u16();
    let reader: Box<dyn Read + Send> = Box::new(r.into_body().into_reader());
    Watch {
        lines: BufReader::new(reader).lines(),
        status,
        error: None,
    }
}

pub fn cm(ns: &str, name: &str, labels: Value) -> Value {
    serde_json::json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": ns, "labels": labels},
        "data": {"k": "v"}
    })
}

/// The Flux HelmRelease CRD of the testdata.
pub fn hr_crd_path() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("crds/flux/helm.toolkit.fluxcd.io_helmreleases.yaml")
}

/// The real Flux HelmRelease CRD (crds/flux).
pub fn helmrelease_crd() -> Value {
    let path = hr_crd_path();
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_saphyr::from_str(&text).expect("CRD YAML")
}

pub fn hr(ns: &str, name: &str) -> Value {
    serde_json::json!({
        "apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"interval": "5m", "chart": {"spec": {"chart": "podinfo", "sourceRef": {"kind": "HelmRepository", "name": "podinfo"}}}}
    })
}

pub const HR_PATH: &str = "/apis/helm.toolkit.fluxcd.io/v2";

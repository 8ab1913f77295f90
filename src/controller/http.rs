//! The controller's HTTP endpoint:
//! - `/metrics`, Prometheus: reconciles and their duration, writes by verb (apply, status,
//!   finalizer, delete, event, lease), managed objects by kind, leadership;
//! - `/healthz` and `/livez`: 200 once the configuration is loaded and the process works,
//!   503 "starting" before;
//! - `/readyz`: 200 when connected (and, when leading, the caches synced), 503 otherwise;
//! - 404 for any other path.

use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;

use super::metrics::Metrics;

/// What `/healthz` and `/readyz` answer from.
#[derive(Default)]
pub struct Health {
    /// Alive: the configuration is loaded and the process works (connecting, waiting for the
    /// lease or reconciling).
    pub live: AtomicBool,
    /// Ready to serve: connected, and (when leading) caches synced.
    pub ready: AtomicBool,
}

pub async fn serve(
    listener: TcpListener,
    metrics: Arc<Metrics>,
    health: Arc<Health>,
    mut stop: tokio::sync::watch::Receiver<bool>,
) {
    loop {
        let accepted = tokio::select! {
            a = listener.accept() => a,
            _ = stop.changed() => return,
        };
        let Ok((stream, _)) = accepted else { continue };
        let metrics = metrics.clone();
        let health = health.clone();
        tokio::spawn(async move {
            let service = service_fn(move |req: Request<Incoming>| {
                let metrics = metrics.clone();
                let health = health.clone();
                async move { Ok::<_, Infallible>(answer(&req, &metrics, &health)) }
            });
            let _ = http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

fn answer(req: &Request<Incoming>, metrics: &Metrics, health: &Health) -> Response<Full<Bytes>> {
    let text = |code: StatusCode, ctype: &'static str, body: String| {
        let mut r = Response::new(Full::new(Bytes::from(body)));
        *r.status_mut() = code;
        r.headers_mut().insert(
            hyper::header::CONTENT_TYPE,
            hyper::header::HeaderValue::from_static(ctype),
        );
        r
    };
    const PLAIN: &str = "text/plain; charset=utf-8";
    match req.uri().path() {
        "/metrics" => text(
            StatusCode::OK,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
            metrics.encode(),
        ),
        "/healthz" | "/livez" => {
            if health.live.load(Ordering::Relaxed) {
                text(StatusCode::OK, PLAIN, "ok\n".into())
            } else {
                text(StatusCode::SERVICE_UNAVAILABLE, PLAIN, "starting\n".into())
            }
        }
        "/readyz" => {
            if health.ready.load(Ordering::Relaxed) {
                text(StatusCode::OK, PLAIN, "ok\n".into())
            } else {
                text(StatusCode::SERVICE_UNAVAILABLE, PLAIN, "not ready\n".into())
            }
        }
        _ => text(StatusCode::NOT_FOUND, PLAIN, "not found\n".into()),
    }
}

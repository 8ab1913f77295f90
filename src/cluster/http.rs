//! The HTTP edge of the client: the request log of `-v 6` (and headers at `-v 7`), and
//! transport failures worded as kubectl words them ("connection refused", "timed out",
//! the TLS problem).

use std::error::Error as StdError;
use std::fmt::Display;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Instant;

/// The target of the request lines (the CLI's `-v` turns it on).
pub const TARGET: &str = "kubectl_ksm::http";

/// A layer that logs every request: method, URL, status and time, as kubectl's -v=6.
#[derive(Debug, Clone)]
pub struct LogLayer {
    /// The API server's URL, to print absolute URLs (requests carry only the path here).
    pub server: String,
}

impl<S> tower::Layer<S> for LogLayer {
    type Service = Log<S>;

    fn layer(&self, inner: S) -> Log<S> {
        Log {
            inner,
            server: self.server.trim_end_matches('/').to_string(),
        }
    }
}

#[derive(Debug, Clone)]
pub struct Log<S> {
    inner: S,
    server: String,
}

/// Header values never printed.
const SECRET_HEADERS: &[&str] = &["authorization", "proxy-authorization", "cookie"];

impl<S, ReqBody, ResBody> tower::Service<http::Request<ReqBody>> for Log<S>
where
    S: tower::Service<http::Request<ReqBody>, Response = http::Response<ResBody>>,
    S::Future: Send + 'static,
    S::Error: Display,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Self::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: http::Request<ReqBody>) -> Self::Future {
        let method = req.method().clone();
        let url = if req.uri().scheme().is_some() {
            req.uri().to_string()
        } else {
            format!("{}{}", self.server, req.uri())
        };
        if tracing::enabled!(target: TARGET, tracing::Level::TRACE) {
            let headers: Vec<String> = req
                .headers()
                .iter()
                .map(|(k, v)| {
                    let v = if SECRET_HEADERS.contains(&k.as_str()) {
                        "<masked>"
                    } else {
                        v.to_str().unwrap_or("<binary>")
                    };
                    format!("{k}: {v}")
                })
                .collect();
            tracing::trace!(target: TARGET, "{method} {url} request headers: {}", headers.join(", "));
        }
        let start = Instant::now();
        let fut = self.inner.call(req);
        Box::pin(async move {
            let result = fut.await;
            let ms = start.elapsed().as_millis();
            match &result {
                Ok(resp) => {
                    let status = resp.status();
                    tracing::debug!(
                        target: TARGET,
                        "{method} {url} {} {} in {ms} milliseconds",
                        status.as_u16(),
                        status.canonical_reason().unwrap_or("")
                    );
                }
                Err(e) => {
                    tracing::debug!(target: TARGET, "{method} {url} failed in {ms} milliseconds: {e}")
                }
            }
            result
        })
    }
}

/// Every message of an error's chain, outermost first.
fn chain(e: &(dyn StdError + 'static)) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = Some(e);
    while let Some(err) = cur {
        out.push(err.to_string());
        cur = err.source();
    }
    out
}

/// The io::Error kinds in an error's chain.
fn io_kinds(e: &(dyn StdError + 'static)) -> Vec<std::io::ErrorKind> {
    let mut out = Vec::new();
    let mut cur = Some(e);
    while let Some(err) = cur {
        if let Some(io) = err.downcast_ref::<std::io::Error>() {
            out.push(io.kind());
        }
        cur = err.source();
    }
    out
}

/// `host:port` of a server URL (kubectl names the server that way).
pub fn host_port(server: &str) -> String {
    let rest = server.split_once("://").map_or(server, |(_, r)| r);
    let host = rest.split('/').next().unwrap_or(rest);
    if host.contains(':') && !host.ends_with(']') {
        host.to_string()
    } else if server.starts_with("http://") {
        format!("{host}:80")
    } else {
        format!("{host}:443")
    }
}

/// A transport failure (no HTTP answer) in kubectl's words, or None for other errors.
pub fn transport_failure(
    server: &str,
    e: &(dyn StdError + 'static),
    timeout: Option<std::time::Duration>,
) -> Option<String> {
    let messages = chain(e);
    let all = messages.join(": ").to_ascii_lowercase();
    let kinds = io_kinds(e);
    let hp = host_port(server);
    let has = |k: std::io::ErrorKind| kinds.contains(&k);
    if has(std::io::ErrorKind::ConnectionRefused) || all.contains("connection refused") {
        return Some(format!(
            "The connection to the server {hp} was refused - did you specify the right host or port?"
        ));
    }
    if has(std::io::ErrorKind::TimedOut)
        || all.contains("timed out")
        || all.contains("deadline has elapsed")
        || all.contains("timeout")
    {
        let after = timeout.map_or(String::new(), |t| {
            format!(" after {}", crate::api::duration::format_coarse(t))
        });
        return Some(format!(
            "Unable to connect to the server {hp}: timed out{after} (a slow or unreachable API server; --request-timeout sets the limit)"
        ));
    }
    let tls = |what: &str| {
        Some(format!(
            "Unable to connect to the server {hp}: tls: failed to verify certificate: x509: {what}"
        ))
    };
    if all.contains("unknownissuer") || all.contains("unknown issuer") {
        return tls(
            "certificate signed by unknown authority (is the kubeconfig's certificate-authority-data the cluster's CA?)",
        );
    }
    if all.contains("not valid for name") || all.contains("notvalidforname") {
        let detail = messages
            .iter()
            .find(|m| m.contains("not valid for name"))
            .map_or(String::new(), |m| format!(" ({m})"));
        return tls(&format!(
            "certificate is not valid for the server's name {hp}{detail}"
        ));
    }
    if all.contains("certificate expired") || all.contains("expired") {
        return tls("certificate has expired or is not yet valid");
    }
    if all.contains("not valid yet") || all.contains("notvalidyet") {
        return tls("certificate has expired or is not yet valid");
    }
    if all.contains("corrupt message") || all.contains("invalidcontenttype") {
        return Some(format!(
            "Unable to connect to the server {hp}: tls: first record does not look like a TLS handshake (the server speaks plain HTTP: use an http:// URL?)"
        ));
    }
    if all.contains("invalid peer certificate") || all.contains("handshake") {
        let detail = messages.last().cloned().unwrap_or_default();
        return Some(format!(
            "Unable to connect to the server {hp}: tls: {detail}"
        ));
    }
    if all.contains("dns error") || all.contains("failed to lookup address") {
        let host = hp.rsplit_once(':').map_or(hp.as_str(), |(h, _)| h);
        return Some(format!(
            "Unable to connect to the server {hp}: dial tcp: lookup {host}: no such host"
        ));
    }
    if has(std::io::ErrorKind::ConnectionReset) || has(std::io::ErrorKind::UnexpectedEof) {
        return Some(format!(
            "Unable to connect to the server {hp}: the connection was closed by the server"
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct Wrap(String, Option<Box<dyn StdError + 'static>>);
    impl std::fmt::Display for Wrap {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str(&self.0)
        }
    }
    impl StdError for Wrap {
        fn source(&self) -> Option<&(dyn StdError + 'static)> {
            self.1.as_deref()
        }
    }

    fn wrapped(inner: impl StdError + 'static) -> Wrap {
        Wrap("client error (Connect)".into(), Some(Box::new(inner)))
    }

    #[test]
    fn words_failures_as_kubectl() {
        let refused = wrapped(std::io::Error::from(std::io::ErrorKind::ConnectionRefused));
        assert_eq!(
            transport_failure("https://127.0.0.1:6443/", &refused, None).unwrap(),
            "The connection to the server 127.0.0.1:6443 was refused - did you specify the right host or port?"
        );
        let timeout = wrapped(std::io::Error::from(std::io::ErrorKind::TimedOut));
        let t = transport_failure(
            "https://10.0.0.1",
            &timeout,
            Some(std::time::Duration::from_secs(2)),
        )
        .unwrap();
        assert!(t.contains("10.0.0.1:443: timed out after 2s"), "{t}");
        let tls = wrapped(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "invalid peer certificate: UnknownIssuer",
        ));
        assert!(
            transport_failure("https://x:1", &tls, None)
                .unwrap()
                .contains("x509: certificate signed by unknown authority")
        );
        let plain = wrapped(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "received corrupt message of type InvalidContentType",
        ));
        assert!(
            transport_failure("https://x:1", &plain, None)
                .unwrap()
                .contains("first record does not look like a TLS handshake")
        );
        assert_eq!(
            transport_failure("https://x:1", &Wrap("other".into(), None), None),
            None
        );
        assert_eq!(host_port("http://h"), "h:80");
        assert_eq!(host_port("https://[::1]:6443/x"), "[::1]:6443");
    }
}

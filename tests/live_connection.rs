//! Connection failures worded as kubectl words them: a refused connection, a server that does
//! not answer in time, and the TLS problems (unknown authority, a certificate for another
//! name, a server that does not speak TLS). One line each, exit code 2.

mod fakeapi;

use std::io::Read;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Arc;

use fakeapi::FakeApiServer;

fn tls_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/tls")
}

struct Dir(PathBuf);

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn dir(tag: &str) -> Dir {
    let d = std::env::temp_dir().join(format!("ksm-conn-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    Dir(d)
}

/// A kubeconfig for `server`, trusting `ca` when given.
fn kubeconfig(dir: &Dir, server: &str, ca: Option<&Path>) -> PathBuf {
    let ca = ca.map_or(String::new(), |p| {
        format!("    certificate-authority: {}\n", p.display())
    });
    let text = format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: {server}\n{ca}\
         users:\n- name: u\n  user:\n    token: t\ncontexts:\n- name: x\n  context:\n    cluster: c\n    user: u\n\
         current-context: x\n"
    );
    let path = dir.0.join("kubeconfig");
    std::fs::write(&path, text).unwrap();
    path
}

fn doctor(kubeconfig: &Path, extra: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kubectl-ksm"))
        .args(["doctor", "-A", "--kubeconfig"])
        .arg(kubeconfig)
        .args(extra)
        .env_clear()
        .output()
        .unwrap()
}

fn one_error_line(out: &Output) -> String {
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("error: "), "{err}");
    err
}

/// A TLS server with a certificate for `not-this-host`, signed by testdata/tls/ca.pem: it
/// completes no request, the handshake is what the tests are about.
fn tls_server() -> (String, tokio::runtime::Runtime) {
    use rustls_pki_types::pem::PemObject;
    use rustls_pki_types::{CertificateDer, PrivateKeyDer};
    let certs: Vec<CertificateDer> = CertificateDer::pem_file_iter(tls_dir().join("server.pem"))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let key = PrivateKeyDer::from_pem_file(tls_dir().join("server.key")).unwrap();
    let config = tokio_rustls::rustls::ServerConfig::builder()
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let listener = rt
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let addr = listener.local_addr().unwrap();
    rt.spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                return;
            };
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                let _ = acceptor.accept(stream).await;
            });
        }
    });
    (format!("https://{addr}"), rt)
}

#[test]
fn refused_connection() {
    let d = dir("refused");
    let server = FakeApiServer::start();
    let url = server.url();
    drop(server);
    let err = one_error_line(&doctor(&kubeconfig(&d, &url, None), &[]));
    let hp = url.trim_start_matches("http://");
    assert_eq!(
        err.trim_end(),
        format!(
            "error: The connection to the server {hp} was refused - did you specify the right host or port?"
        )
    );
}

#[test]
fn server_that_does_not_answer_times_out() {
    let d = dir("timeout");
    // Accepts connections and never answers.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for s in listener.incoming().flatten() {
            let mut s = s;
            let mut buf = [0u8; 1024];
            let _ = s.set_read_timeout(Some(std::time::Duration::from_millis(50)));
            let _ = s.read(&mut buf);
            held.push(s);
        }
    });
    let start = std::time::Instant::now();
    let out = doctor(
        &kubeconfig(&d, &format!("http://{addr}"), None),
        &["--request-timeout", "1"],
    );
    let err = one_error_line(&out);
    assert!(err.contains(&format!("{addr}: timed out")), "{err}");
    assert!(
        start.elapsed() < std::time::Duration::from_secs(30),
        "{:?}",
        start.elapsed()
    );
}

#[test]
fn tls_certificate_of_an_unknown_authority() {
    let d = dir("tls-unknown");
    let (url, _rt) = tls_server();
    let err = one_error_line(&doctor(&kubeconfig(&d, &url, None), &[]));
    assert!(
        err.contains(
            "tls: failed to verify certificate: x509: certificate signed by unknown authority"
        ),
        "{err}"
    );
}

#[test]
fn tls_certificate_for_another_name() {
    let d = dir("tls-name");
    let (url, _rt) = tls_server();
    let ca = tls_dir().join("ca.pem");
    let err = one_error_line(&doctor(&kubeconfig(&d, &url, Some(&ca)), &[]));
    assert!(
        err.contains("x509: certificate is not valid for the server's name 127.0.0.1:"),
        "{err}"
    );
    assert!(err.contains("not-this-host"), "{err}");
}

#[test]
fn https_to_a_server_without_tls() {
    let d = dir("tls-plain");
    let server = FakeApiServer::start();
    let url = server.url().replace("http://", "https://");
    let ca = tls_dir().join("ca.pem");
    let err = one_error_line(&doctor(&kubeconfig(&d, &url, Some(&ca)), &[]));
    assert!(
        err.contains("tls: first record does not look like a TLS handshake"),
        "{err}"
    );
}

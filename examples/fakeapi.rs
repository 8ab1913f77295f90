//! Runs the fake API server by hand:
//! `cargo run --example fakeapi -- KUBECONFIG_OUT [CRD.yaml…]`, then `KUBECONFIG=… kubectl …`.
//! Serves until stdin closes (Ctrl-D) and prints the request log on exit.

#[path = "../tests/fakeapi/mod.rs"]
mod fakeapi;

use std::io::Read;

fn main() {
    let mut args = std::env::args().skip(1);
    let kubeconfig = args.next().unwrap_or_else(|| "fakeapi.kubeconfig".into());
    let api = fakeapi::FakeApiServer::start();
    for path in args {
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        api.load_crd_yaml(&text);
    }
    api.write_kubeconfig(&kubeconfig);
    eprintln!(
        "serving {} (kubeconfig {kubeconfig}); Ctrl-D to stop",
        api.url()
    );
    let _ = std::io::stdin().read_to_end(&mut Vec::new());
    for r in api.requests() {
        eprintln!(
            "{} {} {}{} -> {}",
            r.verb,
            r.method,
            r.path,
            if r.query.is_empty() {
                String::new()
            } else {
                format!("?{}", r.query)
            },
            r.status
        );
    }
}

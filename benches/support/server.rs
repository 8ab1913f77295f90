//! The server a live benchmark runs against: the fake one (tests/fakeapi, on threads of the
//! bench) or the real one (support/real.rs). A bench file that uses it declares `mod fakeapi;`,
//! `mod real;` and `mod realapi;` beside `mod server;`.

use std::path::{Path, PathBuf};

use super::fakeapi::FakeApiServer;
use super::real::Real;

pub enum Server {
    Fake(FakeApiServer),
    Real(Box<Real>),
}

impl Server {
    /// A kubeconfig for the server's admin (the fake one's written at `path`).
    pub fn kubeconfig(&self, path: &Path) -> PathBuf {
        match self {
            Server::Fake(s) => {
                s.write_kubeconfig(path);
                path.to_path_buf()
            }
            Server::Real(r) => r.kubeconfig().to_path_buf(),
        }
    }

    /// Starts counting requests anew.
    pub fn clear_requests(&self) {
        match self {
            Server::Fake(s) => s.clear_requests(),
            Server::Real(r) => r.clear_requests(),
        }
    }
}

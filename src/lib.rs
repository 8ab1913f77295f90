//! kubectl-ksm: lint, evaluate, render and diagnose k0rdent Service Management (KSM) objects.
//!
//! The crate is split into a pure core and I/O at the edges:
//!
//! - [`diag`] and [`core`] are PURE: no Kubernetes client, no async runtime, no filesystem,
//!   no environment, no clock and no printing. Every subcommand (and the `run` controller)
//!   calls the same core functions, so `lint`, `eval` and `check` reach the same verdicts
//!   from files that kcm reaches in the cluster.
//! - [`output`] renders results into a passed-in writer, one renderer per format.
//! - [`cli`] parses arguments, reads inputs, calls the core and hands results to `output`.
#![warn(clippy::print_stdout, clippy::print_stderr)]

pub mod api;
pub mod cli;
pub mod cluster;
pub mod controller;
pub mod core;
pub mod diag;
pub mod output;

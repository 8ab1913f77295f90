//! kubectl-ksm: lint, evaluate, render and diagnose k0rdent Service Management (KSM) objects,
//! and run the Flux adapter (`kubectl ksm run`).
//!
//! The crate is a pure core with I/O at the edges (ARCHITECTURE.md draws the rooms and the
//! arrows allowed between them):
//!
//! - [`api`] is the vocabulary, below everything: the table of kinds, typed views of the kcm
//!   and Flux objects, the naming and labelling rules, names, label selectors and durations.
//! - [`diag`] and [`core`] are PURE: no Kubernetes client, no async runtime, no filesystem,
//!   no environment, no clock and no printing. Every subcommand and the `run` controller call
//!   the same core functions: `render` and `run` one translation, `doctor` one diagnosis on a
//!   live snapshot or a dump, `lint`/`eval`/`check` the verdicts kcm reaches.
//! - [`output`] renders results into a passed-in writer, one renderer per format.
//! - [`cli`] parses arguments, reads inputs, calls the core and hands results to `output`;
//!   [`cluster`] reads a live cluster; [`controller`] is `run`'s kube-runtime edge.
#![warn(clippy::print_stdout, clippy::print_stderr)]

pub mod api;
pub mod cli;
pub mod cluster;
pub mod controller;
pub mod core;
pub mod diag;
pub mod output;
#[cfg(test)]
mod testing;

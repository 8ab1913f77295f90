//! The vocabulary: every Kubernetes fact the tool relies on, each in one place, and no logic
//! beyond it.
//!
//! - [`kinds`]: the table of every kind read or written (group, version, kind, plural, scope);
//! - [`meta`], [`kcm`], [`flux`]: borrowed typed views of the objects (ServiceSet and its
//!   services, StateManagementProvider and its references, ServiceTemplate, ClusterDeployment
//!   and MultiClusterService, HelmRelease/Kustomization and their sources);
//! - [`sveltos`]: kcm's default provider: its adapter's facts, the Sveltos objects;
//! - [`listing`]: what `doctor` lists per provider (kinds, the groups that say it is
//!   installed, label-selected lists);
//! - [`crd`], [`lease`]: views of a CustomResourceDefinition and of a Lease;
//! - [`naming`]: the naming and labelling rules of the Flux adapter and of kcm;
//! - [`status`]: what the API server omits from the status of the built-in workload kinds;
//! - the primitives: [`names`] (DNS-1123 names, label syntax), [`selector`] (label
//!   selectors), [`duration`] (Go durations and the Flux duration pattern).
//!
//! Every other room reads an object's fields through these views: the JSON pointer helpers
//! of [`meta`] are private to `api` (ARCHITECTURE.md; `tests/architecture.rs` keeps the rest).
//!
//! PURE like the core, and below it: nothing here depends on the rest of the crate.

pub mod crd;
pub mod duration;
pub mod event;
pub mod flux;
pub mod kcm;
pub mod kinds;
pub mod lease;
pub mod listing;
pub mod meta;
pub mod names;
pub mod naming;
pub mod selector;
pub mod status;
pub mod sveltos;

pub use kinds::Kind;
pub use meta::{Object, ObjectId};

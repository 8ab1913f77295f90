//! The PURE core shared by every subcommand and by the `run` controller. Nothing here reads
//! files, the environment or the clock, or prints; objects are read through [`crate::api`].
//!
//! - [`cel`]: CEL compiled, type-checked and evaluated as kcm's cel-go does; [`readiness`]:
//!   an SMP's readiness rules and conditions; [`schema`] and [`crds`]: validation against the
//!   real CRDs; [`lint`]: the lint checks, one file each.
//! - [`render`]: the Flux translation of a ServiceSet (what `render` prints and `run`
//!   applies); [`derive`]: the ServiceSet kcm derives from a ClusterDeployment or a
//!   MultiClusterService; [`adapter`]: the adapter's plan (objects, status, finalizer,
//!   requeue); [`dependencies`]: kcm's rules for services' and MultiClusterServices'
//!   `dependsOn`; [`state`]: a Flux object (or, for kcm's default provider, a Sveltos
//!   ClusterSummary) mapped to a service state.
//! - [`profile`]: the Sveltos Profile kcm's own adapter writes for a ServiceSet of its
//!   default provider; [`provider`]: which translation a provider gets, in one place.
//! - [`doctor`]: the diagnosis of a snapshot, from provider to source; [`drift`]: rendered
//!   objects against live ones (`diff`).
//! - [`codes`]: the registry of every KSM code; [`objects`]: objects loaded from sources.

pub mod adapter;
pub mod cel;
pub mod codes;
pub mod crds;
pub mod dependencies;
pub mod derive;
pub mod doctor;
pub mod drift;
pub(crate) mod fxhash;
pub mod lint;
pub mod objects;
pub mod profile;
pub mod provider;
pub mod readiness;
pub mod render;
pub mod schema;
pub mod secret;
pub mod state;
pub mod threads;
pub mod timeline;
pub mod trace;
pub mod tree;
pub mod wait;

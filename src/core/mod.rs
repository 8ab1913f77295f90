//! The PURE core shared by every subcommand and by the `run` controller: CEL compilation,
//! checking and evaluation, readiness of a StateManagementProvider, schema validation and the
//! lint rules. Nothing here reads files, the environment or the clock, or prints.

pub mod adapter;
pub mod cel;
pub mod codes;
pub mod crds;
pub mod derive;
pub mod doctor;
pub mod lint;
pub mod objects;
pub mod readiness;
pub mod render;
pub mod schema;
pub mod state;

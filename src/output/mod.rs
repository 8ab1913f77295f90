//! Renderers: one per output format, each writing into a passed-in `&mut dyn Write`.

pub mod check;
pub mod diagnostics;
pub mod doctor;
pub mod eval;
pub mod render;
pub mod yaml;

//! Placeholder replaced by the lint throughput benchmark.
fn main() {}

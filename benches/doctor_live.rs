//! Replaced by the live doctor benchmark (fake API server, 2,000 ServiceSets x 5 services).
fn main() {}

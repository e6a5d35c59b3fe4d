//! Code shared by benchmarks through `#[path]`.

pub mod dispatch;

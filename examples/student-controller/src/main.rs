//! The seeds' Student controller (work in progress).

fn main() {}

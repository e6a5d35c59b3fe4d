//! Support crate for the end-to-end test binaries in `tests/tests/`.

//! The real-signal path of `shutdown_signal`, in its own test binary: the
//! process sends itself one SIGTERM (a second signal would exit the whole
//! test binary by design, so this file must keep exactly one test).
#![cfg(unix)]

use std::time::Duration;

use codegen_runtime::signal::shutdown_signal;

#[tokio::test]
async fn first_sigterm_triggers_the_shutdown_signal() {
    let shutdown = shutdown_signal();
    assert!(!shutdown.is_triggered());

    // SAFETY: kill(2) on our own pid with a signal whose handler
    // `shutdown_signal` has just installed; no memory is involved.
    let rc = unsafe { libc::kill(libc::getpid(), libc::SIGTERM) };
    assert_eq!(rc, 0, "kill failed");

    // Hang guard only.
    tokio::time::timeout(Duration::from_secs(30), shutdown.recv())
        .await
        .expect("SIGTERM did not trigger the shutdown signal");
    assert!(shutdown.is_triggered());
}

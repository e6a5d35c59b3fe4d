//! Graceful shutdown on SIGINT/SIGTERM, the counterpart of
//! sample-controller's `signals.SetupSignalHandler`: the first signal asks
//! the controller to stop (drain its work queue, stop informers), a second
//! one exits the process at once with code 1.

use std::sync::Arc;

use tokio::sync::watch;

/// A shutdown request shared by every part of a controller.
///
/// Cheap to clone; all clones observe the same trigger. Obtain the
/// process-wide one from [`shutdown_signal`], or a [`manual`](Self::manual)
/// one for tests and for embedding in a program that handles signals itself.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// use codegen_runtime::signal::ShutdownSignal;
///
/// let shutdown = ShutdownSignal::manual();
/// let worker = tokio::spawn({
///     let shutdown = shutdown.clone();
///     async move { shutdown.recv().await; "stopped" }
/// });
/// shutdown.trigger();
/// assert_eq!(worker.await.unwrap(), "stopped");
/// # }
/// ```
#[derive(Clone, Debug)]
pub struct ShutdownSignal {
    tx: Arc<watch::Sender<bool>>,
}

impl ShutdownSignal {
    /// A signal that only [`trigger`](Self::trigger) fires.
    pub fn manual() -> Self {
        Self { tx: Arc::new(watch::Sender::new(false)) }
    }

    /// Requests shutdown: every pending and future [`recv`](Self::recv)
    /// resolves. Triggering again does nothing.
    pub fn trigger(&self) {
        self.tx.send_if_modified(|triggered| !std::mem::replace(triggered, true));
    }

    /// Whether shutdown was requested.
    pub fn is_triggered(&self) -> bool {
        *self.tx.borrow()
    }

    /// Resolves once shutdown is requested (at once if it already was).
    ///
    /// Cancel-safe; may be awaited any number of times, from any clone.
    pub async fn recv(&self) {
        let mut rx = self.tx.subscribe();
        // The sender lives in `self`, so the channel cannot close here.
        let _ = rx.wait_for(|triggered| *triggered).await;
    }
}

/// Starts listening for SIGINT and SIGTERM (Ctrl-C elsewhere than Unix) and
/// returns the [`ShutdownSignal`] they trigger.
///
/// The first signal triggers the returned signal; the second exits the
/// process immediately with code 1, for when a graceful shutdown hangs.
///
/// Call it once, early in `main`, inside the Tokio runtime, and clone the
/// handle. From then on these signals no longer kill the process by
/// themselves. Listening is done by a task on the current runtime; if the
/// signal handlers cannot be installed (or there is no runtime) the error is
/// logged and the returned signal only fires through
/// [`trigger`](ShutdownSignal::trigger).
///
/// # Panics
///
/// If called inside a Tokio runtime built without its I/O driver
/// (`enable_io`/`enable_all`), as Tokio's own signal functions do.
pub fn shutdown_signal() -> ShutdownSignal {
    let signal = ShutdownSignal::manual();
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        tracing::error!("shutdown_signal() called outside a Tokio runtime; signals are not handled");
        return signal;
    };
    match listener::Listener::install() {
        Ok(listener) => {
            runtime.spawn(listener.run(signal.clone()));
        }
        Err(err) => {
            tracing::error!(error = %err, "cannot install SIGINT/SIGTERM handlers; signals are not handled");
        }
    }
    signal
}

#[cfg(unix)]
mod listener {
    //! SIGINT and SIGTERM on Unix.

    use tokio::signal::unix::{Signal, SignalKind, signal};

    use super::ShutdownSignal;

    pub(super) struct Listener {
        interrupt: Signal,
        terminate: Signal,
    }

    impl Listener {
        /// Installs the handlers now, so a signal arriving before the task
        /// first runs is not lost.
        pub(super) fn install() -> std::io::Result<Self> {
            Ok(Self { interrupt: signal(SignalKind::interrupt())?, terminate: signal(SignalKind::terminate())? })
        }

        async fn next(&mut self) -> &'static str {
            tokio::select! {
                _ = self.interrupt.recv() => "SIGINT",
                _ = self.terminate.recv() => "SIGTERM",
            }
        }

        pub(super) async fn run(mut self, shutdown: ShutdownSignal) {
            let first = self.next().await;
            tracing::warn!(signal = first, "shutting down gracefully; send the signal again to exit at once");
            shutdown.trigger();
            let second = self.next().await;
            tracing::error!(signal = second, "second signal received, exiting with code 1");
            std::process::exit(1);
        }
    }
}

#[cfg(not(unix))]
mod listener {
    //! Ctrl-C where there are no Unix signals.

    use super::ShutdownSignal;

    pub(super) struct Listener;

    impl Listener {
        pub(super) fn install() -> std::io::Result<Self> {
            Ok(Self)
        }

        pub(super) async fn run(self, shutdown: ShutdownSignal) {
            if let Err(err) = tokio::signal::ctrl_c().await {
                tracing::error!(error = %err, "cannot listen for Ctrl-C; signals are not handled");
                return;
            }
            tracing::warn!("Ctrl-C: shutting down gracefully; press it again to exit at once");
            shutdown.trigger();
            if tokio::signal::ctrl_c().await.is_ok() {
                tracing::error!("second Ctrl-C received, exiting with code 1");
                std::process::exit(1);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    /// Hang guard only, never asserted on.
    const GUARD: Duration = Duration::from_secs(30);

    #[tokio::test]
    async fn manual_trigger_wakes_every_clone() {
        let shutdown = ShutdownSignal::manual();
        assert!(!shutdown.is_triggered());
        let waiters: Vec<_> = (0..3)
            .map(|_| {
                let s = shutdown.clone();
                tokio::spawn(async move { s.recv().await })
            })
            .collect();
        tokio::task::yield_now().await;
        assert!(waiters.iter().all(|w| !w.is_finished()));
        shutdown.clone().trigger();
        for w in waiters {
            tokio::time::timeout(GUARD, w).await.unwrap().unwrap();
        }
        assert!(shutdown.is_triggered());
    }

    #[tokio::test]
    async fn recv_after_trigger_resolves_at_once_and_repeatedly() {
        let shutdown = ShutdownSignal::manual();
        shutdown.trigger();
        shutdown.trigger();
        let fut = shutdown.recv();
        futures::pin_mut!(fut);
        assert!(futures::poll!(fut.as_mut()).is_ready());
        tokio::time::timeout(GUARD, shutdown.recv()).await.unwrap();
    }

    #[tokio::test]
    async fn untriggered_recv_stays_pending() {
        let shutdown = ShutdownSignal::manual();
        let fut = shutdown.recv();
        futures::pin_mut!(fut);
        assert!(futures::poll!(fut.as_mut()).is_pending());
        tokio::task::yield_now().await;
        assert!(futures::poll!(fut.as_mut()).is_pending());
        shutdown.trigger();
        assert!(futures::poll!(fut.as_mut()).is_ready());
    }

    #[test]
    fn outside_a_runtime_a_manual_signal_is_returned() {
        let shutdown = shutdown_signal();
        assert!(!shutdown.is_triggered());
        shutdown.trigger();
        assert!(shutdown.is_triggered());
    }
}

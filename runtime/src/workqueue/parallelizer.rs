//! client-go's `workqueue.ParallelizeUntil`: independent pieces of work
//! spread over a number of threads, until all are done or shutdown is
//! requested.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use crate::signal::ShutdownSignal;

/// Runs `work(piece)` for every piece in `0..pieces` on up to `workers`
/// threads, and returns when every piece has run or, once `stop` is
/// triggered, when the pieces already running have finished: a piece not
/// yet started is then skipped, as client-go's `ParallelizeUntil` skips it
/// once its context is done.
///
/// Workers take the pieces `chunk_size` at a time (client-go's
/// `WithChunkSize`; `0` counts as `1`), which saves handing out pieces one
/// by one when there are many small ones. No more threads are started than
/// there are chunks, and none when `pieces` is `0`.
///
/// The call blocks the calling thread until the workers are done. Call it
/// where blocking is allowed (a thread of its own, or
/// `tokio::task::spawn_blocking`), not on an async executor's thread; for
/// async work, `futures::StreamExt::for_each_concurrent` is the async
/// counterpart.
///
/// # Panics
///
/// If `work` panics, the other workers finish the piece they are on and
/// take no more, and a panic goes on, with its own message, in the calling
/// thread: the calling thread's own if it panicked, else the first spawned
/// worker's to have panicked in spawn order (client-go's `HandleCrash` logs
/// the panic and crashes too).
///
/// ```
/// use std::sync::atomic::{AtomicU64, Ordering};
/// use codegen_runtime::workqueue::parallelize_until;
///
/// let sum = AtomicU64::new(0);
/// parallelize_until(None, 4, 1000, 16, |piece| {
///     sum.fetch_add(piece as u64, Ordering::Relaxed);
/// });
/// assert_eq!(sum.into_inner(), 999 * 1000 / 2);
/// ```
pub fn parallelize_until<F>(stop: Option<&ShutdownSignal>, workers: usize, pieces: usize, chunk_size: usize, work: F)
where
    F: Fn(usize) + Sync,
{
    if pieces == 0 {
        return;
    }
    let chunk_size = chunk_size.max(1);
    let chunks = pieces.div_ceil(chunk_size);
    let workers = workers.clamp(1, chunks);
    let next = AtomicUsize::new(0);
    // Set when a worker panics, so that the others stop taking chunks.
    let failed = AtomicBool::new(false);
    let stopped = || stop.is_some_and(ShutdownSignal::is_triggered) || failed.load(Ordering::Relaxed);
    let worker = || {
        let _flag = PanicFlag(&failed);
        loop {
            let chunk = next.fetch_add(1, Ordering::Relaxed);
            if chunk >= chunks {
                break;
            }
            let start = chunk * chunk_size;
            for piece in start..start.saturating_add(chunk_size).min(pieces) {
                if stopped() {
                    return;
                }
                work(piece);
            }
        }
    };
    std::thread::scope(|scope| {
        let others: Vec<_> = (1..workers).map(|_| scope.spawn(worker)).collect();
        // The calling thread is one of the workers.
        let mut panic = std::panic::catch_unwind(std::panic::AssertUnwindSafe(worker)).err();
        for other in others {
            if let Err(payload) = other.join() {
                panic.get_or_insert(payload);
            }
        }
        // A worker's panic as it was raised (not the scope's "a scoped
        // thread panicked").
        if let Some(payload) = panic {
            std::panic::resume_unwind(payload);
        }
    });
}

/// Marks the run as failed when a worker panics.
struct PanicFlag<'a>(&'a AtomicBool);

impl Drop for PanicFlag<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.store(true, Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;
    use std::sync::Mutex;
    use std::sync::atomic::AtomicUsize;

    use super::*;

    #[test]
    fn every_piece_runs_once() {
        for (workers, pieces, chunk_size) in
            [(1, 10, 1), (4, 1000, 1), (4, 1000, 7), (16, 3, 1), (3, 10, 100), (0, 5, 0), (2, 5, usize::MAX)]
        {
            let seen = Mutex::new(Vec::new());
            parallelize_until(None, workers, pieces, chunk_size, |piece| seen.lock().unwrap().push(piece));
            let mut seen = seen.into_inner().unwrap();
            seen.sort_unstable();
            assert_eq!(seen, (0..pieces).collect::<Vec<_>>(), "{workers} workers, {pieces} pieces by {chunk_size}");
        }
        parallelize_until(None, 4, 0, 1, |_| panic!("no pieces, no work"));
    }

    #[test]
    fn work_is_spread_over_the_workers() {
        let threads = Mutex::new(HashSet::new());
        let running = AtomicUsize::new(0);
        let most = AtomicUsize::new(0);
        parallelize_until(None, 4, 8, 1, |_| {
            threads.lock().unwrap().insert(std::thread::current().id());
            let now = running.fetch_add(1, Ordering::SeqCst) + 1;
            most.fetch_max(now, Ordering::SeqCst);
            std::thread::sleep(std::time::Duration::from_millis(20));
            running.fetch_sub(1, Ordering::SeqCst);
        });
        assert!(threads.into_inner().unwrap().len() > 1, "more than one thread worked");
        assert!(most.into_inner() <= 4, "at most 4 pieces at a time");
    }

    #[test]
    fn stop_skips_the_pieces_not_started() {
        let stop = ShutdownSignal::manual();
        let done = AtomicUsize::new(0);
        parallelize_until(Some(&stop), 2, 1000, 1, |piece| {
            if piece == 10 {
                stop.trigger();
            }
            done.fetch_add(1, Ordering::SeqCst);
        });
        let done = done.into_inner();
        assert!((11..1000).contains(&done), "{done} pieces ran");

        // Stopped before the start: nothing runs.
        parallelize_until(Some(&stop), 2, 10, 1, |_| panic!("stopped before the start"));
    }

    #[test]
    fn a_panic_reaches_the_caller_and_stops_the_others() {
        let done = AtomicUsize::new(0);
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            parallelize_until(None, 2, 10_000, 1, |piece| {
                if piece == 5 {
                    panic!("piece 5");
                }
                done.fetch_add(1, Ordering::SeqCst);
                // Slow enough that the panic hook (a backtrace, under
                // `RUST_BACKTRACE`) ends long before the other worker could
                // run every piece.
                std::thread::sleep(std::time::Duration::from_micros(500));
            });
        }));
        let payload = result.unwrap_err();
        assert_eq!(payload.downcast_ref::<&str>(), Some(&"piece 5"), "the worker's own panic");
        assert!(done.into_inner() < 9_999, "the other worker stopped taking pieces");

        // A panic on another thread than the caller's keeps its message
        // too. The barrier makes each of the two pieces run on its own
        // thread.
        let caller = std::thread::current().id();
        let both = std::sync::Barrier::new(2);
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            parallelize_until(None, 2, 2, 1, |_| {
                both.wait();
                if std::thread::current().id() != caller {
                    panic!("on a worker thread");
                }
            });
        }));
        assert_eq!(result.unwrap_err().downcast_ref::<&str>(), Some(&"on a worker thread"));
    }
}

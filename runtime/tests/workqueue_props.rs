//! Property tests for the work queue: random operation sequences over several
//! simulated workers, checked against client-go's semantics.

use std::collections::{HashMap, HashSet, VecDeque};
use std::time::Duration;

use codegen_runtime::workqueue::WorkQueue;
use futures::FutureExt;
use proptest::prelude::*;

const ITEMS: u8 = 6;
const WORKERS: usize = 4;

#[derive(Clone, Debug)]
enum Op {
    Add(u8),
    AddAfterZero(u8),
    /// Worker `w` asks for an item (skipped while it holds one).
    Get(usize),
    /// Worker `w` finishes its item, if it holds one.
    Done(usize),
    ShutDown,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (0..ITEMS).prop_map(Op::Add),
        2 => (0..ITEMS).prop_map(Op::AddAfterZero),
        6 => (0..WORKERS).prop_map(Op::Get),
        5 => (0..WORKERS).prop_map(Op::Done),
        1 => Just(Op::ShutDown),
    ]
}

/// What a client-go work queue must do, kept as plainly as possible.
#[derive(Default)]
struct Model {
    /// Items added (before shutdown) and not handed out since.
    pending: HashSet<u8>,
    /// Pending items that are not held by a worker, in hand-out order.
    queued: VecDeque<u8>,
    workers: [Option<u8>; WORKERS],
    shut: bool,
}

impl Model {
    fn held(&self, item: u8) -> bool {
        self.workers.contains(&Some(item))
    }

    fn add(&mut self, item: u8) {
        if self.shut || !self.pending.insert(item) {
            return;
        }
        if !self.held(item) {
            self.queued.push_back(item);
        }
    }

    fn done(&mut self, worker: usize) -> Option<u8> {
        let item = self.workers[worker].take()?;
        if self.pending.contains(&item) {
            self.queued.push_back(item);
        }
        Some(item)
    }
}

/// Applies one hand-out to the model, checking the invariants on the way.
fn hand_out(model: &mut Model, worker: usize, item: u8) -> Result<(), TestCaseError> {
    prop_assert!(!model.held(item), "item {item} handed to worker {worker} while another worker holds it");
    prop_assert!(model.pending.remove(&item), "item {item} handed out again without being added again (duplicate)");
    prop_assert_eq!(model.queued.pop_front(), Some(item), "not FIFO");
    model.workers[worker] = Some(item);
    Ok(())
}

fn run_ops(ops: &[Op]) -> Result<(), TestCaseError> {
    let q = WorkQueue::new();
    let mut model = Model::default();
    for op in ops {
        match *op {
            Op::Add(item) => {
                q.add(item);
                model.add(item);
            }
            Op::AddAfterZero(item) => {
                q.add_after(item, Duration::ZERO);
                model.add(item);
            }
            Op::Get(w) => {
                if model.workers[w].is_some() {
                    continue;
                }
                // Polled once and dropped if pending: also exercises
                // cancellation of a parked `get`.
                match q.get().now_or_never() {
                    Some(Some(item)) => hand_out(&mut model, w, item)?,
                    Some(None) => {
                        prop_assert!(model.shut, "get returned None before shutdown");
                        prop_assert!(model.queued.is_empty(), "None while items are queued");
                    }
                    None => {
                        prop_assert!(!model.shut, "get parked on a shut-down, empty queue");
                        prop_assert!(model.queued.is_empty(), "get parked while items are queued");
                    }
                }
            }
            Op::Done(w) => {
                if let Some(item) = model.done(w) {
                    q.done(&item);
                }
            }
            Op::ShutDown => {
                q.shut_down();
                model.shut = true;
            }
        }
        // No duplicates while queued: the queue holds exactly the pending
        // items no worker holds.
        prop_assert_eq!(q.len(), model.queued.len(), "after {:?}", op);
        prop_assert_eq!(q.is_shutting_down(), model.shut);
    }

    // Nothing lost: finish every worker, shut down, and drain. Each item
    // added after it was last handed out must come out exactly once more.
    for w in 0..WORKERS {
        if let Some(item) = model.done(w) {
            q.done(&item);
        }
    }
    q.shut_down();
    model.shut = true;
    loop {
        match q.get().now_or_never() {
            Some(Some(item)) => {
                hand_out(&mut model, 0, item)?;
                model.done(0);
                q.done(&item);
            }
            Some(None) => break,
            None => prop_assert!(false, "get parked on a shut-down queue"),
        }
    }
    prop_assert!(model.pending.is_empty(), "lost items: {:?}", model.pending);
    prop_assert_eq!(q.len(), 0);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn queue_matches_client_go_semantics(ops in prop::collection::vec(op(), 1..200)) {
        run_ops(&ops)?;
    }

    /// Delayed adds on a paused clock: each item comes out once, at the
    /// earliest of its deadlines, in deadline order. (Delays are non-zero: a
    /// zero delay is a plain `add` that leaves waiting deadlines alone, as in
    /// client-go.)
    #[test]
    fn delayed_items_fire_once_at_their_earliest_deadline(
        adds in prop::collection::vec((0..ITEMS, 1u64..500), 1..40),
    ) {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .start_paused(true)
            .build()
            .unwrap();
        rt.block_on(async {
            let q = WorkQueue::new();
            let start = tokio::time::Instant::now();
            let mut earliest: HashMap<u8, u64> = HashMap::new();
            for &(item, ms) in &adds {
                q.add_after(item, Duration::from_millis(ms));
                let e = earliest.entry(item).or_insert(ms);
                *e = (*e).min(ms);
            }
            let mut last = 0;
            for _ in 0..earliest.len() {
                let item = tokio::time::timeout(Duration::from_secs(3600), q.get())
                    .await
                    .expect("hang guard (virtual time)")
                    .expect("queue is not shut down");
                let waited = start.elapsed();
                let due = Duration::from_millis(earliest[&item]);
                // Tokio's timer has millisecond resolution and rounds up.
                prop_assert!(
                    waited >= due && waited < due + Duration::from_millis(2),
                    "item {} due after {:?} came after {:?}", item, due, waited
                );
                prop_assert!(earliest[&item] >= last, "out of deadline order");
                last = earliest[&item];
                q.done(&item);
            }
            // Later deadlines of the same items must not fire again.
            tokio::time::sleep(Duration::from_secs(10)).await;
            prop_assert_eq!(q.len(), 0);
            q.shut_down();
            Ok(())
        })?;
    }
}

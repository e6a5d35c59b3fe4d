//! Scale-out by sharding: the key space (`namespace/name`) is cut into N
//! shards by a stable hash, each shard is guarded by a Lease of its own
//! (leader election per shard, [`crate::leaderelection`]), and every replica
//! reconciles only the keys of the shards it holds. Replicas beyond what the
//! shards need stand by and take over the shards of a replica that dies.
//!
//! Every replica's informers still cache everything; only the work is
//! split. Use one leader ([`crate::leaderelection`] alone) while one replica
//! keeps up; shards when the reconcile work of one replica is the limit.
//!
//! The number of shards is not part of the Leases' names: replicas that
//! disagree on it (a rollout from 3 shards to 4) cut the keys differently,
//! and a key can then be reconciled by two replicas at once. Change it with
//! every replica stopped (a `Recreate` rollout).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use tokio::sync::watch;
use tokio::task::JoinSet;

use crate::leaderelection::{LeaderElectionConfig, LeaderElector};
use crate::signal::ShutdownSignal;

/// The shard of `key` out of `shards`: FNV-1a (64 bit) of the key, modulo
/// `shards`. Stable across processes, builds and platforms.
pub fn shard_of(key: &str, shards: u32) -> u32 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in key.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    (hash % u64::from(shards.max(1))) as u32
}

/// The shards a replica holds at one moment, each with the term it was
/// taken in: a shard lost and taken again gets a new term, so a subscriber
/// that missed the moment in between still sees it was gained again.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Held {
    terms: BTreeMap<u32, u64>,
}

impl Held {
    /// The shards held.
    pub fn shards(&self) -> BTreeSet<u32> {
        self.terms.keys().copied().collect()
    }

    /// Whether `shard` is held.
    pub fn contains(&self, shard: u32) -> bool {
        self.terms.contains_key(&shard)
    }

    /// How many shards are held.
    pub fn len(&self) -> usize {
        self.terms.len()
    }

    /// Whether no shard is held.
    pub fn is_empty(&self) -> bool {
        self.terms.is_empty()
    }

    /// The shards held now and not in `earlier`, or taken again since it
    /// (lost and taken back in between): the shards whose keys are this
    /// replica's to queue.
    pub fn gained_since(&self, earlier: &Held) -> Vec<u32> {
        self.terms.iter().filter(|(shard, term)| earlier.terms.get(shard) != Some(term)).map(|(s, _)| *s).collect()
    }
}

/// The shards this replica holds now. Cheap to clone; clones share.
#[derive(Clone, Debug)]
pub struct ShardOwnership {
    shards: u32,
    owned: Arc<watch::Sender<Held>>,
    terms: Arc<std::sync::atomic::AtomicU64>,
}

impl ShardOwnership {
    /// Holding none of `shards` shards yet.
    pub fn new(shards: u32) -> Self {
        Self { shards: shards.max(1), owned: Arc::new(watch::Sender::new(Held::default())), terms: Arc::default() }
    }

    /// How many shards there are.
    pub fn shards(&self) -> u32 {
        self.shards
    }

    /// Whether this replica holds the shard of `key`.
    pub fn owns_key(&self, key: &str) -> bool {
        self.owned.borrow().contains(shard_of(key, self.shards))
    }

    /// The shards held now.
    pub fn owned(&self) -> BTreeSet<u32> {
        self.owned.borrow().shards()
    }

    /// Changes to the shards held (the receiver sees the current ones
    /// first); compare with [`Held::gained_since`], which also tells a
    /// shard lost and taken back between two looks.
    pub fn subscribe(&self) -> watch::Receiver<Held> {
        self.owned.subscribe()
    }

    /// Takes `shard` if fewer than `max_held` others are held, in one step
    /// (two shards won at once cannot both pass the check); whether it is
    /// held now.
    fn take(&self, shard: u32, max_held: usize) -> bool {
        let term = self.terms.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let mut taken = false;
        self.owned.send_if_modified(|held| {
            if held.contains(shard) {
                taken = true;
                return false;
            }
            if held.len() >= max_held {
                return false;
            }
            held.terms.insert(shard, term);
            taken = true;
            true
        });
        taken
    }

    fn release(&self, shard: u32) {
        self.owned.send_if_modified(|held| held.terms.remove(&shard).is_some());
    }
}

/// Campaigns for the Lease of every shard (`<template.lease_name>-<shard>`)
/// with `template`'s namespace, identity and timings, holding at most
/// `max_held` shards at a time, until `stop` fires; then releases what it
/// holds (with `release_on_cancel`) and returns. A shard lost because it
/// could not be renewed is campaigned for again.
pub async fn run_shards(
    client: kube::Client,
    template: LeaderElectionConfig,
    ownership: ShardOwnership,
    max_held: usize,
    stop: ShutdownSignal,
) -> Result<(), crate::leaderelection::Error> {
    template.validate()?;
    if max_held == 0 {
        // A replica that may hold no shard would campaign forever, silently.
        return Err(crate::leaderelection::Error::Config(
            "a replica must be allowed to hold at least one shard".into(),
        ));
    }
    let mut tasks = JoinSet::new();
    for shard in 0..ownership.shards() {
        let config =
            LeaderElectionConfig { lease_name: format!("{}-{shard}", template.lease_name), ..template.clone() };
        let (client, ownership, stop) = (client.clone(), ownership.clone(), stop.clone());
        tasks.spawn(async move {
            let retry = config.retry_period;
            while !stop.is_triggered() {
                // Leave shards to other replicas while holding enough.
                if ownership.owned().len() >= max_held {
                    tokio::select! {
                        () = stop.recv() => break,
                        () = tokio::time::sleep(retry) => continue,
                    }
                }
                // Campaign only while other shards leave room: a campaign
                // still running when this replica fills its quota would
                // otherwise take a freed shard from a standby, only to give
                // it back.
                let mut held = ownership.subscribe();
                let room_gone = async move {
                    let full = held
                        .wait_for(|held| held.shards().iter().filter(|s| **s != shard).count() >= max_held)
                        .await
                        .is_ok();
                    if !full {
                        std::future::pending::<()>().await;
                    }
                };
                let until = async {
                    tokio::select! {
                        () = stop.recv() => {}
                        () = room_gone => {}
                    }
                };
                let elector = LeaderElector::new(client.clone(), config.clone())?;
                elector
                    .run(until, |mut leading| {
                        let ownership = ownership.clone();
                        async move {
                            if !ownership.take(shard, max_held) {
                                // Won a race past the limit: give it back.
                                return;
                            }
                            tracing::info!(shard, "holding shard");
                            leading.lost().await;
                            ownership.release(shard);
                            tracing::info!(shard, "no longer holding shard");
                        }
                    })
                    .await?;
            }
            Ok::<(), crate::leaderelection::Error>(())
        });
    }
    while let Some(done) = tasks.join_next().await {
        if let Ok(Err(e)) = done {
            stop.trigger();
            return Err(e);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use k8s_openapi::api::coordination::v1::Lease;

    use super::*;
    use crate::testing::FakeApiServer;

    /// A replica allowed no shard is refused at once instead of campaigning
    /// for nothing.
    #[tokio::test]
    async fn no_room_for_a_shard_is_an_error() {
        let server = crate::testing::FakeApiServer::new();
        let config = LeaderElectionConfig::new("shard", "default", "a");
        let result = run_shards(server.client(), config, ShardOwnership::new(3), 0, ShutdownSignal::manual()).await;
        assert!(matches!(result, Err(crate::leaderelection::Error::Config(_))), "{result:?}");
    }

    #[test]
    fn the_hash_is_stable_and_spreads_keys() {
        // FNV-1a test vectors (64 bit): "" and "a".
        assert_eq!(shard_of("", u32::MAX), (0xcbf2_9ce4_8422_2325u64 % u64::from(u32::MAX)) as u32);
        assert_eq!(shard_of("a", u32::MAX), (0xaf63_dc4c_8601_ec8cu64 % u64::from(u32::MAX)) as u32);
        let mut counts = [0usize; 3];
        for i in 0..3000 {
            counts[shard_of(&format!("ns/student-{i}"), 3) as usize] += 1;
        }
        assert!(counts.iter().all(|&c| (800..1200).contains(&c)), "{counts:?}");
    }

    /// Taking checks the quota in the same step; a shard lost and taken
    /// back between two looks of a subscriber is still a gain.
    #[test]
    fn taking_is_atomic_and_a_retaken_shard_is_gained_again() {
        let ownership = ShardOwnership::new(3);
        let mut changes = ownership.subscribe();
        let before = changes.borrow_and_update().clone();
        assert!(ownership.take(0, 1));
        assert!(ownership.take(0, 1), "already held");
        assert!(!ownership.take(1, 1), "over the quota");
        assert_eq!(ownership.owned(), BTreeSet::from([0]));
        let first = changes.borrow_and_update().clone();
        assert_eq!(first.gained_since(&before), [0]);
        // Lost and taken back before the subscriber looks again.
        ownership.release(0);
        assert!(ownership.take(0, 1));
        assert!(changes.has_changed().unwrap());
        let now = changes.borrow_and_update().clone();
        assert_eq!(now.shards(), first.shards(), "the same set");
        assert_eq!(now.gained_since(&first), [0], "but a new term");
        assert!(now.gained_since(&now).is_empty());
        assert!(ownership.owns_key(&(0..).map(|i| format!("k{i}")).find(|k| shard_of(k, 3) == 0).unwrap()));
    }

    fn config(identity: &str) -> LeaderElectionConfig {
        LeaderElectionConfig {
            lease_duration: Duration::from_millis(800),
            renew_deadline: Duration::from_millis(500),
            retry_period: Duration::from_millis(100),
            ..LeaderElectionConfig::new("shard", "default", identity)
        }
    }

    #[tokio::test]
    async fn replicas_split_the_shards_and_a_standby_takes_over() {
        let server = FakeApiServer::new();
        server.register::<Lease>();
        let mut replicas = Vec::new();
        let mut names = Vec::new();
        for name in ["a", "b", "c"] {
            let (ownership, stop) = (ShardOwnership::new(2), ShutdownSignal::manual());
            let task = tokio::spawn(run_shards(server.client(), config(name), ownership.clone(), 1, stop.clone()));
            replicas.push((ownership, stop, task));
            names.push(name);
        }
        let held = |replicas: &[(ShardOwnership, ShutdownSignal, _)]| -> Vec<BTreeSet<u32>> {
            replicas.iter().map(|r| r.0.owned()).collect()
        };
        let leases: kube::Api<Lease> = kube::Api::namespaced(server.client(), "default");
        let split = |sets: &[BTreeSet<u32>]| {
            let all: Vec<u32> = sets.iter().flatten().copied().collect();
            let mut unique = all.clone();
            unique.sort();
            unique.dedup();
            all.len() == 2 && unique == [0, 1] && sets.iter().all(|s| s.len() <= 1)
        };
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        while !split(&held(&replicas)) {
            assert!(tokio::time::Instant::now() < deadline, "never split: {:?}", held(&replicas));
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        // The holder of shard 0 stops; the standby takes shard 0 over.
        let index = replicas.iter().position(|r| r.0.owned().contains(&0)).unwrap();
        let (_, stop, task) = replicas.remove(index);
        names.remove(index);
        let busy = names[replicas.iter().position(|r| r.0.owned().contains(&1)).unwrap()];
        stop.trigger();
        task.await.unwrap().unwrap();
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        let mut holders_of_0 = BTreeSet::new();
        while !split(&held(&replicas)) {
            assert!(tokio::time::Instant::now() < deadline, "shard 0 not taken over: {:?}", held(&replicas));
            let lease = leases.get("shard-0").await.unwrap();
            holders_of_0.extend(lease.spec.and_then(|spec| spec.holder_identity));
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        // The replica holding shard 1 left shard 0 to the standby: it did not
        // campaign past its quota of one shard.
        assert!(!holders_of_0.contains(busy), "{busy} held shard 0 too: {holders_of_0:?}");
        for (_, stop, task) in replicas {
            stop.trigger();
            task.await.unwrap().unwrap();
        }
    }
}

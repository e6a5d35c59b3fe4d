//! Lease-based leader election with client-go's semantics
//! (`k8s.io/client-go/tools/leaderelection` over a `coordination.k8s.io/v1`
//! Lease): of several replicas of a controller, one leads at a time.
//!
//! A candidate tries to acquire the Lease every `retry_period` (jittered). A
//! Lease held by another identity counts as expired only when its holder or
//! renew time has not changed for `lease_duration` as measured on *this*
//! process's clock since it last saw a change: clocks of different machines
//! are never compared. The leader renews every `retry_period`; when a round
//! of renewals (attempts `retry_period` apart, starting `retry_period` after
//! the last success) has not succeeded `renew_deadline` after its first
//! attempt, it stops leading then, between attempts too, as client-go's. So
//! a leader whose last successful renewal was written at `t` stops by about
//! `t` + the time its answer took + `retry_period` + `renew_deadline`; keep
//! `lease_duration` above that (the defaults, 15 / 10 / 2 s, leave 3 s for
//! the answer). With
//! `release_on_cancel`, a leader that is told to stop empties the Lease's
//! holder so that the next candidate takes over at once.
//!
//! ```no_run
//! # async fn demo(client: kube::Client) -> Result<(), codegen_runtime::leaderelection::Error> {
//! use codegen_runtime::leaderelection::{LeaderElectionConfig, LeaderElector};
//! let config = LeaderElectionConfig::new("my-controller", "kube-system", "replica-1");
//! let elector = LeaderElector::new(client, config)?;
//! let stop = std::future::pending::<()>();
//! let led = elector
//!     .run(stop, |mut leading| async move {
//!         // Reconcile until `leading.lost()` resolves.
//!         leading.lost().await;
//!     })
//!     .await?;
//! # let _ = led;
//! # Ok(())
//! # }
//! ```

use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use kube::api::{Api, ObjectMeta, PostParams};

use crate::events::{EventRecorder, EventType};
use tokio::sync::watch;
use tokio::time::Instant;

/// client-go's `JitterFactor`: a candidate's retries wait `retry_period`
/// plus up to 1.2 times it (`wait.Jitter`: 1.0 to 2.2 × the period).
const JITTER_FACTOR: f64 = 1.2;

/// Errors of leader election.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The timings contradict each other (client-go's checks).
    #[error("invalid leader election config: {0}")]
    Config(String),
    /// The lease could not be read or written.
    #[error("leader election: {0}")]
    Api(#[from] kube::Error),
    /// [`LeaderElector::check`]: this candidate leads but has not renewed
    /// the Lease for longer than its duration and the tolerance.
    #[error("failed election to renew leadership on lease {0}")]
    NotRenewed(String),
}

/// Where the Lease lives, who this candidate is, and the timings.
#[derive(Clone, Debug)]
pub struct LeaderElectionConfig {
    /// The Lease's name.
    pub lease_name: String,
    /// The Lease's namespace.
    pub lease_namespace: String,
    /// This candidate's identity, unique among the replicas (e.g. the pod
    /// name): it is written as the Lease's holder.
    pub identity: String,
    /// How long non-leaders wait after they last saw the Lease change before
    /// they take it over (default 15 s).
    pub lease_duration: Duration,
    /// How long the leader keeps trying to renew before it stops leading
    /// (default 10 s).
    pub renew_deadline: Duration,
    /// How often candidates try to acquire and the leader renews (default
    /// 2 s).
    pub retry_period: Duration,
    /// Whether a leader that is told to stop empties the Lease's holder, so
    /// that another candidate need not wait out `lease_duration`.
    pub release_on_cancel: bool,
}

impl LeaderElectionConfig {
    /// The timings client-go's users (and kube-controller-manager) pick:
    /// 15 s / 10 s / 2 s; `release_on_cancel` on (client-go's
    /// `ReleaseOnCancel` is off unless set).
    pub fn new(lease_name: impl Into<String>, lease_namespace: impl Into<String>, identity: impl Into<String>) -> Self {
        Self {
            lease_name: lease_name.into(),
            lease_namespace: lease_namespace.into(),
            identity: identity.into(),
            lease_duration: Duration::from_secs(15),
            renew_deadline: Duration::from_secs(10),
            retry_period: Duration::from_secs(2),
            release_on_cancel: true,
        }
    }

    /// client-go's checks: every duration positive, `lease_duration >
    /// renew_deadline > 1.2 × retry_period`, an identity.
    pub fn validate(&self) -> Result<(), Error> {
        let fail = |m: &str| Err(Error::Config(m.to_string()));
        if self.lease_duration.is_zero() || self.renew_deadline.is_zero() || self.retry_period.is_zero() {
            return fail("lease_duration, renew_deadline and retry_period must be positive");
        }
        if self.lease_duration <= self.renew_deadline {
            return fail("lease_duration must be greater than renew_deadline");
        }
        if self.renew_deadline.as_secs_f64() <= JITTER_FACTOR * self.retry_period.as_secs_f64() {
            return fail("renew_deadline must be greater than retry_period × 1.2 (the jitter factor)");
        }
        if self.identity.is_empty() {
            return fail("identity must not be empty");
        }
        if self.lease_name.is_empty() || self.lease_namespace.is_empty() {
            return fail("lease_name and lease_namespace must not be empty");
        }
        Ok(())
    }
}

/// Given to the leading task: resolves [`lost`](Leading::lost) when this
/// candidate stops leading (it could not renew in time, or the election was
/// told to stop).
#[derive(Debug)]
pub struct Leading {
    lost: watch::Receiver<bool>,
}

impl Leading {
    /// Resolves once leadership is over.
    pub async fn lost(&mut self) {
        let _ = self.lost.wait_for(|lost| *lost).await;
    }

    /// Whether leadership is over.
    pub fn is_lost(&self) -> bool {
        *self.lost.borrow()
    }
}

/// How [`LeaderElector::run`] ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Told to stop before this candidate ever led.
    NeverLed,
    /// Led, then stopped because it was told to (or the leading task
    /// returned); the Lease was released if configured.
    Stopped,
    /// Led, then lost the Lease: it could not renew within `renew_deadline`,
    /// also while `lead` was finishing after being told to stop (what it
    /// did after the loss was not guarded by the Lease).
    Lost,
}

/// What this candidate last saw of the Lease, and when by its own clock.
#[derive(Clone, Debug, Default)]
struct Observed {
    holder: Option<String>,
    renew_time: Option<MicroTime>,
    lease_duration: Duration,
    at: Option<Instant>,
}

type NewLeader = Arc<dyn Fn(&str) + Send + Sync>;

/// One candidate of a leader election.
pub struct LeaderElector {
    leases: Api<Lease>,
    config: LeaderElectionConfig,
    observed: Mutex<Observed>,
    leading: Mutex<bool>,
    on_new_leader: Option<NewLeader>,
    recorder: Option<EventRecorder>,
    /// The uid and resourceVersion of the Lease as last written (what
    /// events are about).
    lease_meta: Mutex<ObjectMeta>,
    /// The Lease as this candidate last wrote it: the leader renews it
    /// without reading it first (client-go's fast path).
    written: Mutex<Option<Lease>>,
    /// Set while `lead` still runs after leadership was lost.
    lost_while_leading: Mutex<bool>,
    rng: Mutex<u64>,
}

impl std::fmt::Debug for LeaderElector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LeaderElector").field("config", &self.config).field("leader", &self.leader()).finish()
    }
}

impl LeaderElector {
    /// A candidate using `client`; fails when the config is invalid.
    pub fn new(client: kube::Client, config: LeaderElectionConfig) -> Result<Self, Error> {
        config.validate()?;
        let seed =
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(1, |d| d.as_nanos() as u64);
        Ok(Self {
            leases: Api::namespaced(client, &config.lease_namespace),
            config,
            observed: Mutex::new(Observed::default()),
            leading: Mutex::new(false),
            on_new_leader: None,
            recorder: None,
            lease_meta: Mutex::new(ObjectMeta::default()),
            written: Mutex::new(None),
            lost_while_leading: Mutex::new(false),
            rng: Mutex::new(seed | 1),
        })
    }

    /// Calls `f` with the holder's identity whenever this candidate sees the
    /// holder change (client-go's `OnNewLeader`), this candidate included;
    /// not for a released Lease (client-go calls it with `""` then). It runs
    /// on the election's task, between renewals: keep it short.
    pub fn on_new_leader(mut self, f: impl Fn(&str) + Send + Sync + 'static) -> Self {
        self.on_new_leader = Some(Arc::new(f));
        self
    }

    /// Records `Normal` events about the Lease with `recorder`, as
    /// client-go's Lease lock does with its `EventRecorder`: reason
    /// `LeaderElection`, note `"<identity> became leader"` (action
    /// `BecameLeader`) when this candidate acquires it and `"<identity>
    /// stopped leading"` (action `StoppedLeading`) when its leadership ends,
    /// after a release. The actions keep the two apart: events.k8s.io
    /// counts events of one reason and action as one series, whatever
    /// their notes (client-go's core/v1 recorder tells them apart by
    /// message). A failed write is logged; it never holds up the election.
    pub fn with_event_recorder(mut self, recorder: EventRecorder) -> Self {
        self.recorder = Some(recorder);
        self
    }

    /// The holder this candidate last saw (empty or `None`: nobody).
    pub fn leader(&self) -> Option<String> {
        self.observed.lock().unwrap_or_else(PoisonError::into_inner).holder.clone().filter(|h| !h.is_empty())
    }

    /// Whether this candidate leads now.
    pub fn is_leader(&self) -> bool {
        *self.leading.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// client-go's `Check` (what its healthz adaptor serves): an error when
    /// this candidate leads, or lost the Lease while `lead` still runs, and
    /// the last renewal it saw is older than the Lease's duration plus
    /// `max_tolerable_expired` — a leader stuck so that it can neither
    /// renew nor notice it lost (a task blocking the thread the election
    /// runs on), or a `lead` that does not end when leadership does. Serve
    /// it from a liveness probe so the process is restarted; `Ok` when not
    /// leading.
    pub fn check(&self, max_tolerable_expired: Duration) -> Result<(), Error> {
        let lost_while_leading = *self.lost_while_leading.lock().unwrap_or_else(PoisonError::into_inner);
        if !self.is_leader() && !lost_while_leading {
            return Ok(());
        }
        let last = self.observed.lock().unwrap_or_else(PoisonError::into_inner).at;
        match last {
            Some(at) if at.elapsed() > self.config.lease_duration.saturating_add(max_tolerable_expired) => {
                Err(Error::NotRenewed(self.config.lease_name.clone()))
            }
            _ => Ok(()),
        }
    }

    /// Campaigns until this candidate leads (or `stop` resolves), then runs
    /// `lead` while renewing the Lease. `lead` gets a [`Leading`] that
    /// resolves when leadership is over; `run` returns when `lead` has
    /// returned. client-go's `OnStartedLeading` is the start of `lead`,
    /// `OnStoppedLeading` the return of `run` after leading.
    ///
    /// `lead` is polled by the task that polls `run`, beside the renewals
    /// (so it may borrow from the caller; client-go runs it in a goroutine
    /// of its own): it must not block the thread, or renewals wait with it.
    /// Move blocking work to `spawn_blocking` or tasks of its own;
    /// [`check`](Self::check) reports a leader stuck that way.
    pub async fn run<F, Fut>(&self, stop: impl Future<Output = ()>, lead: F) -> Result<Outcome, Error>
    where
        F: FnOnce(Leading) -> Fut,
        Fut: Future<Output = ()>,
    {
        // However `run` ends, dropped midway included, `lead` no longer
        // outlives a lost Lease afterwards.
        struct LostWhileLeading<'a>(&'a Mutex<bool>);
        impl Drop for LostWhileLeading<'_> {
            fn drop(&mut self) {
                *self.0.lock().unwrap_or_else(PoisonError::into_inner) = false;
            }
        }
        let _reset = LostWhileLeading(&self.lost_while_leading);
        tokio::pin!(stop);
        // Campaign. A request the server does not answer does not hold up
        // `stop` (client-go cancels it with the run's context).
        loop {
            tokio::select! {
                () = &mut stop => return Ok(Outcome::NeverLed),
                acquired = self.try_acquire_or_renew() => if acquired { break },
            }
            tokio::select! {
                () = &mut stop => return Ok(Outcome::NeverLed),
                () = tokio::time::sleep(self.jittered_retry()) => {}
            }
        }
        tracing::info!(lease = %self.config.lease_name, identity = %self.config.identity, "started leading");
        // Written beside the leading task, which it must not delay.
        if let Some(event) = self.leader_event("BecameLeader", "became leader") {
            tokio::spawn(event);
        }
        let (lost_tx, lost_rx) = watch::channel(false);
        let task = lead(Leading { lost: lost_rx });
        tokio::pin!(task);
        // client-go's renew loop: a round of attempts, `retry_period`
        // apart, starts `retry_period` after the last success and has
        // `renew_deadline` to succeed, counted from its first attempt. A
        // renewal runs beside `lead` and `stop`, never longer than what is
        // left of its round: a request the server never answers must not
        // keep this candidate leading after others may have taken the Lease
        // (client-go's RenewDeadline context); a slow one that is answered
        // in time costs nothing.
        let mut round_started: Option<Instant> = None;
        let mut outcome = None;
        let mut task_done = false;
        let mut next_renew = tokio::time::Instant::now() + self.config.retry_period;
        let mut renewal: Option<std::pin::Pin<Box<dyn Future<Output = bool> + Send + '_>>> = None;
        // Told to stop, the leader keeps renewing until `lead` has returned:
        // the work it finishes meanwhile is still guarded by the Lease.
        let mut lost = false;
        loop {
            let idle = renewal.is_none();
            let renewing = !lost && (outcome.is_none() || !task_done);
            tokio::select! {
                () = &mut task, if !task_done => {
                    task_done = true;
                    if outcome.is_none() {
                        outcome = Some(Outcome::Stopped);
                        let _ = lost_tx.send(true);
                    }
                }
                () = &mut stop, if outcome.is_none() => {
                    outcome = Some(Outcome::Stopped);
                    let _ = lost_tx.send(true);
                }
                () = tokio::time::sleep_until(next_renew), if renewing && idle => {
                    let round = *round_started.get_or_insert_with(Instant::now);
                    let budget = self.config.renew_deadline.saturating_sub(round.elapsed());
                    renewal = Some(if budget.is_zero() {
                        // The round's deadline: no attempt, as client-go makes none.
                        Box::pin(std::future::ready(false))
                    } else {
                        Box::pin(async move {
                            tokio::time::timeout(budget, self.try_acquire_or_renew()).await.unwrap_or(false)
                        })
                    });
                }
                renewed = async {
                    match renewal.as_mut() {
                        Some(r) => r.await,
                        None => std::future::pending().await,
                    }
                }, if renewing && !idle => {
                    renewal = None;
                    next_renew = tokio::time::Instant::now() + self.config.retry_period;
                    let round_over = round_started.is_none_or(|round| round.elapsed() >= self.config.renew_deadline);
                    if renewed {
                        round_started = None;
                    } else if round_over || !self.holds_per_observation() {
                        tracing::warn!(lease = %self.config.lease_name, identity = %self.config.identity, "leadership lost: the lease was not renewed in time");
                        self.set_leading(false);
                        *self.lost_while_leading.lock().unwrap_or_else(PoisonError::into_inner) = !task_done;
                        lost = true;
                        outcome = Some(Outcome::Lost);
                        let _ = lost_tx.send(true);
                    } else if let Some(round) = round_started {
                        // As client-go's renew loop, the round ends at its
                        // deadline, also between attempts: the last attempt
                        // is not a `retry_period` late.
                        next_renew = next_renew.min(round + self.config.renew_deadline);
                    }
                }
            }
            if task_done && outcome.is_some() {
                break;
            }
        }
        *self.lost_while_leading.lock().unwrap_or_else(PoisonError::into_inner) = false;
        let outcome = outcome.unwrap_or(Outcome::Stopped);
        if outcome == Outcome::Stopped && self.is_leader() {
            if self.config.release_on_cancel {
                // Bounded like a renewal: a server that does not answer
                // leaves the Lease to expire instead.
                let _ = tokio::time::timeout(self.config.renew_deadline, self.release()).await;
            }
            self.set_leading(false);
        }
        tracing::info!(lease = %self.config.lease_name, identity = %self.config.identity, ?outcome, "stopped leading");
        // Written before `run` returns (the process may exit then), bounded
        // like a renewal.
        if let Some(event) = self.leader_event("StoppedLeading", "stopped leading") {
            let _ = tokio::time::timeout(self.config.renew_deadline, event).await;
        }
        Ok(outcome)
    }

    /// The write of client-go's leader election event `what` about the
    /// Lease, when there is a recorder.
    fn leader_event(&self, action: &'static str, what: &str) -> Option<impl Future<Output = ()> + Send + 'static> {
        let recorder = self.recorder.clone()?;
        let mut metadata = self.lease_meta.lock().unwrap_or_else(PoisonError::into_inner).clone();
        metadata.name = Some(self.config.lease_name.clone());
        metadata.namespace = Some(self.config.lease_namespace.clone());
        let lease = crate::events::object_reference(&Lease { metadata, spec: None });
        let note = format!("{} {what}", self.config.identity);
        Some(async move {
            if let Err(e) = recorder.event(&lease, EventType::Normal, "LeaderElection", action, &note).await {
                tracing::warn!(lease = ?lease.name, "cannot record the leader election event {note:?}: {e}");
            }
        })
    }

    fn set_leading(&self, leading: bool) {
        *self.leading.lock().unwrap_or_else(PoisonError::into_inner) = leading;
    }

    /// Whether the last observation still names this candidate.
    fn holds_per_observation(&self) -> bool {
        self.observed.lock().unwrap_or_else(PoisonError::into_inner).holder.as_deref() == Some(&self.config.identity)
    }

    fn jittered_retry(&self) -> Duration {
        let mut x = self.rng.lock().unwrap_or_else(PoisonError::into_inner);
        // xorshift64
        *x ^= *x << 13;
        *x ^= *x >> 7;
        *x ^= *x << 17;
        let fraction = (*x >> 11) as f64 / (1u64 << 53) as f64;
        self.config.retry_period.mul_f64(1.0 + JITTER_FACTOR * fraction)
    }

    /// Records what the Lease says, restarting the local expiry clock when
    /// its holder or renew time changed; tells `on_new_leader` of a new
    /// holder.
    fn observe(&self, spec: &LeaseSpec) {
        let holder = spec.holder_identity.clone();
        let changed = {
            let mut observed = self.observed.lock().unwrap_or_else(PoisonError::into_inner);
            let changed_holder = observed.holder != holder;
            if changed_holder || observed.renew_time != spec.renew_time || observed.at.is_none() {
                *observed = Observed {
                    holder: holder.clone(),
                    renew_time: spec.renew_time.clone(),
                    lease_duration: Duration::from_secs(spec.lease_duration_seconds.unwrap_or(0).max(0) as u64),
                    at: Some(Instant::now()),
                };
            }
            changed_holder
        };
        if changed && let (Some(f), Some(h)) = (&self.on_new_leader, holder.as_deref().filter(|h| !h.is_empty())) {
            f(h);
        }
    }

    /// client-go's `tryAcquireOrRenew`: true when this candidate holds the
    /// Lease afterwards.
    async fn try_acquire_or_renew(&self) -> bool {
        match self.acquire_or_renew().await {
            Ok(held) => {
                self.set_leading(held);
                held
            }
            Err(e) => {
                tracing::debug!(lease = %self.config.lease_name, "cannot acquire or renew the lease: {e}");
                false
            }
        }
    }

    async fn acquire_or_renew(&self) -> Result<bool, kube::Error> {
        let now = MicroTime(k8s_openapi::jiff::Timestamp::now());
        let me = &self.config.identity;
        let seconds = i32::try_from(self.config.lease_duration.as_secs().max(1)).unwrap_or(i32::MAX);
        // client-go writes a fresh record each time: fields it does not
        // set (`preferredHolder`, `strategy` of coordinated leader
        // election) are cleared.
        let record = |acquire_time: MicroTime, transitions: i32| LeaseSpec {
            holder_identity: Some(me.clone()),
            lease_duration_seconds: Some(seconds),
            acquire_time: Some(acquire_time),
            renew_time: Some(now.clone()),
            lease_transitions: Some(transitions),
            ..LeaseSpec::default()
        };
        // The fast path: a leader whose Lease is still valid renews the
        // Lease as it last wrote it, without reading it first; a conflict
        // (someone else wrote it) falls back to the read below.
        if self.is_leader() && self.observed_valid() {
            let written = self.written.lock().unwrap_or_else(PoisonError::into_inner).clone();
            if let Some(mut lease) = written {
                let spec = lease.spec.clone().unwrap_or_default();
                lease.spec = Some(record(
                    spec.acquire_time.clone().unwrap_or_else(|| now.clone()),
                    spec.lease_transitions.unwrap_or(0),
                ));
                match self.leases.replace(&self.config.lease_name, &PostParams::default(), &lease).await {
                    Ok(updated) => {
                        self.observe(updated.spec.as_ref().unwrap_or(&LeaseSpec::default()));
                        self.keep(updated);
                        return Ok(true);
                    }
                    Err(e) => tracing::debug!(lease = %self.config.lease_name, "renewing without a read failed: {e}"),
                }
            }
        }
        let Some(mut lease) = self.leases.get_opt(&self.config.lease_name).await? else {
            let lease = Lease {
                metadata: ObjectMeta {
                    name: Some(self.config.lease_name.clone()),
                    namespace: Some(self.config.lease_namespace.clone()),
                    ..ObjectMeta::default()
                },
                spec: Some(record(now.clone(), 0)),
            };
            let created = self.leases.create(&PostParams::default(), &lease).await?;
            self.observe(created.spec.as_ref().unwrap_or(&LeaseSpec::default()));
            self.keep(created);
            return Ok(true);
        };
        let spec = lease.spec.clone().unwrap_or_default();
        self.observe(&spec);
        let holder = spec.holder_identity.clone().unwrap_or_default();
        let held_by_me = holder == *me;
        if !holder.is_empty() && !held_by_me && self.observed_valid() {
            return Ok(false);
        }
        lease.spec = Some(if held_by_me {
            record(spec.acquire_time.clone().unwrap_or_else(|| now.clone()), spec.lease_transitions.unwrap_or(0))
        } else {
            record(now.clone(), spec.lease_transitions.unwrap_or(0).saturating_add(1))
        });
        // The resourceVersion read above makes this a compare-and-swap: a
        // rival's write in between fails it with a conflict.
        let updated = self.leases.replace(&self.config.lease_name, &PostParams::default(), &lease).await?;
        self.observe(updated.spec.as_ref().unwrap_or(&LeaseSpec::default()));
        self.keep(updated);
        Ok(true)
    }

    /// Keeps the Lease as written: for the next renewal, and its uid and
    /// resourceVersion for events.
    fn keep(&self, lease: Lease) {
        let meta = ObjectMeta {
            uid: lease.metadata.uid.clone(),
            resource_version: lease.metadata.resource_version.clone(),
            ..ObjectMeta::default()
        };
        *self.lease_meta.lock().unwrap_or_else(PoisonError::into_inner) = meta;
        *self.written.lock().unwrap_or_else(PoisonError::into_inner) = Some(lease);
    }

    /// Whether the Lease as last observed is still within its duration on
    /// this process's clock.
    fn observed_valid(&self) -> bool {
        let observed = self.observed.lock().unwrap_or_else(PoisonError::into_inner);
        observed.at.is_some_and(|at| at.elapsed() < observed.lease_duration)
    }

    /// Empties the holder (client-go's `release`), if this candidate still
    /// holds the Lease: holder `""`, a duration of one second, the
    /// transitions kept; tried again on a conflict.
    async fn release(&self) {
        let result: Result<(), kube::Error> = async {
            let mut conflicts = 0;
            loop {
                let Some(mut lease) = self.leases.get_opt(&self.config.lease_name).await? else { return Ok(()) };
                let spec = lease.spec.clone().unwrap_or_default();
                if spec.holder_identity.as_deref() != Some(&self.config.identity) {
                    return Ok(());
                }
                let now = MicroTime(k8s_openapi::jiff::Timestamp::now());
                lease.spec = Some(LeaseSpec {
                    holder_identity: Some(String::new()),
                    lease_duration_seconds: Some(1),
                    acquire_time: Some(now.clone()),
                    renew_time: Some(now),
                    lease_transitions: spec.lease_transitions,
                    ..LeaseSpec::default()
                });
                match self.leases.replace(&self.config.lease_name, &PostParams::default(), &lease).await {
                    Ok(released) => {
                        self.observe(released.spec.as_ref().unwrap_or(&LeaseSpec::default()));
                        self.keep(released);
                        return Ok(());
                    }
                    Err(kube::Error::Api(status)) if status.code == 409 && conflicts < 5 => conflicts += 1,
                    Err(e) => return Err(e),
                }
            }
        }
        .await;
        match result {
            Ok(()) => {
                tracing::info!(lease = %self.config.lease_name, identity = %self.config.identity, "released the lease")
            }
            Err(e) => tracing::warn!(lease = %self.config.lease_name, "cannot release the lease: {e}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicBool, Ordering};

    use super::*;
    use crate::testing::FakeApiServer;

    fn config(identity: &str) -> LeaderElectionConfig {
        LeaderElectionConfig {
            lease_duration: Duration::from_millis(800),
            renew_deadline: Duration::from_millis(500),
            retry_period: Duration::from_millis(100),
            ..LeaderElectionConfig::new("ctl", "default", identity)
        }
    }

    /// Runs `elector` with `lead` in a task until the sender is used.
    fn run_until_told<F, Fut>(
        elector: Arc<LeaderElector>,
        lead: F,
    ) -> (tokio::sync::oneshot::Sender<()>, tokio::task::JoinHandle<Result<Outcome, Error>>)
    where
        F: FnOnce(Leading) -> Fut + Send + 'static,
        Fut: Future<Output = ()> + Send,
    {
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            elector
                .run(
                    async {
                        let _ = stopped.await;
                    },
                    lead,
                )
                .await
        });
        (stop, task)
    }

    /// Once the flag returned is set, every Lease update fails with a 500.
    fn failing_updates(server: &FakeApiServer) -> Arc<AtomicBool> {
        let broken = Arc::new(AtomicBool::new(false));
        let flag = broken.clone();
        server.prepend_reactor("update", "leases", move |_| {
            flag.load(Ordering::SeqCst)
                .then(|| Err(kube::core::Status::failure("etcd is gone", "InternalError").with_code(500).boxed()))
        });
        broken
    }

    /// The Lease `default/ctl` with `spec`, already there.
    fn seed_lease(server: &FakeApiServer, spec: LeaseSpec) {
        let metadata = ObjectMeta { name: Some("ctl".into()), namespace: Some("default".into()), ..Default::default() };
        server.seed([Lease { metadata, spec: Some(spec) }]).unwrap();
    }

    fn holder(server: &FakeApiServer) -> Option<String> {
        server.object::<Lease>(Some("default"), "ctl").unwrap().and_then(|l| l.spec?.holder_identity)
    }

    /// client-go's `wait.Jitter(period, 1.2)`: 1.0 to 2.2 times the period
    /// (docs/scaling.md's failover bound).
    #[tokio::test]
    async fn retries_are_jittered_up_to_2_2_periods() {
        let elector = LeaderElector::new(FakeApiServer::new().client(), config("a")).unwrap();
        let period = Duration::from_millis(100);
        let waits: Vec<Duration> = (0..2000).map(|_| elector.jittered_retry()).collect();
        assert!(waits.iter().all(|w| *w >= period && *w <= period.mul_f64(2.2)), "{waits:?}");
        assert!(waits.iter().any(|w| *w > period.mul_f64(2.0)), "the upper part of the range is used");
    }

    /// `check` is healthy while the leader renews (and when it does not
    /// lead), and fails while a leader whose thread is blocked cannot renew
    /// past the Lease's duration and the tolerance.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn check_fails_while_a_stuck_leader_cannot_renew() {
        let server = FakeApiServer::new();
        server.register::<Lease>();
        let elector = Arc::new(LeaderElector::new(server.client(), config("a")).unwrap());
        assert!(elector.check(Duration::ZERO).is_ok(), "not leading: nothing to check");
        let (started_tx, started) = tokio::sync::oneshot::channel();
        let (stop, task) = run_until_told(elector.clone(), |_leading| async move {
            let _ = started_tx.send(());
            tokio::time::sleep(Duration::from_millis(400)).await;
            // Stuck: the election's task shares this thread and cannot renew.
            std::thread::sleep(Duration::from_millis(1600));
        });
        started.await.unwrap();
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert!(elector.is_leader());
        assert!(elector.check(Duration::ZERO).is_ok(), "renewing every 100 ms");
        // The runtime's timers may wait for the blocked worker: this thread
        // (not one of the runtime's) sleeps on its own.
        std::thread::sleep(Duration::from_millis(1200));
        // 800 ms past the last renewal at the least, and still leading.
        assert!(elector.is_leader());
        let err = elector.check(Duration::ZERO).unwrap_err();
        assert!(matches!(err, Error::NotRenewed(ref lease) if lease == "ctl"), "{err}");
        assert!(elector.check(Duration::from_secs(10)).is_ok(), "within the tolerance");
        let _ = stop.send(());
        assert_eq!(task.await.unwrap().unwrap(), Outcome::Stopped);
        assert!(elector.check(Duration::ZERO).is_ok(), "not leading any more");
    }

    #[test]
    fn timings_are_checked_against_each_other() {
        let ok = config("a");
        assert!(ok.validate().is_ok());
        let bad = [
            LeaderElectionConfig { lease_duration: Duration::from_millis(500), ..ok.clone() },
            LeaderElectionConfig { renew_deadline: Duration::from_millis(110), ..ok.clone() },
            LeaderElectionConfig { retry_period: Duration::ZERO, ..ok.clone() },
            LeaderElectionConfig { identity: String::new(), ..ok.clone() },
        ];
        for c in bad {
            assert!(matches!(c.validate(), Err(Error::Config(_))), "{c:?}");
        }
        let defaults = LeaderElectionConfig::new("l", "ns", "me");
        assert_eq!(
            (defaults.lease_duration, defaults.renew_deadline, defaults.retry_period),
            (Duration::from_secs(15), Duration::from_secs(10), Duration::from_secs(2))
        );
        assert!(defaults.validate().is_ok());
    }

    /// client-go's Lease lock events: "became leader" and "stopped
    /// leading" about the Lease, by the election's recorder.
    #[tokio::test]
    async fn a_recorder_gets_the_leader_election_events_about_the_lease() {
        use k8s_openapi::api::events::v1::Event;
        let server = FakeApiServer::new();
        server.register::<Lease>();
        server.register::<Event>();
        let recorder = EventRecorder::new(server.client(), "ctl-controller", Some("a"));
        let elector = Arc::new(LeaderElector::new(server.client(), config("a")).unwrap().with_event_recorder(recorder));
        let (stop, task) = run_until_told(elector.clone(), |mut leading| async move { leading.lost().await });
        while holder(&server).as_deref() != Some("a") {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        stop.send(()).unwrap();
        assert_eq!(task.await.unwrap().unwrap(), Outcome::Stopped);
        let lease_uid = server.object::<Lease>(Some("default"), "ctl").unwrap().unwrap().metadata.uid;
        assert!(lease_uid.is_some());
        let mut notes = Vec::new();
        for event in server.objects::<Event>().unwrap() {
            let about = event.regarding.clone().unwrap_or_default();
            assert_eq!((about.kind.as_deref(), about.name.as_deref()), (Some("Lease"), Some("ctl")), "{event:?}");
            assert_eq!(about.api_version.as_deref(), Some("coordination.k8s.io/v1"));
            assert_eq!(about.uid, lease_uid);
            assert_eq!((event.reason.as_deref(), event.type_.as_deref()), (Some("LeaderElection"), Some("Normal")));
            assert_eq!(event.reporting_controller.as_deref(), Some("ctl-controller"));
            notes.push(event.note.unwrap_or_default());
        }
        notes.sort();
        assert_eq!(notes, ["a became leader", "a stopped leading"]);
    }

    #[tokio::test]
    async fn one_leads_and_a_release_hands_over_at_once() {
        let server = FakeApiServer::new();
        server.register::<Lease>();
        let a = Arc::new(LeaderElector::new(server.client(), config("a")).unwrap());
        let leaders_seen_by_b = Arc::new(Mutex::new(Vec::new()));
        let b = Arc::new(LeaderElector::new(server.client(), config("b")).unwrap().on_new_leader({
            let seen = leaders_seen_by_b.clone();
            move |who| seen.lock().unwrap().push(who.to_string())
        }));
        let (stop_a, a_task) = run_until_told(a.clone(), |mut leading| async move { leading.lost().await });
        while holder(&server).as_deref() != Some("a") {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let b_led = Arc::new(AtomicBool::new(false));
        let b_task = tokio::spawn({
            let (b, b_led) = (b.clone(), b_led.clone());
            async move {
                b.run(std::future::pending(), |_| async move {
                    b_led.store(true, Ordering::SeqCst);
                })
                .await
            }
        });
        // a renews: b never takes over while a is alive, however long b waits.
        tokio::time::sleep(Duration::from_millis(2000)).await;
        assert!(!b_led.load(Ordering::SeqCst));
        assert_eq!(b.leader().as_deref(), Some("a"));
        assert!(a.is_leader() && !b.is_leader());

        // a is told to stop: it releases, and b leads within about a retry period.
        let released = Instant::now();
        stop_a.send(()).unwrap();
        assert_eq!(a_task.await.unwrap().unwrap(), Outcome::Stopped);
        assert_eq!(b_task.await.unwrap().unwrap(), Outcome::Stopped);
        assert!(b_led.load(Ordering::SeqCst));
        assert!(released.elapsed() < Duration::from_millis(600), "took {:?}", released.elapsed());
        let lease = server.object::<Lease>(Some("default"), "ctl").unwrap().unwrap().spec.unwrap();
        assert_eq!(lease.lease_transitions, Some(1));
        assert_eq!(*leaders_seen_by_b.lock().unwrap(), ["a", "b"]);
    }

    /// Told to stop, a leader renews while `lead` finishes its work: no one
    /// else leads meanwhile, however long that takes; then it releases.
    #[tokio::test]
    async fn the_lease_is_held_while_lead_drains_after_stop() {
        let server = FakeApiServer::new();
        server.register::<Lease>();
        let a = Arc::new(LeaderElector::new(server.client(), config("a")).unwrap());
        let b = Arc::new(LeaderElector::new(server.client(), config("b")).unwrap());
        // Drains for twice the lease duration after being told.
        let (stop_a, a_task) = run_until_told(a.clone(), |mut leading| async move {
            leading.lost().await;
            tokio::time::sleep(Duration::from_millis(1600)).await;
        });
        while holder(&server).as_deref() != Some("a") {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let b_task = tokio::spawn({
            let b = b.clone();
            async move { b.run(std::future::pending(), |_| async {}).await }
        });
        stop_a.send(()).unwrap();
        tokio::time::sleep(Duration::from_millis(1200)).await;
        assert_eq!(holder(&server).as_deref(), Some("a"), "taken while a was still draining");
        assert!(a.is_leader() && !b.is_leader());
        assert_eq!(a_task.await.unwrap().unwrap(), Outcome::Stopped);
        assert_eq!(b_task.await.unwrap().unwrap(), Outcome::Stopped);
        assert_eq!(holder(&server).as_deref(), Some(""), "b released after leading");
    }

    /// As client-go: the leader renews the Lease it last wrote without
    /// reading it first; every write is a fresh record (coordinated leader
    /// election's `preferredHolder` and `strategy` cleared); a release
    /// writes the holder `""`, keeps the transitions, is tried again on a
    /// conflict, and leaves no leader observed.
    #[tokio::test]
    async fn renewals_skip_the_read_and_a_release_survives_a_conflict() {
        let server = FakeApiServer::new();
        seed_lease(
            &server,
            LeaseSpec {
                preferred_holder: Some("someone".into()),
                strategy: Some("OldestEmulationVersion".into()),
                lease_transitions: Some(4),
                ..Default::default()
            },
        );
        let a = Arc::new(LeaderElector::new(server.client(), config("a")).unwrap());
        let conflicts = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let (stop, task) = run_until_told(a.clone(), |mut leading| async move { leading.lost().await });
        while holder(&server).as_deref() != Some("a") {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let spec = server.object::<Lease>(Some("default"), "ctl").unwrap().unwrap().spec.unwrap();
        assert_eq!((spec.preferred_holder, spec.strategy, spec.lease_transitions), (None, None, Some(5)));
        server.clear_actions();
        tokio::time::sleep(Duration::from_millis(550)).await;
        let verbs: Vec<String> = server.actions().into_iter().map(|a| a.verb).collect();
        assert!(verbs.iter().filter(|v| *v == "update").count() >= 4, "{verbs:?}");
        assert!(!verbs.iter().any(|v| v == "get"), "renewals read the Lease: {verbs:?}");

        // The release meets a conflict once, and is tried again.
        server.prepend_reactor("update", "leases", {
            let conflicts = conflicts.clone();
            move |action| {
                let releasing = action.body.as_ref().is_some_and(|o| o["spec"]["holderIdentity"] == "");
                (releasing && conflicts.fetch_add(1, Ordering::SeqCst) == 0).then(|| {
                    Err(kube::core::Status::failure("the object has been modified", "Conflict").with_code(409).boxed())
                })
            }
        });
        stop.send(()).unwrap();
        assert_eq!(task.await.unwrap().unwrap(), Outcome::Stopped);
        assert_eq!(conflicts.load(Ordering::SeqCst), 2, "a conflict, then the release");
        let spec = server.object::<Lease>(Some("default"), "ctl").unwrap().unwrap().spec.unwrap();
        assert_eq!(
            (spec.holder_identity.as_deref(), spec.lease_duration_seconds, spec.lease_transitions),
            (Some(""), Some(1), Some(5))
        );
        assert_eq!(a.leader(), None, "no leader after the release");
    }

    /// A `lead` that does not end when leadership is lost keeps `run` from
    /// returning: `check` reports it once the Lease has expired, as
    /// client-go's health check does for a leader that lost its Lease.
    #[tokio::test]
    async fn check_fails_while_lead_outlives_a_lost_lease() {
        let server = FakeApiServer::new();
        server.register::<Lease>();
        let broken = failing_updates(&server);
        let a = Arc::new(LeaderElector::new(server.client(), config("a")).unwrap());
        let (ignores_loss_tx, ignores_loss) = tokio::sync::oneshot::channel::<()>();
        let (_stop, task) = run_until_told(a.clone(), |_leading| async move {
            let _ = ignores_loss.await;
        });
        while !a.is_leader() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        broken.store(true, Ordering::SeqCst);
        while a.is_leader() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert!(a.check(Duration::from_millis(300)).is_ok(), "lost just now: the Lease has not expired yet");
        tokio::time::sleep(Duration::from_millis(900)).await;
        assert!(matches!(a.check(Duration::ZERO), Err(Error::NotRenewed(_))));
        let _ = ignores_loss_tx.send(());
        assert_eq!(task.await.unwrap().unwrap(), Outcome::Lost);
        assert!(a.check(Duration::ZERO).is_ok(), "run has returned");
    }

    #[tokio::test]
    async fn a_lease_expires_on_the_local_clock_not_by_its_renew_time() {
        let server = FakeApiServer::new();
        // A holder that renewed an hour ago by the wall clock: a candidate
        // that only now sees it still waits the whole lease duration.
        let hour_ago =
            MicroTime(k8s_openapi::jiff::Timestamp::now() - k8s_openapi::jiff::SignedDuration::from_secs(3600));
        seed_lease(
            &server,
            LeaseSpec {
                holder_identity: Some("ghost".into()),
                lease_duration_seconds: Some(1),
                renew_time: Some(hour_ago),
                ..Default::default()
            },
        );
        let c = LeaderElector::new(server.client(), config("c")).unwrap();
        let started = Instant::now();
        let outcome = c.run(std::future::pending(), |_| async {}).await.unwrap();
        assert_eq!(outcome, Outcome::Stopped);
        assert!(started.elapsed() >= Duration::from_secs(1), "took over after {:?}", started.elapsed());
        assert_eq!(holder(&server).as_deref(), Some(""), "released after leading");
    }

    /// The fake server, except that once `stall` is set a `PUT` (a Lease
    /// renewal) is never answered (a black-holed connection), or with a
    /// `delay` answered that much later (a slow server).
    #[derive(Clone)]
    struct Stalling {
        inner: crate::testing::FakeApiService,
        stall: Arc<AtomicBool>,
        delay: Option<Duration>,
    }

    impl tower::Service<http::Request<kube::client::Body>> for Stalling {
        type Response = http::Response<crate::testing::FakeBody>;
        type Error = std::convert::Infallible;
        type Future = futures::future::BoxFuture<'static, Result<Self::Response, Self::Error>>;

        fn poll_ready(&mut self, _: &mut std::task::Context<'_>) -> std::task::Poll<Result<(), Self::Error>> {
            std::task::Poll::Ready(Ok(()))
        }

        fn call(&mut self, req: http::Request<kube::client::Body>) -> Self::Future {
            if self.stall.load(Ordering::SeqCst) && req.method() == http::Method::PUT {
                let Some(delay) = self.delay else { return Box::pin(std::future::pending()) };
                let mut inner = self.inner.clone();
                return Box::pin(async move {
                    tokio::time::sleep(delay).await;
                    inner.call(req).await
                });
            }
            self.inner.call(req)
        }
    }

    /// A candidate on a fake server whose answers stop while the flag is
    /// set (the server is kept alive by the caller).
    fn stallable(identity: &str) -> (FakeApiServer, Arc<AtomicBool>, LeaderElector) {
        let server = FakeApiServer::new();
        server.register::<Lease>();
        let stall = Arc::new(AtomicBool::new(false));
        let client =
            kube::Client::new(Stalling { inner: server.service(), stall: stall.clone(), delay: None }, "default");
        let elector = LeaderElector::new(client, config(identity)).unwrap();
        (server, stall, elector)
    }

    #[tokio::test]
    async fn a_renewal_never_answered_ends_leadership_within_the_renew_deadline_and_lead_keeps_running() {
        let (_server, stall, a) = stallable("a");
        let outcome = a
            .run(std::future::pending(), |mut leading| async move {
                stall.store(true, Ordering::SeqCst);
                let since = Instant::now();
                // `lead` is polled while a renewal hangs: its ticks go on.
                let mut ticks = 0u32;
                loop {
                    tokio::select! {
                        () = leading.lost() => break,
                        () = tokio::time::sleep(Duration::from_millis(20)) => ticks += 1,
                    }
                }
                let took = since.elapsed();
                assert!(took >= Duration::from_millis(500) && took < Duration::from_millis(900), "{took:?}");
                assert!(ticks >= 20, "lead was paused while renewing: {ticks} ticks");
            })
            .await
            .unwrap();
        assert_eq!(outcome, Outcome::Lost);
        assert!(!a.is_leader());
    }

    /// A leader told to stop keeps renewing while `lead` finishes; losing
    /// the Lease then is `Lost`, not `Stopped`: the work done after the loss
    /// was not guarded.
    #[tokio::test]
    async fn a_lease_lost_while_lead_finishes_after_the_stop_is_lost() {
        let (_server, stall, a) = stallable("a");
        let outcome = tokio::time::timeout(
            Duration::from_secs(10),
            a.run(tokio::time::sleep(Duration::from_millis(300)), |mut leading| async move {
                // Told to stop; the server stops answering while the last
                // work is finished.
                leading.lost().await;
                stall.store(true, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(1500)).await;
            }),
        )
        .await
        .expect("run ended")
        .unwrap();
        assert_eq!(outcome, Outcome::Lost);
        assert!(!a.is_leader());
    }

    /// A campaign request the server never answers does not hold up `stop`.
    #[tokio::test]
    async fn stop_ends_a_campaign_whose_request_hangs() {
        let server = FakeApiServer::new();
        server.register::<Lease>();
        // Held by another candidate for 1 s: the takeover after it (a PUT)
        // never gets an answer.
        let lease = Lease {
            metadata: ObjectMeta { name: Some("ctl".into()), ..Default::default() },
            spec: Some(LeaseSpec {
                holder_identity: Some("other".into()),
                lease_duration_seconds: Some(1),
                ..Default::default()
            }),
        };
        Api::<Lease>::namespaced(server.client(), "default").create(&PostParams::default(), &lease).await.unwrap();
        let stall = Arc::new(AtomicBool::new(true));
        let client = kube::Client::new(Stalling { inner: server.service(), stall, delay: None }, "default");
        let a = LeaderElector::new(client, config("a")).unwrap();
        let since = Instant::now();
        let outcome = tokio::time::timeout(
            Duration::from_secs(10),
            a.run(tokio::time::sleep(Duration::from_millis(2000)), |_| async {}),
        )
        .await
        .expect("stop waited for the hanging request");
        assert_eq!(outcome.unwrap(), Outcome::NeverLed);
        assert!(since.elapsed() < Duration::from_millis(2500), "{:?}", since.elapsed());
    }

    /// Renewals that each take 300 ms of a 500 ms renew deadline are all
    /// in time: each round of attempts has the whole deadline, counted from
    /// its first attempt (client-go's), not from the last success's send,
    /// which left the second slow renewal 100 ms.
    #[tokio::test]
    async fn slow_renewals_answered_within_the_renew_deadline_keep_the_lease() {
        let server = FakeApiServer::new();
        server.register::<Lease>();
        let stall = Arc::new(AtomicBool::new(false));
        let slow = Stalling { inner: server.service(), stall: stall.clone(), delay: Some(Duration::from_millis(300)) };
        let a = LeaderElector::new(kube::Client::new(slow, "default"), config("a")).unwrap();
        let outcome = a
            .run(tokio::time::sleep(Duration::from_millis(2500)), |mut leading| async move {
                stall.store(true, Ordering::SeqCst);
                // Over when the Lease is lost, or at the stop.
                leading.lost().await;
            })
            .await
            .unwrap();
        assert_eq!(outcome, Outcome::Stopped, "leadership lost to slow renewals");
        assert_eq!(holder(&server).as_deref(), Some(""), "released when stopped");
    }

    /// A round of failed renewals ends at its deadline, not at the first
    /// attempt after it: with a deadline of 450 ms and 200 ms between
    /// attempts, the leader stops 450 ms after the first failure (client-go's
    /// `PollUntilContextTimeout`), not at the fourth attempt, 600 ms after.
    #[tokio::test(start_paused = true)]
    async fn a_round_of_renewals_ends_at_its_deadline_between_attempts() {
        let server = FakeApiServer::new();
        server.register::<Lease>();
        let config = LeaderElectionConfig {
            lease_duration: Duration::from_millis(1500),
            renew_deadline: Duration::from_millis(450),
            retry_period: Duration::from_millis(200),
            ..LeaderElectionConfig::new("ctl", "default", "a")
        };
        let a = LeaderElector::new(server.client(), config).unwrap();
        let broken = Arc::new(AtomicBool::new(false));
        let first_failure: Arc<Mutex<Option<Instant>>> = Arc::default();
        let (flag, first) = (broken.clone(), first_failure.clone());
        server.prepend_reactor("update", "leases", move |_| {
            flag.load(Ordering::SeqCst).then(|| {
                first.lock().unwrap().get_or_insert_with(Instant::now);
                Err(kube::core::Status::failure("etcd is gone", "InternalError").with_code(500).boxed())
            })
        });
        let outcome = a
            .run(std::future::pending(), |mut leading| async move {
                broken.store(true, Ordering::SeqCst);
                leading.lost().await;
                let since = first_failure.lock().unwrap().expect("a renewal failed");
                // The clock is paused: only the timers move it.
                let took = since.elapsed();
                assert!(took >= Duration::from_millis(440) && took <= Duration::from_millis(460), "{took:?}");
            })
            .await
            .unwrap();
        assert_eq!(outcome, Outcome::Lost);
    }

    #[tokio::test]
    async fn a_leader_that_cannot_renew_stops_leading_within_the_renew_deadline() {
        let server = FakeApiServer::new();
        server.register::<Lease>();
        let a = LeaderElector::new(server.client(), config("a")).unwrap();
        let broken = failing_updates(&server);
        let outcome = a
            .run(std::future::pending(), |mut leading| {
                let broken = broken.clone();
                async move {
                    broken.store(true, Ordering::SeqCst);
                    let since = Instant::now();
                    leading.lost().await;
                    let took = since.elapsed();
                    assert!(took >= Duration::from_millis(500) && took < Duration::from_millis(900), "{took:?}");
                }
            })
            .await
            .unwrap();
        assert_eq!(outcome, Outcome::Lost);
        assert!(!a.is_leader());
    }
}

//! `student-controller`: the seeds' sample controller in Rust.
//!
//! It watches Students through the generated shared informer factory, queues
//! their keys on a rate-limited work queue, and reconciles each one: a
//! ConfigMap `student-<name>` owned by the Student, the Student's status and a
//! `Synced` event. A finalizer cleans the ConfigMap up on deletion. The first
//! SIGINT/SIGTERM drains in-flight work and exits 0; a second exits 1.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::Parser;
use kube::config::{KubeConfigOptions, Kubeconfig};

use codegen_runtime::events::EventRecorder;
use codegen_runtime::leaderelection::{LeaderElectionConfig, LeaderElector, Outcome};
use codegen_runtime::sharding::{ShardOwnership, run_shards};
use student_controller::controller::{Controller, ControllerOptions};

/// Command-line flags, as sample-controller's.
#[derive(Debug, Parser)]
#[command(version, about = "The seeds' Student controller, on kube-codegen's generated clientset")]
struct Flags {
    /// Path to a kubeconfig. Without it: $KUBECONFIG, ~/.kube/config, or the
    /// in-cluster service account.
    #[arg(long)]
    kubeconfig: Option<PathBuf>,
    /// The address of the Kubernetes API server; overrides the server in the
    /// kubeconfig.
    #[arg(long)]
    master: Option<String>,
    /// How many Students are reconciled at once.
    #[arg(long, default_value_t = 2)]
    workers: usize,
    /// Resync period of the informers, e.g. `30s`, `5m`; `0` never resyncs.
    #[arg(long, default_value = "0", value_parser = parse_duration)]
    resync: Duration,
    /// Watch and reconcile only this namespace (default: all namespaces).
    #[arg(long)]
    namespace: Option<String>,
    /// How long a watch may deliver nothing (no event, no bookmark) before
    /// its connection is taken for dead and the watch started again; `0`
    /// waits forever.
    #[arg(long, default_value = "150s", value_parser = parse_duration)]
    watch_idle_timeout: Duration,
    /// Give up on a request (connecting, TLS, each read and write) after
    /// this long, e.g. `30s`; `0` keeps kube's defaults (minutes). Watches
    /// are started again when they time out.
    #[arg(long, default_value = "0", value_parser = parse_duration)]
    request_timeout: Duration,
    /// Run as one of several replicas: only the holder of the Lease
    /// `student-controller` reconciles (client-go's leader election).
    #[arg(long)]
    leader_elect: bool,
    /// Namespace of the leader election Lease (default: `--namespace`, else
    /// `default`).
    #[arg(long)]
    leader_elect_namespace: Option<String>,
    /// This replica's identity in the Lease (default: `--instance`).
    #[arg(long)]
    leader_elect_identity: Option<String>,
    /// How long other replicas wait after the Lease last changed before
    /// they take it over.
    #[arg(long, default_value = "15s", value_parser = parse_duration)]
    leader_elect_lease_duration: Duration,
    /// How long the leader keeps trying to renew before it stops leading.
    #[arg(long, default_value = "10s", value_parser = parse_duration)]
    leader_elect_renew_deadline: Duration,
    /// How often replicas try to acquire, and the leader renews.
    #[arg(long, default_value = "2s", value_parser = parse_duration)]
    leader_elect_retry_period: Duration,
    /// Split the Students into this many shards, each guarded by a Lease
    /// `student-controller-shard-<n>` (timings and namespace as for
    /// `--leader-elect`); this replica reconciles the shards it holds.
    #[arg(long, conflicts_with = "leader_elect", value_parser = clap::value_parser!(u32).range(1..))]
    shards: Option<u32>,
    /// Hold at most this many shards at once (default: all), so that the
    /// replicas share them and the rest stand by.
    #[arg(long, requires = "shards", value_parser = clap::value_parser!(u32).range(1..))]
    max_shards: Option<u32>,
    /// Identity recorded as the events' reporting instance (and in the
    /// User-Agent header), and the Lease identity with `--leader-elect`:
    /// each replica needs its own. Default: the pod's name ($HOSTNAME), else
    /// `student-controller-<pid>-<random>`.
    #[arg(long, default_value_t = default_instance())]
    instance: String,
}

/// A name no other replica has: the pod's, else made up.
fn default_instance() -> String {
    match std::env::var("HOSTNAME") {
        Ok(host) if !host.is_empty() => host,
        _ => {
            let nanos =
                std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
            format!("student-controller-{}-{:06x}", std::process::id(), nanos & 0xff_ffff)
        }
    }
}

fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let (number, unit) = text.split_at(text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len()));
    let n: u64 = number.parse().map_err(|_| format!("`{text}` is not a duration like 30s, 5m or 1h"))?;
    let secs = match unit {
        "" | "s" => n,
        "m" => n * 60,
        "h" => n * 3600,
        "ms" => return Ok(Duration::from_millis(n)),
        _ => return Err(format!("unknown unit `{unit}` in `{text}`: use ms, s, m or h")),
    };
    Ok(Duration::from_secs(secs))
}

async fn client(flags: &Flags) -> Result<kube::Client> {
    let mut config = match &flags.kubeconfig {
        Some(path) => {
            let kubeconfig = Kubeconfig::read_from(path).with_context(|| format!("reading {}", path.display()))?;
            kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default()).await?
        }
        None => kube::Config::infer().await.context("no kubeconfig and not running in a cluster")?,
    };
    if let Some(master) = &flags.master {
        config.cluster_url = master.parse().with_context(|| format!("--master {master} is not a URL"))?;
    }
    // Names this replica in the API server's audit log.
    let agent = format!("student-controller/{} ({})", env!("CARGO_PKG_VERSION"), flags.instance);
    if let Ok(value) = http::HeaderValue::from_str(&agent) {
        config.headers.push((http::header::USER_AGENT, value));
    }
    if !flags.request_timeout.is_zero() {
        config.connect_timeout = Some(flags.request_timeout);
        config.read_timeout = Some(flags.request_timeout);
        config.write_timeout = Some(flags.request_timeout);
    }
    // The API server's warnings (deprecated versions, fields the schema
    // does not declare), logged once each as kubectl prints them; kube's
    // client drops them.
    let warnings = codegen_runtime::warnings::WarningLayer::logging().deduplicated();
    // Retries as client-go's: only answers with Retry-After, not kube's
    // retries of every 429, 503 and 504 (a create included).
    config.default_retry = false;
    let retries = codegen_runtime::retry::RetryAfterLayer::default();
    Ok(kube::client::ClientBuilder::try_from(config)?.with_layer(&warnings).with_layer(&retries).build())
}

#[tokio::main]
async fn main() {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| "info,kube_client=warn,kube_runtime=warn".into()),
        )
        .with_target(false)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stdout()))
        .init();
    let flags = Flags::parse();
    let code = match run(flags).await {
        Ok(()) => 0,
        Err(e) => {
            tracing::error!("{e:#}");
            1
        }
    };
    std::process::exit(code);
}

// The leader election Lease (`--leader-elect`) and the shard Leases
// (`--shards`).
#[codegen_macros::rbac(groups = "coordination.k8s.io", resources = "leases", verbs = "get;create;update")]
async fn run(flags: Flags) -> Result<()> {
    let shutdown = codegen_runtime::signal::shutdown_signal();
    let client = client(&flags).await?;
    let options = ControllerOptions {
        workers: flags.workers.max(1),
        resync: (!flags.resync.is_zero()).then_some(flags.resync),
        instance: flags.instance.clone(),
        namespace: flags.namespace.clone(),
        watch_idle_timeout: (!flags.watch_idle_timeout.is_zero()).then_some(flags.watch_idle_timeout),
        shards: None,
    };
    let namespace =
        flags.leader_elect_namespace.clone().or_else(|| flags.namespace.clone()).unwrap_or_else(|| "default".into());
    let identity = flags.leader_elect_identity.clone().unwrap_or_else(|| flags.instance.clone());
    let lease = |name: &str| LeaderElectionConfig {
        lease_duration: flags.leader_elect_lease_duration,
        renew_deadline: flags.leader_elect_renew_deadline,
        retry_period: flags.leader_elect_retry_period,
        release_on_cancel: true,
        ..LeaderElectionConfig::new(name, namespace.clone(), identity.clone())
    };
    if let Some(shards) = flags.shards {
        let ownership = ShardOwnership::new(shards);
        let stop_shards = codegen_runtime::signal::ShutdownSignal::manual();
        let elections = tokio::spawn(run_shards(
            client.clone(),
            lease("student-controller-shard"),
            ownership.clone(),
            flags.max_shards.unwrap_or(shards) as usize,
            stop_shards.clone(),
        ));
        let options = ControllerOptions { shards: Some(ownership), ..options };
        let result = Controller::new(client, options).run(shutdown).await;
        // Only now give the shards up: nothing of them is in flight here.
        stop_shards.trigger();
        elections.await??;
        return result;
    }
    if !flags.leader_elect {
        return Controller::new(client, options).run(shutdown).await;
    }
    let config = lease("student-controller");
    // "<identity> became leader" / "stopped leading" events about the Lease,
    // as client-go's leader election records them.
    let recorder = EventRecorder::new(client.clone(), "student-controller", Some(&flags.instance));
    let elector = LeaderElector::new(client.clone(), config)?
        .on_new_leader(|who| tracing::info!("the leader is {who}"))
        .with_event_recorder(recorder);
    tracing::info!("waiting to become the leader");
    let mut result = Ok(());
    let outcome = elector
        .run(shutdown.recv(), |mut leading| {
            let result = &mut result;
            let shutdown = shutdown.clone();
            async move {
                // Stop the controller when leadership ends, like a shutdown.
                let controller_stop = codegen_runtime::signal::ShutdownSignal::manual();
                let run = Controller::new(client, options).run(controller_stop.clone());
                tokio::pin!(run);
                tokio::select! {
                    r = &mut run => *result = r,
                    () = leading.lost() => {
                        controller_stop.trigger();
                        *result = run.await;
                    }
                    () = shutdown.recv() => {
                        controller_stop.trigger();
                        *result = run.await;
                    }
                }
            }
        })
        .await?;
    if outcome == Outcome::Lost {
        // client-go's sample controller exits too: another replica leads now.
        anyhow::bail!("leadership lost: the lease was not renewed in time");
    }
    result
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::Flags;

    /// No shards, or a replica that may hold none, is a usage error: such a
    /// replica would never reconcile, silently.
    #[test]
    fn zero_shards_are_refused() {
        for args in [&["--shards", "0"][..], &["--shards", "3", "--max-shards", "0"]] {
            let argv = std::iter::once("student-controller").chain(args.iter().copied());
            assert!(Flags::try_parse_from(argv).is_err(), "{args:?}");
        }
        assert!(Flags::try_parse_from(["student-controller", "--shards", "3", "--max-shards", "1"]).is_ok());
    }
}

//! The `{{ crate_name }}` binary: connects to the cluster, optionally waits
//! to become the leader, and runs the controller until SIGINT/SIGTERM.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::Parser;
use codegen_runtime::events::EventRecorder;
use codegen_runtime::leaderelection::{LeaderElectionConfig, LeaderElector, Outcome};
use codegen_runtime::signal::{ShutdownSignal, shutdown_signal};
use kube::config::{KubeConfigOptions, Kubeconfig};

use {{ crate_ident }}::controller::{Controller, ControllerOptions, NAME};

/// Command-line flags.
#[derive(Debug, Parser)]
#[command(version, about = "Reconciles {{ kind }} objects ({{ group }})")]
struct Flags {
    /// Path to a kubeconfig. Without it: $KUBECONFIG, ~/.kube/config, or the
    /// in-cluster service account.
    #[arg(long)]
    kubeconfig: Option<PathBuf>,
    /// How many objects are reconciled at once.
    #[arg(long, default_value_t = 2)]
    workers: usize,
    /// Watch and reconcile only this namespace (default: all namespaces).
    #[arg(long)]
    namespace: Option<String>,
    /// Run as one of several replicas: only the holder of the Lease
    /// `{{ crate_name }}` reconciles.
    #[arg(long)]
    leader_elect: bool,
    /// Namespace of the leader election Lease.
    #[arg(long, default_value = "default")]
    leader_elect_namespace: String,
    /// This replica's identity in the Lease (default: the host name).
    #[arg(long)]
    leader_elect_identity: Option<String>,
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
    if let Err(e) = run(Flags::parse()).await {
        tracing::error!("{e:#}");
        std::process::exit(1);
    }
}

async fn client(flags: &Flags) -> Result<kube::Client> {
    let mut config = match &flags.kubeconfig {
        Some(path) => {
            let kubeconfig = Kubeconfig::read_from(path).with_context(|| format!("reading {}", path.display()))?;
            kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default()).await?
        }
        None => kube::Config::infer().await.context("no kubeconfig and not running in a cluster")?,
    };
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

// The leader election Lease (`--leader-elect`).
#[codegen_macros::rbac(groups = "coordination.k8s.io", resources = "leases", verbs = "get;create;update")]
async fn run(flags: Flags) -> Result<()> {
    let shutdown = shutdown_signal();
    let client = client(&flags).await?;
    let options = ControllerOptions { workers: flags.workers.max(1), namespace: flags.namespace.clone() };
    if !flags.leader_elect {
        return Controller::new(client, options).run(shutdown).await;
    }
    let identity = match &flags.leader_elect_identity {
        Some(identity) => identity.clone(),
        // The pod's name; else made up, unique enough that two replicas
        // never share it (PID 1 in every container).
        None => std::env::var("HOSTNAME").ok().filter(|h| !h.is_empty()).unwrap_or_else(|| {
            let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
            format!("{{ crate_name }}-{}-{:06x}", std::process::id(), nanos & 0xff_ffff)
        }),
    };
    let config = LeaderElectionConfig {
        lease_duration: Duration::from_secs(15),
        renew_deadline: Duration::from_secs(10),
        retry_period: Duration::from_secs(2),
        release_on_cancel: true,
        ..LeaderElectionConfig::new("{{ crate_name }}", flags.leader_elect_namespace.clone(), identity)
    };
    // "<identity> became leader" / "stopped leading" events about the Lease,
    // as client-go's leader election records them.
    let recorder = EventRecorder::new(client.clone(), NAME, Some(&config.identity));
    let elector = LeaderElector::new(client.clone(), config)?;
    let elector =
        elector.on_new_leader(|who| tracing::info!("the leader is {who}")).with_event_recorder(recorder);
    tracing::info!("waiting to become the leader");
    let mut result = Ok(());
    let outcome = elector
        .run(shutdown.recv(), |mut leading| {
            let result = &mut result;
            let shutdown = shutdown.clone();
            async move {
                // Leadership lost or a signal: stop the controller.
                let stop = ShutdownSignal::manual();
                let run = Controller::new(client, options).run(stop.clone());
                tokio::pin!(run);
                tokio::select! {
                    r = &mut run => *result = r,
                    () = leading.lost() => { stop.trigger(); *result = run.await; }
                    () = shutdown.recv() => { stop.trigger(); *result = run.await; }
                }
            }
        })
        .await?;
    if outcome == Outcome::Lost {
        anyhow::bail!("leadership lost: the lease was not renewed in time");
    }
    result
}

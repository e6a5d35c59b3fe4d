//! A real kube-apiserver and etcd on loopback for kube-codegen's end-to-end
//! tests.
//!
//! The binaries are built from Go modules by `testenv/build.sh` into a cache
//! directory outside the clone. [`TestEnv::start`] starts etcd and
//! kube-apiserver on free loopback ports with RBAC on and token
//! authentication, waits until the server is ready, and writes kubeconfigs
//! for an admin (`system:masters`) and for unprivileged users. Both
//! processes are stopped by PID when the environment is dropped (also when a
//! test panics) or, for [`TestEnv::shared`], when the test binary exits.
//!
//! ```no_run
//! # async fn demo() -> anyhow::Result<()> {
//! let env = codegen_testenv::TestEnv::shared();
//! let client = env.admin_client().await?;
//! let ns = env.create_namespace("demo").await?;
//! let out = env.kubectl(&["get", "configmaps", "-n", &ns]);
//! assert!(out.status.success());
//! # let _ = client; Ok(()) }
//! ```
#![deny(missing_docs)]

mod aggregated;
mod binaries;
mod process;
pub mod proxy;
pub mod tls;

use std::fmt::Write as _;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use k8s_openapi::api::authentication::v1::TokenRequest;
use k8s_openapi::api::core::v1::{Namespace, ServiceAccount};
use k8s_openapi::api::rbac::v1::{PolicyRule, Role, RoleBinding, RoleRef};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, ObjectMeta, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Client, Config};

pub use aggregated::{SAMPLE_ETCD_PREFIX, SAMPLE_GROUP, SAMPLE_NAMESPACE, SampleApiServer};
pub use binaries::{Binaries, CONTROLLER_GEN_VERSION, ETCD_VERSION, KUBERNETES_VERSION, controller_gen, go_program};
pub use k8s_openapi::api::rbac::v1::Subject;
use process::Supervised;

/// The name of the unprivileged user every environment has (token auth,
/// only the `system:authenticated` group).
pub const UNPRIVILEGED_USER: &str = "alice";
/// A second unprivileged user, in groups `team-a` and `team-b`.
pub const SECOND_USER: &str = "bob";

/// The RBAC subject of service account `name` in `namespace`.
pub fn service_account_subject(namespace: &str, name: &str) -> Subject {
    Subject {
        kind: "ServiceAccount".into(),
        name: name.into(),
        namespace: Some(namespace.into()),
        ..Default::default()
    }
}

/// The RBAC subject of the token user `name`.
pub fn user_subject(name: &str) -> Subject {
    Subject {
        kind: "User".into(),
        name: name.into(),
        api_group: Some("rbac.authorization.k8s.io".into()),
        ..Default::default()
    }
}

/// A running etcd + kube-apiserver pair on loopback.
#[derive(Debug)]
pub struct TestEnv {
    work: PathBuf,
    keep_work: bool,
    server: String,
    binaries: Binaries,
    processes: Mutex<Vec<Supervised>>,
    admin_token: String,
    ca_pem: String,
    etcd_url: String,
    api_port: u16,
    sample: OnceLock<SampleApiServer>,
    sample_start: Mutex<()>,
}

static SHARED: OnceLock<TestEnv> = OnceLock::new();

extern "C" fn stop_shared_at_exit() {
    if let Some(env) = SHARED.get() {
        env.stop();
    }
}

impl TestEnv {
    /// The environment shared by every test of this test binary, started on
    /// first use and stopped when the binary exits.
    ///
    /// Panics with the command that builds the binaries if they are missing,
    /// and with the server's log if it does not come up.
    pub fn shared() -> &'static TestEnv {
        SHARED.get_or_init(|| {
            let env = match TestEnv::start() {
                Ok(env) => env,
                Err(e) => panic!("{e:#}"),
            };
            // SAFETY: registering a plain extern "C" function.
            unsafe { libc::atexit(stop_shared_at_exit) };
            env
        })
    }

    /// Starts a fresh environment owned by the caller; dropping it stops both
    /// processes.
    pub fn start() -> Result<TestEnv> {
        let binaries = Binaries::locate()?;
        let mut last_err = None;
        // A free port picked here can be taken by another test binary before
        // the server binds it; start again on new ports when that happens.
        for _ in 0..3 {
            match Self::start_once(binaries.clone()) {
                Ok(env) => return Ok(env),
                Err(e) => last_err = Some(e),
            }
        }
        Err(last_err.unwrap_or_else(|| anyhow::anyhow!("test environment did not start")))
    }

    fn start_once(binaries: Binaries) -> Result<TestEnv> {
        let keep_work = std::env::var_os("KUBE_CODEGEN_TESTENV_KEEP").is_some();
        let work = tempfile::Builder::new()
            .prefix("kube-codegen-testenv.")
            .tempdir()
            .context("creating the test environment's work directory")?
            .keep();
        let etcd_port = free_port()?;
        let etcd_peer_port = free_port()?;
        let api_port = free_port()?;
        let pki = work.join("pki");
        std::fs::create_dir_all(&pki)?;
        let ca_pem = write_pki(&pki)?;

        let admin_token = random_token();
        let tokens = format!(
            "{admin_token},admin,uid-admin,\"system:masters\"\n{},{UNPRIVILEGED_USER},uid-{UNPRIVILEGED_USER}\n{},{SECOND_USER},uid-{SECOND_USER},\"team-a,team-b\"\n",
            random_token(),
            random_token(),
        );
        std::fs::write(work.join("tokens.csv"), &tokens)?;

        let mut env = TestEnv {
            server: format!("https://127.0.0.1:{api_port}"),
            work: work.clone(),
            keep_work,
            binaries,
            processes: Mutex::new(Vec::new()),
            admin_token: admin_token.clone(),
            ca_pem,
            etcd_url: format!("http://127.0.0.1:{etcd_port}"),
            api_port,
            sample: OnceLock::new(),
            sample_start: Mutex::new(()),
        };

        let etcd_url = env.etcd_url.clone();
        let mut etcd = Command::new(&env.binaries.etcd);
        etcd.arg("--data-dir")
            .arg(work.join("etcd"))
            .arg(format!("--listen-client-urls={etcd_url}"))
            .arg(format!("--advertise-client-urls={etcd_url}"))
            .arg(format!("--listen-peer-urls=http://127.0.0.1:{etcd_peer_port}"))
            .arg(format!("--initial-advertise-peer-urls=http://127.0.0.1:{etcd_peer_port}"))
            .arg(format!("--initial-cluster=default=http://127.0.0.1:{etcd_peer_port}"))
            .arg("--unsafe-no-fsync")
            .arg("--log-level=warn")
            .stdin(Stdio::null())
            .stdout(log_file(&work, "etcd.log")?)
            .stderr(log_file(&work, "etcd.log")?);
        env.push(Supervised::spawn("etcd", etcd)?);

        let apiserver = env.apiserver_command(api_port, "kube-apiserver.log", "audit.log")?;
        env.push(Supervised::spawn("kube-apiserver", apiserver)?);

        env.write_kubeconfig(ADMIN, &admin_token)?;
        for line in tokens.lines().skip(1) {
            let mut cols = line.split(',');
            let (Some(token), Some(user)) = (cols.next(), cols.next()) else { continue };
            env.write_kubeconfig(user, token)?;
        }

        if let Err(e) = env.wait_ready(Duration::from_secs(90)) {
            let log = std::fs::read_to_string(work.join("kube-apiserver.log")).unwrap_or_default();
            let etcd_log = std::fs::read_to_string(work.join("etcd.log")).unwrap_or_default();
            env.stop();
            bail!(
                "{e:#}\n--- last lines of kube-apiserver.log ---\n{}\n--- last lines of etcd.log ---\n{}",
                tail(&log, 40),
                tail(&etcd_log, 20)
            );
        }
        Ok(env)
    }

    fn push(&mut self, p: Supervised) {
        if let Ok(mut procs) = self.processes.lock() {
            procs.push(p);
        }
    }

    /// kube-apiserver on `port` over this environment's etcd, PKI, tokens
    /// and audit policy, logging to `log` and auditing to `audit` in the
    /// work directory.
    fn apiserver_command(&self, port: u16, log: &str, audit: &str) -> Result<Command> {
        let work = &self.work;
        let pki = work.join("pki");
        let mut apiserver = Command::new(&self.binaries.kube_apiserver);
        apiserver
            .arg(format!("--etcd-servers={}", self.etcd_url))
            .arg("--bind-address=127.0.0.1")
            .arg("--advertise-address=127.0.0.1")
            .arg(format!("--secure-port={port}"))
            .arg(format!("--cert-dir={}", pki.display()))
            .arg(format!("--tls-cert-file={}", pki.join("serving.crt").display()))
            .arg(format!("--tls-private-key-file={}", pki.join("serving.key").display()))
            .arg(format!("--token-auth-file={}", work.join("tokens.csv").display()))
            .arg("--authorization-mode=RBAC")
            .arg(format!("--service-account-issuer=https://127.0.0.1:{}", self.api_port))
            .arg(format!("--service-account-key-file={}", pki.join("sa.key").display()))
            .arg(format!("--service-account-signing-key-file={}", pki.join("sa.key").display()))
            .arg("--service-cluster-ip-range=10.0.0.0/24")
            .arg("--allow-privileged=true")
            .arg("--disable-admission-plugins=ServiceAccount")
            // Off by default; on in OpenShift and hardened clusters: an owner
            // reference with blockOwnerDeletion needs update on the owner's
            // finalizers, which the controllers' generated roles must grant.
            .arg("--enable-admission-plugins=OwnerReferencesPermissionEnforcement")
            .arg("--endpoint-reconciler-type=none")
            .arg("--enable-priority-and-fairness=false")
            // The aggregation layer (aggregated.rs): the client CA and
            // headers aggregated API servers trust, and the certificate
            // kube-apiserver proxies to them with.
            .arg(format!("--requestheader-client-ca-file={}", pki.join("front-proxy-ca.crt").display()))
            .arg("--requestheader-allowed-names=front-proxy-client")
            .arg("--requestheader-username-headers=X-Remote-User")
            .arg("--requestheader-group-headers=X-Remote-Group")
            .arg("--requestheader-extra-headers-prefix=X-Remote-Extra-")
            .arg(format!("--proxy-client-cert-file={}", pki.join("front-proxy-client.crt").display()))
            .arg(format!("--proxy-client-key-file={}", pki.join("front-proxy-client.key").display()))
            .arg(format!("--audit-log-path={}", work.join(audit).display()))
            .arg(format!("--audit-policy-file={}", write_audit_policy(work)?.display()))
            .stdin(Stdio::null())
            .stdout(log_file(work, log)?)
            .stderr(log_file(work, log)?);
        Ok(apiserver)
    }

    /// Kills kube-apiserver with SIGKILL, by PID, and waits for it to exit;
    /// etcd keeps running. Clients see connections refused until
    /// [`restart_apiserver`](Self::restart_apiserver).
    pub fn kill_apiserver(&self) -> Result<()> {
        let mut procs = self.processes.lock().map_err(|_| anyhow::anyhow!("testenv process lock poisoned"))?;
        let index = procs.iter().position(|p| p.name() == "kube-apiserver").context("kube-apiserver is not running")?;
        procs.remove(index).kill();
        Ok(())
    }

    /// Starts kube-apiserver again on the same port, etcd and credentials
    /// (after [`kill_apiserver`](Self::kill_apiserver)) and waits until it
    /// is ready.
    pub fn restart_apiserver(&self) -> Result<()> {
        let command = self.apiserver_command(self.api_port, "kube-apiserver.log", "audit.log")?;
        let process = Supervised::spawn("kube-apiserver", command)?;
        self.processes.lock().map_err(|_| anyhow::anyhow!("testenv process lock poisoned"))?.push(process);
        wait_until_ready(&self.admin_kubeconfig(), &self.processes, Duration::from_secs(90))
    }

    /// A second kube-apiserver on the same etcd (an HA control plane's other
    /// member), on a port of its own; writes through it are what the first
    /// server's clients see once they reconnect. Stopped when dropped.
    pub fn start_second_apiserver(&self) -> Result<SecondApiServer> {
        let port = free_port()?;
        let command = self.apiserver_command(port, "kube-apiserver-2.log", "audit-2.log")?;
        let process = Mutex::new(vec![Supervised::spawn("kube-apiserver", command)?]);
        let kubeconfig = self.work.join("admin-2.kubeconfig");
        self.write_kubeconfig_at(&kubeconfig, &format!("https://127.0.0.1:{port}"), ADMIN, &self.admin_token)?;
        wait_until_ready(&kubeconfig, &process, Duration::from_secs(90))?;
        Ok(SecondApiServer { _process: process, kubeconfig })
    }

    /// Compacts etcd's history up to its current revision (what
    /// kube-apiserver does every `--etcd-compaction-interval`): watches
    /// that resume from an older resourceVersion get 410 Gone. Returns the
    /// revision.
    pub fn compact_etcd(&self) -> Result<i64> {
        // etcd's JSON gateway: a range read for the header's revision, then
        // a physical compaction to it.
        let range = etcd_post(&self.etcd_url, "/v3/kv/range", r#"{"key":"AA=="}"#)?;
        let revision: i64 = range["header"]["revision"]
            .as_str()
            .and_then(|r| r.parse().ok())
            .or_else(|| range["header"]["revision"].as_i64())
            .with_context(|| format!("no revision in etcd's answer {range}"))?;
        etcd_post(&self.etcd_url, "/v3/kv/compaction", &format!(r#"{{"revision":"{revision}","physical":true}}"#))?;
        Ok(revision)
    }

    fn wait_ready(&mut self, timeout: Duration) -> Result<()> {
        wait_until_ready(&self.admin_kubeconfig(), &self.processes, timeout)
            .with_context(|| format!("kube-apiserver at {}", self.server))
    }
}

/// A second kube-apiserver of a [`TestEnv`] (see
/// [`TestEnv::start_second_apiserver`]).
#[derive(Debug)]
pub struct SecondApiServer {
    /// The server process, stopped by PID when this is dropped.
    _process: Mutex<Vec<Supervised>>,
    kubeconfig: PathBuf,
}

impl SecondApiServer {
    /// Its admin kubeconfig.
    pub fn admin_kubeconfig(&self) -> &Path {
        &self.kubeconfig
    }

    /// A new admin client talking to it.
    pub async fn admin_client(&self) -> Result<Client> {
        client_from_kubeconfig(&self.kubeconfig).await
    }
}

/// POSTs `body` to etcd's JSON gateway at `url` + `path` over plain HTTP on
/// loopback and returns the JSON answer.
fn etcd_post(url: &str, path: &str, body: &str) -> Result<serde_json::Value> {
    use std::io::{Read as _, Write as _};
    let host = url.trim_start_matches("http://");
    let mut stream = std::net::TcpStream::connect(host).with_context(|| format!("connecting to etcd at {host}"))?;
    stream.set_read_timeout(Some(Duration::from_secs(30)))?;
    write!(
        stream,
        "POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )?;
    let mut answer = String::new();
    stream.read_to_string(&mut answer)?;
    let (head, payload) = answer.split_once("\r\n\r\n").context("etcd's answer has no body")?;
    if !head.starts_with("HTTP/1.1 200") {
        bail!("etcd {path}: {head}\n{payload}");
    }
    // A chunked body is one chunk here: the JSON object between its braces.
    let json = payload.find('{').zip(payload.rfind('}')).map(|(a, b)| &payload[a..=b]).unwrap_or(payload);
    serde_json::from_str(json).with_context(|| format!("etcd {path} answered {payload}"))
}

/// Polls `/readyz` and the `default` namespace through `kubeconfig` until
/// both answer, failing early if one of `processes` exits.
fn wait_until_ready(kubeconfig: &Path, processes: &Mutex<Vec<Supervised>>, timeout: Duration) -> Result<()> {
    {
        let deadline = Instant::now() + timeout;
        let config = kubeconfig.to_path_buf();
        let check = move || -> Result<()> {
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
            rt.block_on(async {
                let client = client_from_kubeconfig(&config).await?;
                let req = http_get("/readyz")?;
                client.request_text(req).await?;
                let ns: Api<Namespace> = Api::all(client);
                ns.get("default").await?;
                Ok(())
            })
        };
        let mut last = String::new();
        while Instant::now() < deadline {
            if let Ok(mut procs) = processes.lock() {
                for p in procs.iter_mut() {
                    if let Some(status) = p.exited() {
                        bail!("a test server process exited early ({status}), pid {:?}", p.pid());
                    }
                }
            }
            let check = check.clone();
            match std::thread::spawn(check).join() {
                Ok(Ok(())) => return Ok(()),
                Ok(Err(e)) => last = format!("{e:#}"),
                Err(_) => last = "readiness check panicked".into(),
            }
            std::thread::sleep(Duration::from_millis(250));
        }
        bail!("not ready after {timeout:?}: {last}")
    }
}

impl TestEnv {
    /// Stops kube-apiserver, then etcd, by PID, and removes the work
    /// directory (kept when `KUBE_CODEGEN_TESTENV_KEEP` is set).
    pub fn stop(&self) {
        if let Ok(mut procs) = self.processes.lock() {
            while let Some(mut p) = procs.pop() {
                p.stop(Duration::from_secs(15));
            }
        }
        if !self.keep_work {
            let _ = std::fs::remove_dir_all(&self.work);
        }
    }

    /// The server URL, `https://127.0.0.1:<port>`.
    pub fn server_url(&self) -> &str {
        &self.server
    }

    /// The PEM of the CA that signed the server certificate.
    pub fn ca_pem(&self) -> &str {
        &self.ca_pem
    }

    /// The directory holding kubeconfigs, logs and etcd data.
    pub fn work_dir(&self) -> &Path {
        &self.work
    }

    /// The binaries in use (kube-apiserver, etcd and kubectl).
    pub fn binaries(&self) -> &Binaries {
        &self.binaries
    }

    /// Path of the admin kubeconfig (`system:masters`).
    pub fn admin_kubeconfig(&self) -> PathBuf {
        self.kubeconfig_for(ADMIN)
    }

    /// Path of the kubeconfig of `user` ([`UNPRIVILEGED_USER`],
    /// [`SECOND_USER`], or a name given to
    /// [`TestEnv::service_account_kubeconfig`]).
    pub fn kubeconfig_for(&self, user: &str) -> PathBuf {
        self.work.join(format!("{user}.kubeconfig"))
    }

    /// The kube-apiserver audit log (one JSON event per line, metadata level
    /// for custom resources), for tests that count requests.
    pub fn audit_log(&self) -> PathBuf {
        self.work.join("audit.log")
    }

    /// The audit log's events so far, parsed (lines that do not parse, such
    /// as one being written, are left out).
    pub fn audit_events(&self) -> Vec<serde_json::Value> {
        let log = std::fs::read_to_string(self.audit_log()).unwrap_or_default();
        log.lines().filter_map(|line| serde_json::from_str(line).ok()).collect()
    }

    /// The port kube-apiserver listens on (for a proxy in front of it).
    pub fn api_port(&self) -> u16 {
        self.api_port
    }

    /// A new client as admin. Each call builds its own client, so it is bound
    /// to the caller's tokio runtime.
    pub async fn admin_client(&self) -> Result<Client> {
        client_from_kubeconfig(&self.admin_kubeconfig()).await
    }

    /// A new client as the unprivileged user [`UNPRIVILEGED_USER`].
    pub async fn user_client(&self) -> Result<Client> {
        client_from_kubeconfig(&self.kubeconfig_for(UNPRIVILEGED_USER)).await
    }

    /// A new client from any kubeconfig this environment wrote.
    pub async fn client_for(&self, user: &str) -> Result<Client> {
        client_from_kubeconfig(&self.kubeconfig_for(user)).await
    }

    /// Creates a namespace with a unique name starting with `prefix`.
    pub async fn create_namespace(&self, prefix: &str) -> Result<String> {
        static SEQ: AtomicU32 = AtomicU32::new(0);
        let name = format!("{prefix}-{}-{}", std::process::id(), SEQ.fetch_add(1, Ordering::Relaxed));
        let api: Api<Namespace> = Api::all(self.admin_client().await?);
        let ns =
            Namespace { metadata: ObjectMeta { name: Some(name.clone()), ..Default::default() }, ..Default::default() };
        api.create(&PostParams::default(), &ns).await.with_context(|| format!("creating namespace {name}"))?;
        Ok(name)
    }

    /// Creates service account `name` in `namespace`, requests a token for it
    /// and writes a kubeconfig; returns its path (also reachable as
    /// `kubeconfig_for("<namespace>.<name>")`).
    pub async fn service_account_kubeconfig(&self, namespace: &str, name: &str) -> Result<PathBuf> {
        let client = self.admin_client().await?;
        let sas: Api<ServiceAccount> = Api::namespaced(client, namespace);
        let sa = ServiceAccount {
            metadata: ObjectMeta { name: Some(name.into()), ..Default::default() },
            ..Default::default()
        };
        match sas.create(&PostParams::default(), &sa).await {
            Ok(_) => {}
            Err(kube::Error::Api(s)) if s.code == 409 => {}
            Err(e) => return Err(e).context("creating the service account"),
        }
        let request = TokenRequest {
            spec: Some(k8s_openapi::api::authentication::v1::TokenRequestSpec {
                expiration_seconds: Some(3600),
                ..Default::default()
            }),
            ..Default::default()
        };
        let token = sas
            .create_token_request(name, &PostParams::default(), &request)
            .await
            .context("requesting a service-account token")?;
        let token = token.status.and_then(|s| s.token).context("token request returned no token")?;
        let user = format!("{namespace}.{name}");
        self.write_kubeconfig(&user, &token)?;
        Ok(self.kubeconfig_for(&user))
    }

    /// Creates Role `name` in `namespace` granting `verbs` on `resources` of
    /// API group `group` (`""` for the core group).
    pub async fn create_role(
        &self,
        namespace: &str,
        name: &str,
        group: &str,
        resources: &[&str],
        verbs: &[&str],
    ) -> Result<()> {
        let roles: Api<Role> = Api::namespaced(self.admin_client().await?, namespace);
        let role = Role {
            metadata: ObjectMeta { name: Some(name.into()), ..Default::default() },
            rules: Some(vec![PolicyRule {
                api_groups: Some(vec![group.into()]),
                resources: Some(resources.iter().map(|r| r.to_string()).collect()),
                verbs: verbs.iter().map(|v| v.to_string()).collect(),
                ..Default::default()
            }]),
        };
        roles.create(&PostParams::default(), &role).await.with_context(|| format!("creating Role {name}"))?;
        Ok(())
    }

    /// Creates RoleBinding `name` in `namespace` from `role_kind` (`Role` or
    /// `ClusterRole`) `role` to `subject`.
    pub async fn bind_role(
        &self,
        namespace: &str,
        name: &str,
        role_kind: &str,
        role: &str,
        subject: Subject,
    ) -> Result<()> {
        let bindings: Api<RoleBinding> = Api::namespaced(self.admin_client().await?, namespace);
        let binding = RoleBinding {
            metadata: ObjectMeta { name: Some(name.into()), ..Default::default() },
            role_ref: RoleRef {
                api_group: Some("rbac.authorization.k8s.io".into()),
                kind: role_kind.into(),
                name: role.into(),
            },
            subjects: Some(vec![subject]),
        };
        bindings
            .create(&PostParams::default(), &binding)
            .await
            .with_context(|| format!("creating RoleBinding {name}"))?;
        Ok(())
    }

    /// Runs `kubectl` as admin with `args`; waits for it and returns its
    /// output.
    pub fn kubectl(&self, args: &[&str]) -> Output {
        self.kubectl_as(ADMIN, args, None)
    }

    /// Runs `kubectl` with the kubeconfig of `user`, feeding `stdin` if given.
    pub fn kubectl_as(&self, user: &str, args: &[&str], stdin: Option<&str>) -> Output {
        use std::io::Write as _;
        let mut cmd = Command::new(&self.binaries.kubectl);
        cmd.env("KUBECONFIG", self.kubeconfig_for(user))
            .env_remove("KUBERNETES_SERVICE_HOST")
            .args(args)
            .stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = match cmd.spawn() {
            Ok(c) => c,
            Err(e) => panic!("running {}: {e}", self.binaries.kubectl.display()),
        };
        if let (Some(input), Some(mut pipe)) = (stdin, child.stdin.take()) {
            let _ = pipe.write_all(input.as_bytes());
        }
        match child.wait_with_output() {
            Ok(out) => out,
            Err(e) => panic!("waiting for kubectl: {e}"),
        }
    }

    /// `kubectl apply --server-side -f <path>` as admin; errors with
    /// kubectl's stderr. Server-side, because a CRD embedding a pod template
    /// is larger than the 262,144 bytes client-side apply can keep in its
    /// last-applied annotation.
    ///
    /// Tests of one binary run in parallel and often apply the same CRD:
    /// applies are serialized, and a lost create race (AlreadyExists,
    /// Conflict) is retried.
    pub fn kubectl_apply_file(&self, path: &Path) -> Result<String> {
        static APPLY: Mutex<()> = Mutex::new(());
        let _guard = APPLY.lock().unwrap_or_else(|e| e.into_inner());
        let path = path.to_string_lossy();
        let mut attempt = 0;
        loop {
            match kubectl_result(self.kubectl(&[
                "apply",
                "--server-side",
                "--force-conflicts",
                "--field-manager=kube-codegen-tests",
                "-f",
                &path,
            ])) {
                Err(e) if attempt < 5 && is_race(&e) => {
                    attempt += 1;
                    std::thread::sleep(Duration::from_millis(200));
                }
                other => return other,
            }
        }
    }

    /// Waits until the CRD `name` (`<plural>.<group>`) reports Established.
    pub async fn wait_crd_established(&self, name: &str, timeout: Duration) -> Result<()> {
        let api: Api<CustomResourceDefinition> = Api::all(self.admin_client().await?);
        let deadline = Instant::now() + timeout;
        loop {
            if let Ok(crd) = api.get(name).await {
                let established = crd
                    .status
                    .and_then(|s| s.conditions)
                    .unwrap_or_default()
                    .iter()
                    .any(|c| c.type_ == "Established" && c.status == "True");
                if established {
                    return Ok(());
                }
            }
            if Instant::now() > deadline {
                bail!("CRD {name} not Established after {timeout:?}");
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    fn write_kubeconfig(&self, user: &str, token: &str) -> Result<()> {
        self.write_kubeconfig_at(&self.kubeconfig_for(user), &self.server, user, token)
    }

    fn write_kubeconfig_at(&self, path: &Path, server: &str, user: &str, token: &str) -> Result<()> {
        use std::io::Write as _;
        let ca = base64(self.ca_pem.as_bytes());
        let mut yaml = String::new();
        let _ = write!(
            yaml,
            "apiVersion: v1\nkind: Config\nclusters:\n- name: testenv\n  cluster:\n    server: {server}\n    certificate-authority-data: {ca}\nusers:\n- name: {user}\n  user:\n    token: {token}\ncontexts:\n- name: {user}\n  context:\n    cluster: testenv\n    user: {user}\n    namespace: default\ncurrent-context: {user}\n",
        );
        let mut f = std::fs::File::create(path).with_context(|| format!("writing {}", path.display()))?;
        f.write_all(yaml.as_bytes())?;
        Ok(())
    }

    /// PIDs of the running server processes (etcd first).
    pub fn pids(&self) -> Vec<u32> {
        self.processes.lock().map(|procs| procs.iter().filter_map(Supervised::pid).collect()).unwrap_or_default()
    }

    /// The admin bearer token.
    pub fn admin_token(&self) -> &str {
        &self.admin_token
    }
}

impl Drop for TestEnv {
    fn drop(&mut self) {
        self.stop();
    }
}

const ADMIN: &str = "admin";

/// Turns kubectl's output into its stdout, or an error with its stderr.
pub fn kubectl_result(out: Output) -> Result<String> {
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        bail!(
            "kubectl failed ({}): {}{}",
            out.status,
            String::from_utf8_lossy(&out.stderr),
            String::from_utf8_lossy(&out.stdout)
        )
    }
}

fn is_race(e: &anyhow::Error) -> bool {
    let text = e.to_string();
    text.contains("AlreadyExists") || text.contains("the object has been modified")
}

async fn client_from_kubeconfig(path: &Path) -> Result<Client> {
    let kubeconfig = Kubeconfig::read_from(path).with_context(|| format!("reading {}", path.display()))?;
    let config = Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default()).await?;
    Ok(Client::try_from(config)?)
}

fn http_get(path: &str) -> Result<http::Request<Vec<u8>>> {
    Ok(http::Request::get(path).body(Vec::new())?)
}

fn free_port() -> Result<u16> {
    let listener = TcpListener::bind("127.0.0.1:0").context("finding a free loopback port")?;
    Ok(listener.local_addr()?.port())
}

fn log_file(work: &Path, name: &str) -> Result<std::fs::File> {
    Ok(std::fs::OpenOptions::new().create(true).append(true).open(work.join(name))?)
}

fn tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

fn random_token() -> String {
    let mut buf = [0u8; 24];
    if let Ok(mut f) = std::fs::File::open("/dev/urandom") {
        use std::io::Read as _;
        let _ = f.read_exact(&mut buf);
    }
    buf.iter().map(|b| format!("{b:02x}")).collect()
}

fn base64(data: &[u8]) -> String {
    const T: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for chunk in data.chunks(3) {
        let b = [chunk[0], *chunk.get(1).unwrap_or(&0), *chunk.get(2).unwrap_or(&0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(T[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Writes a CA, a serving certificate for 127.0.0.1/localhost signed by it,
/// and the service-account signing key; returns the CA's PEM.
fn write_pki(pki: &Path) -> Result<String> {
    let run = |args: &[&str]| openssl(pki, args);
    run(&["ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", "ca.key"])?;
    run(&[
        "req",
        "-x509",
        "-new",
        "-key",
        "ca.key",
        "-sha256",
        "-days",
        "7",
        "-subj",
        "/CN=kube-codegen-testenv-ca",
        "-out",
        "ca.crt",
    ])?;
    signed_certificate(
        pki,
        "ca",
        "serving",
        "/CN=127.0.0.1",
        "keyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n\
         subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes.default.svc,IP:10.0.0.1",
    )?;
    run(&["genrsa", "-out", "sa.key", "2048"])?;
    // The front proxy: kube-apiserver's aggregation layer authenticates to
    // aggregated API servers with this client certificate, and they trust
    // the user it names in X-Remote-* headers (--requestheader-*).
    run(&["ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", "front-proxy-ca.key"])?;
    run(&[
        "req",
        "-x509",
        "-new",
        "-key",
        "front-proxy-ca.key",
        "-sha256",
        "-days",
        "7",
        "-subj",
        "/CN=kube-codegen-testenv-front-proxy-ca",
        "-out",
        "front-proxy-ca.crt",
    ])?;
    signed_certificate(
        pki,
        "front-proxy-ca",
        "front-proxy-client",
        "/CN=front-proxy-client",
        "extendedKeyUsage=clientAuth",
    )?;
    Ok(std::fs::read_to_string(pki.join("ca.crt"))?)
}

/// A key `<name>.key` and certificate `<name>.crt` in `pki` for `subject`,
/// signed by `<ca>.crt`/`<ca>.key`, with the extension lines `ext`.
pub(crate) fn signed_certificate(pki: &Path, ca: &str, name: &str, subject: &str, ext: &str) -> Result<()> {
    let run = |args: &[&str]| openssl(pki, args);
    let (key, csr, crt, ext_file) =
        (format!("{name}.key"), format!("{name}.csr"), format!("{name}.crt"), format!("{name}.ext"));
    run(&["ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", &key])?;
    run(&["req", "-new", "-key", &key, "-subj", subject, "-out", &csr])?;
    std::fs::write(pki.join(&ext_file), format!("basicConstraints=critical,CA:FALSE\n{ext}\n"))?;
    run(&[
        "x509",
        "-req",
        "-in",
        &csr,
        "-CA",
        &format!("{ca}.crt"),
        "-CAkey",
        &format!("{ca}.key"),
        "-CAcreateserial",
        "-days",
        "7",
        "-sha256",
        "-extfile",
        &ext_file,
        "-out",
        &crt,
    ])
}

/// Runs openssl in `dir`; errors with its stderr.
fn openssl(dir: &Path, args: &[&str]) -> Result<()> {
    let out = Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .context("running openssl (install it with `apt-get install openssl`)")?;
    if !out.status.success() {
        bail!("openssl {}: {}", args.join(" "), String::from_utf8_lossy(&out.stderr));
    }
    Ok(())
}

/// Records the metadata of every request, so tests can count list and watch
/// calls.
fn write_audit_policy(work: &Path) -> Result<PathBuf> {
    let path = work.join("audit-policy.yaml");
    std::fs::write(
        &path,
        "apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [\"RequestReceived\"]\nrules:\n- level: Metadata\n",
    )?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_rfc4648_vectors() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(b"foobar"), "Zm9vYmFy");
    }

    #[test]
    fn tail_keeps_last_lines() {
        assert_eq!(tail("a\nb\nc", 2), "b\nc");
        assert_eq!(tail("a", 5), "a");
    }
}

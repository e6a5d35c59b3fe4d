//! k8s.io/sample-apiserver behind an APIService of the test kube-apiserver:
//! the group `wardle.example.com` (Flunder, Fischer) served by an aggregated
//! API server, reached through kube-apiserver's aggregation layer.
//!
//! The sample server runs on its own loopback port over the environment's
//! etcd under its own prefix ([`SAMPLE_ETCD_PREFIX`]). It authenticates the
//! aggregation layer's requests by the front-proxy client certificate and
//! `X-Remote-*` headers (read from the `extension-apiserver-authentication`
//! ConfigMap kube-apiserver publishes) and asks kube-apiserver to authorize
//! them (SubjectAccessReview), as an aggregated API server in a cluster
//! does. kube-apiserver reaches it through a Service of type ExternalName
//! (`localhost`) named by the APIServices, whose `caBundle` is the CA that
//! signed the sample server's certificate for `api.<namespace>.svc`.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use crate::process::Supervised;
use crate::{TestEnv, base64, free_port, kubectl_result, log_file, signed_certificate, tail};

/// The API group the sample server serves.
pub const SAMPLE_GROUP: &str = "wardle.example.com";
/// The namespace of the Service the APIServices name (`api`).
pub const SAMPLE_NAMESPACE: &str = "wardle";
/// The sample server's etcd prefix, apart from kube-apiserver's `/registry`.
pub const SAMPLE_ETCD_PREFIX: &str = "/kube-codegen-sample-apiserver";

/// A running sample-apiserver registered with the environment's
/// kube-apiserver (see [`TestEnv::sample_apiserver`]).
#[derive(Debug)]
pub struct SampleApiServer {
    port: u16,
}

impl SampleApiServer {
    /// The loopback port the sample server listens on (clients normally go
    /// through kube-apiserver instead).
    pub fn port(&self) -> u16 {
        self.port
    }
}

impl TestEnv {
    /// The sample-apiserver of this environment, started and registered on
    /// first use: it serves `wardle.example.com` `v1alpha1` (Flunder,
    /// Fischer) and `v1beta1` (Flunder) through kube-apiserver once this
    /// returns (both APIServices `Available`). Stopped, by PID, with the
    /// environment.
    ///
    /// Fails with the build command when testenv/build.sh has not built it,
    /// and with the sample server's log when it does not come up.
    pub fn sample_apiserver(&self) -> Result<&SampleApiServer> {
        let _starting = self.sample_start.lock().map_err(|_| anyhow::anyhow!("sample-apiserver lock poisoned"))?;
        if let Some(server) = self.sample.get() {
            return Ok(server);
        }
        let server = self.start_sample_apiserver()?;
        Ok(self.sample.get_or_init(|| server))
    }

    fn start_sample_apiserver(&self) -> Result<SampleApiServer> {
        let binary = &self.binaries.sample_apiserver;
        if !binary.is_file() {
            bail!(
                "k8s.io/sample-apiserver is not built: {} is missing.\n\
                 Build it (once, cached outside the clone) with:\n    testenv/build.sh",
                binary.display()
            );
        }
        let pki = self.work.join("pki");
        let service = format!("api.{SAMPLE_NAMESPACE}.svc");
        signed_certificate(
            &pki,
            "ca",
            "sample-apiserver",
            &format!("/CN={service}"),
            &format!(
                "keyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n\
                 subjectAltName=DNS:{service},DNS:localhost,IP:127.0.0.1"
            ),
        )?;
        let port = free_port()?;
        let admin = self.admin_kubeconfig();
        let mut command = Command::new(binary);
        command
            .arg(format!("--etcd-servers={}", self.etcd_url))
            .arg(format!("--etcd-prefix={SAMPLE_ETCD_PREFIX}"))
            .arg("--bind-address=127.0.0.1")
            .arg(format!("--secure-port={port}"))
            .arg(format!("--tls-cert-file={}", pki.join("sample-apiserver.crt").display()))
            .arg(format!("--tls-private-key-file={}", pki.join("sample-apiserver.key").display()))
            // The core API (namespaces for NamespaceLifecycle, webhook
            // configurations), TokenReviews and SubjectAccessReviews.
            .arg(format!("--kubeconfig={}", admin.display()))
            .arg(format!("--authentication-kubeconfig={}", admin.display()))
            .arg(format!("--authorization-kubeconfig={}", admin.display()))
            .arg("--enable-priority-and-fairness=false")
            .stdin(Stdio::null())
            .stdout(log_file(&self.work, "sample-apiserver.log")?)
            .stderr(log_file(&self.work, "sample-apiserver.log")?);
        let process = Supervised::spawn("sample-apiserver", command)?;
        self.processes.lock().map_err(|_| anyhow::anyhow!("testenv process lock poisoned"))?.push(process);

        let result = self.register_sample_apiserver(port).and_then(|()| self.wait_sample_available());
        if let Err(e) = result {
            let log = std::fs::read_to_string(self.work.join("sample-apiserver.log")).unwrap_or_default();
            bail!("{e:#}\n--- last lines of sample-apiserver.log ---\n{}", tail(&log, 40));
        }
        Ok(SampleApiServer { port })
    }

    /// The namespace, the ExternalName Service and one APIService per
    /// version, applied with kubectl.
    fn register_sample_apiserver(&self, port: u16) -> Result<()> {
        let ca_bundle = base64(self.ca_pem.as_bytes());
        let mut manifest = format!(
            "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: {SAMPLE_NAMESPACE}\n---\n\
             apiVersion: v1\nkind: Service\nmetadata:\n  name: api\n  namespace: {SAMPLE_NAMESPACE}\n\
             spec:\n  type: ExternalName\n  externalName: localhost\n"
        );
        for (version, priority) in [("v1alpha1", 15), ("v1beta1", 10)] {
            manifest.push_str(&format!(
                "---\napiVersion: apiregistration.k8s.io/v1\nkind: APIService\nmetadata:\n  name: {version}.{SAMPLE_GROUP}\n\
                 spec:\n  group: {SAMPLE_GROUP}\n  version: {version}\n  groupPriorityMinimum: 1000\n  versionPriority: {priority}\n\
                 \x20 caBundle: {ca_bundle}\n  service:\n    name: api\n    namespace: {SAMPLE_NAMESPACE}\n    port: {port}\n"
            ));
        }
        let path = self.work.join("sample-apiserver.yaml");
        std::fs::write(&path, manifest)?;
        kubectl_result(self.kubectl(&["apply", "-f", &path.to_string_lossy()]))
            .context("registering sample-apiserver (Namespace, Service, APIServices)")?;
        Ok(())
    }

    /// Waits until both APIServices are Available, failing early when the
    /// sample server exits.
    fn wait_sample_available(&self) -> Result<()> {
        let deadline = Instant::now() + Duration::from_secs(120);
        let mut last = String::new();
        while Instant::now() < deadline {
            if let Ok(mut procs) = self.processes.lock()
                && let Some(p) = procs.iter_mut().find(|p| p.name() == "sample-apiserver")
                && let Some(status) = p.exited()
            {
                bail!("sample-apiserver exited early ({status})");
            }
            let out = self.kubectl(&[
                "get",
                "apiservices",
                &format!("v1alpha1.{SAMPLE_GROUP}"),
                &format!("v1beta1.{SAMPLE_GROUP}"),
                "-o",
                "jsonpath={range .items[*]}{.metadata.name}={.status.conditions[?(@.type==\"Available\")].status} \
                 {.status.conditions[?(@.type==\"Available\")].message};{end}",
            ]);
            last = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
            if out.status.success() && last.matches("=True").count() == 2 {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(250));
        }
        bail!("the sample-apiserver APIServices are not Available after 120s: {last}")
    }
}

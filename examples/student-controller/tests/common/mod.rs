//! Shared by the controller's e2e test binaries: installing the CRD and
//! RBAC, a service-account identity, the controller as a child process, and
//! polling.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use codegen_testenv::{TestEnv, service_account_subject};
use kube::api::{Api, PostParams};
use student_controller::pkg::apis::example::v1::Student;

pub fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub async fn install_crd(env: &TestEnv) -> Result<()> {
    env.kubectl_apply_file(&crate_dir().join("config/crd/example.k8s.io_students.yaml"))?;
    env.wait_crd_established("students.example.k8s.io", Duration::from_secs(60)).await?;
    env.kubectl_apply_file(&crate_dir().join("config/rbac/role.yaml"))?;
    Ok(())
}

/// A service account in `ns` bound (in `ns` only) to the controller's
/// ClusterRole; returns its kubeconfig.
pub async fn controller_identity(env: &TestEnv, ns: &str) -> Result<PathBuf> {
    let kubeconfig = env.service_account_kubeconfig(ns, "student-controller").await?;
    env.bind_role(
        ns,
        "student-controller",
        "ClusterRole",
        "student-controller",
        service_account_subject(ns, "student-controller"),
    )
    .await?;
    Ok(kubeconfig)
}

/// The controller binary running as a child process.
pub struct ControllerProcess {
    child: Option<Child>,
    log: PathBuf,
}

impl ControllerProcess {
    pub fn start(kubeconfig: &Path, ns: &str, log: PathBuf) -> Result<Self> {
        Self::start_with(kubeconfig, ns, log, &[])
    }

    /// [`start`](Self::start) with extra flags.
    pub fn start_with(kubeconfig: &Path, ns: &str, log: PathBuf, flags: &[&str]) -> Result<Self> {
        let out = std::fs::OpenOptions::new().create(true).append(true).open(&log)?;
        let child = Command::new(env!("CARGO_BIN_EXE_student-controller"))
            .arg("--kubeconfig")
            .arg(kubeconfig)
            .args(["--namespace", ns, "--workers", "2"])
            .args(flags)
            .env("RUST_LOG", "info")
            .stdin(Stdio::null())
            .stdout(out.try_clone()?)
            .stderr(out)
            .spawn()
            .context("starting student-controller")?;
        Ok(Self { child: Some(child), log })
    }

    pub fn signal(&self, signal: libc::c_int) {
        if let Some(child) = &self.child {
            // SAFETY: kill(2) on our own, not yet reaped, child.
            unsafe { libc::kill(child.id() as libc::pid_t, signal) };
        }
    }

    pub fn wait(&mut self, timeout: Duration) -> Result<ExitStatus> {
        let mut child = self.child.take().context("already waited for")?;
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(status) = child.try_wait()? {
                return Ok(status);
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                bail!("controller did not exit within {timeout:?}; log:\n{}", self.log_text());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Whether the process has not exited yet.
    pub fn running(&mut self) -> bool {
        self.child.as_mut().is_some_and(|c| matches!(c.try_wait(), Ok(None)))
    }

    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for ControllerProcess {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

pub async fn eventually<T, F, Fut>(what: &str, timeout: Duration, mut f: F) -> Result<T>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<Option<T>>>,
{
    let deadline = Instant::now() + timeout;
    let mut last;
    loop {
        match f().await {
            Ok(Some(v)) => return Ok(v),
            Ok(None) => last = "condition not met".into(),
            Err(e) => last = format!("{e:#}"),
        }
        if Instant::now() > deadline {
            bail!("timed out after {timeout:?} waiting for {what}: {last}");
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

pub async fn create_students(env: &TestEnv, ns: &str, prefix: &str, n: usize) -> Result<()> {
    let students: Api<Student> = Api::namespaced(env.admin_client().await?, ns);
    let creates = (0..n).map(|i| {
        let students = students.clone();
        let s = Student::new(
            &format!("{prefix}-{i}"),
            student_controller::pkg::apis::example::v1::StudentSpec {
                name: format!("{prefix}-{i}"),
                school: format!("school-{i}"),
            },
        );
        async move { students.create(&PostParams::default(), &s).await }
    });
    for r in futures::future::join_all(creates).await {
        r?;
    }
    Ok(())
}

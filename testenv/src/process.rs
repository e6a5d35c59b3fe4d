//! Child processes that die with the test binary and are stopped by PID.

use std::os::unix::process::CommandExt;
use std::process::{Child, Command};
use std::sync::mpsc;
use std::sync::{Mutex, OnceLock};
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

type SpawnRequest = (Command, mpsc::Sender<std::io::Result<Child>>);

/// Linux delivers `PR_SET_PDEATHSIG` when the *thread* that forked the child
/// exits, not the process. Test threads come and go, so every child is forked
/// from this one thread, which lives as long as the test binary: if the
/// binary is killed (a timeout, SIGKILL), the servers are killed with it.
fn launcher() -> &'static Mutex<mpsc::Sender<SpawnRequest>> {
    static LAUNCHER: OnceLock<Mutex<mpsc::Sender<SpawnRequest>>> = OnceLock::new();
    LAUNCHER.get_or_init(|| {
        let (tx, rx) = mpsc::channel::<SpawnRequest>();
        thread::Builder::new()
            .name("testenv-launcher".into())
            .spawn(move || {
                for (mut command, reply) in rx {
                    let _ = reply.send(command.spawn());
                }
            })
            .expect("spawning the testenv launcher thread");
        Mutex::new(tx)
    })
}

/// A server process owned by the test environment.
#[derive(Debug)]
pub(crate) struct Supervised {
    name: &'static str,
    child: Option<Child>,
}

impl Supervised {
    /// Starts `command`; the child gets SIGKILL if the test binary dies.
    pub(crate) fn spawn(name: &'static str, mut command: Command) -> Result<Self> {
        // SAFETY: the closure only calls async-signal-safe functions (prctl,
        // getppid, _exit) between fork and exec.
        unsafe {
            command.pre_exec(|| {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                if libc::getppid() == 1 {
                    libc::_exit(1);
                }
                Ok(())
            });
        }
        let (tx, rx) = mpsc::channel();
        launcher()
            .lock()
            .map_err(|_| anyhow::anyhow!("testenv launcher lock poisoned"))?
            .send((command, tx))
            .context("testenv launcher thread is gone")?;
        let child =
            rx.recv().context("testenv launcher thread is gone")?.with_context(|| format!("starting {name}"))?;
        Ok(Self { name, child: Some(child) })
    }

    /// The name it was started with.
    pub(crate) fn name(&self) -> &'static str {
        self.name
    }

    /// Sends SIGKILL to the PID and reaps the process.
    pub(crate) fn kill(mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// The process id.
    pub(crate) fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// `Some(status)` if the process has already exited.
    pub(crate) fn exited(&mut self) -> Option<std::process::ExitStatus> {
        self.child.as_mut().and_then(|c| c.try_wait().ok().flatten())
    }

    /// Sends SIGTERM to the PID, waits up to `grace`, then SIGKILL.
    pub(crate) fn stop(&mut self, grace: Duration) {
        let Some(mut child) = self.child.take() else { return };
        if matches!(child.try_wait(), Ok(Some(_))) {
            return;
        }
        let pid = child.id() as libc::pid_t;
        // SAFETY: plain kill(2) on the PID of a child we have not reaped yet,
        // so the PID cannot have been reused.
        unsafe { libc::kill(pid, libc::SIGTERM) };
        let deadline = Instant::now() + grace;
        while Instant::now() < deadline {
            if matches!(child.try_wait(), Ok(Some(_))) {
                return;
            }
            thread::sleep(Duration::from_millis(50));
        }
        eprintln!("testenv: {} (pid {pid}) ignored SIGTERM for {grace:?}; killing it", self.name);
        let _ = child.kill();
        let _ = child.wait();
    }
}

impl Drop for Supervised {
    fn drop(&mut self) {
        self.stop(Duration::from_secs(10));
    }
}

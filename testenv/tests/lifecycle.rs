//! The test server's life cycle as docs/testing.md describes it, through
//! the `testenv` binary (a process of its own, so that a test can kill it):
//! servers stopped by PID with the work directory removed unless
//! `KUBE_CODEGEN_TESTENV_KEEP` is set, servers that die with a killed
//! parent (the parent-death signal), and `KUBE_CODEGEN_TESTENV_BIN`.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running `testenv` binary, read up to its prompt.
struct Running {
    child: Child,
    work: PathBuf,
    pids: Vec<u32>,
}

fn testenv(configure: impl FnOnce(&mut Command)) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_testenv"));
    command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).env_remove("KUBE_CODEGEN_TESTENV_KEEP");
    configure(&mut command);
    command
}

fn start(configure: impl FnOnce(&mut Command)) -> Running {
    let mut child = testenv(configure).spawn().expect("starting the testenv binary");
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let (mut work, mut pids, mut seen) = (None, Vec::new(), Vec::new());
    for line in lines.by_ref() {
        let line = line.unwrap();
        if let Some(dir) = line.strip_prefix("# work directory: ") {
            work = Some(PathBuf::from(dir));
        }
        if let Some(list) = line.strip_prefix("# pids: ") {
            pids = list.split(' ').map(|p| p.parse().unwrap()).collect();
        }
        let prompt = line.starts_with("press Enter");
        seen.push(line);
        if prompt {
            break;
        }
    }
    // The rest of stdout ("stopped") is drained so the binary never blocks.
    std::thread::spawn(move || lines.for_each(drop));
    let work = work.unwrap_or_else(|| panic!("no work directory printed: {seen:?}"));
    assert_eq!(pids.len(), 2, "etcd and kube-apiserver: {seen:?}");
    assert!(pids.iter().all(|p| alive(*p)), "{pids:?}");
    Running { child, work, pids }
}

/// Whether the process runs (a zombie that its new parent has not reaped
/// yet counts as gone).
fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state follows the command name, which is in parentheses.
        Ok(stat) => stat.rsplit_once(')').is_some_and(|(_, rest)| !rest.trim_start().starts_with(['Z', 'X'])),
        Err(_) => false,
    }
}

fn all_gone(pids: &[u32], within: Duration) -> bool {
    let deadline = Instant::now() + within;
    loop {
        if !pids.iter().any(|p| alive(*p)) {
            return true;
        }
        if Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Closes the binary's stdin, its signal to stop the servers and exit.
fn stop(mut running: Running) -> Running {
    drop(running.child.stdin.take());
    let status = running.child.wait().unwrap();
    assert!(status.success(), "{status}");
    assert!(all_gone(&running.pids, Duration::ZERO), "running after the binary exited: {:?}", running.pids);
    running
}

#[test]
fn stop_removes_the_work_directory_unless_kept() {
    let stopped = stop(start(|_| {}));
    assert!(!stopped.work.exists(), "{} left behind", stopped.work.display());

    let kept = stop(start(|c| {
        c.env("KUBE_CODEGEN_TESTENV_KEEP", "1");
    }));
    let kubeconfig = kept.work.join("admin.kubeconfig");
    let found = kubeconfig.is_file();
    std::fs::remove_dir_all(&kept.work).unwrap();
    assert!(found, "{} missing from the kept work directory", kubeconfig.display());
}

/// A test binary killed with SIGKILL runs no destructor; the kernel's
/// parent-death signal takes etcd and kube-apiserver with it. The binaries
/// come from the directory `KUBE_CODEGEN_TESTENV_BIN` names.
#[test]
fn a_killed_parent_takes_its_servers_with_it() {
    let bin = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(codegen_testenv::Binaries::default_dir()).unwrap() {
        let entry = entry.unwrap();
        std::os::unix::fs::symlink(entry.path(), bin.path().join(entry.file_name())).unwrap();
    }
    let mut running = start(|c| {
        c.env("KUBE_CODEGEN_TESTENV_BIN", bin.path());
    });
    let args = |pid: u32| std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    let apiserver = bin.path().join("kube-apiserver").into_os_string().into_encoded_bytes();
    assert!(
        running.pids.iter().any(|p| args(*p).starts_with(&apiserver)),
        "no kube-apiserver started from {} among {:?}",
        bin.path().display(),
        running.pids
    );
    running.child.kill().unwrap();
    running.child.wait().unwrap();
    let gone = all_gone(&running.pids, Duration::from_secs(15));
    let _ = std::fs::remove_dir_all(&running.work);
    assert!(gone, "running after their parent was killed: {:?}", running.pids);
}

#[test]
fn a_bin_directory_without_the_server_names_it_and_the_build_command() {
    let empty = tempfile::tempdir().unwrap();
    let out = testenv(|c| {
        c.env("KUBE_CODEGEN_TESTENV_BIN", empty.path()).stdin(Stdio::null());
    })
    .output()
    .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains(&empty.path().join("kube-apiserver").display().to_string()), "{stderr}");
    assert!(stderr.contains("testenv/build.sh"), "{stderr}");
}

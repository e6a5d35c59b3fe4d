//! `codegen_runtime::signal` in a real process: the first SIGTERM starts a
//! graceful stop, a second one exits at once with code 1; a single signal
//! lets the stop finish.

use std::io::{BufRead, BufReader};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

fn wait_for_line(reader: &mut impl BufRead, want: &str) {
    let mut line = String::new();
    loop {
        line.clear();
        let n = reader.read_line(&mut line).expect("reading the child's stdout");
        assert!(n > 0, "child closed stdout before printing {want:?}");
        if line.trim() == want {
            return;
        }
    }
}

/// Starts the two_signals binary and waits until it is ready.
fn start() -> (Child, BufReader<ChildStdout>) {
    let mut child =
        Command::new(env!("CARGO_BIN_EXE_two_signals")).stdout(Stdio::piped()).spawn().expect("spawning two_signals");
    let mut out = BufReader::new(child.stdout.take().expect("stdout"));
    wait_for_line(&mut out, "ready");
    (child, out)
}

fn kill(pid: u32, signal: libc::c_int) {
    // SAFETY: kill(2) on our own child, not yet reaped.
    unsafe { libc::kill(pid as libc::pid_t, signal) };
}

#[test]
fn second_signal_exits_with_code_1_during_a_long_drain() {
    let (mut child, mut out) = start();
    kill(child.id(), libc::SIGTERM);
    wait_for_line(&mut out, "draining");
    let sent = Instant::now();
    kill(child.id(), libc::SIGTERM);
    let status = child.wait().expect("waiting for the child");
    assert_eq!(status.code(), Some(1));
    assert!(sent.elapsed() < Duration::from_secs(30), "exited at once, not after the drain");
}

#[test]
fn sigint_starts_the_graceful_stop_too() {
    let (mut child, mut out) = start();
    kill(child.id(), libc::SIGINT);
    wait_for_line(&mut out, "draining");
    // Still draining: a single signal does not end the process.
    std::thread::sleep(Duration::from_millis(300));
    assert!(child.try_wait().expect("try_wait").is_none());
    kill(child.id(), libc::SIGKILL);
    let _ = child.wait();
}

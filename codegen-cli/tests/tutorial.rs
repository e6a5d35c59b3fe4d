//! docs/tutorial.md, run: every `$ command` of its `console` blocks in
//! order, in a fresh directory, against a real kube-apiserver (codegen-testenv),
//! with `kube-codegen` being this build and `kubectl` the one built beside
//! the server. A block titled with a path (```` ```rust title="..." ````) is
//! written to that file first. Each command must exit 0 (or fail, when the
//! line ends in `# fails`), and the lines shown under it must appear in its
//! output, in any order (a shown line may stop short of the real one; ages such
//! as `5s` match any age). A command ending in `&` runs in the background
//! until the test ends, and is stopped by its process group id.
//!
//! The crate the tutorial creates builds in the compile tests' target
//! directory (kept between runs) and offline, with the `Cargo.lock` that
//! `kube-codegen init` copies from this checkout.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use codegen_testenv::TestEnv;

/// One step of the tutorial.
#[derive(Debug)]
enum Step {
    /// Write `contents` to `path` (relative to the current directory).
    File { path: String, contents: String },
    /// Run `command`; `expected` lines must appear in its output.
    Command { command: String, expected: Vec<String>, line: usize },
}

/// The steps of a tutorial in Markdown.
fn steps(markdown: &str) -> Vec<Step> {
    let mut steps = Vec::new();
    let mut lines = markdown.lines().enumerate();
    while let Some((_, line)) = lines.next() {
        let Some(info) = line.strip_prefix("```") else { continue };
        let mut body = Vec::new();
        for (n, l) in lines.by_ref() {
            if l.starts_with("```") {
                break;
            }
            body.push((n + 1, l));
        }
        if let Some(path) = info.split_once("title=\"").and_then(|(_, rest)| rest.split_once('"')).map(|(p, _)| p) {
            let mut contents: String = body.iter().map(|(_, l)| format!("{l}\n")).collect();
            if contents.is_empty() {
                contents.push('\n');
            }
            steps.push(Step::File { path: path.to_string(), contents });
        } else if info.trim() == "console" {
            for (n, l) in body {
                match l.strip_prefix("$ ") {
                    Some(command) => {
                        steps.push(Step::Command { command: command.to_string(), expected: Vec::new(), line: n })
                    }
                    None => match steps.last_mut() {
                        Some(Step::Command { expected, .. }) => expected.push(l.to_string()),
                        _ => panic!("docs/tutorial.md:{n}: output line before any command"),
                    },
                }
            }
        }
    }
    steps
}

/// Whether `actual` begins with the tokens of `expected` (whitespace runs
/// are equal; an age or time matches any other).
fn line_matches(expected: &str, actual: &str) -> bool {
    let age_like = |t: &str| {
        t.starts_with(|c: char| c.is_ascii_digit())
            && t.ends_with(['s', 'm', 'h', 'd'])
            && t.chars().all(|c| c.is_ascii_digit() || matches!(c, 's' | 'm' | 'h' | 'd'))
    };
    let expected: Vec<&str> = expected.split_whitespace().collect();
    let actual: Vec<&str> = actual.split_whitespace().collect();
    expected.len() <= actual.len() && expected.iter().zip(&actual).all(|(e, a)| e == a || (age_like(e) && age_like(a)))
}

/// A background command; its whole process group is stopped on drop.
struct Background {
    child: Child,
    log: PathBuf,
}

impl Drop for Background {
    fn drop(&mut self) {
        let pgid = self.child.id() as i32;
        // SAFETY: signalling the process group this test started.
        unsafe { libc::kill(-pgid, libc::SIGTERM) };
        let _ = self.child.wait();
    }
}

/// `PATH` with a directory holding `kube-codegen` (this build) and the test
/// server's `kubectl` in front.
fn tool_path(env: &TestEnv, bin_dir: &Path) -> std::ffi::OsString {
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_kube-codegen"), bin_dir.join("kube-codegen")).unwrap();
    std::os::unix::fs::symlink(&env.binaries().kubectl, bin_dir.join("kubectl")).unwrap();
    let mut paths = vec![bin_dir.to_path_buf()];
    paths.extend(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()));
    std::env::join_paths(paths).unwrap()
}

#[test]
fn the_tutorial_runs_as_written() {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let markdown = std::fs::read_to_string(workspace.join("docs/tutorial.md")).unwrap();
    let steps = steps(&markdown);
    assert!(steps.iter().filter(|s| matches!(s, Step::Command { .. })).count() >= 10, "{steps:?}");

    let env = TestEnv::shared();
    let scratch = tempfile::tempdir().unwrap();
    let bin_dir = scratch.path().join("bin");
    std::fs::create_dir(&bin_dir).unwrap();
    let path = tool_path(env, &bin_dir);
    let home = scratch.path().join("work");
    std::fs::create_dir(&home).unwrap();
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace.join("target"))
        .join("codegen-compile-tests/target");

    let mut cwd = home.clone();
    let mut background = Vec::new();
    for step in steps {
        match step {
            Step::File { path, contents } => {
                let file = cwd.join(&path);
                std::fs::create_dir_all(file.parent().unwrap()).unwrap();
                std::fs::write(&file, contents).unwrap();
            }
            Step::Command { command, expected, line } => {
                if let Some(dir) = command.strip_prefix("cd ") {
                    cwd = cwd.join(dir.trim());
                    assert!(cwd.is_dir(), "docs/tutorial.md:{line}: `{command}`: no such directory");
                    continue;
                }
                let (shell, fails) = match command.split_once("  #").or_else(|| command.split_once(" # ")) {
                    Some((cmd, comment)) => (cmd.trim().to_string(), comment.trim() == "fails"),
                    None => (command.trim().to_string(), false),
                };
                let mut cmd = Command::new("bash");
                cmd.current_dir(&cwd)
                    .env("PATH", &path)
                    .env("KUBECONFIG", env.admin_kubeconfig())
                    .env("CARGO_TARGET_DIR", &target)
                    .env("CARGO_NET_OFFLINE", "true")
                    // No debug info: the shared scratch target stays small.
                    .env("CARGO_PROFILE_DEV_DEBUG", "false")
                    .env("CARGO_TERM_COLOR", "never")
                    .env_remove("RUSTFLAGS")
                    .env_remove("CARGO_MAKEFLAGS");
                if let Some(bg) = shell.strip_suffix('&') {
                    let log = scratch.path().join(format!("background-{line}.log"));
                    let out = std::fs::File::create(&log).unwrap();
                    let child = cmd
                        .args(["-c", &format!("exec {}", bg.trim())])
                        .stdin(Stdio::null())
                        .stdout(out.try_clone().unwrap())
                        .stderr(out)
                        .process_group(0)
                        .spawn()
                        .unwrap();
                    background.push(Background { child, log });
                    continue;
                }
                let out = cmd.args(["-c", &shell]).stdin(Stdio::null()).output().unwrap();
                let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
                let logs: String = background
                    .iter()
                    .map(|b| {
                        format!("\n--- {}:\n{}", b.log.display(), std::fs::read_to_string(&b.log).unwrap_or_default())
                    })
                    .collect();
                assert_eq!(
                    out.status.success(),
                    !fails,
                    "docs/tutorial.md:{line}: `{command}` exited with {}:\n{text}{logs}",
                    out.status
                );
                // In any order: the API server lists field errors in no fixed order.
                for want in &expected {
                    assert!(
                        text.lines().any(|l| line_matches(want, l)),
                        "docs/tutorial.md:{line}: `{command}` did not print `{want}`:\n{text}{logs}"
                    );
                }
            }
        }
    }
    drop(background);
}

#[test]
fn output_lines_match_by_prefix_and_ages_match_each_other() {
    assert!(line_matches("crontab-sample   */5 * * * *   1   True    5s", "crontab-sample */5 * * * * 1 True 2m10s"));
    assert!(line_matches("The CronTab \"bad\" is invalid:", "The CronTab \"bad\" is invalid: spec.replicas: Invalid"));
    assert!(!line_matches("crontab-sample True", "crontab-sample False 5s"));
    assert!(!line_matches("a b c", "a b"));
    assert!(!line_matches("5s Normal", "True Normal"));
}

#[test]
fn the_tutorial_parses_into_commands_files_and_output() {
    let md = "text\n```console\n$ echo hi\nhi\n$ cd x\n```\n```rust title=\"a/b.rs\"\nfn main() {}\n```\n";
    let steps = steps(md);
    assert!(
        matches!(&steps[0], Step::Command { command, expected, line: 3 } if command == "echo hi" && expected == &["hi"])
    );
    assert!(matches!(&steps[1], Step::Command { command, .. } if command == "cd x"));
    assert!(matches!(&steps[2], Step::File { path, contents } if path == "a/b.rs" && contents == "fn main() {}\n"));
}

//! Where the Go-built kube-apiserver, etcd and kubectl are found, and the
//! Go programs the benchmarks compare against.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

const VERSIONS: &str = include_str!("../versions.env");

fn version(key: &str) -> &'static str {
    VERSIONS.lines().find_map(|l| l.strip_prefix(key)?.strip_prefix('=')).unwrap_or("unknown")
}

/// The Kubernetes version of the test server (from `testenv/versions.env`).
pub static KUBERNETES_VERSION: std::sync::LazyLock<&'static str> = std::sync::LazyLock::new(|| version("K8S_VERSION"));
/// The etcd version of the test server (from `testenv/versions.env`).
pub static ETCD_VERSION: std::sync::LazyLock<&'static str> = std::sync::LazyLock::new(|| version("ETCD_VERSION"));

/// The controller-gen version of the differential tests (from `testenv/versions.env`).
pub static CONTROLLER_GEN_VERSION: std::sync::LazyLock<&'static str> =
    std::sync::LazyLock::new(|| version("CONTROLLER_GEN_VERSION"));

fn cache_dir() -> PathBuf {
    std::env::var_os("KUBE_CODEGEN_CACHE").map(PathBuf::from).unwrap_or_else(|| {
        let home = std::env::var_os("HOME").map(PathBuf::from).unwrap_or_else(|| "/root".into());
        home.join(".cache/kube-codegen")
    })
}

/// controller-gen as `testenv/build.sh` installs it:
/// `${KUBE_CODEGEN_CACHE:-$HOME/.cache/kube-codegen}/tools/controller-gen-<version>/controller-gen`,
/// or fails with the command that installs it.
pub fn controller_gen() -> Result<PathBuf> {
    let path =
        cache_dir().join("tools").join(format!("controller-gen-{}", *CONTROLLER_GEN_VERSION)).join("controller-gen");
    if !path.is_file() {
        bail!(
            "controller-gen {} is not installed: {} is missing.\n\
             Install it (once, cached outside the clone) with:\n    testenv/build.sh",
            *CONTROLLER_GEN_VERSION,
            path.display()
        );
    }
    Ok(path)
}

/// The Go program in `src` (a Go module of the repository, e.g.
/// `tests/go/informer-sync`), built with `go build` from Go modules into
/// `${KUBE_CODEGEN_CACHE:-$HOME/.cache/kube-codegen}/tools/go-<name>-<hash>`
/// on first use. The hash covers the module's `.go` files, `go.mod` and
/// `go.sum` (names and contents), so a changed program is rebuilt and an
/// unchanged one never is. Fails with a message naming `needed_by` when
/// there is no Go toolchain (`go` on `PATH` or `/usr/local/go/bin/go`).
pub fn go_program(src: &Path, name: &str, needed_by: &str) -> Result<PathBuf> {
    let bin = cache_dir().join("tools").join(format!("go-{name}-{:016x}", go_source_key(src)?));
    if bin.exists() {
        return Ok(bin);
    }
    let go = ["go", "/usr/local/go/bin/go"]
        .into_iter()
        .find(|go| Command::new(go).arg("version").output().is_ok_and(|out| out.status.success()))
        .with_context(|| {
            format!(
                "{needed_by} needs the Go toolchain (`go` on PATH or /usr/local/go/bin/go; .ci/run installs it) \
                 to build {}",
                src.display()
            )
        })?;
    eprintln!("building {} into {}", src.display(), bin.display());
    // Built beside its final name and renamed, so that an interrupted
    // build never leaves a binary that looks complete.
    let partial = bin.with_extension(format!("partial-{}", std::process::id()));
    let status = Command::new(go)
        .args(["build", "-o"])
        .arg(&partial)
        .arg(".")
        .current_dir(src)
        .env("GOFLAGS", "-buildvcs=false")
        .status()
        .context("running go build")?;
    if !status.success() {
        let _ = std::fs::remove_file(&partial);
        bail!("go build of {} failed", src.display());
    }
    std::fs::rename(&partial, &bin).with_context(|| format!("moving the build to {}", bin.display()))?;
    Ok(bin)
}

/// FNV-1a over the relative names and contents of the Go module's sources.
fn go_source_key(src: &Path) -> Result<u64> {
    fn collect(dir: &Path, files: &mut Vec<PathBuf>) -> Result<()> {
        for entry in std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))? {
            let path = entry?.path();
            if path.is_dir() {
                collect(&path, files)?;
            } else if path.extension().is_some_and(|e| e == "go")
                || path.file_name().is_some_and(|n| n == "go.mod" || n == "go.sum")
            {
                files.push(path);
            }
        }
        Ok(())
    }
    let mut files = Vec::new();
    collect(src, &mut files)?;
    files.sort();
    let mut key = 0xcbf2_9ce4_8422_2325u64;
    for file in &files {
        let name = file.strip_prefix(src)?.to_string_lossy().into_owned();
        for byte in name.bytes().chain([0]).chain(std::fs::read(file)?) {
            key = (key ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3);
        }
    }
    Ok(key)
}

/// Paths of the binaries a test environment runs.
#[derive(Clone, Debug)]
pub struct Binaries {
    /// kube-apiserver.
    pub kube_apiserver: PathBuf,
    /// etcd.
    pub etcd: PathBuf,
    /// kubectl (the one built beside the server when present, else `kubectl`
    /// from `PATH`).
    pub kubectl: PathBuf,
    /// k8s.io/sample-apiserver, the aggregated API server of
    /// `TestEnv::start_sample_apiserver` (checked there: only the
    /// aggregation tests need it).
    pub sample_apiserver: PathBuf,
}

impl Binaries {
    /// The directory `testenv/build.sh` builds into:
    /// `$KUBE_CODEGEN_TESTENV_BIN`, else
    /// `${KUBE_CODEGEN_CACHE:-$HOME/.cache/kube-codegen}/testenv/k8s-v<k8s>-etcd-<etcd>/bin`.
    pub fn default_dir() -> PathBuf {
        if let Some(dir) = std::env::var_os("KUBE_CODEGEN_TESTENV_BIN") {
            return PathBuf::from(dir);
        }
        cache_dir().join("testenv").join(format!("k8s-v{}-etcd-{}", *KUBERNETES_VERSION, *ETCD_VERSION)).join("bin")
    }

    /// Finds the binaries, or fails with the command that builds them.
    pub fn locate() -> Result<Self> {
        Self::in_dir(&Self::default_dir())
    }

    /// Finds the binaries in `dir`.
    pub fn in_dir(dir: &Path) -> Result<Self> {
        let kube_apiserver = dir.join("kube-apiserver");
        let etcd = dir.join("etcd");
        for bin in [&kube_apiserver, &etcd] {
            if !bin.is_file() {
                bail!(
                    "the end-to-end test server is not built: {} is missing.\n\
                     Build it (once, cached outside the clone) with:\n    testenv/build.sh\n\
                     or run the whole suite with the README's test command:\n    scripts/test.sh",
                    bin.display()
                );
            }
        }
        let built_kubectl = dir.join("kubectl");
        let kubectl = if built_kubectl.is_file() { built_kubectl } else { PathBuf::from("kubectl") };
        Ok(Self { kube_apiserver, etcd, kubectl, sample_apiserver: dir.join("sample-apiserver") })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_come_from_versions_env() {
        assert!(KUBERNETES_VERSION.starts_with("1."), "{}", *KUBERNETES_VERSION);
        assert!(ETCD_VERSION.starts_with("v3."), "{}", *ETCD_VERSION);
    }

    #[test]
    fn etcd_version_matches_the_committed_wrapper_module() {
        let gomod = include_str!("../go/etcd/go.mod");
        assert!(
            gomod.contains(&format!("go.etcd.io/etcd/server/v3 {}", *ETCD_VERSION)),
            "testenv/versions.env and testenv/go/etcd/go.mod disagree; run testenv/build.sh --regen"
        );
        let kas = include_str!("../go/kube-apiserver/go.mod");
        assert!(kas.contains(&format!("k8s.io/kubernetes v{}", *KUBERNETES_VERSION)));
        // sample-apiserver is the staging module of the same release.
        let sample = include_str!("../go/sample-apiserver/go.mod");
        let staging = format!("v0.{}", KUBERNETES_VERSION.trim_start_matches("1."));
        assert!(
            sample.contains(&format!("k8s.io/sample-apiserver {staging}")),
            "testenv/go/sample-apiserver/go.mod is not at {staging}; run testenv/build.sh --regen"
        );
    }

    #[test]
    fn go_source_key_covers_go_sources_only() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        std::fs::write(dir.path().join("main.go"), "package main\n").unwrap();
        std::fs::write(dir.path().join("go.mod"), "module example\n").unwrap();
        std::fs::write(dir.path().join("sub/x.go"), "package sub\n").unwrap();
        let key = go_source_key(dir.path()).unwrap();
        std::fs::write(dir.path().join("README.md"), "not a source").unwrap();
        assert_eq!(go_source_key(dir.path()).unwrap(), key);
        std::fs::write(dir.path().join("sub/x.go"), "package sub // changed\n").unwrap();
        assert_ne!(go_source_key(dir.path()).unwrap(), key);
    }

    #[test]
    fn missing_binaries_name_the_build_command() {
        let err = Binaries::in_dir(Path::new("/nonexistent/kube-codegen")).unwrap_err().to_string();
        assert!(err.contains("testenv/build.sh"), "{err}");
        assert!(err.contains("/nonexistent/kube-codegen/kube-apiserver"), "{err}");
    }
}

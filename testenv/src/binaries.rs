//! Where the Go-built kube-apiserver, etcd and kubectl are found.

use std::path::{Path, PathBuf};

use anyhow::{Result, bail};

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

/// Paths of the three binaries a test environment runs.
#[derive(Clone, Debug)]
pub struct Binaries {
    /// kube-apiserver.
    pub kube_apiserver: PathBuf,
    /// etcd.
    pub etcd: PathBuf,
    /// kubectl (the one built beside the server when present, else `kubectl`
    /// from `PATH`).
    pub kubectl: PathBuf,
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
        Ok(Self { kube_apiserver, etcd, kubectl })
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
    }

    #[test]
    fn missing_binaries_name_the_build_command() {
        let err = Binaries::in_dir(Path::new("/nonexistent/kube-codegen")).unwrap_err().to_string();
        assert!(err.contains("testenv/build.sh"), "{err}");
        assert!(err.contains("/nonexistent/kube-codegen/kube-apiserver"), "{err}");
    }
}

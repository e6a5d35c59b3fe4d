//! `cargo run -p codegen-testenv --bin testenv`: starts the test server for
//! interactive use (following the example's README, trying kubectl), prints
//! the kubeconfigs and the start-up time, and stops both processes when you
//! press Enter or close stdin.

use std::io::BufRead as _;
use std::time::Instant;

fn main() -> anyhow::Result<()> {
    let started = Instant::now();
    let env = codegen_testenv::TestEnv::start()?;
    let took = started.elapsed();
    println!("kube-apiserver {} ready at {} in {:.2?}", *codegen_testenv::KUBERNETES_VERSION, env.server_url(), took);
    println!("export KUBECONFIG={}", env.admin_kubeconfig().display());
    println!("# unprivileged user: {}", env.kubeconfig_for(codegen_testenv::UNPRIVILEGED_USER).display());
    println!("# kubectl: {}", env.binaries().kubectl.display());
    println!("press Enter (or close stdin) to stop the server");
    let mut line = String::new();
    let _ = std::io::stdin().lock().read_line(&mut line);
    drop(env);
    println!("stopped");
    Ok(())
}

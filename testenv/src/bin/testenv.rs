//! `cargo run -p codegen-testenv --bin testenv [-- --sample-apiserver]`:
//! starts the test server for interactive use (following the example's
//! README, trying kubectl), prints the kubeconfigs and the start-up time,
//! and stops the processes when you press Enter or close stdin. With
//! `--sample-apiserver`, k8s.io/sample-apiserver is registered too
//! (`kubectl get flunders`, docs/aggregated.md).

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
    println!("# work directory: {}", env.work_dir().display());
    let pids: Vec<String> = env.pids().iter().map(u32::to_string).collect();
    println!("# pids: {}", pids.join(" "));
    if std::env::args().skip(1).any(|a| a == "--sample-apiserver") {
        let server = env.sample_apiserver()?;
        println!(
            "# sample-apiserver on 127.0.0.1:{} serves {} through the APIServices",
            server.port(),
            codegen_testenv::SAMPLE_GROUP
        );
    }
    println!("press Enter (or close stdin) to stop the server");
    let mut line = String::new();
    let _ = std::io::stdin().lock().read_line(&mut line);
    drop(env);
    println!("stopped");
    Ok(())
}

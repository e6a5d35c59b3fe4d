//! A process whose graceful stop takes long, for the test of
//! `codegen_runtime::signal`'s second-signal exit
//! (`tests/tests/shutdown_signal.rs`).

#[tokio::main]
async fn main() {
    let shutdown = codegen_runtime::signal::shutdown_signal();
    println!("ready");
    shutdown.recv().await;
    println!("draining");
    // A drain that would take far longer than the test waits.
    tokio::time::sleep(std::time::Duration::from_secs(60)).await;
    println!("drained");
}

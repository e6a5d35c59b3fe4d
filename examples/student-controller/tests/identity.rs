//! Each replica gets an identity of its own without flags: the pod's name,
//! else a made-up one, never a shared constant (two replicas with one Lease
//! identity would both lead).

use std::process::Command;

/// The default of `--instance` as `--help` shows it, with `HOSTNAME` set to
/// `host` (or unset).
fn default_instance(host: Option<&str>) -> String {
    let mut command = Command::new(env!("CARGO_BIN_EXE_student-controller"));
    command.arg("--help");
    match host {
        Some(h) => command.env("HOSTNAME", h),
        None => command.env_remove("HOSTNAME"),
    };
    let out = command.output().expect("running student-controller --help");
    let help = String::from_utf8_lossy(&out.stdout);
    let after = help.split("--instance <INSTANCE>").nth(1).expect("--instance in --help");
    let default = after.split("[default: ").nth(1).expect("a default");
    default.split(']').next().unwrap_or_default().to_string()
}

#[test]
fn the_default_instance_is_the_pods_name_else_unique() {
    assert_eq!(default_instance(Some("student-controller-7d9f-abcde")), "student-controller-7d9f-abcde");
    let (a, b) = (default_instance(None), default_instance(None));
    assert!(a.starts_with("student-controller-") && b.starts_with("student-controller-"), "{a} {b}");
    assert_ne!(a, b, "two replicas without HOSTNAME got one identity");
}

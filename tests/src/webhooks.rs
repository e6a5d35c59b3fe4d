//! The webhooks of the `conversion` fixture's Task (tests/fixtures/conversion), for
//! tests/tests/e2e_webhooks.rs: v2 (the storage version) is the hub, v1 a
//! spoke; v2 defaults and validates itself.
//!
//! v1 has a shell `command`, v2 `args` and `timeoutSeconds`. v1 → v2 runs
//! the command with `sh -c`; v2 → v1 quotes the arguments into a command and
//! keeps what v1 cannot hold (the exact `args`, `timeoutSeconds`) in an
//! annotation, so an object read and written back in v1 loses nothing
//! (kubebuilder's pattern).

use std::collections::BTreeMap;

use codegen_runtime::webhook::{
    ConversionError, Convertible, Defaulter, Denied, Hub, Validator, Warnings, copy_fields,
};
use serde::{Deserialize, Serialize};

use crate::conversion::apis::batch::{v1, v2};

/// The annotation of a v1 Task that keeps its v2 spec.
pub const V2_SPEC_ANNOTATION: &str = "batch.example.com/v2-spec";
/// The label that makes the validating webhook refuse a delete.
pub const PROTECTED_LABEL: &str = "batch.example.com/protected";
/// The timeout the defaulting webhook sets.
pub const DEFAULT_TIMEOUT_SECONDS: i64 = 600;

/// What v1 cannot hold of a v2 spec.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct KeptSpec {
    args: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    timeout_seconds: Option<i64>,
}

/// A shell word for `arg` (single-quoted unless it is plain).
pub fn shell_quote(arg: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "_@%+=:,./-".contains(c);
    if !arg.is_empty() && arg.chars().all(plain) { arg.to_owned() } else { format!("'{}'", arg.replace('\'', r"'\''")) }
}

fn command_of(args: &[String]) -> String {
    args.iter().map(|a| shell_quote(a)).collect::<Vec<_>>().join(" ")
}

impl Hub for v2::Task {}

impl Convertible for v1::Task {
    type Hub = v2::Task;

    fn to_hub(self) -> Result<v2::Task, ConversionError> {
        // metadata and spec.priority: generated from the two schemas.
        let mut hub = copy_fields(&self, v2::Task::default(), v1::Task::HUB_COMMON_FIELDS)?;
        let kept = hub.metadata.annotations.as_mut().and_then(|a| a.remove(V2_SPEC_ANNOTATION));
        if hub.metadata.annotations.as_ref().is_some_and(BTreeMap::is_empty) {
            hub.metadata.annotations = None;
        }
        let kept = kept.and_then(|k| serde_json::from_str::<KeptSpec>(&k).ok());
        let sh = |command: String| vec!["sh".into(), "-c".into(), command];
        match kept {
            // The command was not changed in v1: the v2 spec as it was.
            Some(kept) if command_of(&kept.args) == self.spec.command => {
                (hub.spec.args, hub.spec.timeout_seconds) = (kept.args, kept.timeout_seconds);
            }
            Some(kept) => (hub.spec.args, hub.spec.timeout_seconds) = (sh(self.spec.command), kept.timeout_seconds),
            None => hub.spec.args = sh(self.spec.command),
        }
        Ok(hub)
    }

    fn from_hub(hub: v2::Task) -> Result<Self, ConversionError> {
        if let Some(i) = hub.spec.args.iter().position(|a| a.contains('\0')) {
            return Err(ConversionError::new(format!(
                "spec.args[{i}] holds a NUL character, which no v1 command can hold"
            )));
        }
        let mut spoke = copy_fields(&hub, v1::Task::default(), v1::Task::HUB_COMMON_FIELDS)?;
        let args = hub.spec.args;
        spoke.spec.command = match args.as_slice() {
            [sh, c, command] if sh == "sh" && c == "-c" && hub.spec.timeout_seconds.is_none() => command.clone(),
            _ => {
                let command = command_of(&args);
                let kept = KeptSpec { args, timeout_seconds: hub.spec.timeout_seconds };
                let kept = serde_json::to_string(&kept).expect("a spec serializes");
                spoke.metadata.annotations.get_or_insert_with(BTreeMap::new).insert(V2_SPEC_ANNOTATION.into(), kept);
                command
            }
        };
        Ok(spoke)
    }
}

impl Defaulter for v2::Task {
    fn apply_defaults(&mut self) {
        self.spec.timeout_seconds.get_or_insert(DEFAULT_TIMEOUT_SECONDS);
    }
}

impl Validator for v2::Task {
    fn validate_create(&self) -> Result<Warnings, Denied> {
        match self.spec.args.first().map(String::as_str) {
            Some("rm") => Err(Denied::invalid("spec.args[0]: Invalid value: \"rm\": tasks may not run rm")),
            Some("sudo") => Ok(vec!["spec.args[0]: sudo will not work in a task".into()]),
            _ => Ok(Warnings::new()),
        }
    }

    fn validate_update(&self, old: &Self) -> Result<Warnings, Denied> {
        if self.spec.args.first() != old.spec.args.first() {
            return Err(Denied::invalid("spec.args[0]: Invalid value: the program of a task is immutable"));
        }
        self.validate_create()
    }

    fn validate_delete(&self) -> Result<Warnings, Denied> {
        let protected = self.metadata.labels.as_ref().is_some_and(|l| l.contains_key(PROTECTED_LABEL));
        if protected {
            Err(Denied::new(format!("the task is protected (label {PROTECTED_LABEL})")))
        } else {
            Ok(Warnings::new())
        }
    }
}

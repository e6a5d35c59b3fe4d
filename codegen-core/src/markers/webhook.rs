//! `#[resource(mutating_webhook(..), validating_webhook(..))]`: the kind's
//! admission webhooks, written to `config/webhook/manifests.yaml` as
//! controller-gen's webhook generator writes kubebuilder's
//! `+kubebuilder:webhook:` markers.

use proc_macro2::Span;
use syn::spanned::Spanned as _;

use super::*;

/// `mutating_webhook` / `validating_webhook`, bare or with
/// `(path = "..", name = "..", failure_policy = "Fail" | "Ignore",
/// verbs = "create;update")`.
#[derive(Clone, Debug)]
pub struct AdmissionWebhook {
    /// `path = ".."` (default `/mutate-<group with dashes>-<version>-<kind>`
    /// or `/validate-..`, kubebuilder's).
    pub path: Option<Spanned<String>>,
    /// `name = ".."`: the webhook's name, a DNS name with at least three
    /// segments (default `m<kind>-<version>.<group>` or `v..`).
    pub name: Option<Spanned<String>>,
    /// `failure_policy = "Fail" | "Ignore"` (default `Fail`).
    pub failure_policy: Option<Spanned<String>>,
    /// `verbs = "create;update;delete"`: the operations the webhook is
    /// called for, kubebuilder's `verbs` (default `create;update`).
    pub verbs: Option<Spanned<String>>,
    /// The whole marker.
    pub span: Span,
}

impl HasSpan for AdmissionWebhook {
    fn span(&self) -> Span {
        self.span
    }
}

const KEYS: &[&str] = &["path", "name", "failure_policy", "verbs"];

/// The verbs a webhook may name, as kubebuilder writes them.
const VERBS: &[&str] = &["create", "update", "delete", "connect", "*"];

impl AdmissionWebhook {
    /// The operations of the webhook's rule (`CREATE`, `UPDATE`, ...), in
    /// the order given; CREATE and UPDATE by default.
    pub fn operations(&self) -> Vec<String> {
        match &self.verbs {
            Some(verbs) => verbs.value.split(';').map(|v| v.trim().to_uppercase()).collect(),
            None => vec!["CREATE".into(), "UPDATE".into()],
        }
    }
}

/// Parses `mutating_webhook` / `validating_webhook`, bare or with a list.
pub(super) fn parse(
    meta: &syn::meta::ParseNestedMeta,
    key: &str,
    errors: &mut Errors,
) -> syn::Result<AdmissionWebhook> {
    let span = meta.path.span();
    let mut out = AdmissionWebhook { path: None, name: None, failure_policy: None, verbs: None, span };
    if meta.input.peek(syn::Token![=]) {
        errors.push(
            MarkerError::new(span, format!("`{key}` takes a list, not a value"))
                .help(format!("write `{key}` or e.g. `{key}(failure_policy = \"Ignore\")`")),
        );
        return skip_value(meta).map(|()| out);
    }
    if !meta.input.peek(syn::token::Paren) {
        return Ok(out);
    }
    meta.parse_nested_meta(|m| {
        let k = path_key(&m.path);
        match k.as_str() {
            "path" => set_once(&mut out.path, lit_str(&m)?, &k, errors),
            "name" => set_once(&mut out.name, lit_str(&m)?, &k, errors),
            "failure_policy" => set_once(&mut out.failure_policy, lit_str(&m)?, &k, errors),
            "verbs" => set_once(&mut out.verbs, lit_str(&m)?, &k, errors),
            _ => {
                let hint = (k == "failurePolicy").then_some("failure_policy");
                unknown_key(&m, key, &k, KEYS, errors, hint)?
            }
        }
        Ok(())
    })?;
    if let Some(path) = &out.path
        && !path.value.starts_with('/')
    {
        errors.push(
            MarkerError::new(path.span, format!("path `{}` does not start with `/`", path.value))
                .help("e.g. `path = \"/mutate-task\"`"),
        );
    }
    if let Some(name) = &out.name
        && name.value.split('.').filter(|s| !s.is_empty()).count() < 3
    {
        errors.push(
            MarkerError::new(name.span, format!("webhook name `{}` has fewer than three DNS segments", name.value))
                .help("the API server wants a fully qualified name, e.g. `mtask.batch.example.com`"),
        );
    }
    if let Some(verbs) = &out.verbs {
        let given: Vec<String> = verbs.value.split(';').map(|v| v.trim().to_lowercase()).collect();
        let help = "`create`, `update`, `delete` or `connect` separated by `;` (e.g. `verbs = \"create;update;delete\"`), or `*` alone";
        if let Some(bad) = given.iter().find(|v| !VERBS.contains(&v.as_str())) {
            errors.push(MarkerError::new(verbs.span, format!("unknown webhook verb `{bad}`")).help(help));
        } else if given.len() > 1 && given.iter().any(|v| v == "*") {
            errors.push(MarkerError::new(verbs.span, "`*` with other webhook verbs").help(help));
        } else if let Some(twice) = given.iter().enumerate().find_map(|(i, v)| given[..i].contains(v).then_some(v)) {
            errors.push(MarkerError::new(verbs.span, format!("webhook verb `{twice}` given twice")).help(help));
        }
    }
    if let Some(policy) = &out.failure_policy
        && policy.value != "Fail"
        && policy.value != "Ignore"
    {
        errors.push(
            MarkerError::new(policy.span, format!("unknown failure policy `{}`", policy.value))
                .help("`Fail` (refuse requests when the webhook cannot answer) or `Ignore` (let them through)"),
        );
    }
    Ok(out)
}

//! `#[rbac(...)]`: one RBAC rule the controller's code needs, kubebuilder's
//! `+kubebuilder:rbac:groups=..,resources=..,verbs=..` as an attribute.
//! `kube-codegen rbac` collects them into `config/rbac/role.yaml`.

use proc_macro2::{Span, TokenStream};
use syn::Attribute;
use syn::parse::Parser as _;
use syn::spanned::Spanned as _;

use super::{Errors, MarkerError, Spanned, lit_str, path_key, set_once, unknown_key};

/// The keys of `#[rbac(...)]`.
pub const RBAC_KEYS: &[&str] = &["groups", "resources", "verbs", "resource_names", "urls", "namespace"];

/// One `#[rbac(...)]` marker. List values are written `;`-separated, as in
/// kubebuilder (`verbs = "get;list;watch"`).
#[derive(Clone, Debug, Default)]
pub struct RbacRule {
    /// API groups (`""` is the core group).
    pub groups: Vec<String>,
    /// Resources, subresources as `resource/subresource`.
    pub resources: Vec<String>,
    /// Verbs.
    pub verbs: Vec<String>,
    /// Resource names the rule is limited to.
    pub resource_names: Vec<String>,
    /// Non-resource URLs (cluster roles only).
    pub urls: Vec<String>,
    /// Set for a namespaced `Role` in this namespace instead of the
    /// `ClusterRole`.
    pub namespace: Option<String>,
}

/// A `;`-separated list: its non-empty items, trimmed. `""` alone is one
/// empty item (the core API group).
fn split_list(value: &str) -> Vec<String> {
    if value.is_empty() {
        return vec![String::new()];
    }
    value.split(';').map(str::trim).filter(|s| !s.is_empty()).map(str::to_owned).collect()
}

/// Parses the arguments of `#[rbac(...)]`.
pub fn parse_rbac_args(args: TokenStream, span: Span) -> Result<RbacRule, Vec<MarkerError>> {
    let mut errors = Errors::new();
    let mut slots: [Option<Spanned<String>>; 6] = Default::default();
    if let Err(e) = super::check_nesting(&args, span) {
        return Err(vec![e]);
    }
    let parser = syn::meta::parser(|meta| {
        let key = path_key(&meta.path);
        match RBAC_KEYS.iter().position(|k| *k == key) {
            Some(i) => {
                let value = lit_str(&meta)?;
                set_once(&mut slots[i], value, &key, &mut errors);
                Ok(())
            }
            None => {
                let alias = match key.as_str() {
                    "resourceNames" => Some("resource_names"),
                    "group" | "apiGroups" => Some("groups"),
                    "resource" => Some("resources"),
                    "verb" => Some("verbs"),
                    _ => None,
                };
                unknown_key(&meta, "rbac", &key, RBAC_KEYS, &mut errors, alias)
            }
        }
    });
    if let Err(e) = parser.parse2(args) {
        errors.extend(MarkerError::from_syn(e));
    }
    if !errors.is_empty() {
        // A misspelled key would also read as a missing one.
        return Err(errors);
    }
    let [groups, resources, verbs, resource_names, urls, namespace] = slots;
    let list = |slot: &Option<Spanned<String>>| slot.as_ref().map(|s| split_list(&s.value)).unwrap_or_default();
    let rule = RbacRule {
        groups: list(&groups),
        resources: list(&resources),
        verbs: list(&verbs),
        resource_names: list(&resource_names),
        urls: list(&urls),
        namespace: namespace.as_ref().map(|s| s.value.clone()),
    };
    if rule.verbs.is_empty() {
        let at = verbs.as_ref().map_or(span, |s| s.span);
        errors.push(MarkerError::new(at, "`rbac` needs `verbs`").help("e.g. `verbs = \"get;list;watch\"`"));
    }
    if let Some(v) = verbs.as_ref().filter(|_| rule.verbs.iter().any(String::is_empty)) {
        errors.push(MarkerError::new(v.span, "`verbs` has an empty verb").help("separate verbs with `;`"));
    }
    match (rule.urls.is_empty(), rule.resources.is_empty()) {
        (true, true) => errors.push(
            MarkerError::new(span, "`rbac` needs `resources` (with `groups`) or `urls`")
                .help("e.g. `#[rbac(groups = \"\", resources = \"configmaps\", verbs = \"get;list;watch\")]`"),
        ),
        (false, false) => errors.push(
            MarkerError::new(urls.as_ref().map_or(span, |s| s.span), "`urls` and `resources` in one `rbac` marker")
                .help("write non-resource URLs in a marker of their own"),
        ),
        (true, false) if groups.is_none() => errors.push(
            MarkerError::new(resources.as_ref().map_or(span, |s| s.span), "`resources` without `groups`")
                .help("name the API group, `groups = \"\"` for the core group (configmaps, pods, ...)"),
        ),
        _ => {}
    }
    if let Some(ns) = namespace.as_ref() {
        if !rule.urls.is_empty() {
            errors.push(
                MarkerError::new(ns.span, "`urls` need a cluster role; `namespace` makes a namespaced Role")
                    .help("drop `namespace` from this marker"),
            );
        }
        if ns.value.is_empty() {
            errors.push(MarkerError::new(ns.span, "`namespace` is empty").help("drop it for the cluster role"));
        }
    }
    if errors.is_empty() { Ok(rule) } else { Err(errors) }
}

/// Parses an `#[rbac(...)]` attribute found in a file.
pub fn parse_rbac_attr(attr: &Attribute) -> Result<RbacRule, Vec<MarkerError>> {
    match &attr.meta {
        syn::Meta::List(list) => parse_rbac_args(list.tokens.clone(), attr.span()),
        other => Err(vec![
            MarkerError::new(other.span(), "`rbac` takes arguments")
                .help("write `#[rbac(groups = \"\", resources = \"configmaps\", verbs = \"get;list;watch\")]`"),
        ]),
    }
}

/// Whether `attr` is an `rbac` marker (`#[rbac]`, `#[codegen_macros::rbac]`).
pub fn is_rbac_attr(attr: &Attribute) -> bool {
    attr.path().segments.last().is_some_and(|s| s.ident == "rbac")
}

#[cfg(test)]
mod tests {
    use quote::quote;

    use super::*;

    fn parse(tokens: TokenStream) -> Result<RbacRule, Vec<MarkerError>> {
        parse_rbac_args(tokens, Span::call_site())
    }

    #[test]
    fn lists_split_on_semicolons_and_the_core_group_is_empty() {
        let rule = parse(quote!(groups = "", resources = "configmaps;secrets", verbs = "get; list ;watch")).unwrap();
        assert_eq!(rule.groups, [""]);
        assert_eq!(rule.resources, ["configmaps", "secrets"]);
        assert_eq!(rule.verbs, ["get", "list", "watch"]);
        assert!(rule.namespace.is_none());
    }

    #[test]
    fn bad_markers_say_what_to_write() {
        let msg = |t| parse(t).unwrap_err().iter().map(|e| e.message.clone()).collect::<Vec<_>>().join(" | ");
        assert_eq!(msg(quote!(groups = "", resources = "pods")), "`rbac` needs `verbs`");
        assert_eq!(msg(quote!(resources = "pods", verbs = "get")), "`resources` without `groups`");
        assert_eq!(msg(quote!(verbs = "get")), "`rbac` needs `resources` (with `groups`) or `urls`");
        assert_eq!(msg(quote!(groups = "", resource = "pods", verbs = "get")), "unknown `rbac` marker `resource`");
        assert_eq!(
            msg(quote!(urls = "/metrics", verbs = "get", namespace = "a")),
            "`urls` need a cluster role; `namespace` makes a namespaced Role"
        );
        assert_eq!(msg(quote!(groups = "", resources = "pods", verbs = "get", verbs = "list")), "duplicate `verbs`");
        let e = parse(quote!(groups = "", resource = "pods", verbs = "get")).unwrap_err();
        assert_eq!(e[0].help.as_deref(), Some("did you mean `resources`?"));
    }
}

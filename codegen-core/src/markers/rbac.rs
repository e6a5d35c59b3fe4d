//! `#[rbac(...)]`: one RBAC rule the controller's code needs, kubebuilder's
//! `+kubebuilder:rbac:groups=..,resources=..,verbs=..` as an attribute.
//! `kube-codegen rbac` collects them into `config/rbac/role.yaml`.

use proc_macro2::{Span, TokenStream};
use syn::Attribute;
use syn::parse::Parser as _;
use syn::spanned::Spanned as _;

use super::{Errors, MarkerError, Spanned, lit_str, path_key, set_once, unknown_key};

/// The keys of `#[rbac(...)]`.
pub const RBAC_KEYS: &[&str] = &["groups", "resources", "verbs", "resource_names", "urls", "namespace", "role_name"];

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
    /// The name of the role the rule goes to, instead of the one given to
    /// `kube-codegen rbac` (controller-gen's `roleName`).
    pub role_name: Option<String>,
}

/// A `;`-separated list: its items, trimmed (`""` is one empty item).
fn split_list(value: &str) -> Vec<String> {
    value.split(';').map(|s| s.trim().to_owned()).collect()
}

/// Parses the arguments of `#[rbac(...)]`.
pub fn parse_rbac_args(args: TokenStream, span: Span) -> Result<RbacRule, Vec<MarkerError>> {
    let mut errors = Errors::new();
    let mut slots: [Option<Spanned<String>>; 7] = Default::default();
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
                    "roleName" => Some("role_name"),
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
    let [groups, resources, verbs, resource_names, urls, namespace, role_name] = slots;
    let list = |slot: &Option<Spanned<String>>| slot.as_ref().map(|s| split_list(&s.value)).unwrap_or_default();
    let rule = RbacRule {
        // `""` alone and `core` are the core group, as controller-gen reads
        // them (an empty item among others is an error below).
        groups: list(&groups).into_iter().map(|g| if g == "core" { String::new() } else { g }).collect(),
        resources: list(&resources),
        verbs: list(&verbs),
        resource_names: list(&resource_names),
        urls: list(&urls),
        namespace: namespace.as_ref().map(|s| s.value.clone()),
        role_name: role_name.as_ref().map(|s| s.value.clone()),
    };
    if verbs.is_none() {
        errors.push(MarkerError::new(span, "`rbac` needs `verbs`").help("e.g. `verbs = \"get;list;watch\"`"));
    }
    let group_items = groups.as_ref().map(|g| split_list(&g.value)).unwrap_or_default();
    if let Some(g) = groups.as_ref().filter(|_| group_items.len() > 1 && group_items.iter().any(String::is_empty)) {
        errors.push(
            MarkerError::new(g.span, "`groups` has an empty item")
                .help("write `core` for the core group among others (`groups = \"core;apps\"`)"),
        );
    }
    for (key, slot, items) in [
        ("verbs", &verbs, &rule.verbs),
        ("resources", &resources, &rule.resources),
        ("resource_names", &resource_names, &rule.resource_names),
        ("urls", &urls, &rule.urls),
    ] {
        if let Some(s) = slot.as_ref().filter(|_| items.iter().any(String::is_empty)) {
            errors.push(
                MarkerError::new(s.span, format!("`{key}` has an empty item"))
                    .help("separate the items with `;`, without an empty one"),
            );
        }
    }
    if let Some(s) = role_name.as_ref().filter(|s| s.value.is_empty()) {
        errors.push(
            MarkerError::new(s.span, "`role_name` is empty").help("drop it for the role named on the command line"),
        );
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
        // The API server refuses a rule with both.
        (false, true) => {
            for (key, slot) in [("groups", &groups), ("resource_names", &resource_names)] {
                if let Some(s) = slot {
                    errors.push(
                        MarkerError::new(s.span, format!("`urls` and `{key}` in one `rbac` marker"))
                            .help("non-resource URLs belong to no API group and have no names; drop it"),
                    );
                }
            }
        }
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

/// Whether `attr` is an attribute `rbac` of a path other than the markers'
/// (`#[authz::rbac]`, or the macro through a renamed crate): not read, and
/// worth a warning.
pub fn is_other_rbac_attr(attr: &Attribute) -> bool {
    attr.path().segments.len() > 1
        && attr.path().segments.last().is_some_and(|s| s.ident == "rbac")
        && !is_rbac_attr(attr)
}

/// Whether `attr` is an `rbac` marker (`#[rbac]`, `#[codegen_macros::rbac]`;
/// another crate's `#[authz::rbac]` is not).
pub fn is_rbac_attr(attr: &Attribute) -> bool {
    let segments: Vec<String> = attr.path().segments.iter().map(|s| s.ident.to_string()).collect();
    matches!(segments.iter().map(String::as_str).collect::<Vec<_>>().as_slice(), ["rbac"] | ["codegen_macros", "rbac"])
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

    /// controller-gen's spellings of the core group: `""` alone and `core`;
    /// an empty item among others is an error (`"apps;"` would grant the
    /// core group by a typo).
    #[test]
    fn core_and_empty_items_are_the_core_group() {
        let rule = parse(quote!(groups = "core;apps", resources = "pods", verbs = "get", role_name = "r")).unwrap();
        assert_eq!(rule.groups, ["", "apps"]);
        assert_eq!(rule.role_name.as_deref(), Some("r"));
        let msg = |t| parse(t).unwrap_err().iter().map(|e| e.message.clone()).collect::<Vec<_>>().join(" | ");
        assert_eq!(msg(quote!(groups = "", resources = "pods;", verbs = "get")), "`resources` has an empty item");
        assert_eq!(
            msg(quote!(groups = "metrics.k8s.io;", resources = "pods", verbs = "get")),
            "`groups` has an empty item"
        );
        assert_eq!(msg(quote!(groups = "", resources = "", verbs = "get")), "`resources` has an empty item");
        assert_eq!(msg(quote!(groups = "", resources = "pods", verbs = "")), "`verbs` has an empty item");
        assert_eq!(
            msg(quote!(urls = "/metrics", groups = "apps", resource_names = "a", verbs = "get")),
            "`urls` and `groups` in one `rbac` marker | `urls` and `resource_names` in one `rbac` marker"
        );
        assert_eq!(msg(quote!(groups = "", resources = "pods", verbs = "get", role_name = "")), "`role_name` is empty");
    }

    /// Only `rbac` and `codegen_macros::rbac` are markers.
    #[test]
    fn another_crates_rbac_attribute_is_no_marker() {
        let attr = |tokens: TokenStream| syn::parse_quote!(#[#tokens(role = "admin")]);
        assert!(is_rbac_attr(&attr(quote!(rbac))));
        assert!(is_rbac_attr(&attr(quote!(codegen_macros::rbac))));
        assert!(!is_rbac_attr(&attr(quote!(authz::rbac))));
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

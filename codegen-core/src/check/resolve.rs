//! Type resolution: every field type is mapped to a definition by following
//! Rust's paths — the `use` items of its module (renames, globs, `self::`,
//! `super::`, `crate::`), nested and inline modules, and the API packages of
//! the tree — never by its last segment.
//!
//! A path ends at an API type of some package of the tree
//! ([`TypeRef::Named`]), at a Kubernetes type of the built-in table
//! ([`TypeRef::Builtin`]), at a container, primitive or other type with a
//! fixed schema, or nowhere: then the error says why and what to do.

use std::collections::{BTreeMap, BTreeSet};

use proc_macro2::Span;
use syn::spanned::Spanned as _;

use crate::builtin;
use crate::ident::did_you_mean;
use crate::model::{IntBounds, Known, NumFormat, TypeKey, TypeRef};
use crate::parse::Package;

/// A `use` path as written.
#[derive(Clone, Debug)]
struct UsePath {
    /// `pub use` (of any reach), not a private `use`.
    public: bool,
    leading_colon: bool,
    segments: Vec<String>,
}

/// What one module declares and imports.
#[derive(Debug, Default)]
pub struct Scope {
    /// Module path inside the package.
    pub path: Vec<String>,
    /// Types (structs, enums, type aliases) defined here.
    pub types: BTreeSet<String>,
    /// The type aliases among them that are followed.
    aliases: BTreeSet<String>,
    /// Child modules.
    pub children: BTreeSet<String>,
    uses: BTreeMap<String, UsePath>,
    globs: Vec<UsePath>,
}

/// A type alias's type parameters, with their defaults.
type AliasParams = Vec<(String, Option<syn::Type>)>;

/// The scopes of one package.
#[derive(Debug)]
pub struct PackageScopes<'a> {
    /// The package.
    pub pkg: &'a Package,
    /// One scope per module, the order of [`Package::modules`].
    pub scopes: Vec<Scope>,
    /// The package's path from the crate root (`["pkg", "apis", "example", "v1"]`),
    /// if known.
    pub crate_path: Option<Vec<String>>,
    /// Where every type of the package is defined: module index.
    pub type_modules: BTreeMap<String, usize>,
    /// `type X<T, ..> = Y;` aliases by module index and name: type
    /// parameters (with their defaults), target and doc comment. Each
    /// module's own, as rustc reads them: a name is looked up where it is
    /// written.
    aliases: BTreeMap<(usize, String), (AliasParams, syn::Type, Option<String>)>,
}

impl<'a> PackageScopes<'a> {
    /// Reads the scopes of a package.
    pub fn new(pkg: &'a Package, crate_path: Option<Vec<String>>) -> Self {
        let mut scopes = Vec::new();
        let mut type_modules = BTreeMap::new();
        let mut aliases = BTreeMap::new();
        for (idx, m) in pkg.modules.iter().enumerate() {
            let mut scope = Scope { path: m.path.clone(), ..Default::default() };
            for item in pkg.items(m) {
                match item {
                    syn::Item::Struct(s) => {
                        scope.types.insert(s.ident.to_string());
                    }
                    syn::Item::Enum(e) => {
                        scope.types.insert(e.ident.to_string());
                    }
                    syn::Item::Type(t) => {
                        scope.types.insert(t.ident.to_string());
                        let params: Option<AliasParams> = t
                            .generics
                            .params
                            .iter()
                            .map(|p| match p {
                                syn::GenericParam::Type(p) => {
                                    Some((p.ident.to_string(), p.default.clone().map(|(_, t)| t)))
                                }
                                _ => None,
                            })
                            .collect();
                        // Lifetime and const parameters make no schema
                        // difference, but are not followed.
                        if let Some(params) = params {
                            let doc = super::attrs::doc_comment(&t.attrs);
                            aliases.insert((idx, t.ident.to_string()), (params, (*t.ty).clone(), doc));
                            scope.aliases.insert(t.ident.to_string());
                        }
                    }
                    syn::Item::Mod(md) => {
                        scope.children.insert(md.ident.to_string());
                    }
                    syn::Item::Use(u) => {
                        let public = !matches!(u.vis, syn::Visibility::Inherited);
                        walk_use(&u.tree, (public, u.leading_colon.is_some()), Vec::new(), &mut scope);
                    }
                    _ => {}
                }
            }
            for t in &scope.types {
                type_modules.entry(t.clone()).or_insert(idx);
            }
            scopes.push(scope);
        }
        PackageScopes { pkg, scopes, crate_path, type_modules, aliases }
    }

    fn module_index(&self, path: &[String]) -> Option<usize> {
        self.scopes.iter().position(|s| s.path == path)
    }
}

/// `how` is the `use` item's (public, leading `::`).
fn walk_use(tree: &syn::UseTree, how: (bool, bool), prefix: Vec<String>, scope: &mut Scope) {
    let (public, leading) = how;
    let with = |p: &Vec<String>, s: String| {
        let mut v = p.clone();
        v.push(s);
        v
    };
    match tree {
        syn::UseTree::Path(p) => walk_use(&p.tree, how, with(&prefix, p.ident.to_string()), scope),
        syn::UseTree::Name(n) => {
            let name = n.ident.to_string();
            if name == "self" {
                // `use a::b::{self}` imports `b`.
                if let Some(last) = prefix.last() {
                    scope
                        .uses
                        .insert(last.clone(), UsePath { public, leading_colon: leading, segments: prefix.clone() });
                }
            } else {
                scope
                    .uses
                    .insert(name.clone(), UsePath { public, leading_colon: leading, segments: with(&prefix, name) });
            }
        }
        syn::UseTree::Rename(r) => {
            let target = if r.ident == "self" { prefix.clone() } else { with(&prefix, r.ident.to_string()) };
            if r.rename != "_" {
                scope.uses.insert(r.rename.to_string(), UsePath { public, leading_colon: leading, segments: target });
            }
        }
        syn::UseTree::Glob(_) => scope.globs.push(UsePath { public, leading_colon: leading, segments: prefix }),
        syn::UseTree::Group(g) => {
            for t in &g.items {
                walk_use(t, how, prefix.clone(), scope);
            }
        }
    }
}

/// Whether a type can be named at its package's root from outside it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AtRoot {
    /// Defined there, or brought there by a `pub use`.
    Yes,
    /// Brought there only by a private `use`.
    PrivateUse,
    /// Not there at all.
    No,
}

/// Where a path leads.
#[derive(Clone, Debug, PartialEq)]
enum Res {
    /// An API type of package `.0` (index into the tree).
    Type(usize, String),
    /// A type alias of package `.0`, defined in its module `.1`.
    Alias(usize, usize, String),
    /// A module of package `.0`.
    Module(usize, usize),
    /// A module above the packages, by its path from the crate root.
    Crate(Vec<String>),
    /// A path into another crate.
    Extern(Vec<String>),
}

/// Why a path leads nowhere.
#[derive(Clone, Debug)]
enum PathError {
    /// `name` is not declared in `scope` (a description).
    NotFound { name: String, scope: String },
    /// A `crate::` path outside every API package.
    OutsideTree,
    /// `super` above the crate root, or an unknown crate position (macro mode).
    NoParent,
}

/// Every package the resolver can see.
pub struct Tree<'a> {
    /// Requested packages first, then the others of the apis directory.
    pub packages: Vec<PackageScopes<'a>>,
    /// The crate path of the apis module (`["pkg", "apis"]`), if known.
    pub apis: Option<Vec<String>>,
    /// Whether generated code sits inside the packages (macro mode), where
    /// a private `use` at a package's root is visible to it.
    pub root_sees_private_uses: bool,
}

const MAX_DEPTH: usize = 32;

impl<'a> Tree<'a> {
    /// The index of the package with `key` (`example/v1`).
    pub fn package_index(&self, key: &str) -> Option<usize> {
        self.packages.iter().position(|p| p.pkg.key() == key)
    }

    /// Whether the type `name` of package `pkg` can be named at the
    /// package's root module from outside it (`<package>::Name`, as
    /// generated code names it): defined there, or brought there by a
    /// `pub use`.
    pub fn reachable_at_root(&self, pkg: usize, name: &str) -> AtRoot {
        let Some(root) = self.packages[pkg].module_index(&[]) else { return AtRoot::Yes };
        let target = Some(Res::Type(pkg, name.to_string()));
        if self.lookup_visible(pkg, root, name, 0, true) == target {
            AtRoot::Yes
        } else if self.lookup(pkg, root, name, 0) == target {
            AtRoot::PrivateUse
        } else {
            AtRoot::No
        }
    }

    /// The path of a module of package `pkg` from the package's root.
    pub fn module_path(&self, pkg: usize, module: usize) -> &[String] {
        &self.packages[pkg].scopes[module].path
    }

    fn parent(&self, pkg: usize, module: usize) -> Result<Res, PathError> {
        let p = &self.packages[pkg];
        let path = &p.scopes[module].path;
        if let Some((_, up)) = path.split_last() {
            return p.module_index(up).map(|m| Res::Module(pkg, m)).ok_or(PathError::NoParent);
        }
        match &p.crate_path {
            Some(cp) if !cp.is_empty() => Ok(Res::Crate(cp[..cp.len() - 1].to_vec())),
            _ => Err(PathError::NoParent),
        }
    }

    /// A crate path: the root module of a package, a module above packages,
    /// or nothing we read.
    fn crate_module(&self, path: Vec<String>) -> Result<Res, PathError> {
        for (i, p) in self.packages.iter().enumerate() {
            if p.crate_path.as_ref() == Some(&path) {
                return Ok(Res::Module(i, 0));
            }
        }
        let above = self.packages.iter().any(|p| p.crate_path.as_ref().is_some_and(|cp| cp.starts_with(&path)))
            || self.apis.as_ref().is_some_and(|a| a.starts_with(&path) || path.starts_with(a));
        if above { Ok(Res::Crate(path)) } else { Err(PathError::OutsideTree) }
    }

    fn lookup(&self, pkg: usize, module: usize, name: &str, depth: usize) -> Option<Res> {
        self.lookup_visible(pkg, module, name, depth, false)
    }

    /// `lookup`; with `public_only`, as seen from outside the module: its
    /// private `use`s (and those of the modules its `pub use ..::*` reach)
    /// bring nothing.
    fn lookup_visible(&self, pkg: usize, module: usize, name: &str, depth: usize, public_only: bool) -> Option<Res> {
        if depth > MAX_DEPTH {
            return None;
        }
        let scope = &self.packages[pkg].scopes[module];
        if scope.types.contains(name) {
            if scope.aliases.contains(name) {
                return Some(Res::Alias(pkg, module, name.to_string()));
            }
            return Some(Res::Type(pkg, name.to_string()));
        }
        if scope.children.contains(name) {
            let mut path = scope.path.clone();
            path.push(name.to_string());
            return self.packages[pkg].module_index(&path).map(|m| Res::Module(pkg, m));
        }
        if let Some(u) = scope.uses.get(name).filter(|u| u.public || !public_only) {
            return self.resolve_path(pkg, module, &u.segments, u.leading_colon, depth + 1).ok();
        }
        for g in scope.globs.iter().filter(|g| g.public || !public_only) {
            match self.resolve_path(pkg, module, &g.segments, g.leading_colon, depth + 1) {
                Ok(Res::Module(p, m)) => {
                    if let Some(r) = self.lookup_visible(p, m, name, depth + 1, public_only) {
                        return Some(r);
                    }
                }
                Ok(Res::Crate(path)) => {
                    let mut path = path;
                    path.push(name.to_string());
                    if let Ok(r @ Res::Module(..)) = self.crate_module(path) {
                        return Some(r);
                    }
                }
                Ok(Res::Extern(path)) => {
                    let mut full = path;
                    full.push(name.to_string());
                    if external_schema_known(&full.join("::")) {
                        return Some(Res::Extern(full));
                    }
                }
                _ => {}
            }
        }
        None
    }

    fn resolve_path(
        &self,
        pkg: usize,
        module: usize,
        segments: &[String],
        leading_colon: bool,
        depth: usize,
    ) -> Result<Res, PathError> {
        let Some((first, rest)) = segments.split_first() else { return Ok(Res::Module(pkg, module)) };
        let mut cur = if leading_colon {
            Res::Extern(vec![first.clone()])
        } else {
            match first.as_str() {
                "crate" => match &self.packages[pkg].crate_path {
                    Some(_) => self.crate_module(Vec::new())?,
                    None => return Err(PathError::NoParent),
                },
                "self" => Res::Module(pkg, module),
                "super" => self.parent(pkg, module)?,
                name => match self.lookup(pkg, module, name, depth) {
                    Some(r) => r,
                    None if rest.is_empty() => {
                        return Err(PathError::NotFound { name: name.to_string(), scope: self.describe(pkg, module) });
                    }
                    None => Res::Extern(vec![name.to_string()]),
                },
            }
        };
        for seg in rest {
            cur = match cur {
                Res::Module(p, m) if seg == "super" => self.parent(p, m)?,
                Res::Module(p, m) => self
                    .lookup(p, m, seg, depth)
                    .ok_or_else(|| PathError::NotFound { name: seg.clone(), scope: self.describe(p, m) })?,
                Res::Crate(mut path) => {
                    if seg == "super" {
                        path.pop().ok_or(PathError::NoParent)?;
                        Res::Crate(path)
                    } else {
                        path.push(seg.clone());
                        self.crate_module(path)?
                    }
                }
                Res::Extern(mut path) => {
                    path.push(seg.clone());
                    Res::Extern(path)
                }
                Res::Type(_, name) | Res::Alias(_, _, name) => {
                    return Err(PathError::NotFound { name: seg.clone(), scope: format!("type `{name}`") });
                }
            };
        }
        Ok(cur)
    }

    /// The module for messages: `module `example::v1::types``, `this file` (macro mode).
    pub fn describe(&self, pkg: usize, module: usize) -> String {
        let p = &self.packages[pkg];
        let inner = &p.scopes[module].path;
        let mut path = match (&self.apis, &p.crate_path) {
            // The CLI and build.rs: the package by its `<group>/<version>`.
            (Some(_), _) => p.pkg.key().replace('/', "::"),
            // Macro mode: where the file sits in the crate, if known.
            (None, Some(cp)) => {
                std::iter::once("crate").chain(cp.iter().map(String::as_str)).collect::<Vec<_>>().join("::")
            }
            (None, None) if inner.is_empty() => return "this file".to_string(),
            (None, None) => "self".to_string(),
        };
        for s in inner {
            path.push_str("::");
            path.push_str(s);
        }
        format!("module `{path}`")
    }
}

/// A type position that could not be resolved.
#[derive(Debug)]
pub struct ResolveError {
    /// Where.
    pub span: Span,
    /// What is wrong.
    pub message: String,
    /// How to fix it.
    pub help: Option<String>,
}

fn err(span: Span, message: String, help: impl Into<Option<String>>) -> ResolveError {
    ResolveError { span, message, help: help.into() }
}

const ESCAPE_HELP: &str = "move the type into an API package of the tree (a shared `<group>/<version>` package works), \
or give its schema with `#[validate(schema_json = r#\"{..}\"#)]`, or accept any JSON with \
`#[validate(preserve_unknown_fields)]` (on `Vec<T>` / `BTreeMap<String, T>`: `items(..)` / `values(..)` keep the list or map markers usable)";

/// Where a type is written: its package and module in the tree, and the
/// types of the package that are generic (they have no schema).
pub struct Site<'t, 'a> {
    /// The tree.
    pub tree: &'t Tree<'a>,
    /// Package index.
    pub pkg: usize,
    /// Module index.
    pub module: usize,
    /// Generic types of the package.
    pub generic: &'t BTreeSet<String>,
    /// Inside a generic alias's target: its parameters' arguments.
    pub bound: Option<&'t Bound<'t, 'a>>,
}

/// The arguments of a generic alias (`Map<Foo>` for `type Map<T> =
/// BTreeMap<String, T>`), resolved where they are written.
pub struct Bound<'t, 'a> {
    /// The alias's type parameters, in order, with their defaults.
    params: &'t [(String, Option<syn::Type>)],
    /// The arguments given, in the same order (the rest take defaults).
    args: Vec<&'t syn::Type>,
    /// Where the arguments are written.
    site: &'t Site<'t, 'a>,
}

/// How many type aliases deep a type may expand.
const MAX_ALIAS_DEPTH: usize = 64;

thread_local! {
    /// The aliases being expanded on this thread, counted.
    static ALIAS_DEPTH: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Names the prelude brings into every module.
const PRELUDE: &[&str] = &["Option", "Vec", "String", "Box"];

/// Primitive types.
const PRIMITIVES: &[&str] = &[
    "bool", "char", "str", "i8", "i16", "i32", "i64", "i128", "isize", "u8", "u16", "u32", "u64", "u128", "usize",
    "f32", "f64",
];

/// A container or a type with a fixed schema, by its full path.
#[derive(Clone, Copy, Debug, PartialEq)]
enum External {
    Option,
    List,
    Set,
    Map,
    Wrapper,
    String,
    Json,
    JsonObject,
    Known(Known),
    /// Types that serialize in a way no Kubernetes schema describes.
    StdDuration,
    /// An unsigned `NonZero` integer (`""`: `NonZero<T>`, `T` its argument).
    NonZero(&'static str),
}

fn external(path: &str) -> Option<External> {
    use External::*;
    Some(match path {
        "Option" | "std::option::Option" | "core::option::Option" => Option,
        "Vec"
        | "std::vec::Vec"
        | "alloc::vec::Vec"
        | "std::collections::VecDeque"
        | "alloc::collections::VecDeque"
        | "std::collections::vec_deque::VecDeque"
        | "std::collections::LinkedList" => List,
        "std::collections::BTreeSet"
        | "alloc::collections::BTreeSet"
        | "std::collections::btree_set::BTreeSet"
        | "std::collections::HashSet"
        | "std::collections::hash_set::HashSet"
        | "indexmap::IndexSet"
        | "indexmap::set::IndexSet" => Set,
        "std::collections::BTreeMap"
        | "alloc::collections::BTreeMap"
        | "std::collections::btree_map::BTreeMap"
        | "std::collections::HashMap"
        | "std::collections::hash_map::HashMap"
        | "indexmap::IndexMap"
        | "indexmap::map::IndexMap" => Map,
        "Box" | "std::boxed::Box" | "alloc::boxed::Box" | "std::sync::Arc" | "alloc::sync::Arc" | "std::rc::Rc"
        | "alloc::rc::Rc" => Wrapper,
        "String" | "std::string::String" | "alloc::string::String" => String,
        "serde_json::Value" | "serde_json::value::Value" => Json,
        "serde_json::Map" | "serde_json::value::Map" | "serde_json::map::Map" => JsonObject,
        "kube::core::TypeMeta" | "kube::api::TypeMeta" | "kube_core::TypeMeta" | "kube_core::metadata::TypeMeta" => {
            Known(crate::model::Known::TypeMeta)
        }
        "kube::core::Duration" | "kube_core::Duration" | "kube_core::duration::Duration" => {
            Known(crate::model::Known::Duration)
        }
        "chrono::DateTime" | "chrono::prelude::DateTime" | "jiff::Timestamp" | "k8s_openapi::jiff::Timestamp" => {
            Known(crate::model::Known::DateTime)
        }
        "k8s_openapi::ByteString" => Known(crate::model::Known::ByteString),
        // Types that serialize as strings (with the formats the API server
        // knows, where there is one) or as positive integers.
        "std::path::PathBuf"
        | "std::net::IpAddr"
        | "core::net::IpAddr"
        | "std::net::SocketAddr"
        | "core::net::SocketAddr"
        | "chrono::NaiveDateTime"
        | "chrono::naive::NaiveDateTime" => String,
        "std::borrow::Cow" | "alloc::borrow::Cow" => Wrapper,
        "std::net::Ipv4Addr" | "core::net::Ipv4Addr" => Known(crate::model::Known::Format("ipv4")),
        "std::net::Ipv6Addr" | "core::net::Ipv6Addr" => Known(crate::model::Known::Format("ipv6")),
        "uuid::Uuid" => Known(crate::model::Known::Format("uuid")),
        "url::Url" => Known(crate::model::Known::Format("uri")),
        "chrono::NaiveDate" | "chrono::naive::NaiveDate" | "jiff::civil::Date" => {
            Known(crate::model::Known::Format("date"))
        }
        "std::num::NonZeroU8" | "core::num::NonZeroU8" => NonZero("u8"),
        "std::num::NonZeroU16" | "core::num::NonZeroU16" => NonZero("u16"),
        "std::num::NonZeroU32" | "core::num::NonZeroU32" => NonZero("u32"),
        "std::num::NonZeroU64" | "core::num::NonZeroU64" | "std::num::NonZeroUsize" | "core::num::NonZeroUsize" => {
            NonZero("u64")
        }
        "std::num::NonZero" | "core::num::NonZero" => NonZero(""),
        "std::num::NonZeroI8" | "core::num::NonZeroI8" => NonZero("i8"),
        "std::num::NonZeroI16" | "core::num::NonZeroI16" => NonZero("i16"),
        "std::num::NonZeroI32" | "core::num::NonZeroI32" => NonZero("i32"),
        "std::num::NonZeroI64" | "core::num::NonZeroI64" | "std::num::NonZeroIsize" | "core::num::NonZeroIsize" => {
            NonZero("i64")
        }
        "std::time::Duration" | "core::time::Duration" | "tokio::time::Duration" => StdDuration,
        _ => return None,
    })
}

/// Re-exports of k8s-openapi types by kube.
fn k8s_alias(path: &str) -> Option<&'static str> {
    Some(match path {
        "kube::core::ObjectMeta"
        | "kube::api::ObjectMeta"
        | "kube_core::ObjectMeta"
        | "kube_core::metadata::ObjectMeta"
        | "kube_core::resource::ObjectMeta" => builtin::OBJECT_META,
        "kube::core::ListMeta" | "kube::api::ListMeta" | "kube_core::ListMeta" | "kube_core::metadata::ListMeta" => {
            builtin::LIST_META
        }
        _ => return None,
    })
}

/// Whether a full external path names something with a schema.
fn external_schema_known(path: &str) -> bool {
    external(path).is_some() || k8s_alias(path).is_some() || builtin::definition_of_path(path).is_some()
}

fn generic_args(seg: &syn::PathSegment) -> Vec<&syn::Type> {
    match &seg.arguments {
        syn::PathArguments::AngleBracketed(a) => a
            .args
            .iter()
            .filter_map(|arg| match arg {
                syn::GenericArgument::Type(t) => Some(t),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

fn tokens(ty: &impl quote::ToTokens) -> String {
    quote::ToTokens::to_token_stream(ty)
        .to_string()
        .replace(" :: ", "::")
        .replace(" < ", "<")
        .replace(" >", ">")
        .replace("< ", "<")
        .replace(" ,", ",")
}

/// The markers that apply at one type position (the field's, then
/// `items(..)` / `values(..)` for the elements of lists and maps).
pub type Markers<'m> = Option<&'m crate::markers::Validate>;

impl Site<'_, '_> {
    /// Resolves a field type. A position whose markers give it a schema
    /// (`preserve_unknown_fields`, `schema_json`) may hold a type without
    /// one: it becomes free-form JSON there, containers around it stay.
    pub fn resolve(&self, ty: &syn::Type, markers: Markers) -> Result<TypeRef, ResolveError> {
        match self.resolve_at(ty, markers) {
            Ok(t) => Ok(t),
            Err(_) if markers.is_some_and(|m| m.replaces_schema()) => Ok(TypeRef::Json),
            Err(e) => Err(e),
        }
    }

    /// The doc comments of the type aliases a field's type names, by
    /// level: `[0]` for the field's own type (through `Option`, `Box`,
    /// `Arc`, `Rc`, `Cow` and aliases of aliases, the first with a doc),
    /// `[n]` for the items or values `n` lists, sets or maps down.
    /// controller-gen describes a field without a doc of its own, and the
    /// items of lists and values of maps, with the named type's doc.
    pub fn alias_docs(&self, ty: &syn::Type) -> Vec<Option<String>> {
        let mut docs = Vec::new();
        self.alias_docs_at(ty, None, 0, &mut docs);
        docs
    }

    fn alias_docs_at(&self, ty: &syn::Type, doc: Option<String>, depth: usize, docs: &mut Vec<Option<String>>) {
        let path = match ty {
            syn::Type::Path(p) if p.qself.is_none() && depth < 32 => &p.path,
            syn::Type::Group(g) => return self.alias_docs_at(&g.elem, doc, depth + 1, docs),
            syn::Type::Paren(p) => return self.alias_docs_at(&p.elem, doc, depth + 1, docs),
            _ => return docs.push(doc),
        };
        let Some(last) = path.segments.last() else { return docs.push(doc) };
        let written: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
        let full = match self.tree.resolve_path(self.pkg, self.module, &written, path.leading_colon.is_some(), 0) {
            // A struct or enum of the tree: its schema brings its doc.
            Ok(Res::Type(..)) => return docs.push(doc),
            Ok(Res::Alias(p, module, name)) => {
                let Some((params, target, alias_doc)) = self.tree.packages[p].aliases.get(&(module, name)) else {
                    return docs.push(doc);
                };
                let doc = doc.or_else(|| alias_doc.clone());
                // A generic alias's target is read where the alias is
                // written, with no arguments bound: only its own doc counts.
                if !params.is_empty() {
                    return docs.push(doc);
                }
                let site = Site { tree: self.tree, pkg: p, module, generic: self.generic, bound: None };
                return site.alias_docs_at(target, doc, depth + 1, docs);
            }
            Ok(Res::Extern(segs)) => segs.join("::"),
            Err(PathError::NotFound { name, .. }) if written.len() == 1 && PRELUDE.contains(&name.as_str()) => name,
            _ => return docs.push(doc),
        };
        let args = generic_args(last);
        match (external(&full), args.as_slice()) {
            (Some(External::Option | External::Wrapper), [arg, ..]) => self.alias_docs_at(arg, doc, depth + 1, docs),
            (Some(External::List | External::Set), [item, ..]) => {
                docs.push(doc);
                self.alias_docs_at(item, None, depth + 1, docs);
            }
            (Some(External::Map), [_, value, ..]) => {
                docs.push(doc);
                self.alias_docs_at(value, None, depth + 1, docs);
            }
            _ => docs.push(doc),
        }
    }

    fn resolve_at(&self, ty: &syn::Type, markers: Markers) -> Result<TypeRef, ResolveError> {
        let path = match ty {
            syn::Type::Path(p) if p.qself.is_none() => &p.path,
            syn::Type::Group(g) => return self.resolve_at(&g.elem, markers),
            syn::Type::Paren(p) => return self.resolve_at(&p.elem, markers),
            other => {
                return Err(err(
                    other.span(),
                    format!("type `{}` has no CRD schema", tokens(other)),
                    "API fields use owned types: String, integers, bool, Option, Vec, BTreeMap<String, _>, structs and enums"
                        .to_string(),
                ));
            }
        };
        let Some(last) = path.segments.last() else {
            return Err(err(path.span(), "empty type path".into(), None));
        };
        let written: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
        let name = last.ident.to_string();
        let args = generic_args(last);
        let arg = |i: usize, m: Markers| -> Result<TypeRef, ResolveError> {
            match args.get(i) {
                Some(t) => self.resolve_element(t, m),
                None => Err(err(last.span(), format!("`{name}` needs a type argument"), None)),
            }
        };
        let tree = self.tree;
        // A type parameter of the generic alias being expanded: its
        // argument, resolved where it is written.
        if let (Some(bound), [_], None) = (self.bound, written.as_slice(), path.leading_colon)
            && let Some(i) = bound.params.iter().position(|(p, _)| *p == name)
        {
            return match (bound.args.get(i), &bound.params[i].1) {
                (Some(arg), _) => bound.site.resolve_at(arg, markers),
                // A default is written beside the alias (and may name the
                // parameters before it).
                (None, Some(default)) => self.resolve_at(default, markers),
                (None, None) => Err(err(last.span(), format!("no argument for `{name}`"), None)),
            };
        }
        let resolved = tree.resolve_path(self.pkg, self.module, &written, path.leading_colon.is_some(), 0);
        let full = match resolved {
            Ok(Res::Alias(p, module, type_name)) => {
                let Some((params, target, _)) = tree.packages[p].aliases.get(&(module, type_name.clone())) else {
                    return Err(err(path.span(), format!("type alias `{type_name}` not found"), None));
                };
                {
                    let needed = params.iter().filter(|(_, default)| default.is_none()).count();
                    if args.len() < needed || args.len() > params.len() {
                        let names: Vec<&str> = params.iter().map(|(p, _)| p.as_str()).collect();
                        let count = if needed == params.len() {
                            needed.to_string()
                        } else {
                            format!("{needed} to {}", params.len())
                        };
                        return Err(err(
                            last.span(),
                            format!(
                                "type alias `{type_name}` takes {count} type argument(s), but {} are given",
                                args.len()
                            ),
                            format!("write it as `{type_name}<{}>`", names.join(", ")),
                        ));
                    }
                    // rustc refuses a cycle of aliases; the CLI reads
                    // source rustc may not have seen.
                    let depth = ALIAS_DEPTH.get();
                    if depth >= MAX_ALIAS_DEPTH {
                        return Err(err(
                            last.span(),
                            format!("type alias `{type_name}` expands to itself (more than {MAX_ALIAS_DEPTH} aliases deep)"),
                            "a type alias cannot contain itself; make the recursive type a struct (a CRD schema cannot be recursive either: hold the nested part in a `serde_json::Value` marked `#[validate(preserve_unknown_fields)]`)".to_string(),
                        ));
                    }
                    let bound = Bound { params, args: args.clone(), site: self };
                    let bound = (!params.is_empty()).then_some(&bound);
                    let site = Site { tree, pkg: p, module, generic: self.generic, bound };
                    /// Puts the depth back however the expansion ends.
                    struct Restore(usize);
                    impl Drop for Restore {
                        fn drop(&mut self) {
                            ALIAS_DEPTH.set(self.0);
                        }
                    }
                    let _restore = Restore(depth);
                    ALIAS_DEPTH.set(depth + 1);
                    let resolved = site.resolve_at(target, markers);
                    // An error's span is read in the file of the field being
                    // resolved: one inside an alias written in another file
                    // is shown at the alias's name here, with its place
                    // there. (A generic alias's arguments are resolved
                    // here, so its errors may belong to either file.)
                    let file_of = |pkg: usize, module: usize| {
                        let package = tree.packages[pkg].pkg;
                        (pkg, package.modules[module].file)
                    };
                    if params.is_empty() && file_of(p, module) != file_of(self.pkg, self.module) {
                        return resolved.map_err(|e| {
                            let package = tree.packages[p].pkg;
                            let at = package.file_of(&package.modules[module]).source.location(e.span);
                            ResolveError {
                                span: last.span(),
                                message: format!(
                                    "{} (in type alias `{type_name}`, {}:{}:{})",
                                    e.message,
                                    at.file.display(),
                                    at.line,
                                    at.column + 1
                                ),
                                help: e.help,
                            }
                        });
                    }
                    return resolved;
                }
            }
            Ok(Res::Type(p, type_name)) => {
                let pkg_key = tree.packages[p].pkg.key();
                if p == self.pkg && self.generic.contains(&type_name) {
                    return Err(err(
                        path.span(),
                        format!("type `{}` has no schema: generic type parameters are not supported", tokens(ty)),
                        format!(
                            "a CRD schema cannot describe type parameters; write a concrete `{type_name}` for this field, or mark it `#[validate(preserve_unknown_fields)]` to accept any JSON"
                        ),
                    ));
                }
                return Ok(TypeRef::Named(TypeKey { package: pkg_key, name: type_name }));
            }
            Ok(Res::Extern(segs)) => segs.join("::"),
            // A path into a module of the apis directory that is no
            // package (`apis/shop/common.rs`): a type's name there is a
            // type we do not read, not a module.
            Ok(Res::Crate(crate_path))
                if crate_path.last().and_then(|s| s.chars().next()).is_some_and(char::is_uppercase) =>
            {
                let apis = tree.apis.as_ref().map(|a| format!("crate::{}", a.join("::")));
                return Err(err(
                    path.span(),
                    format!(
                        "type `{}` is defined in `crate::{}`, which is no `<group>/<version>` package of {}: kube-codegen cannot read its fields",
                        written.join("::"),
                        crate_path[..crate_path.len() - 1].join("::"),
                        apis.map_or("the apis directory".to_string(), |a| format!("`{a}`"))
                    ),
                    ESCAPE_HELP.to_string(),
                ));
            }
            Ok(Res::Module(..)) | Ok(Res::Crate(_)) => {
                return Err(err(path.span(), format!("`{}` is a module, not a type", written.join("::")), None));
            }
            Err(PathError::NotFound { name: missing, scope }) if written.len() == 1 => {
                if matches!(missing.as_str(), "i128" | "u128") {
                    return Err(err(
                        path.span(),
                        format!("`{missing}` does not fit a Kubernetes integer: the API server keeps them in 64 bits"),
                        format!("use `{}64`, or a `String` with a `pattern` for larger numbers", &missing[..1]),
                    ));
                }
                if PRIMITIVES.contains(&missing.as_str()) {
                    return primitive(&missing);
                }
                if PRELUDE.contains(&missing.as_str()) {
                    missing
                } else {
                    return Err(self.not_found(path.span(), &missing, &scope));
                }
            }
            Err(PathError::NotFound { name: missing, scope }) => {
                return Err(err(
                    path.span(),
                    format!("cannot find `{missing}` in {scope} (resolving `{}`)", written.join("::")),
                    self.hint_for(&missing),
                ));
            }
            Err(PathError::OutsideTree) => {
                let apis = tree.apis.as_ref().map(|a| format!("crate::{}", a.join("::")));
                return Err(err(
                    path.span(),
                    format!(
                        "type `{}` is defined outside the API packages{}: kube-codegen cannot read its fields",
                        written.join("::"),
                        apis.map(|a| format!(" (`{a}`)")).unwrap_or_default()
                    ),
                    ESCAPE_HELP.to_string(),
                ));
            }
            Err(PathError::NoParent) => {
                return Err(err(
                    path.span(),
                    format!("cannot resolve `{}`: it leaves this package", written.join("::")),
                    "in macro mode only this module's package is read; import the type with a path inside it, or use the CLI or build.rs, which read every package of the apis directory".to_string(),
                ));
            }
        };
        let sub = |f: fn(&crate::markers::Validate) -> Option<&crate::markers::Validate>| markers.and_then(f);
        match external(&full) {
            Some(External::Option) => Ok(TypeRef::Option(Box::new(arg(0, markers)?))),
            Some(External::List) => Ok(TypeRef::List(Box::new(arg(0, sub(|m| m.items.as_deref()))?))),
            Some(External::Set) => Ok(TypeRef::Set(Box::new(arg(0, sub(|m| m.items.as_deref()))?))),
            Some(External::Map) => {
                let key = arg(0, None)?;
                let refused = match &key {
                    TypeRef::String => None,
                    // A string enum or a newtype of a string is a string in
                    // JSON (controller-gen takes named string types alike).
                    TypeRef::Named(k) => self.string_key(k, 0).err(),
                    _ => Some(String::new()),
                };
                if let Some(why) = refused {
                    let written = args.first().map(|t| tokens(*t)).unwrap_or_default();
                    return Err(err(
                        args.first().map_or(last.span(), |t| t.span()),
                        if why.is_empty() {
                            format!("map keys must be strings, not `{written}`")
                        } else {
                            format!("map keys must be strings: {why}")
                        },
                        "JSON object keys are strings; use `BTreeMap<String, _>`, an enum of unit variants, or a newtype of `String`".to_string(),
                    ));
                }
                Ok(TypeRef::Map(Box::new(arg(1, sub(|m| m.values.as_deref()))?)))
            }
            Some(External::Wrapper) => arg(0, markers),
            Some(External::NonZero(unsigned)) => {
                let written = match unsigned {
                    "" => args.first().map(|t| tokens(*t)).unwrap_or_default(),
                    prim => prim.to_string(),
                };
                if !matches!(written.as_str(), "u8" | "u16" | "u32" | "u64" | "usize") {
                    return Err(err(
                        last.span(),
                        format!("`{}` has no schema: a schema cannot say \"not zero\" of a signed integer", tokens(ty)),
                        "use an unsigned `NonZero` (its schema has `minimum: 1`), or the integer with a `rule = \"self != 0\"`".to_string(),
                    ));
                }
                let rust = match written.as_str() {
                    "u8" => "::std::num::NonZeroU8",
                    "u16" => "::std::num::NonZeroU16",
                    "u32" => "::std::num::NonZeroU32",
                    "u64" => "::std::num::NonZeroU64",
                    _ => "::std::num::NonZeroUsize",
                };
                match primitive(&written)? {
                    TypeRef::Integer(format, bounds) => {
                        Ok(TypeRef::Integer(format, IntBounds { min: Some(1), rust: Some(rust), ..bounds }))
                    }
                    other => Ok(other),
                }
            }
            Some(External::String) => Ok(TypeRef::String),
            Some(External::Json) => Ok(TypeRef::Json),
            Some(External::JsonObject) => Ok(TypeRef::JsonObject),
            Some(External::Known(k)) => Ok(TypeRef::Known(k)),
            Some(External::StdDuration) => Err(err(
                last.span(),
                format!("`{full}` serializes as `{{secs, nanos}}`, not as a Kubernetes duration"),
                "use `kube::core::Duration` (a Go duration string like \"1h30m\", metav1.Duration's schema) or `String`"
                    .to_string(),
            )),
            None => {
                if let Some(def) = k8s_alias(&full) {
                    return Ok(TypeRef::Builtin(def.to_string()));
                }
                if let Some(def) = builtin::definition_of_path(&full) {
                    return Ok(TypeRef::Builtin(def));
                }
                Err(self.unknown_external(path.span(), &full))
            }
        }
    }

    /// Whether the API type `key` is written as a JSON string, as a map key
    /// must be: an enum of unit variants (serde's default tagging), or a
    /// newtype (`struct Name(String)`, or a `transparent` struct) of a
    /// string. The error says why not.
    fn string_key(&self, key: &TypeKey, depth: usize) -> Result<(), String> {
        static NO_GENERICS: BTreeSet<String> = BTreeSet::new();
        let tree = self.tree;
        let name = &key.name;
        let found = tree.package_index(&key.package).and_then(|p| {
            let scopes = &tree.packages[p];
            let module = *scopes.type_modules.get(name)?;
            let item = scopes.pkg.items(&scopes.pkg.modules[module]).iter().find(|item| match item {
                syn::Item::Struct(s) => s.ident == name,
                syn::Item::Enum(e) => e.ident == name,
                _ => false,
            })?;
            Some((p, module, item))
        });
        let Some((p, module, item)) = found else { return Err(format!("`{name}` is not a string")) };
        match item {
            syn::Item::Enum(e) => {
                let flags = serde_flags(&e.attrs);
                if flags.iter().any(|f| f == "untagged" || f == "tag") {
                    return Err(format!("enum `{name}` is `untagged` or has a `tag`: its variants are not strings"));
                }
                if let Some(v) = e.variants.iter().find(|v| !matches!(v.fields, syn::Fields::Unit)) {
                    return Err(format!("variant `{}` of enum `{name}` has fields: it is a JSON object", v.ident));
                }
                Ok(())
            }
            syn::Item::Struct(s) if s.generics.params.is_empty() => {
                let field = match &s.fields {
                    syn::Fields::Unnamed(f) if f.unnamed.len() == 1 => &f.unnamed[0],
                    syn::Fields::Named(f)
                        if f.named.len() == 1 && serde_flags(&s.attrs).iter().any(|f| f == "transparent") =>
                    {
                        &f.named[0]
                    }
                    _ => return Err(format!("struct `{name}` is a JSON object, not a string")),
                };
                let generic = if p == self.pkg { self.generic } else { &NO_GENERICS };
                let site = Site { tree, pkg: p, module, generic, bound: None };
                match site.resolve_at(&field.ty, None) {
                    Ok(TypeRef::String) => Ok(()),
                    Ok(TypeRef::Named(inner)) if depth < MAX_DEPTH => site.string_key(&inner, depth + 1),
                    _ => Err(format!("`{name}` holds a `{}`, not a string", tokens(&field.ty))),
                }
            }
            _ => Err(format!("`{name}` is not a string")),
        }
    }

    /// An element of a list or map: its own markers may replace its schema.
    fn resolve_element(&self, ty: &syn::Type, markers: Markers) -> Result<TypeRef, ResolveError> {
        match self.resolve_at(ty, markers) {
            Ok(t) => Ok(t),
            Err(_) if markers.is_some_and(|m| m.replaces_schema()) => Ok(TypeRef::Json),
            Err(e) => Err(e),
        }
    }

    fn not_found(&self, span: Span, name: &str, scope: &str) -> ResolveError {
        let pkg = self.tree.packages[self.pkg].pkg;
        let is_union = pkg
            .modules
            .iter()
            .any(|m| pkg.items(m).iter().any(|item| matches!(item, syn::Item::Union(u) if u.ident == name)));
        if is_union {
            return err(
                span,
                format!("`{name}` is a union, which has no JSON form"),
                "serde derives nothing for unions; use an enum".to_string(),
            );
        }
        // An import of the name that does not resolve: say so, not that the
        // name is missing.
        if let Some(u) = self.tree.packages[self.pkg].scopes[self.module].uses.get(name) {
            let written = u.segments.join("::");
            let resolved = self.tree.resolve_path(self.pkg, self.module, &u.segments, u.leading_colon, 0);
            return match resolved {
                Err(PathError::OutsideTree) => {
                    let apis = self.tree.apis.as_ref().map(|a| format!(" (`crate::{}`)", a.join("::")));
                    err(
                        span,
                        format!("`{name}` is imported from `{written}`, outside the API packages{}", apis.unwrap_or_default()),
                        "import it by its path under the apis module, or pass `--apis-module` if the apis module is elsewhere".to_string(),
                    )
                }
                _ => err(
                    span,
                    format!("`{name}` is imported from `{written}`, which does not lead to a type"),
                    self.hint_for(name),
                ),
            };
        }
        err(span, format!("cannot find type `{name}` in {scope}"), self.hint_for(name))
    }

    /// A hint for a name that is not in scope: where a type of that name is
    /// defined (and the `use` that imports it), or a similar name.
    fn hint_for(&self, name: &str) -> Option<String> {
        let tree = self.tree;
        for (i, p) in tree.packages.iter().enumerate() {
            if let Some(&m) = p.type_modules.get(name) {
                let mut path: Vec<String> = Vec::new();
                if i == self.pkg {
                    let here = &p.scopes[self.module].path;
                    let there = &p.scopes[m].path;
                    let common = here.iter().zip(there).take_while(|(a, b)| a == b).count();
                    if common == here.len() {
                        path.push("self".into());
                    } else {
                        path.extend(std::iter::repeat_n("super".to_string(), here.len() - common));
                    }
                    path.extend(there[common..].iter().cloned());
                } else if let Some(cp) = &p.crate_path {
                    path.push("crate".into());
                    path.extend(cp.iter().cloned());
                    path.extend(p.scopes[m].path.iter().cloned());
                } else {
                    continue;
                }
                path.push(name.to_string());
                return Some(format!(
                    "`{name}` is defined in {}; import it: `use {};`",
                    tree.describe(i, m),
                    path.join("::")
                ));
            }
        }
        let visible: BTreeSet<&str> = {
            let p = &tree.packages[self.pkg];
            let scope = &p.scopes[self.module];
            scope.types.iter().chain(scope.uses.keys()).map(String::as_str).collect()
        };
        let candidates: Vec<&str> = visible.into_iter().filter(|c| *c != name).collect();
        Some(match did_you_mean(name, &candidates) {
            Some(s) => format!("did you mean `{s}`?"),
            None => format!(
                "define `{name}` in an API package and import it with `use`, or mark the field `#[validate(preserve_unknown_fields)]` to accept any JSON"
            ),
        })
    }

    fn unknown_external(&self, span: Span, full: &str) -> ResolveError {
        if let Some(rest) = full.strip_prefix("k8s_openapi::") {
            // A k8s-openapi path the table does not know: suggest one of its module.
            let module = rest.rsplit_once("::").map(|(m, _)| m).unwrap_or("");
            let prefix = builtin::definition_module(module);
            let name = full.rsplit("::").next().unwrap_or(full);
            let candidates: Vec<&str> = builtin::definitions(builtin::KubeVersion::latest())
                .into_iter()
                .filter(|d| prefix.as_deref().is_some_and(|p| d.starts_with(p)))
                .map(builtin::short_name)
                .collect();
            let help = match did_you_mean(name, &candidates) {
                Some(s) => format!("did you mean `k8s_openapi::{module}::{s}`?"),
                None => "kube-codegen knows the types of k8s-openapi's `api`, `apimachinery`, `apiextensions_apiserver` and `kube_aggregator` modules".to_string(),
            };
            return err(span, format!("`{full}` is not a Kubernetes API type"), help);
        }
        err(
            span,
            format!("type `{full}` comes from outside the API packages: kube-codegen cannot read its fields"),
            ESCAPE_HELP.to_string(),
        )
    }
}

/// The words of a type's `#[serde(..)]` attributes (`untagged`, `tag`,
/// `transparent`, ...), values left out.
fn serde_flags(attrs: &[syn::Attribute]) -> Vec<String> {
    let mut flags = Vec::new();
    for attr in attrs.iter().filter(|a| a.path().is_ident("serde")) {
        let _ = attr.parse_nested_meta(|meta| {
            if let Some(ident) = meta.path.get_ident() {
                flags.push(ident.to_string());
            }
            if meta.input.peek(syn::Token![=]) {
                meta.value()?.parse::<syn::Expr>()?;
            } else if meta.input.peek(syn::token::Paren) {
                let _content;
                syn::parenthesized!(_content in meta.input);
            }
            Ok(())
        });
    }
    flags
}

fn primitive(name: &str) -> Result<TypeRef, ResolveError> {
    let int = |format, min: Option<i64>, max: Option<i64>, rust| {
        TypeRef::Integer(format, IntBounds { min, max, rust: Some(rust) })
    };
    Ok(match name {
        "bool" => TypeRef::Bool,
        "char" | "str" => TypeRef::String,
        "i8" => int(NumFormat::Int32, Some(i8::MIN.into()), Some(i8::MAX.into()), "i8"),
        "i16" => int(NumFormat::Int32, Some(i16::MIN.into()), Some(i16::MAX.into()), "i16"),
        "u8" => int(NumFormat::Int32, Some(0), Some(u8::MAX.into()), "u8"),
        "u16" => int(NumFormat::Int32, Some(0), Some(u16::MAX.into()), "u16"),
        "i32" => int(NumFormat::Int32, None, None, "i32"),
        "i64" => int(NumFormat::Int64, None, None, "i64"),
        "isize" => int(NumFormat::Int64, None, None, "isize"),
        "u32" => int(NumFormat::Int64, Some(0), None, "u32"),
        "u64" => int(NumFormat::Int64, Some(0), None, "u64"),
        "usize" => int(NumFormat::Int64, Some(0), None, "usize"),
        "f32" => TypeRef::Number(NumFormat::Float),
        _ => TypeRef::Number(NumFormat::Double),
    })
}

/// Builds the tree for a run: `requested` packages first, then `others`.
/// `apis` is the apis module's path from the crate root (`crate::pkg::apis`
/// → `["pkg", "apis"]`), `None` when unknown (macro mode).
pub fn tree<'a>(requested: &[&'a Package], others: &[&'a Package], apis: Option<Vec<String>>) -> Tree<'a> {
    let crate_path = |p: &Package| {
        apis.as_ref().map(|a| {
            let mut cp = a.clone();
            cp.push(crate::ident::rust_ident(&p.group_package).trim_start_matches("r#").to_string());
            cp.push(p.version.clone());
            cp
        })
    };
    let packages = requested.iter().chain(others).map(|p| PackageScopes::new(p, crate_path(p))).collect();
    Tree { packages, apis, root_sees_private_uses: false }
}

/// Indexes of the `crate::` path segments of an apis module path
/// (`crate::pkg::apis` → `["pkg", "apis"]`); `None` when it is not `crate::`-rooted.
pub fn apis_segments(apis_module: &str) -> Option<Vec<String>> {
    let mut parts = apis_module.split("::");
    if parts.next()? != "crate" {
        return None;
    }
    Some(parts.map(|p| p.trim_start_matches("r#").to_string()).collect())
}

//! kube-codegen markers as real Rust attributes, and the derives that run the
//! codegen-core engine inline in a user's crate.
//!
//! For now the markers expand to the item unchanged (plus `GROUP_NAME` for
//! [`group_name!`]); their job is to make the markers legal Rust and to check
//! them with codegen-core's marker parser, the same one the CLI uses, so a
//! misspelled marker is a compile error with a "did you mean". The spellings
//! are documented in `docs/markers.md`.
#![deny(missing_docs)]

use proc_macro::TokenStream;
use quote::quote;
use syn::spanned::Spanned;

use codegen_core::markers;

fn errors_to_tokens(errors: &[markers::MarkerError]) -> proc_macro2::TokenStream {
    markers::to_syn_error(errors).map(|e| e.to_compile_error()).unwrap_or_default()
}

/// Marks a root type for client generation (Go's `// +genclient`).
///
/// Arguments (all optional): `no_status`, `cluster_scoped` (alias
/// `non_namespaced`), `no_verbs`, `only_verbs(get, list, ..)`,
/// `skip_verbs(..)`, `readonly`, `method(name = "..", verb = "..",
/// subresource = "..", input = "..", result = "..")`, `group = ".."`.
///
/// ```ignore
/// #[genclient(no_status)]
/// #[derive(Clone, Debug, Serialize, Deserialize, ApiType)]
/// pub struct Student { /* .. */ }
/// ```
#[proc_macro_attribute]
pub fn genclient(args: TokenStream, item: TokenStream) -> TokenStream {
    let args = proc_macro2::TokenStream::from(args);
    let item2 = proc_macro2::TokenStream::from(item.clone());
    let span = args.span();
    let mut errors = match markers::parse_genclient_args(args, span) {
        Ok(_) => proc_macro2::TokenStream::new(),
        Err(e) => errors_to_tokens(&e),
    };
    if let Ok(parsed) = syn::parse2::<syn::Item>(item2.clone())
        && !matches!(parsed, syn::Item::Struct(_))
    {
        errors.extend(
            syn::Error::new(parsed.span(), "`#[genclient]` goes on the struct of a kind (a root type with `metadata`)")
                .to_compile_error(),
        );
    }
    // The item is always emitted so a marker error does not cascade into
    // "cannot find type" errors elsewhere.
    quote!(#errors #item2).into()
}

/// Declares an API type (root or nested) and carries its markers:
/// `#[resource(..)]` on root types (CRD names, scope, versions,
/// subresources, printer columns) and `#[validate(..)]` on fields or types.
///
/// Every marker is checked at compile time; the derive generates nothing
/// else yet.
#[proc_macro_derive(ApiType, attributes(resource, validate))]
pub fn derive_api_type(input: TokenStream) -> TokenStream {
    let input = match syn::parse::<syn::DeriveInput>(input) {
        Ok(i) => i,
        Err(e) => return e.to_compile_error().into(),
    };
    match markers::check_derive_input(&input) {
        Ok(()) => TokenStream::new(),
        Err(errors) => errors_to_tokens(&errors).into(),
    }
}

/// The API group of a version module (Go's `// +groupName=` in doc.go).
/// Expands to `pub const GROUP_NAME: &str = "<group>";`.
///
/// ```ignore
/// codegen_macros::group_name!("example.k8s.io");
/// ```
#[proc_macro]
pub fn group_name(input: TokenStream) -> TokenStream {
    match markers::parse_group_name(input.into()) {
        Ok(group) => {
            let value = group.value;
            quote! {
                /// The API group of this version module.
                pub const GROUP_NAME: &str = #value;
            }
            .into()
        }
        Err(errors) => {
            let errors = errors_to_tokens(&errors);
            quote! {
                #errors
                /// The API group of this version module.
                pub const GROUP_NAME: &str = "";
            }
            .into()
        }
    }
}

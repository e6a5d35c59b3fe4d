//! `#[resource(conversion_webhook(..))]`: the CRD's conversion webhook
//! (`spec.conversion.strategy: Webhook`).
//!
//! kubebuilder writes this stanza as a kustomize patch
//! (`config/crd/patches/webhook_in_<kind>.yaml`) pointing at the Service
//! `webhook-service` in `system` at `/convert`; the bare marker writes the
//! same, and `service`, `path`, `port` or `url` change it. The CA bundle is
//! left to deployment (cert-manager's CA injector, or
//! `codegen_runtime::webhook::manifests::crd_conversion`).

use proc_macro2::Span;
use serde_json::{Value, json};
use syn::spanned::Spanned as _;

use super::*;

/// `conversion_webhook`, `conversion_webhook(service = "ns/name", path = "/convert", port = 443)`
/// or `conversion_webhook(url = "https://host:port/convert")`.
#[derive(Clone, Debug)]
pub struct ConversionWebhook {
    /// `url = ".."`: the server outside the cluster.
    pub url: Option<Spanned<String>>,
    /// `service = "namespace/name"` (default `system/webhook-service`).
    pub service: Option<Spanned<String>>,
    /// `path = ".."` (default `/convert`).
    pub path: Option<Spanned<String>>,
    /// `port = ..` (the API server's default is 443).
    pub port: Option<Spanned<i64>>,
    /// The whole marker.
    pub span: Span,
}

/// The keys of `conversion_webhook(..)`.
const KEYS: &[&str] = &["service", "path", "port", "url"];

/// Parses `conversion_webhook` or `conversion_webhook(..)`.
pub(super) fn parse(meta: &syn::meta::ParseNestedMeta, errors: &mut Errors) -> syn::Result<ConversionWebhook> {
    let span = meta.path.span();
    let mut out = ConversionWebhook { url: None, service: None, path: None, port: None, span };
    if meta.input.peek(syn::Token![=]) {
        errors.push(
            MarkerError::new(span, "`conversion_webhook` takes a list, not a value")
                .help("write `conversion_webhook` or e.g. `conversion_webhook(service = \"system/webhook-service\")`"),
        );
        return skip_value(meta).map(|()| out);
    }
    if !meta.input.peek(syn::token::Paren) {
        return Ok(out);
    }
    meta.parse_nested_meta(|m| {
        let key = path_key(&m.path);
        match key.as_str() {
            "url" => set_once(&mut out.url, lit_str(&m)?, &key, errors),
            "service" => set_once(&mut out.service, lit_str(&m)?, &key, errors),
            "path" => set_once(&mut out.path, lit_str(&m)?, &key, errors),
            "port" => set_once(&mut out.port, int_value(&m)?, &key, errors),
            _ => {
                let hint = matches!(key.as_str(), "clientConfig" | "client_config" | "caBundle" | "ca_bundle")
                    .then_some("service` or `url");
                unknown_key(&m, "conversion_webhook", &key, KEYS, errors, hint)?
            }
        }
        Ok(())
    })?;
    if let Some(url) = &out.url {
        if !url.value.starts_with("https://") {
            errors.push(
                MarkerError::new(url.span, format!("conversion webhook URL `{}` is not https", url.value))
                    .help("the API server calls webhooks over TLS only: `url = \"https://host:port/convert\"`"),
            );
        }
        if let Some(other) = out
            .service
            .as_ref()
            .map(|s| s.span)
            .or(out.path.as_ref().map(|p| p.span))
            .or(out.port.as_ref().map(|p| p.span))
        {
            errors.push(
                MarkerError::new(other, "`url` and `service`/`path`/`port` exclude each other")
                    .help("the URL holds host, port and path; or name the Service with `service`, `path` and `port`"),
            );
        }
    }
    if let Some(service) = &out.service {
        let dns_label = |s: &str| {
            !s.is_empty()
                && s.len() <= 63
                && s.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
                && !s.starts_with('-')
                && !s.ends_with('-')
        };
        match service.value.split_once('/') {
            Some((ns, name)) if dns_label(ns) && dns_label(name) => {}
            _ => errors.push(
                MarkerError::new(service.span, format!("`{}` is not `namespace/name` of a Service", service.value))
                    .help("e.g. `service = \"system/webhook-service\"` (both lower-case DNS labels)"),
            ),
        }
    }
    if let Some(path) = &out.path
        && !path.value.starts_with('/')
    {
        errors.push(
            MarkerError::new(path.span, format!("path `{}` does not start with `/`", path.value))
                .help("e.g. `path = \"/convert\"`"),
        );
    }
    if let Some(port) = &out.port
        && !(1..=65535).contains(&port.value)
    {
        errors.push(MarkerError::new(port.span, format!("port {} is not in 1..=65535", port.value)));
    }
    Ok(out)
}

impl HasSpan for ConversionWebhook {
    fn span(&self) -> Span {
        self.span
    }
}

impl ConversionWebhook {
    /// The CRD's `spec.conversion`.
    pub fn to_crd(&self) -> Value {
        let client_config = match &self.url {
            Some(url) => json!({ "url": url.value }),
            None => {
                let service = self.service.as_ref().map_or("system/webhook-service", |s| s.value.as_str());
                let (namespace, name) = service.split_once('/').unwrap_or(("system", service));
                let path = self.path.as_ref().map_or("/convert", |p| p.value.as_str());
                let mut service = json!({ "name": name, "namespace": namespace, "path": path });
                if let Some(port) = &self.port {
                    service["port"] = json!(port.value);
                }
                json!({ "service": service })
            }
        };
        json!({
            "strategy": "Webhook",
            "webhook": { "clientConfig": client_config, "conversionReviewVersions": ["v1"] }
        })
    }
}

#[cfg(test)]
mod tests {
    use quote::quote;
    use syn::Attribute;

    use super::super::{Resource, parse_resource_attr};
    use super::*;

    fn parse(tokens: proc_macro2::TokenStream) -> Result<Resource, Vec<String>> {
        let item: syn::ItemStruct = syn::parse2(quote! { #tokens struct X; }).unwrap();
        let attr: Attribute = item.attrs.into_iter().next().unwrap();
        let mut out = Resource::default();
        parse_resource_attr(&attr, &mut out).map_err(|errors| {
            errors
                .into_iter()
                .map(|e| format!("{}{}", e.message, e.help.map(|h| format!(" | {h}")).unwrap_or_default()))
                .collect::<Vec<_>>()
        })?;
        Ok(out)
    }

    fn crd(tokens: proc_macro2::TokenStream) -> Value {
        parse(tokens).unwrap().conversion_webhook.expect("a conversion webhook").to_crd()
    }

    #[test]
    fn the_bare_marker_is_kubebuilders_patch() {
        assert_eq!(
            crd(quote!(#[resource(storage, conversion_webhook)])),
            json!({"strategy": "Webhook", "webhook": {
                "clientConfig": {"service": {"name": "webhook-service", "namespace": "system", "path": "/convert"}},
                "conversionReviewVersions": ["v1"]}})
        );
    }

    #[test]
    fn service_path_port_or_url() {
        assert_eq!(
            crd(
                quote!(#[resource(conversion_webhook(service = "tasks-system/tasks-webhook", path = "/convert-tasks", port = 9443))])
            ),
            json!({"strategy": "Webhook", "webhook": {
                "clientConfig": {"service": {"name": "tasks-webhook", "namespace": "tasks-system", "path": "/convert-tasks", "port": 9443}},
                "conversionReviewVersions": ["v1"]}})
        );
        assert_eq!(
            crd(quote!(#[resource(conversion_webhook(url = "https://127.0.0.1:9443/convert"))]))["webhook"]["clientConfig"],
            json!({"url": "https://127.0.0.1:9443/convert"})
        );
    }

    #[test]
    fn mistakes_are_errors_with_help() {
        let e = parse(quote!(#[resource(conversion_webhook(url = "http://x/convert", path = "/c"))])).unwrap_err();
        assert_eq!(
            e,
            [
                "conversion webhook URL `http://x/convert` is not https | the API server calls webhooks over TLS only: `url = \"https://host:port/convert\"`",
                "`url` and `service`/`path`/`port` exclude each other | the URL holds host, port and path; or name the Service with `service`, `path` and `port`",
            ]
        );
        let e = parse(quote!(#[resource(conversion_webhook(service = "webhook-service", path = "convert", port = 0))]))
            .unwrap_err();
        assert_eq!(
            e,
            [
                "`webhook-service` is not `namespace/name` of a Service | e.g. `service = \"system/webhook-service\"` (both lower-case DNS labels)",
                "path `convert` does not start with `/` | e.g. `path = \"/convert\"`",
                "port 0 is not in 1..=65535",
            ]
        );
        let e = parse(quote!(#[resource(conversion_webhook(caBundle = "x"))])).unwrap_err();
        assert_eq!(e, ["unknown `conversion_webhook` marker `caBundle` | did you mean `service` or `url`?"]);
        let e = parse(quote!(#[resource(conversion = "Webhook")])).unwrap_err();
        assert_eq!(e, ["unknown `resource` marker `conversion` | did you mean `conversion_webhook`?"]);
        let e = parse(quote!(#[resource(conversion_webhook = "x")])).unwrap_err();
        assert_eq!(
            e,
            [
                "`conversion_webhook` takes a list, not a value | write `conversion_webhook` or e.g. `conversion_webhook(service = \"system/webhook-service\")`"
            ]
        );
        let e = parse(quote!(#[resource(conversion_webhook, conversion_webhook)])).unwrap_err();
        assert_eq!(e.len(), 1, "{e:?}");
        assert!(e[0].starts_with("duplicate"), "{e:?}");
    }
}

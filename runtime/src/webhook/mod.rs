//! Conversion and admission webhooks over HTTPS (feature `webhook`), the
//! kubebuilder way: the storage version of a kind is the hub other versions
//! convert through ([`conversion`]), kinds default and validate themselves
//! through traits ([`admission`]), and one server answers the API server's
//! ConversionReviews and AdmissionReviews ([`WebhookServer`]).
//!
//! ```no_run
//! # async fn demo(cert_pem: &[u8], key_pem: &[u8]) -> Result<(), codegen_runtime::webhook::WebhookError> {
//! use codegen_runtime::webhook::{Conversion, ServerTls, WebhookServer, Webhooks};
//! let webhooks = Webhooks::new()
//!     .conversion("/convert", Conversion::new());
//!     // .conversion("/convert", Conversion::new().spoke::<v1::Task>())
//!     // .mutating::<v2::Task>("/mutate-task")
//!     // .validating::<v2::Task>("/validate-task")
//! let server = WebhookServer::bind("0.0.0.0:9443", ServerTls::from_pem(cert_pem, key_pem)?, webhooks).await?;
//! println!("serving on {}", server.local_addr());
//! # Ok(())
//! # }
//! ```

pub mod admission;
pub mod conversion;
mod http1;
pub mod manifests;
mod server;

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

pub use admission::{AdmissionHandler, Defaulter, Denied, Mutating, Validating, Validator, Warnings};
pub use conversion::{Conversion, ConversionError, Convertible, Hub, copy_fields};
pub use server::{ServerTls, WebhookError, WebhookServer};

/// What a path serves.
#[derive(Clone)]
enum Route {
    Conversion(Arc<Conversion>),
    Admission(Arc<dyn AdmissionHandler>),
}

/// The webhooks of one server, by path: conversion, mutating and validating.
#[derive(Clone, Default)]
pub struct Webhooks {
    routes: BTreeMap<String, Route>,
}

impl fmt::Debug for Webhooks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.routes.keys()).finish()
    }
}

/// The answer to one webhook request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WebhookResponse {
    /// HTTP status: 200 with a review, 400 for a body that is not one, 404
    /// for an unknown path, 405 for another method than POST.
    pub status: u16,
    /// `application/json` for a review, `text/plain` for an error.
    pub content_type: &'static str,
    /// The review, or the error message.
    pub body: Vec<u8>,
}

impl WebhookResponse {
    fn error(status: u16, message: impl Into<String>) -> Self {
        WebhookResponse { status, content_type: "text/plain", body: message.into().into_bytes() }
    }

    fn json(value: &impl serde::Serialize) -> Self {
        match serde_json::to_vec(value) {
            Ok(body) => WebhookResponse { status: 200, content_type: "application/json", body },
            Err(e) => WebhookResponse::error(500, format!("encoding the review: {e}")),
        }
    }
}

impl Webhooks {
    /// No webhooks yet.
    pub fn new() -> Self {
        Webhooks::default()
    }

    fn route(mut self, path: &str, route: Route) -> Self {
        assert!(path.starts_with('/'), "a webhook path starts with '/': {path:?}");
        assert!(self.routes.insert(path.to_owned(), route).is_none(), "two webhooks at {path}");
        self
    }

    /// Serves ConversionReviews at `path` (the CRD's
    /// `spec.conversion.webhook.clientConfig` points there).
    ///
    /// # Panics
    ///
    /// When `path` does not start with `/` or serves another webhook already.
    pub fn conversion(self, path: &str, conversion: Conversion) -> Self {
        self.route(path, Route::Conversion(Arc::new(conversion)))
    }

    /// Serves the defaulting webhook of `K` (its [`Defaulter`]) at `path`.
    ///
    /// # Panics
    ///
    /// As [`conversion`](Self::conversion).
    pub fn mutating<K: Defaulter>(self, path: &str) -> Self {
        self.admission(path, Mutating::<K>::new())
    }

    /// Serves the validating webhook of `K` (its [`Validator`]) at `path`.
    ///
    /// # Panics
    ///
    /// As [`conversion`](Self::conversion).
    pub fn validating<K: Validator>(self, path: &str) -> Self {
        self.admission(path, Validating::<K>::new())
    }

    /// Serves any admission handler at `path`.
    ///
    /// # Panics
    ///
    /// As [`conversion`](Self::conversion).
    pub fn admission(self, path: &str, handler: impl AdmissionHandler) -> Self {
        self.route(path, Route::Admission(Arc::new(handler)))
    }

    /// Answers one request. The server calls this for every request; it is
    /// public so the webhooks can also be mounted in another HTTP server.
    /// The query (the API server adds `?timeout=10s`) is ignored.
    pub fn handle(&self, method: &str, path: &str, body: &[u8]) -> WebhookResponse {
        let path = path.split_once('?').map_or(path, |(path, _)| path);
        let Some(route) = self.routes.get(path) else {
            return WebhookResponse::error(404, format!("no webhook at {path}"));
        };
        if method != "POST" {
            return WebhookResponse::error(405, format!("webhooks take POST, not {method}"));
        }
        match route {
            Route::Conversion(conversion) => match serde_json::from_slice(body) {
                Ok(review) => WebhookResponse::json(&conversion.review(review)),
                Err(e) => WebhookResponse::error(400, format!("reading the ConversionReview: {e}")),
            },
            Route::Admission(handler) => match handler.review(body) {
                Ok(review) => WebhookResponse::json(&review),
                Err(message) => WebhookResponse::error(400, message),
            },
        }
    }
}

#[cfg(test)]
mod tests;

//! The typed clientset: one accessor per group/version (client-gen's
//! `clientset/versioned`).
{% include "child_modules.rs" %}

/// A clientset over one kube [`Client`]({{ p.kube }}::Client), with a typed
/// client per group/version.
#[derive(Clone)]
pub struct Clientset {
    client: {{ p.kube }}::Client,
}

impl Clientset {
    /// A clientset that sends its requests through `client`.
    pub fn new(client: {{ p.kube }}::Client) -> Self {
        Self { client }
    }

    /// A clientset from the default kubeconfig or in-cluster configuration,
    /// retrying requests as client-go does (only answers with `Retry-After`;
    /// see `{{ p.rt }}::retry`).
    pub async fn try_default() -> ::std::result::Result<Self, {{ p.kube }}::Error> {
        Ok(Self::new({{ p.rt }}::retry::default_client().await?))
    }

    /// The underlying `kube::Client`.
    pub fn client(&self) -> &{{ p.kube }}::Client {
        &self.client
    }
{% for g in groups %}{% for v in g.versions %}
    /// The `{{ v.api_version }}` client.
    pub fn {{ v.accessor }}(&self) -> {{ g.module }}::{{ v.module }}::{{ v.gv_client }} {
        {{ g.module }}::{{ v.module }}::{{ v.gv_client }}::new(self.client.clone())
    }
{% endfor %}{% endfor %}
}

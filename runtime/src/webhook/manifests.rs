//! The objects that point the API server at a webhook server: the CRD's
//! conversion stanza and the Mutating/ValidatingWebhookConfigurations, as
//! kubebuilder's `config/webhook/manifests.yaml` and `config/crd/patches`
//! hold them, built from the kind's type.

use k8s_openapi::ByteString;
use k8s_openapi::api::admissionregistration::v1 as admission;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1 as apiextensions;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::Resource;

/// Where the API server reaches the webhook server, and the CA bundle it
/// checks the serving certificate with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClientConfig {
    target: Target,
    ca_bundle: Option<Vec<u8>>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Target {
    Url(String),
    Service { namespace: String, name: String, port: Option<i32> },
}

/// What the API server does when it cannot reach the webhook or the webhook
/// errs: `Fail` refuses the request, `Ignore` lets it through.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FailurePolicy {
    /// Refuse the request (the default).
    Fail,
    /// Admit the request as if the webhook had allowed it.
    Ignore,
}

impl FailurePolicy {
    fn as_str(self) -> &'static str {
        match self {
            FailurePolicy::Fail => "Fail",
            FailurePolicy::Ignore => "Ignore",
        }
    }
}

impl ClientConfig {
    /// A server at this base URL (`https://127.0.0.1:9443`); each webhook's
    /// path is appended.
    pub fn url(base: impl Into<String>) -> Self {
        ClientConfig { target: Target::Url(base.into().trim_end_matches('/').to_owned()), ca_bundle: None }
    }

    /// A server behind this Service (port 443 unless given).
    pub fn service(namespace: impl Into<String>, name: impl Into<String>, port: Option<i32>) -> Self {
        ClientConfig {
            target: Target::Service { namespace: namespace.into(), name: name.into(), port },
            ca_bundle: None,
        }
    }

    /// With the PEM of the CA that signed the serving certificate.
    pub fn with_ca_bundle(mut self, ca_pem: impl Into<Vec<u8>>) -> Self {
        self.ca_bundle = Some(ca_pem.into());
        self
    }

    fn admission(&self, path: &str) -> admission::WebhookClientConfig {
        let ca_bundle = self.ca_bundle.clone().map(ByteString);
        match &self.target {
            Target::Url(base) => {
                admission::WebhookClientConfig { url: Some(format!("{base}{path}")), ca_bundle, service: None }
            }
            Target::Service { namespace, name, port } => admission::WebhookClientConfig {
                url: None,
                ca_bundle,
                service: Some(admission::ServiceReference {
                    namespace: namespace.clone(),
                    name: name.clone(),
                    path: Some(path.to_owned()),
                    port: *port,
                }),
            },
        }
    }

    fn apiextensions(&self, path: &str) -> apiextensions::WebhookClientConfig {
        let config = self.admission(path);
        apiextensions::WebhookClientConfig {
            url: config.url,
            ca_bundle: config.ca_bundle,
            service: config.service.map(|s| apiextensions::ServiceReference {
                namespace: s.namespace,
                name: s.name,
                path: s.path,
                port: s.port,
            }),
        }
    }
}

/// The CRD's `spec.conversion`: strategy `Webhook`, ConversionReview `v1`,
/// the server at `path`.
pub fn crd_conversion(path: &str, client: &ClientConfig) -> apiextensions::CustomResourceConversion {
    apiextensions::CustomResourceConversion {
        strategy: "Webhook".into(),
        webhook: Some(apiextensions::WebhookConversion {
            client_config: Some(client.apiextensions(path)),
            conversion_review_versions: vec!["v1".into()],
        }),
    }
}

/// The rule of a webhook on `K`: its group, version and plural, for the
/// given operations.
fn rule<K: Resource<DynamicType = ()>>(operations: &[&str]) -> admission::RuleWithOperations {
    admission::RuleWithOperations {
        api_groups: Some(vec![K::group(&()).into_owned()]),
        api_versions: Some(vec![K::version(&()).into_owned()]),
        resources: Some(vec![K::plural(&()).into_owned()]),
        operations: Some(operations.iter().map(|o| (*o).to_owned()).collect()),
        scope: None,
    }
}

/// A MutatingWebhookConfiguration named `name` with one webhook,
/// `webhook_name` (a DNS name such as `mtask.batch.example.com`), that
/// defaults `K` on create and update at `path`: side effects `None`,
/// AdmissionReview `v1`, match policy `Equivalent` (requests for another
/// version of `K` are converted to this one), as kubebuilder writes it.
pub fn mutating_webhook_configuration<K: Resource<DynamicType = ()>>(
    name: &str,
    webhook_name: &str,
    path: &str,
    client: &ClientConfig,
    failure_policy: FailurePolicy,
) -> admission::MutatingWebhookConfiguration {
    admission::MutatingWebhookConfiguration {
        metadata: ObjectMeta { name: Some(name.to_owned()), ..Default::default() },
        webhooks: Some(vec![admission::MutatingWebhook {
            name: webhook_name.to_owned(),
            admission_review_versions: vec!["v1".into()],
            client_config: client.admission(path),
            failure_policy: Some(failure_policy.as_str().into()),
            match_policy: Some("Equivalent".into()),
            rules: Some(vec![rule::<K>(&["CREATE", "UPDATE"])]),
            side_effects: "None".into(),
            timeout_seconds: Some(10),
            ..Default::default()
        }]),
    }
}

/// A ValidatingWebhookConfiguration named `name` with one webhook,
/// `webhook_name`, that validates `K` on create and update at `path`, as
/// kubebuilder scaffolds it (`verbs=create;update`); otherwise as
/// [`mutating_webhook_configuration`]. Add `DELETE` to the rule's
/// operations for [`Validator::validate_delete`](super::admission::Validator::validate_delete):
/// with `FailurePolicy::Fail`, deletes then fail while the webhook is down
/// (an operator's uninstall, say).
pub fn validating_webhook_configuration<K: Resource<DynamicType = ()>>(
    name: &str,
    webhook_name: &str,
    path: &str,
    client: &ClientConfig,
    failure_policy: FailurePolicy,
) -> admission::ValidatingWebhookConfiguration {
    admission::ValidatingWebhookConfiguration {
        metadata: ObjectMeta { name: Some(name.to_owned()), ..Default::default() },
        webhooks: Some(vec![admission::ValidatingWebhook {
            name: webhook_name.to_owned(),
            admission_review_versions: vec!["v1".into()],
            client_config: client.admission(path),
            failure_policy: Some(failure_policy.as_str().into()),
            match_policy: Some("Equivalent".into()),
            rules: Some(vec![rule::<K>(&["CREATE", "UPDATE"])]),
            side_effects: "None".into(),
            timeout_seconds: Some(10),
            ..Default::default()
        }]),
    }
}

//! Raw requests for the differential tests of the fake API server, which
//! send the same requests to kube-apiserver and to `FakeApiServer`:
//! sending one and reading its answer as JSON, installing a CRD given as
//! JSON, and waiting until its resource is served.

#![allow(dead_code)]

use std::time::Duration;

use anyhow::{Context, Result, bail};
use codegen_testenv::TestEnv;
use http::Method;
use serde_json::Value;

/// An answer: its HTTP code, its body as JSON and the texts of its
/// `Warning` headers.
pub struct RawAnswer {
    pub code: u16,
    pub body: Value,
    pub warnings: Vec<String>,
}

/// Sends `body` as `content_type` to `uri` with `method`.
pub async fn send_raw(
    client: &kube::Client,
    method: Method,
    uri: &str,
    content_type: &str,
    body: &str,
) -> Result<RawAnswer> {
    let request = http::Request::builder()
        .method(method)
        .uri(uri)
        .header(http::header::CONTENT_TYPE, content_type)
        .body(kube::client::Body::from(body.as_bytes().to_vec()))?;
    let response = client.send(request).await.with_context(|| format!("sending to {uri}"))?;
    let code = response.status().as_u16();
    let warnings = response
        .headers()
        .get_all(http::header::WARNING)
        .iter()
        .flat_map(|v| codegen_runtime::warnings::parse_warning_header(v.to_str().unwrap_or_default()))
        .map(|w| w.text)
        .collect();
    let bytes = response.into_body().collect_bytes().await?;
    let body = serde_json::from_slice(&bytes).with_context(|| String::from_utf8_lossy(&bytes).into_owned())?;
    Ok(RawAnswer { code, body, warnings })
}

/// Server-side applies `crd` (a CustomResourceDefinition as JSON) as
/// `field_manager` and waits until it is established; the admin client.
pub async fn install_crd(env: &TestEnv, crd: &Value, field_manager: &str) -> Result<kube::Client> {
    let client = env.admin_client().await?;
    let name = crd["metadata"]["name"].as_str().context("the CRD has no name")?;
    let uri = format!(
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{name}?fieldManager={field_manager}&force=true"
    );
    let answer = send_raw(&client, Method::PATCH, &uri, "application/apply-patch+yaml", &crd.to_string()).await?;
    if answer.code >= 300 {
        bail!("installing the CRD {name}: {} {}", answer.code, answer.body);
    }
    env.wait_crd_established(name, Duration::from_secs(60)).await?;
    Ok(client)
}

/// Waits until a list of `collection` (a URL path) succeeds.
pub async fn wait_served(client: &kube::Client, collection: &str) -> Result<()> {
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let request = http::Request::get(collection).body(Vec::new())?;
        if client.request::<Value>(request).await.is_ok() {
            return Ok(());
        }
        if std::time::Instant::now() > deadline {
            bail!("{collection} is not served");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

//! The event recorder against kube-apiserver: a repeated event is one
//! Event whose `series` the server accepts (count 2 after the second
//! occurrence, the full count after a flush), and a series whose Event was
//! deleted is created again, as client-go's recorder does; events
//! recorded through a queue (without waiting) reach the server in order,
//! and one the server refuses is given up.

use anyhow::{Context, Result};
use codegen_runtime::events::EventRecorder;
use codegen_testenv::TestEnv;
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::api::events::v1::Event;
use kube::api::{Api, DeleteParams, ListParams, ObjectMeta, PostParams};

async fn series_counts(events: &Api<Event>) -> Result<Vec<(String, Option<i32>)>> {
    let list = events.list(&ListParams::default()).await?;
    Ok(list.items.into_iter().map(|e| (e.reason.unwrap_or_default(), e.series.map(|s| s.count))).collect())
}

#[tokio::test]
async fn a_repeated_event_is_one_series_on_the_server() -> Result<()> {
    let env = TestEnv::shared();
    let ns = env.create_namespace("events").await?;
    let client = env.admin_client().await?;
    let configmaps: Api<ConfigMap> = Api::namespaced(client.clone(), &ns);
    let cm = configmaps
        .create(
            &PostParams::default(),
            &ConfigMap {
                metadata: ObjectMeta { name: Some("settings".into()), ..Default::default() },
                ..Default::default()
            },
        )
        .await?;
    let events: Api<Event> = Api::namespaced(client.clone(), &ns);
    let recorder = EventRecorder::new(client, "example.com/events-test", Some("pod-0"));

    recorder.warning(&cm, "FailedSync", "first").await?;
    assert_eq!(series_counts(&events).await?, [("FailedSync".to_string(), None)]);
    for message in ["second", "third", "fourth"] {
        recorder.warning(&cm, "FailedSync", message).await?;
    }
    assert_eq!(series_counts(&events).await?, [("FailedSync".to_string(), Some(2))], "the third and fourth only count");
    recorder.flush().await?;
    assert_eq!(series_counts(&events).await?, [("FailedSync".to_string(), Some(4))]);

    // The Event is deleted (as the server's TTL would); the series goes on
    // and its next write creates it again.
    let name = events.list(&ListParams::default()).await?.items[0].metadata.name.clone().context("event name")?;
    events.delete(&name, &DeleteParams::default()).await?;
    recorder.warning(&cm, "FailedSync", "fifth").await?;
    recorder.flush().await?;
    assert_eq!(series_counts(&events).await?, [("FailedSync".to_string(), Some(5))]);
    Ok(())
}

#[tokio::test]
async fn queued_events_reach_the_server() -> Result<()> {
    let env = TestEnv::shared();
    let ns = env.create_namespace("events-queue").await?;
    let client = env.admin_client().await?;
    let configmaps: Api<ConfigMap> = Api::namespaced(client.clone(), &ns);
    let cm = configmaps
        .create(
            &PostParams::default(),
            &ConfigMap {
                metadata: ObjectMeta { name: Some("settings".into()), ..Default::default() },
                ..Default::default()
            },
        )
        .await?;
    let events: Api<Event> = Api::namespaced(client.clone(), &ns);
    let queue = EventRecorder::new(client, "example.com/events-test", Some("pod-0")).queue();
    for _ in 0..3 {
        assert!(queue.normal(&cm, "Synced", "synced"));
    }
    assert!(queue.warning(&cm, "FailedSync", "not synced"));
    // The API server refuses a reason over 128 bytes: given up, not retried.
    assert!(queue.warning(&cm, &"R".repeat(129), "refused"));
    queue.flush().await;
    let mut counts = series_counts(&events).await?;
    counts.sort();
    assert_eq!(counts, [("FailedSync".to_string(), None), ("Synced".to_string(), Some(3))]);
    assert_eq!((queue.dropped(), queue.failed()), (0, 1));
    Ok(())
}

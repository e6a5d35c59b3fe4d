//! The action log and reactors of the fake API server: what client-go's
//! `testing.Fake` offers as `Actions()` and `PrependReactor`.

use std::collections::BTreeMap;
use std::sync::Arc;

use kube::core::Status;
use serde_json::Value;

/// One request the fake API server received (client-go's `testing.Action`).
#[derive(Clone, Debug, PartialEq)]
pub struct Action {
    /// `get`, `list`, `watch`, `create`, `update`, `patch`, `delete` or
    /// `delete-collection`.
    pub verb: String,
    /// API group, empty for the core group.
    pub group: String,
    /// API version.
    pub version: String,
    /// The resource's plural name, e.g. `configmaps`.
    pub resource: String,
    /// Namespace from the URL.
    pub namespace: Option<String>,
    /// Object name from the URL.
    pub name: Option<String>,
    /// Subresource from the URL, e.g. `status`.
    pub subresource: Option<String>,
    /// Query parameters (`fieldManager`, `force`, `labelSelector`, ...).
    pub params: BTreeMap<String, String>,
    /// For `patch`: `merge`, `json`, `strategic` or `apply`.
    pub patch_type: Option<String>,
    /// The request body, when it was JSON.
    pub body: Option<Value>,
}

impl Action {
    /// Whether this action is `verb` on `resource` (`"*"` matches any): a
    /// plural matches the resource and its subresources, `plural/sub` only
    /// that subresource (`"deployments/scale"`), as client-go selects
    /// reactors (`resourceCovers`).
    pub fn matches(&self, verb: &str, resource: &str) -> bool {
        let verb_matches = verb == "*" || verb == self.verb;
        let resource_matches = resource == "*"
            || resource == self.resource
            || resource
                .split_once('/')
                .is_some_and(|(top, sub)| top == self.resource && self.subresource.as_deref() == Some(sub));
        verb_matches && resource_matches
    }
}

/// What a reactor decides: `None` passes the request on to the next
/// reactor (finally to the object store), `Some(Ok(body))` answers 200 with
/// `body`, `Some(Err(status))` answers with that failure (its `code`, or 500
/// when 0), e.g. `Status::failure("no", "Forbidden").with_code(403).boxed()`.
/// For `watch`, `Some(Ok(line))` sends `line` as the only event of the
/// stream, e.g. `{"type":"ERROR","object":{...}}`.
pub type ReactorResult = Option<Result<Value, Box<Status>>>;

/// A reactor function (client-go's `ReactionFunc`).
pub type ReactionFunc = Arc<dyn Fn(&Action) -> ReactorResult + Send + Sync>;

/// A reactor bound to a verb and resource (either may be `"*"`).
#[derive(Clone)]
pub(crate) struct Reactor {
    pub(crate) verb: String,
    pub(crate) resource: String,
    pub(crate) react: ReactionFunc,
}

impl std::fmt::Debug for Reactor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reactor").field("verb", &self.verb).field("resource", &self.resource).finish()
    }
}

/// Runs the chain in order; the first reactor that answers wins.
pub(crate) fn react(reactors: &[Reactor], action: &Action) -> ReactorResult {
    reactors.iter().filter(|r| action.matches(&r.verb, &r.resource)).find_map(|r| (r.react)(action))
}

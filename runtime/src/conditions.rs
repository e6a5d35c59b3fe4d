//! Status conditions (`metav1.Condition` lists), as apimachinery's
//! `meta.SetStatusCondition` and its neighbours keep them: one condition per
//! type, and a `lastTransitionTime` that moves only when the status does.
//!
//! ```
//! use codegen_runtime::conditions::{is_status_condition_true, set_status_condition};
//! use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
//!
//! let ready = |status: &str, generation| Condition {
//!     type_: "Ready".into(),
//!     status: status.into(),
//!     reason: "Reconciled".into(),
//!     message: String::new(),
//!     observed_generation: Some(generation),
//!     last_transition_time: Time(k8s_openapi::jiff::Timestamp::now()),
//! };
//! let mut conditions = Vec::new();
//! assert!(set_status_condition(&mut conditions, ready("True", 1)));
//! let since = conditions[0].last_transition_time.clone();
//! // Ready again at generation 2: no transition.
//! assert!(set_status_condition(&mut conditions, ready("True", 2)));
//! assert_eq!(conditions[0].last_transition_time, since);
//! assert!(is_status_condition_true(&conditions, "Ready"));
//! ```

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;

/// Sets `new` in `conditions` and returns whether anything changed. A
/// condition of `new`'s type that is not there yet is added as given. One
/// that is there takes `new`'s status, reason, message and observed
/// generation, and `new`'s `lastTransitionTime` only if its status changes:
/// pass the current time, and it is kept while the status stays the same.
pub fn set_status_condition(conditions: &mut Vec<Condition>, new: Condition) -> bool {
    let Some(existing) = conditions.iter_mut().find(|c| c.type_ == new.type_) else {
        conditions.push(new);
        return true;
    };
    let mut changed = false;
    if existing.status != new.status {
        existing.status = new.status;
        existing.last_transition_time = new.last_transition_time;
        changed = true;
    }
    if existing.reason != new.reason {
        existing.reason = new.reason;
        changed = true;
    }
    if existing.message != new.message {
        existing.message = new.message;
        changed = true;
    }
    if existing.observed_generation != new.observed_generation {
        existing.observed_generation = new.observed_generation;
        changed = true;
    }
    changed
}

/// Removes the condition of type `type_`; returns whether there was one.
pub fn remove_status_condition(conditions: &mut Vec<Condition>, type_: &str) -> bool {
    let before = conditions.len();
    conditions.retain(|c| c.type_ != type_);
    conditions.len() != before
}

/// The condition of type `type_`, if there is one.
pub fn find_status_condition<'a>(conditions: &'a [Condition], type_: &str) -> Option<&'a Condition> {
    conditions.iter().find(|c| c.type_ == type_)
}

/// Whether the condition of type `type_` is there with status `True`.
pub fn is_status_condition_true(conditions: &[Condition], type_: &str) -> bool {
    is_status_condition_present_and_equal(conditions, type_, "True")
}

/// Whether the condition of type `type_` is there with status `False`.
pub fn is_status_condition_false(conditions: &[Condition], type_: &str) -> bool {
    is_status_condition_present_and_equal(conditions, type_, "False")
}

/// Whether the condition of type `type_` is there with status `status`.
pub fn is_status_condition_present_and_equal(conditions: &[Condition], type_: &str, status: &str) -> bool {
    find_status_condition(conditions, type_).is_some_and(|c| c.status == status)
}

#[cfg(test)]
mod tests {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
    use k8s_openapi::jiff::Timestamp;

    use super::*;

    fn condition(type_: &str, status: &str, reason: &str, at: i64) -> Condition {
        Condition {
            type_: type_.into(),
            status: status.into(),
            reason: reason.into(),
            message: format!("{reason} message"),
            observed_generation: Some(1),
            last_transition_time: Time(Timestamp::from_second(at).unwrap()),
        }
    }

    #[test]
    fn the_transition_time_moves_with_the_status_only() {
        let mut conditions = vec![condition("Other", "True", "Mine", 10)];
        assert!(set_status_condition(&mut conditions, condition("Ready", "False", "Starting", 100)));
        assert_eq!(conditions.len(), 2, "other types are kept");
        // Same status, other reason: reason and message change, the time does not.
        assert!(set_status_condition(&mut conditions, condition("Ready", "False", "Waiting", 200)));
        let ready = find_status_condition(&conditions, "Ready").unwrap();
        assert_eq!((ready.reason.as_str(), ready.message.as_str()), ("Waiting", "Waiting message"));
        assert_eq!(ready.last_transition_time.0.as_second(), 100);
        // The same again: nothing changes.
        assert!(!set_status_condition(&mut conditions, condition("Ready", "False", "Waiting", 300)));
        // A new observed generation alone is a change, not a transition.
        let mut later = condition("Ready", "False", "Waiting", 400);
        later.observed_generation = Some(2);
        assert!(set_status_condition(&mut conditions, later));
        assert_eq!(find_status_condition(&conditions, "Ready").unwrap().last_transition_time.0.as_second(), 100);
        // Another status: a transition, at the new condition's time.
        assert!(set_status_condition(&mut conditions, condition("Ready", "True", "Running", 500)));
        let ready = find_status_condition(&conditions, "Ready").unwrap();
        assert_eq!((ready.status.as_str(), ready.last_transition_time.0.as_second()), ("True", 500));
        assert_eq!(ready.observed_generation, Some(1));
        assert_eq!(conditions.len(), 2);
    }

    #[test]
    fn status_checks_and_removal() {
        let mut conditions = vec![condition("Ready", "True", "Up", 1), condition("Degraded", "False", "Fine", 1)];
        assert!(is_status_condition_true(&conditions, "Ready"));
        assert!(!is_status_condition_false(&conditions, "Ready"));
        assert!(is_status_condition_false(&conditions, "Degraded"));
        assert!(is_status_condition_present_and_equal(&conditions, "Degraded", "False"));
        assert!(!is_status_condition_true(&conditions, "Missing"));
        assert!(!is_status_condition_false(&conditions, "Missing"));
        assert!(remove_status_condition(&mut conditions, "Ready"));
        assert!(!remove_status_condition(&mut conditions, "Ready"));
        assert!(find_status_condition(&conditions, "Ready").is_none());
        assert_eq!(conditions.len(), 1);
    }
}

use codegen_macros::genclient;

#[genclient(only_verbs(get, list), skip_verbs(list))]
pub struct Student {}

#[genclient(no_verbs, readonly)]
pub struct Teacher {}

#[genclient(method(name = "watch_all", verb = "watch"))]
pub struct School {}

#[genclient(readonly, skip_verbs(watch))]
pub struct Course {}

fn main() {}

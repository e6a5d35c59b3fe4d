use codegen_macros::genclient;

#[genclient(no_stauts)]
pub struct Student {}

fn main() {}

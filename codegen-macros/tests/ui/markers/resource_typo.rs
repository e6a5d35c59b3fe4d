use codegen_macros::ApiType;

#[derive(ApiType)]
#[resource(shortNames("stu"), printcolumn(name = "A", type = "text", json_path = "spec.a"))]
pub struct Student {}

fn main() {}

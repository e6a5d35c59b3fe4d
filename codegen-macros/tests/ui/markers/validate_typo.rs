use codegen_macros::ApiType;

#[derive(ApiType)]
pub struct Spec {
    #[validate(minimun = 1)]
    pub a: i32,
    #[validate(format = "pasword", unknown)]
    pub b: String,
    #[validate(list_type = "bag", min_length = -1)]
    pub c: Vec<String>,
}

fn main() {}

use codegen_macros::genclient;

#[genclient]
pub enum Student {
    A,
}

fn main() {}

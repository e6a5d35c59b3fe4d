codegen_macros::group_name!("example");

mod other {
    codegen_macros::group_name!(example);
}

fn main() {}

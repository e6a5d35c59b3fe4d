codegen_macros::group_name!("broken.example.com");

mod broken;
mod types;

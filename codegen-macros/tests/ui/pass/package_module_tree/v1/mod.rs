codegen_macros::group_name!("tree.example.com");

mod types;
pub use types::*;

#[path = "parts/size.rs"]
mod size;

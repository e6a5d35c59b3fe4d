//! A file of the package's module tree does not parse: no kind of the
//! package can have a correct CRD, and each says so.
#[path = "file_in_module_tree_does_not_parse/v1/mod.rs"]
mod v1;

fn main() {}

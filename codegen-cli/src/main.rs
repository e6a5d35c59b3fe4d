//! `kube-codegen`: the command-line front end over codegen-core.

fn main() {
    eprintln!("kube-codegen: the generator is not implemented yet");
    std::process::exit(2);
}

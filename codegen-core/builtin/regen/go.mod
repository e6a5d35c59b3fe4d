module kube-codegen.invalid/builtin-regen

go 1.24

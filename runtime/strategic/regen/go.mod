module kube-codegen.invalid/strategic-regen

go 1.24

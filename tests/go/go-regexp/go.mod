module kube-codegen.invalid/tests/go/go-regexp

go 1.26.0

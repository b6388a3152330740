//go:build tools

// Package k8sbins only records, for `go mod tidy`, which commands this
// wrapper module exists to build. The build tag keeps it out of every real
// build (main packages cannot be imported); build-components.sh builds the
// commands by import path with `go build -o`.
package k8sbins

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubectl"
)

//go:build tools

// Package etcdbin only records, for `go mod tidy`, that this wrapper module
// exists to build the stock etcd main (go.etcd.io/etcd/server/v3 is itself a
// main package). build-components.sh builds it with `go build -o .../etcd`.
package etcdbin

import _ "go.etcd.io/etcd/server/v3"

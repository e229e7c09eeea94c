//go:build tools

// Package tools pins the etcd server that hack/build-k8s.sh builds for envtest and the local cluster.
package tools

import _ "go.etcd.io/etcd/server/v3"

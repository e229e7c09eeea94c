//go:build tools

// Package tools pins the helm command that `make helm` builds from the Go module proxy (no
// download site is reachable on the machines this project is developed and tested on): the Helm
// chart's checks (`make verify`), its real-node spec (`make test-e2e`) and `make release` use it.
package tools

import (
	_ "helm.sh/helm/v4/cmd/helm"
)

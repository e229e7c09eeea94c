//go:build tools

// Package tools pins the OLM commands that hack/build-olm.sh builds from the Go module proxy for
// `make test-olm` (no download site or container registry is reachable on the machines this
// project is developed and tested on, so release binaries and images cannot be used):
//
//	operator-sdk    run bundle, run bundle-upgrade, scorecard, cleanup
//	scorecard-test  the test image of `operator-sdk scorecard` (basic and olm suites)
//	opm             the index, decompression and --opmImage image of the catalog
//	olm, catalog    the olm-operator and catalog-operator
//	cpb             copied into bundle unpack Jobs by the catalog-operator (--util-image)
//	grpc-health-probe  what OLM probes a CatalogSource's registry pod with (grpc_health_probe in
//	                the catalog image of make test-olm)
package tools

import (
	_ "github.com/grpc-ecosystem/grpc-health-probe"
	_ "github.com/operator-framework/operator-lifecycle-manager/cmd/catalog"
	_ "github.com/operator-framework/operator-lifecycle-manager/cmd/olm"
	_ "github.com/operator-framework/operator-lifecycle-manager/util/cpb"
	_ "github.com/operator-framework/operator-registry/cmd/opm"
	_ "github.com/operator-framework/operator-sdk/cmd/operator-sdk"
	_ "github.com/operator-framework/operator-sdk/images/scorecard-test"
)

//go:build tools

// Package tools pins the cyclonedx-gomod command that `make cyclonedx-gomod` builds from the Go
// module proxy: `make release` writes a CycloneDX SBOM of each Go binary of its images with it.
package tools

import (
	_ "github.com/CycloneDX/cyclonedx-gomod/cmd/cyclonedx-gomod"
)

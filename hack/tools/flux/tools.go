//go:build tools

// Package flux imports the Flux API packages so that `go mod tidy` keeps
// them in this module; nothing here is built.
package flux

import (
	_ "github.com/fluxcd/helm-controller/api/v2"
	_ "github.com/fluxcd/kustomize-controller/api/v1"
	_ "github.com/fluxcd/source-controller/api/v1"
)

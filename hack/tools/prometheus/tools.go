//go:build tools

// Package prometheus imports prometheus-operator's API package so that
// `go mod tidy` keeps it in this module; nothing here is built.
package prometheus

import (
	_ "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
)

// Package deploy embeds the demo application and the sample custom
// resources, so `make simulate` runs the demo with no file arguments.
package deploy

import "embed"

// Demo holds demo/*.yaml (namespace job-system, Deployments job-worker and
// job-api) and samples/*.yaml (the seed's ApplicationUpgrade upgrade-v2).
//
//go:embed demo/*.yaml samples/*.yaml
var Demo embed.FS

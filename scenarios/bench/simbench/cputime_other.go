//go:build !unix

package simbench

import "time"

// CPUTime is unavailable here: 0.
func CPUTime() time.Duration { return 0 }

//go:build !unix

package opstats

func cpuSeconds() float64 { return 0 }

package main

import (
	"fmt"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

type clientObject = client.Object

// simrunLimit is a pflag.Value for a positive duration.
type simrunLimit struct{ d time.Duration }

func (l *simrunLimit) String() string {
	if l.d == 0 {
		return "2h"
	}
	return l.d.String()
}

func (l *simrunLimit) Set(s string) error {
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return fmt.Errorf("must be a positive duration such as 30m, got %q", s)
	}
	l.d = d
	return nil
}

func (l *simrunLimit) Type() string { return "duration" }

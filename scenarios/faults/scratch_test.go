package faults

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
)

func TestScratch(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("N"))
	if n == 0 { t.Skip() }
	fails := 0
	for seed := int64(1); seed <= int64(n); seed++ {
		s := Generate(seed, ScenarioNames())
		o := Run(context.Background(), RunConfig{Schedule: s})
		if o.Failed() {
			fails++
			fmt.Printf("FAIL %s\n  err=%v\n", s, o.Err)
			for _, v := range o.Violations { fmt.Printf("  - %s\n", v) }
		}
		if os.Getenv("V") != "" { fmt.Printf("%s -> %s calls=%d elapsed=%v\n", s, o.ExpectedState(), o.Calls, o.Result.Elapsed) }
	}
	fmt.Println("fails", fails)
}

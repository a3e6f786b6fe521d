package main

import (
	"fmt"
	"strings"
)

// runFlags are the flags of o, other than --seed, --faults and --scenario
// (faults.Schedule.Command writes those), that change the run: each ready
// to go inside make simulate ARGS="...".
func runFlags(o options) []string {
	var out []string
	if o.manifestsDir != "" {
		out = append(out, "--manifests "+makeArg(o.manifestsDir))
	}
	if o.limit.d != 0 {
		out = append(out, "--limit "+makeArg(o.limit.d.String()))
	}
	return out
}

// replay is the command that replays the run of o without faults.
func replay(o options) string {
	return fmt.Sprintf("make simulate ARGS=\"%s\"", strings.Join(append(runFlags(o), fmt.Sprintf("--seed %d", o.seed)), " "))
}

// makeArg quotes s as one argument of make simulate ARGS="...": single
// quotes for the recipe's shell when s is not plain, $ doubled for make,
// then \ " $ ` escaped for the double quotes around ARGS.
func makeArg(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_@%+=:,./-") == "" {
		return s
	}
	s = "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
	s = strings.ReplaceAll(s, "$", "$$")
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`, "$", `\$`, "`", "\\`").Replace(s)
}

// Command kubectl is kubectl v1.37 built from the k8s.io/kubectl module
// (the same entry point as k8s.io/kubernetes/cmd/kubectl), so the quick
// start needs no kubectl installed on the machine.
package main

import (
	"k8s.io/component-base/cli"
	"k8s.io/kubectl/pkg/cmd"
	"k8s.io/kubectl/pkg/cmd/util"
)

func main() {
	command := cmd.NewDefaultKubectlCommand()
	if err := cli.RunNoErrOutput(command); err != nil {
		// Pretty-print the error and exit with an error.
		util.CheckErr(err)
	}
}

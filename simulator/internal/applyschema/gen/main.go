// Command gen writes simulator/applyschema.yaml: the part of
// client-go's structured-merge-diff schema the simulator's server-side
// apply needs (simulator/internal/applyschema). Run from the repository
// root: go run ./simulator/internal/applyschema/gen
package main

import (
	"fmt"
	"os"

	"github.com/lunadas/upgrade-operator/simulator/internal/applyschema"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "applyschema:", err)
		os.Exit(1)
	}
}

func run() error {
	full, err := applyschema.ClientGoSchema()
	if err != nil {
		return err
	}
	types, err := applyschema.Subset(full)
	if err != nil {
		return err
	}
	doc, err := applyschema.Encode(types)
	if err != nil {
		return err
	}
	return os.WriteFile("simulator/applyschema.yaml", doc, 0o644)
}

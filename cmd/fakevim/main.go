// Command fakevim serves a fake StarlingX system — Keystone, the VIM, USM
// and sysinv in their real wire shapes — over the model of
// simulator/starlingx, with a speed factor and injectable faults. See
// fakevim/README.md.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := newCommand(os.Stdout).ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "fakevim:", err)
		os.Exit(1)
	}
}

func newCommand(stdout io.Writer) *cobra.Command {
	o := defaultOptions()
	cmd := &cobra.Command{
		Use:   "fakevim",
		Short: "Serve a fake StarlingX system (Keystone, VIM, USM, sysinv) for the upgrade operator",
		Long: "fakevim serves Keystone (POST /v3/auth/tokens), the VIM orchestration API (/api/orchestration),\n" +
			"USM (/v1/release, /v1/deploy) and sysinv (/v1/kube_versions, /v1/kube_upgrade, /v1/isystems,\n" +
			"/v1/ihosts) over a simulated system whose strategies run --speed times faster than real time.\n" +
			"By default each service listens on its real port (5000, 4545, 5493, 6385); --listen serves them all\n" +
			"on one address. /admin (faults, request log, state) is served on every listener.",
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return run(cmd.Context(), o, stdout)
		},
	}
	o.bind(cmd)
	return cmd
}

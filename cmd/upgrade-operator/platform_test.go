package main

import (
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lunadas/upgrade-operator/operator/manager"
)

func parse(t *testing.T, args ...string) (manager.Options, error) {
	t.Helper()
	var opts manager.Options
	var secret string
	cmd := &cobra.Command{Use: "upgrade-operator"}
	addPlatformFlags(cmd, &opts, &secret)
	cmd.Flags().BoolVar(&opts.LeaderElect, "leader-elect", false, "")
	require.NoError(t, cmd.Flags().Parse(args))
	return opts, platformFlags(cmd, &opts, secret)
}

func TestPlatformFlags(t *testing.T) {
	opts, err := parse(t, "--platform", "--starlingx-credentials-secret", "upgrade-operator-system/keystone", "--vim-url", "https://c:4545",
		"--platform-poll-interval", "5s", "--webhook-port", "9555")
	require.NoError(t, err)
	assert.True(t, opts.LeaderElect, "--platform turns leader election on")
	assert.Equal(t, "upgrade-operator-system/keystone", opts.Platform.CredentialsSecret.String())
	assert.Equal(t, "https://c:4545", opts.Platform.Endpoints.VIM)
	assert.Equal(t, "5s", opts.Platform.PollInterval.String())
	assert.Equal(t, 9555, opts.Webhook.Port)

	opts, err = parse(t, "--platform", "--leader-elect=false", "--starlingx-credentials-secret", "ns/name")
	require.NoError(t, err)
	assert.False(t, opts.LeaderElect, "an explicit --leader-elect=false wins")

	_, err = parse(t, "--platform")
	assert.ErrorContains(t, err, "--starlingx-credentials-secret <namespace>/<name>")

	opts, err = parse(t)
	require.NoError(t, err)
	assert.False(t, opts.Platform.Enabled)
}

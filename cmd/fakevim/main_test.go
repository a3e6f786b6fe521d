package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lunadas/upgrade-operator/operator/starlingx/vim"
)

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// TestServesPerServiceListeners starts the command on four ephemeral
// ports and talks to it with the operator's client through the catalog.
func TestServesPerServiceListeners(t *testing.T) {
	out := &syncBuffer{}
	cmd := newCommand(out)
	cmd.SetArgs([]string{"--keystone-addr", "127.0.0.1:0", "--vim-addr", "127.0.0.1:0", "--usm-addr", "127.0.0.1:0",
		"--sysinv-addr", "127.0.0.1:0", "--mode", "simplex", "--password", "pw", "--speed", "1"})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- cmd.ExecuteContext(ctx) }()

	keystone := regexp.MustCompile(`keystone (http://\S+)/v3`)
	var url string
	require.Eventually(t, func() bool {
		m := keystone.FindStringSubmatch(out.String())
		if m != nil {
			url = m[1]
		}
		return m != nil
	}, 5*time.Second, 10*time.Millisecond)
	assert.Contains(t, out.String(), "fakevim: simplex system on starlingx-13.01.0 at 1x speed")

	c, err := vim.New(vim.Config{Credentials: vim.Credentials{AuthURL: url, Username: "admin", Password: "pw"}})
	require.NoError(t, err)
	sys, err := c.GetSystem(context.Background())
	require.NoError(t, err)
	assert.Equal(t, "simplex", sys.SystemMode)
	st, err := c.GetStrategy(context.Background(), vim.StrategySwUpgrade)
	require.NoError(t, err)
	assert.Nil(t, st)

	cancel()
	select {
	case err := <-done:
		assert.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("fakevim did not stop")
	}
}

func TestConfigFileAndFaultFlags(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "system.json")
	require.NoError(t, os.WriteFile(file, []byte(`{
	  "Mode": "duplex", "Workers": 1,
	  "Releases": [{"ID": "starlingx-24.09.0", "State": "deployed", "FeedKubeVersions": ["v1.29.2"]}],
	  "DeployedRelease": "starlingx-24.09.0",
	  "KubeVersions": [{"Version": "v1.29.2"}], "ActiveKubeVersion": "v1.29.2"
	}`), 0o600))
	o := defaultOptions()
	o.configFile, o.failBuilds, o.failApplyAtStage, o.workers = file, 2, 3, 0
	cfg, err := o.modelConfig(time.Unix(0, 0))
	require.NoError(t, err)
	assert.Equal(t, "starlingx-24.09.0", cfg.DeployedRelease)
	assert.Equal(t, 0, cfg.Workers, "--workers overrides the file")
	assert.Equal(t, 2, cfg.Faults.BuildFailures)
	require.Len(t, cfg.Faults.ApplyFailures, 1)
	assert.Equal(t, 3, cfg.Faults.ApplyFailures[0].StageID)

	o.configFile = filepath.Join(dir, "missing.json")
	_, err = o.modelConfig(time.Unix(0, 0))
	assert.ErrorContains(t, err, "read --config")
}

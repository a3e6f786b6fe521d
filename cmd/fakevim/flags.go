package main

import (
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/lunadas/upgrade-operator/fakevim"
	"github.com/lunadas/upgrade-operator/simulator/starlingx"
)

type options struct {
	listen                                     string
	keystoneAddr, vimAddr, usmAddr, sysinvAddr string
	advertiseHost                              string
	tlsCert, tlsKey                            string
	speed                                      float64
	configFile                                 string
	mode, activeController, deployed, kube     string
	workers                                    int
	seed                                       uint64
	username, password, project                string
	tokenTTL                                   time.Duration
	failBuilds, timeoutBuilds                  int
	failApplyAtStage, timeoutApplyAtStage      int
	unavailableNext                            int
	delay                                      time.Duration
}

func defaultOptions() *options {
	return &options{keystoneAddr: ":5000", vimAddr: ":4545", usmAddr: ":5493", sysinvAddr: ":6385",
		advertiseHost: "127.0.0.1", speed: 60, mode: "duplex", workers: -1, seed: 1,
		username: "admin", project: "admin", tokenTTL: time.Hour, failApplyAtStage: -1, timeoutApplyAtStage: -1}
}

func (o *options) bind(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&o.listen, "listen", "", "serve every service and /admin on this one address (e.g. :8080); overrides the per-service addresses")
	f.StringVar(&o.keystoneAddr, "keystone-addr", o.keystoneAddr, "Keystone listen address")
	f.StringVar(&o.vimAddr, "vim-addr", o.vimAddr, "VIM (nfv-vim) listen address")
	f.StringVar(&o.usmAddr, "usm-addr", o.usmAddr, "USM (software) listen address")
	f.StringVar(&o.sysinvAddr, "sysinv-addr", o.sysinvAddr, "sysinv listen address")
	f.StringVar(&o.advertiseHost, "advertise-host", o.advertiseHost, "host name put in the Keystone catalog URLs")
	f.StringVar(&o.tlsCert, "tls-cert", "", "serve HTTPS with this PEM certificate (with --tls-key)")
	f.StringVar(&o.tlsKey, "tls-key", "", "PEM key of --tls-cert")
	f.Float64Var(&o.speed, "speed", o.speed, "model seconds per real second (60: one model minute per second)")
	f.StringVar(&o.configFile, "config", "", "JSON file with a starlingx.Config (releases, kube versions, hosts); default: the demo system")
	f.StringVar(&o.mode, "mode", o.mode, "system mode of the demo system: simplex, duplex or duplex-direct")
	f.IntVar(&o.workers, "workers", o.workers, "worker hosts of a duplex demo system (default 2)")
	f.StringVar(&o.activeController, "active-controller", "", "active controller at start: controller-0 or controller-1")
	f.StringVar(&o.deployed, "deployed-release", "", "release running at start (must be uploaded; older patches of its major count as deployed)")
	f.StringVar(&o.kube, "kube-version", "", "Kubernetes version running at start")
	f.Uint64Var(&o.seed, "seed", o.seed, "seed of the model's uuids")
	f.StringVar(&o.username, "username", o.username, "Keystone user accepted")
	f.StringVar(&o.password, "password", "", "Keystone password accepted (default: $FAKEVIM_PASSWORD, else fakevim-secret)")
	f.StringVar(&o.project, "project", o.project, "Keystone project accepted")
	f.DurationVar(&o.tokenTTL, "token-ttl", o.tokenTTL, "token lifetime (real time)")
	f.IntVar(&o.failBuilds, "fail-builds", 0, "the next N strategy builds end build-failed")
	f.IntVar(&o.timeoutBuilds, "timeout-builds", 0, "the next N strategy builds end build-timeout")
	f.IntVar(&o.failApplyAtStage, "fail-apply-at-stage", o.failApplyAtStage, "the next apply fails at this stage-id (0-based); -1 off")
	f.IntVar(&o.timeoutApplyAtStage, "timeout-apply-at-stage", o.timeoutApplyAtStage, "the next apply times out at this stage-id; -1 off")
	f.IntVar(&o.unavailableNext, "unavailable-next", 0, "answer 503 to the next N VIM/USM/sysinv requests")
	f.DurationVar(&o.delay, "delay", 0, "hold every VIM/USM/sysinv response this long")
}

// modelConfig is the demo system or --config, with the flag overrides.
func (o *options) modelConfig(start time.Time) (starlingx.Config, error) {
	cfg := starlingx.DemoConfig(starlingx.SystemMode(o.mode), start)
	if o.configFile != "" {
		b, err := os.ReadFile(o.configFile)
		if err != nil {
			return cfg, fmt.Errorf("read --config: %w", err)
		}
		cfg = starlingx.Config{}
		if err := json.Unmarshal(b, &cfg); err != nil {
			return cfg, fmt.Errorf("--config %s is not a starlingx.Config in JSON: %w", o.configFile, err)
		}
		cfg.Start = start
	}
	if o.workers >= 0 {
		cfg.Workers = o.workers
	}
	set := func(dst *string, v string) {
		if v != "" {
			*dst = v
		}
	}
	set(&cfg.ActiveController, o.activeController)
	set(&cfg.DeployedRelease, o.deployed)
	set(&cfg.ActiveKubeVersion, o.kube)
	cfg.Seed = o.seed
	cfg.Faults = starlingx.Faults{BuildFailures: o.failBuilds, BuildTimeouts: o.timeoutBuilds}
	if o.failApplyAtStage >= 0 {
		cfg.Faults.ApplyFailures = []starlingx.StageFault{{StageID: o.failApplyAtStage}}
	}
	if o.timeoutApplyAtStage >= 0 {
		cfg.Faults.ApplyTimeouts = []starlingx.StageFault{{StageID: o.timeoutApplyAtStage}}
	}
	return cfg, nil
}

func (o *options) serverOptions(m *starlingx.System, clock *fakevim.SpeedClock) fakevim.Options {
	pw := o.password
	if pw == "" {
		pw = os.Getenv("FAKEVIM_PASSWORD")
	}
	return fakevim.Options{Model: m, Clock: clock.Now, Username: o.username, Password: pw, ProjectName: o.project,
		TokenTTL: o.tokenTTL, HTTPFaults: fakevim.HTTPFaults{UnavailableNext: o.unavailableNext, Delay: o.delay}}
}

// Command demoapp is the container of the demo's worker and API images on
// the local real node (make node): a process with the start-up, readiness
// and termination behaviour the kwok stage annotations only describe.
//
//	demoapp [serve]   start; after START_DELAY write READY_FILE (the exec
//	                  readiness probe's signal); on SIGTERM remove it, log
//	                  "draining", keep running DRAIN, then exit 0. With
//	                  IGNORE_SIGTERM=1, log "ignoring" and keep running
//	                  until the runtime's SIGKILL at the end of the grace
//	                  period (a pod that uses its whole grace period: C01).
//	                  With CRASH=1 (the image's "crash" and "crashloop"
//	                  tags) exit 1 after CRASH_AFTER (default START_DELAY)
//	                  instead of becoming ready.
//	demoapp probe     exit 0 when READY_FILE exists, 1 otherwise (the exec
//	                  readiness probe).
//
// START_DELAY, DRAIN and CRASH_AFTER are Go durations ("3s"; default 0). READY_FILE
// defaults to /tmp/ready. APP_VERSION (set per image tag) is logged. An
// unknown argument or a malformed duration exits 2 with one line on stderr.
package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"
)

const defaultReadyFile = "/tmp/ready"

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	mode := "serve"
	if len(args) > 0 {
		mode = args[0]
	}
	if len(args) > 1 {
		fmt.Fprintf(os.Stderr, "demoapp: want at most one argument (serve or probe), got %q\n", args)
		return 2
	}
	readyFile := os.Getenv("READY_FILE")
	if readyFile == "" {
		readyFile = defaultReadyFile
	}
	switch mode {
	case "probe":
		if _, err := os.Stat(readyFile); err != nil {
			fmt.Fprintf(os.Stderr, "demoapp: not ready: %v\n", err)
			return 1
		}
		return 0
	case "serve":
		return serve(readyFile)
	default:
		fmt.Fprintf(os.Stderr, "demoapp: unknown mode %q: want serve or probe\n", mode)
		return 2
	}
}

func serve(readyFile string) int {
	startDelay, err := envDuration("START_DELAY")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	drain, err := envDuration("DRAIN")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	crash, ignoreTerm, err := crashAndIgnore()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	crashAfter := startDelay
	if v := os.Getenv("CRASH_AFTER"); v != "" {
		if crashAfter, err = envDuration("CRASH_AFTER"); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
	}
	version := os.Getenv("APP_VERSION")
	logf("demoapp %s: starting (ready in %s, drain %s, crash %t, ignore SIGTERM %t)", version, startDelay, drain, crash, ignoreTerm)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	if crash {
		select {
		case <-time.After(crashAfter):
			logf("demoapp %s: crash tag: exiting 1", version)
			return 1
		case s := <-sigs:
			logf("demoapp %s: %v before the crash: exiting", version, s)
			return 0
		}
	}
	select {
	case <-time.After(startDelay):
	case s := <-sigs:
		if !ignoreTerm {
			logf("demoapp %s: %v before ready: exiting", version, s)
			return 0
		}
		logf("demoapp %s: %v before ready: ignoring it until SIGKILL", version, s)
		for s := range sigs {
			logf("demoapp %s: %v: ignoring it", version, s)
		}
	}
	if err := os.WriteFile(readyFile, []byte(version+"\n"), 0o644); err != nil {
		fmt.Fprintf(os.Stderr, "demoapp: write %s: %v\n", readyFile, err)
		return 1
	}
	logf("demoapp %s: ready", version)
	s := <-sigs
	if err := os.Remove(readyFile); err != nil {
		fmt.Fprintf(os.Stderr, "demoapp: remove %s: %v\n", readyFile, err)
	}
	if ignoreTerm {
		// The behaviour under test: the runtime's SIGKILL at the end of
		// the grace period ends the process (the kubelet's killContainer).
		logf("demoapp %s: %v: ignoring it until SIGKILL", version, s)
		for s := range sigs {
			logf("demoapp %s: %v: ignoring it", version, s)
		}
	}
	logf("demoapp %s: %v: draining for %s", version, s, drain)
	time.Sleep(drain) // the drain itself: the behaviour under test, not synchronisation
	logf("demoapp %s: drained: exiting 0", version)
	return 0
}

// crashAndIgnore reads CRASH and IGNORE_SIGTERM: "" or "0" is off, "1" on;
// anything else is refused.
func crashAndIgnore() (crash, ignoreTerm bool, err error) {
	flag := func(name string) (bool, error) {
		switch v := os.Getenv(name); v {
		case "", "0":
			return false, nil
		case "1":
			return true, nil
		default:
			return false, fmt.Errorf("demoapp: %s=%q: want 0 or 1", name, v)
		}
	}
	if crash, err = flag("CRASH"); err != nil {
		return false, false, err
	}
	ignoreTerm, err = flag("IGNORE_SIGTERM")
	return crash, ignoreTerm, err
}

func envDuration(name string) (time.Duration, error) {
	v := os.Getenv(name)
	if v == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("demoapp: %s=%q: want a non-negative Go duration such as 3s", name, v)
	}
	return d, nil
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stdout, "%s "+format+"\n", append([]any{time.Now().UTC().Format(time.RFC3339Nano)}, args...)...)
}

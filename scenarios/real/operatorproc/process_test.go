package operatorproc

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// The test binary is its own child: with OPERATORPROC_CHILD set, TestMain
// behaves as the mode names instead of running the tests.
func TestMain(m *testing.M) {
	switch os.Getenv("OPERATORPROC_CHILD") {
	case "":
		os.Exit(m.Run())
	case "exit2":
		fmt.Println("giving up")
		os.Exit(2)
	case "graceful", "ignore", "fail-on-term":
		mode := os.Getenv("OPERATORPROC_CHILD")
		term := make(chan os.Signal, 1)
		signal.Notify(term, syscall.SIGTERM)
		fmt.Println("ready")
		for range term {
			switch mode {
			case "graceful":
				os.Exit(0)
			case "fail-on-term":
				fmt.Println("shutdown failed")
				os.Exit(3)
			}
		}
	case "run":
		fmt.Println("ready")
		select {}
	}
}

// start runs the test binary as a child in mode and waits until it says
// it is ready (its SIGTERM handler installed), unless it exits first.
func start(t *testing.T, mode string) *Process {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("signals")
	}
	t.Setenv("OPERATORPROC_CHILD", mode)
	p, err := Start(os.Args[0], nil, filepath.Join(t.TempDir(), mode+".log"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.cmd.Process.Kill(); <-p.done })
	err = wait.PollUntilContextTimeout(t.Context(), 5*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		out, _ := os.ReadFile(p.Log())
		return strings.Contains(string(out), "ready") || p.Exited() != nil, nil
	})
	if err != nil {
		t.Fatalf("%s child not ready within a minute: %v", mode, err)
	}
	return p
}

func TestExitedNamesPidStatusAndLog(t *testing.T) {
	p := start(t, "exit2")
	<-p.done
	err := p.Exited()
	for _, want := range []string{fmt.Sprintf("pid %d", p.Pid()), "exit status 2", p.Log()} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Exited() = %v, want it to name %q", err, want)
		}
	}
	if out, _ := os.ReadFile(p.Log()); !strings.Contains(string(out), "giving up") {
		t.Errorf("log %q lacks the process's output", out)
	}
	if err := p.Kill(); err == nil || !strings.Contains(err.Error(), "exited") {
		t.Errorf("Kill of an exited process = %v, want its exit", err)
	}
	if err := p.Stop(time.Second); err == nil || !strings.Contains(err.Error(), "exited") {
		t.Errorf("Stop of an exited process = %v, want its exit", err)
	}
}

func TestKillReapsTheProcess(t *testing.T) {
	p := start(t, "run")
	if err := p.Exited(); err != nil {
		t.Fatalf("running child: Exited() = %v", err)
	}
	if err := p.Kill(); err != nil {
		t.Fatal(err)
	}
	if err := p.Exited(); err == nil || !strings.Contains(err.Error(), "signal: killed") {
		t.Errorf("after Kill, Exited() = %v, want killed", err)
	}
}

func TestStop(t *testing.T) {
	for mode, want := range map[string]string{
		"graceful":     "",
		"run":          "", // no handler: dies of the SIGTERM itself
		"fail-on-term": "failed to stop: exit status 3",
		"ignore":       "ignored SIGTERM for 200ms",
	} {
		t.Run(mode, func(t *testing.T) {
			p := start(t, mode)
			err := p.Stop(200 * time.Millisecond)
			switch {
			case want == "" && err != nil:
				t.Errorf("Stop() = %v, want nil", err)
			case want != "" && (err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), p.Log())):
				t.Errorf("Stop() = %v, want %q and the log", err, want)
			}
			if p.Exited() == nil {
				t.Error("Stop returned with the process running")
			}
		})
	}
}

package main

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

func TestProbe(t *testing.T) {
	ready := filepath.Join(t.TempDir(), "ready")
	t.Setenv("READY_FILE", ready)
	if got := run([]string{"probe"}); got != 1 {
		t.Errorf("probe before the ready file: exit %d, want 1", got)
	}
	if err := os.WriteFile(ready, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if got := run([]string{"probe"}); got != 0 {
		t.Errorf("probe with the ready file: exit %d, want 0", got)
	}
}

func TestRefusesUnknownInput(t *testing.T) {
	if got := run([]string{"dance"}); got != 2 {
		t.Errorf("unknown mode: exit %d, want 2", got)
	}
	if got := run([]string{"serve", "extra"}); got != 2 {
		t.Errorf("two arguments: exit %d, want 2", got)
	}
	t.Setenv("START_DELAY", "soon")
	if got := run(nil); got != 2 {
		t.Errorf("malformed START_DELAY: exit %d, want 2", got)
	}
}

func TestCrashTag(t *testing.T) {
	t.Setenv("READY_FILE", filepath.Join(t.TempDir(), "ready"))
	t.Setenv("CRASH", "1")
	if got := run(nil); got != 1 {
		t.Errorf("crash tag: exit %d, want 1", got)
	}
}

// serve becomes ready, and on SIGTERM removes the ready file and exits 0
// after the drain.
func TestServeDrainsOnSIGTERM(t *testing.T) {
	ready := filepath.Join(t.TempDir(), "ready")
	t.Setenv("READY_FILE", ready)
	t.Setenv("DRAIN", "300ms")
	done := make(chan int, 1)
	go func() { done <- run(nil) }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := os.Stat(ready); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("never ready")
		}
		time.Sleep(10 * time.Millisecond) // polling a file the program writes, not synchronisation by delay
	}
	began := time.Now()
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if got := <-done; got != 0 {
		t.Errorf("exit %d after SIGTERM, want 0", got)
	}
	if d := time.Since(began); d < 300*time.Millisecond {
		t.Errorf("exited %s after SIGTERM, before the 300ms drain", d)
	}
	if _, err := os.Stat(ready); !os.IsNotExist(err) {
		t.Errorf("ready file still there after SIGTERM: %v", err)
	}
}

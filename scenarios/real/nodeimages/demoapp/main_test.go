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
	waitReady(t, ready)
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

// CRASH_AFTER sets when the crash tag exits, independent of START_DELAY.
func TestCrashAfter(t *testing.T) {
	t.Setenv("READY_FILE", filepath.Join(t.TempDir(), "ready"))
	t.Setenv("CRASH", "1")
	t.Setenv("START_DELAY", "1h")
	t.Setenv("CRASH_AFTER", "50ms")
	began := time.Now()
	if got := run(nil); got != 1 {
		t.Errorf("crash tag: exit %d, want 1", got)
	}
	if d := time.Since(began); d < 50*time.Millisecond || d > 10*time.Second {
		t.Errorf("crashed after %s, want 50ms (not START_DELAY's hour)", d)
	}
	t.Setenv("CRASH_AFTER", "later")
	if got := run(nil); got != 2 {
		t.Errorf("malformed CRASH_AFTER: exit %d, want 2", got)
	}
	t.Setenv("CRASH", "yes")
	if got := run(nil); got != 2 {
		t.Errorf("CRASH=yes: exit %d, want 2", got)
	}
}

// With IGNORE_SIGTERM=1, SIGTERM removes the ready file (the probe fails)
// but the process keeps running: only SIGKILL ends it.
func TestIgnoreSIGTERM(t *testing.T) {
	ready := filepath.Join(t.TempDir(), "ready")
	t.Setenv("READY_FILE", ready)
	t.Setenv("IGNORE_SIGTERM", "1")
	done := make(chan int, 1)
	go func() { done <- run(nil) }()
	waitReady(t, ready)
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := os.Stat(ready); os.IsNotExist(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("ready file still there after SIGTERM")
		}
		time.Sleep(10 * time.Millisecond) // polling a file the program removes
	}
	// A second SIGTERM is ignored too; the process must still be running.
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-done:
		t.Fatalf("exited %d after SIGTERM, want it to keep running until SIGKILL", got)
	case <-time.After(300 * time.Millisecond): // a bound on a negative: it must not exit
	}
}

// waitReady waits (at most 10 s) for the ready file the program writes.
func waitReady(t *testing.T, ready string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := os.Stat(ready); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("never ready")
		}
		time.Sleep(10 * time.Millisecond) // polling a file the program writes, not synchronisation by delay
	}
}

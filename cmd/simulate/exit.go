package main

import (
	"errors"
	"os"
)

// Exit codes of simulate, for CI (documented in the command's help and in
// the top-level README):
const (
	exitOK          = 0 // every upgrade completed, no ordering violation
	exitInternal    = 1 // anything else: the simulator or the operator failed to run
	exitBadInput    = 2 // a bad flag, an unreadable or refused manifest
	exitViolation   = 3 // an image was written while an old pod of a dependency existed (or, in --seeds / --crash-sweep, a run broke a property)
	exitNotComplete = 4 // an upgrade ended Failed or did not finish within --limit
)

// exitError carries the exit code of err.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func withCode(code int, err error) error {
	if err == nil {
		return nil
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return err
	}
	return &exitError{code: code, err: err}
}

// exitCode is err's code: exitInternal unless it carries another.
func exitCode(err error) int {
	if err == nil {
		return exitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	return exitInternal
}

// isTerminal reports whether f is a character device (a terminal): the
// progress bar is drawn only there unless --progress says otherwise.
func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

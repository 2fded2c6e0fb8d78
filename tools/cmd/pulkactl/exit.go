package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
)

// Exit codes.
const (
	exitOK      = 0
	exitFailure = 1 // something went wrong that is not the caller's fault
	exitUsage   = 2 // bad flags, arguments or input
)

// ExitError makes a command exit with Code. Err is printed by main; a nil
// Err exits silently (the command has already said why, e.g. the flag
// package printing its usage).
type ExitError struct {
	Code int
	Err  error
}

// Error returns the wrapped error's message.
func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}

// Unwrap lets errors.Is see the cause.
func (e *ExitError) Unwrap() error { return e.Err }

// usageError marks err as the caller's mistake: exit code 2.
func usageError(err error) error { return &ExitError{Code: exitUsage, Err: err} }

// exitCode maps run's error to the process exit code, printing the message.
func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return exitOK
	}
	code := exitFailure
	var ee *ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.Code
		if ee.Err == nil {
			return code
		}
	case errors.Is(err, context.Canceled):
		code = 130 // interrupted, as a shell reports SIGINT
	}
	_, _ = fmt.Fprintf(stderr, "pulkactl: %v\n", err)
	return code
}

// recordInput is the one record a command reads: the file its single
// argument names, or stdin without one. closeIn closes what it opened.
func recordInput(cmd string, fs *flag.FlagSet, stdin io.Reader) (in io.Reader, closeIn func(), err error) {
	switch fs.NArg() {
	case 0:
		return stdin, func() {}, nil
	case 1:
		f, err := os.Open(fs.Arg(0))
		if err != nil {
			return nil, nil, usageError(fmt.Errorf("%s: %w", cmd, err))
		}
		return f, func() { _ = f.Close() }, nil
	default:
		return nil, nil, usageError(fmt.Errorf("%s: one record at a time, got %d arguments", cmd, fs.NArg()))
	}
}

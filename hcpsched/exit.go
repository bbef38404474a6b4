package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
)

// Exit codes a script can branch on.
const (
	exitOK = 0
	// exitFailed: Cosmos DB could not be read or written, the deadline passed, or a
	// write kept losing races.
	exitFailed = 1
	// exitUsage: the command line is wrong; nothing was read.
	exitUsage = 2
	// exitNotFound: the cluster or MC named does not exist in the region.
	exitNotFound = 3
)

// usageError is a command-line mistake.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

// errNotFound marks an ID the region does not have.
var errNotFound = errors.New("not found")

// report prints err and chooses the exit code for it.
func report(stderr io.Writer, err error) int {
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	fmt.Fprintf(stderr, "hcpsched: %v\n", err)
	var usage usageError
	switch {
	case errors.As(err, &usage):
		fmt.Fprintln(stderr, "Run 'hcpsched --help' for usage.")
		return exitUsage
	case errors.Is(err, errNotFound):
		return exitNotFound
	}
	return exitFailed
}

// Package durationflag holds the rule every client timeout flag of hcpsched follows: a
// zero value takes the named default before the flag is registered (so that the help
// shows the default), and the value must be positive (a zero deadline would fail every
// call at once).
package durationflag

import (
	"flag"
	"fmt"
	"time"
)

// Var registers the flag name on fs into *p, after setting *p to def when it is zero.
func Var(fs *flag.FlagSet, p *time.Duration, name string, def time.Duration, usage string) {
	if *p == 0 {
		*p = def
	}
	fs.DurationVar(p, name, *p, usage)
}

// Positive reports a non-positive d, naming the flag it came from.
func Positive(name string, d time.Duration) error {
	if d <= 0 {
		return fmt.Errorf("--%s must be positive, got %s", name, d)
	}
	return nil
}

package durationflag

import (
	"flag"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestVar(t *testing.T) {
	for _, tc := range []struct {
		name    string
		initial time.Duration
		args    []string
		want    time.Duration
		// wantHelp is the default the help shows.
		wantHelp string
		wantErr  string
	}{
		{name: "zero takes the default", want: 10 * time.Second, wantHelp: "10s"},
		{name: "a value set in code is kept", initial: time.Minute, want: time.Minute, wantHelp: "1m0s"},
		{name: "the flag wins", initial: time.Minute, args: []string{"--x-timeout=3s"}, want: 3 * time.Second, wantHelp: "1m0s"},
		{name: "zero is refused", args: []string{"--x-timeout=0s"}, wantErr: "--x-timeout must be positive, got 0s"},
		{name: "negative is refused", args: []string{"--x-timeout=-1s"}, wantErr: "--x-timeout must be positive, got -1s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := tc.initial
			fs := flag.NewFlagSet("test", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			Var(fs, &d, "x-timeout", 10*time.Second, "usage")
			require.NoError(t, fs.Parse(tc.args))
			err := Positive("x-timeout", d)
			if tc.wantErr != "" {
				assert.EqualError(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, d)
			assert.Equal(t, tc.wantHelp, fs.Lookup("x-timeout").DefValue)
		})
	}
}

package cosmos_test

import (
	"flag"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/internal/database/cosmos"
)

func TestTryTimeoutFlag(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		want    time.Duration
		wantErr string
	}{
		{name: "default", want: cosmos.DefaultTryTimeout},
		{name: "set", args: []string{"--cosmos-try-timeout=3s"}, want: 3 * time.Second},
		{name: "zero", args: []string{"--cosmos-try-timeout=0s"}, wantErr: "--cosmos-try-timeout must be positive"},
		{name: "negative", args: []string{"--cosmos-try-timeout=-1s"}, wantErr: "--cosmos-try-timeout must be positive"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var cfg cosmos.Config
			fs := flag.NewFlagSet("test", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			cosmos.AddFlags(fs, &cfg)
			require.NoError(t, fs.Parse(tt.args))
			err := cfg.Validate()
			if tt.wantErr != "" {
				assert.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, cfg.TryTimeout)
		})
	}
}

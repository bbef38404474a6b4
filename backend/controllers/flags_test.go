package controllers

import (
	"flag"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/internal/controller"
)

// One --reconcile-timeout sets the reconcile deadline of every controller.
func TestReconcileTimeoutFlag(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		want    time.Duration
		wantErr string
	}{
		{name: "default", want: controller.DefaultReconcileTimeout},
		{name: "set", args: []string{"--reconcile-timeout=45s"}, want: 45 * time.Second},
		{name: "zero", args: []string{"--reconcile-timeout=0s"}, wantErr: "--reconcile-timeout must be positive, got 0s"},
		{name: "negative", args: []string{"--reconcile-timeout=-1s"}, wantErr: "--reconcile-timeout must be positive, got -1s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defs := Definitions()
			fs := flag.NewFlagSet("test", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			cfg := AddFlags(fs, defs)
			require.NoError(t, fs.Parse(tt.args))
			err := cfg.Validate(defs)
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Equal(t, tt.wantErr, err.Error(), "reported once, not once per controller")
				return
			}
			require.NoError(t, err)
			for _, def := range defs {
				assert.Equal(t, tt.want, cfg[def.Name].ReconcileTimeout, def.Name)
			}
		})
	}
}

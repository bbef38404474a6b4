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
			cfg, _, err := parseControllerFlags(t, tt.args)
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Equal(t, tt.wantErr, err.Error(), "reported once, not once per controller")
				return
			}
			require.NoError(t, err)
			for _, def := range Definitions() {
				assert.Equal(t, tt.want, cfg[def.Name].ReconcileTimeout, def.Name)
			}
		})
	}
}

// The controllers every new cluster passes through default to as many workers as
// placement, and their flag help says why; the others keep DefaultWorkers.
func TestCreationFlowWorkers(t *testing.T) {
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	cfg := AddFlags(fs, Definitions())
	want := map[string]int{
		CreateServiceProviderClusterName:   DefaultCreationFlowWorkers,
		PendingClusterServiceIDAssignName:  DefaultCreationFlowWorkers,
		ClusterServiceCreateName:           DefaultCreationFlowWorkers,
		ManagementClusterPlacementSyncName: DefaultCreationFlowWorkers,
		PlacementName:                      DefaultPlacementWorkers,
		ClusterServiceAdoptionName:         DefaultWorkers,
		PendingCleanupName:                 DefaultWorkers,
	}
	for _, def := range Definitions() {
		assert.Equal(t, want[def.Name], cfg[def.Name].Workers, def.Name)
		usage := fs.Lookup(def.FlagPrefix + "-workers").Usage
		if _, sized := workersWhy[def.Name]; sized {
			assert.Contains(t, usage, "docs/cluster-service-create.md#workers", def.Name)
		} else {
			assert.NotContains(t, usage, "#workers", def.Name)
		}
	}
	assert.Len(t, workersWhy, 4)
	assert.Equal(t, DefaultPlacementWorkers, DefaultCreationFlowWorkers, "as many as placement")
}

// PendingCleanup gathers an MC's events for --pending-cleanup-event-delay; no other
// controller has the flag, and a negative delay is refused.
func TestEventDelayFlag(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		want    time.Duration
		wantErr string
	}{
		{name: "default", want: DefaultPendingCleanupEventDelay},
		{name: "set", args: []string{"--pending-cleanup-event-delay=250ms"}, want: 250 * time.Millisecond},
		{name: "off", args: []string{"--pending-cleanup-event-delay=0s"}, want: 0},
		{name: "negative", args: []string{"--pending-cleanup-event-delay=-1s"}, wantErr: "--pending-cleanup-event-delay must not be negative, got -1s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, fs, err := parseControllerFlags(t, tt.args)
			if tt.wantErr != "" {
				require.EqualError(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			for _, def := range Definitions() {
				want := time.Duration(0)
				if def.Name == PendingCleanupName {
					want = tt.want
				} else {
					assert.Nil(t, fs.Lookup(def.FlagPrefix+"-event-delay"), def.Name)
				}
				assert.Equal(t, want, cfg[def.Name].EventDelay, def.Name)
			}
		})
	}
}

// parseControllerFlags parses args with every definition's flags and validates them.
func parseControllerFlags(t *testing.T, args []string) (Config, *flag.FlagSet, error) {
	t.Helper()
	defs := Definitions()
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	cfg := AddFlags(fs, defs)
	require.NoError(t, fs.Parse(args))
	return cfg, fs, cfg.Validate(defs)
}

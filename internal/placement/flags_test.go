package placement_test

import (
	"flag"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/internal/placement"
)

func TestFlags(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		check   func(t *testing.T, c placement.Config)
		wantErr string
	}{
		{"defaults", nil, func(t *testing.T, c placement.Config) {
			assert.Equal(t, placement.DefaultConfig(), c)
			require.NoError(t, c.Validate())
			assert.Equal(t, "aro.openshift.io/swift-nic", c.Resources[0].Name)
		}, ""},
		{"costs", []string{"--placement-resource-costs", "aro.openshift.io/swift-nic=3/1, cpu=2500m/1"}, func(t *testing.T, c placement.Config) {
			require.Len(t, c.Resources, 2)
			assert.Equal(t, int64(2500), c.Resources[1].HA.MilliValue())
		}, ""},
		{"others", []string{"--placement-weigher=binpack", "--placement-max-capacity-age=1m", "--placement-tolerance=0"}, func(t *testing.T, c placement.Config) {
			assert.Equal(t, placement.WeigherBinPack, c.Weigher)
			assert.Equal(t, time.Minute, c.MaxCapacityAge)
			assert.Zero(t, c.Tolerance)
		}, ""},
		{"phase 2", []string{"--placement-weigher=dominant", "--placement-dominant-tolerance=0", "--placement-cost-source=hcpresourcerequirements"}, func(t *testing.T, c placement.Config) {
			assert.Equal(t, placement.WeigherDominant, c.Weigher)
			assert.Zero(t, c.DominantTolerance)
			assert.Equal(t, placement.CostSourceRequirements, c.CostSource)
			assert.Equal(t, placement.DefaultTolerance, c.Tolerance, "the other weighers' tolerance is a setting of its own")
			require.NoError(t, c.Validate())
		}, ""},
		{"a fractional dominant tolerance", []string{"--placement-dominant-tolerance=2.5"}, func(t *testing.T, c placement.Config) {
			assert.Equal(t, 2.5, c.DominantTolerance)
		}, ""},
		{"an unknown cost source parses but does not validate", []string{"--placement-cost-source=average"}, func(t *testing.T, c placement.Config) {
			assert.ErrorContains(t, c.Validate(), `unknown cost source "average"`)
		}, ""},
		{"an unknown weigher parses but does not validate", []string{"--placement-weigher=random"}, func(t *testing.T, c placement.Config) {
			assert.ErrorContains(t, c.Validate(), `unknown weigher "random"`)
		}, ""},
		{"a negative dominant tolerance does not validate", []string{"--placement-dominant-tolerance=-1"}, func(t *testing.T, c placement.Config) {
			assert.Error(t, c.Validate())
		}, ""},
		{"bad dominant tolerance", []string{"--placement-dominant-tolerance=five"}, nil, "placement-dominant-tolerance"},
		{"bad pair", []string{"--placement-resource-costs", "cpu=2"}, nil, "not name=HA/single-replica"},
		{"bad quantity", []string{"--placement-resource-costs", "cpu=two/1"}, nil, "HA cost of cpu"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := flag.NewFlagSet("t", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			var cfg placement.Config
			placement.AddFlags(fs, &cfg)
			err := fs.Parse(tt.args)
			if tt.wantErr != "" {
				assert.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			tt.check(t, cfg)
		})
	}
}

// The help names every weigher and cost source, so that an operator reading it learns
// each value the configuration accepts.
func TestFlagsHelpNamesEveryValue(t *testing.T) {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	var cfg placement.Config
	placement.AddFlags(fs, &cfg)
	weigher := fs.Lookup("placement-weigher")
	require.NotNil(t, weigher)
	for _, w := range placement.Weighers {
		assert.Contains(t, weigher.Usage, w)
	}
	assert.Equal(t, placement.DefaultWeigher, weigher.DefValue)
	source := fs.Lookup("placement-cost-source")
	require.NotNil(t, source)
	for _, s := range []string{placement.CostSourceFlags, placement.CostSourceRequirements} {
		assert.Contains(t, source.Usage, s)
	}
	assert.Equal(t, placement.DefaultCostSource, source.DefValue)
	tolerance := fs.Lookup("placement-dominant-tolerance")
	require.NotNil(t, tolerance)
	assert.Equal(t, fmt.Sprint(placement.DefaultDominantTolerance), tolerance.DefValue)
}

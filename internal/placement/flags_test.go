package placement_test

import (
	"flag"
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
			assert.Equal(t, placement.DefaultConfig().Weigher, c.Weigher)
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
		{"bad pair", []string{"--placement-resource-costs", "cpu=2"}, nil, "not name=HA/single-replica"},
		{"bad quantity", []string{"--placement-resource-costs", "cpu=two/1"}, nil, "HA cost of cpu"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := flag.NewFlagSet("t", flag.ContinueOnError)
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

package metrics

import (
	"math"
	"math/big"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/placement"
)

// FuzzQuantityMetric fuzzes the scale ceiling and usage gauges' reading of a scheduling
// document's quantity: a series exists exactly when placement can count the quantity,
// and its value is the quantity in units to within the milli-unit placement rounds to.
func FuzzQuantityMetric(f *testing.F) {
	for _, s := range []string{
		"96", "9", "94920m", "351681696Ki", "1.5Gi", "0", "", "-1", "lots",
		"9223372036854775807m", "9223372036854775808m", "1e16", "8Ei", "1e-300000000", "0.0001",
	} {
		f.Add(s)
	}
	desc := prometheus.NewDesc("fuzz_quantity", "A fuzzed quantity.", []string{labelManagementClusterResource, labelResource}, nil)
	c := &Collector{}
	f.Fuzz(func(t *testing.T, raw string) {
		ch := make(chan prometheus.Metric, 1)
		c.quantity(ch, desc, api.ResourceList{api.SwiftNIC: raw}, api.SwiftNIC, "mc")
		c.quantity(ch, desc, api.ResourceList{api.SwiftNIC: raw}, "cpu", "mc")
		close(ch)
		m, exported := <-ch
		_, err := placement.ParseQuantity(raw)
		require.Equal(t, err == nil, exported, "%q: exported only when placement can count it (%v)", raw, err)
		require.Empty(t, ch, "an absent resource exports nothing")
		if !exported {
			return
		}
		var out dto.Metric
		require.NoError(t, m.Write(&out))
		got := out.GetGauge().GetValue()

		q, err := resource.ParseQuantity(raw)
		require.NoError(t, err)
		exact, ok := new(big.Float).SetString(q.AsDec().String())
		require.True(t, ok, "%q is a decimal", q.AsDec().String())
		want, _ := exact.Float64()
		assert.InDelta(t, want, got, 0.001+math.Abs(want)*1e-12, "%q", raw)
		assert.GreaterOrEqual(t, got, 0.0, "%q", raw)
	})
}

package placement

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/hcpsched/hcpsched/internal/api"
)

// FuzzParseMilli fuzzes how the engine reads a resource of the scale ceiling and usage of
// a scheduling document. Parsing never panics and takes bounded time; an empty value is
// no quantity (only an absent resource can count as zero); an accepted quantity becomes
// ceil(q × 1000) milli-units exactly, prints back to the same count, and two accepted
// quantities keep their order, which is what capacity comparisons rely on.
func FuzzParseMilli(f *testing.F) {
	for _, s := range [][2]string{
		{"96", "9"},
		{"94920m", "3617m"},
		{"351681696Ki", "21783532Ki"},
		{"28416Mi", "1.5Gi"},
		{"0", ""},
		{"-1", "1n"},
		{"0.0001", "1e3"},
		{"9223372036854775807m", "9223372036854775808m"},
		{"-1000000000000.0000001", "1000000000000.0000001"},
		{"9223372036854775807", "1E"},
		{"8Ei", "1e-9"},
		{"+.5", "5."},
		{"1e99", "1e-99"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		ma, qa, okA := checkParseMilli(t, a)
		mb, qb, okB := checkParseMilli(t, b)
		if okA && okB && qa.Cmp(qb) <= 0 {
			assert.LessOrEqual(t, ma, mb, "%q <= %q must stay ordered in milli-units", a, b)
		}
	})
}

// checkParseMilli checks one input and returns its milli-units and quantity when it is
// accepted and not empty.
func checkParseMilli(t *testing.T, s string) (int64, resource.Quantity, bool) {
	t.Helper()
	absent, err := quantityOf(api.ResourceList{"other": s}, "r")
	require.NoError(t, err, "an absent resource counts as zero")
	assert.Zero(t, absent)
	m, err := quantityOf(api.ResourceList{"r": s}, "r")
	if s == "" {
		require.Error(t, err, "an empty value is no quantity")
		return 0, resource.Quantity{}, false
	}
	if err != nil {
		return 0, resource.Quantity{}, false
	}
	// Only parsed by apimachinery alone once ParseQuantity has vouched for the spelling:
	// some spellings it would take minutes over.
	q, err := resource.ParseQuantity(s)
	require.NoError(t, err, "%q was accepted", s)

	assert.GreaterOrEqual(t, q.Sign(), 0, "%q: amounts are not negative", s)
	upper := resource.NewMilliQuantity(m, resource.DecimalSI)
	assert.GreaterOrEqual(t, upper.Cmp(q), 0, "%q: %d milli-units are less than the quantity", s, m)
	lower := resource.NewMilliQuantity(m-1, resource.DecimalSI)
	assert.Negative(t, lower.Cmp(q), "%q: %d milli-units round up by more than one", s, m)

	back, err := parseMilli(FormatMilli(m))
	require.NoError(t, err, "%q prints as %q, which must parse", s, FormatMilli(m))
	assert.Equal(t, m, back, "%q prints as %q", s, FormatMilli(m))
	return m, q, true
}

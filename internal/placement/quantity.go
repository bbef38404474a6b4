package placement

import (
	"fmt"
	"math"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/hcpsched/hcpsched/internal/api"
)

// quantityOf is a resource of a list in milli-units. An absent resource is 0: the filters
// have already rejected the MCs where absence cannot mean that. A present but empty value
// is no quantity.
func quantityOf(l api.ResourceList, name string) (int64, error) {
	q, ok := l[name]
	if !ok {
		return 0, nil
	}
	return parseMilli(q)
}

func parseMilli(q string) (int64, error) {
	v, err := ParseQuantity(q)
	if err != nil {
		return 0, err
	}
	return v.MilliValue(), nil
}

// Bounds of ParseQuantity. No amount placement counts comes near them; they exist because
// the documents are written by other programs.
const (
	maxQuantityLength = 64
	// maxExponentDigits bounds a decimal exponent ("1e15"): apimachinery's parser and
	// Quantity arithmetic build a big number with as many digits as the exponent says, so
	// "1e-300000000" takes minutes to parse, and adding "1m" to "1e300000000" as long.
	maxExponentDigits = 2
)

var maxCountable = *resource.NewMilliQuantity(math.MaxInt64, resource.DecimalSI)

// ParseQuantity parses a quantity the engine can count: an amount, so not negative, whose
// milli-units fit an int64, spelled so that parsing it takes bounded time.
// Quantity.MilliValue silently wraps beyond that range, which would turn a huge ceiling
// into a negative one, and it also miscounts some negative quantities of many digits.
// Whoever writes quantities for placement to read (the fleet's capacity and ceiling)
// checks them with this, so that what is written is what placement can count.
func ParseQuantity(s string) (resource.Quantity, error) {
	if len(s) > maxQuantityLength {
		return resource.Quantity{}, fmt.Errorf("quantity %.*q... is longer than %d characters", maxQuantityLength, s, maxQuantityLength)
	}
	if i := strings.IndexAny(s, "eE"); i >= 0 && len(strings.TrimLeft(s[i+1:], "+-")) > maxExponentDigits {
		return resource.Quantity{}, fmt.Errorf("quantity %q: exponent has more than %d digits", s, maxExponentDigits)
	}
	q, err := resource.ParseQuantity(s)
	if err != nil {
		return resource.Quantity{}, fmt.Errorf("quantity %q: %w", s, err)
	}
	if q.Sign() < 0 {
		return resource.Quantity{}, fmt.Errorf("quantity %q is negative", s)
	}
	if q.Cmp(maxCountable) > 0 {
		return resource.Quantity{}, fmt.Errorf("quantity %q is beyond what int64 milli-units hold", s)
	}
	return q, nil
}

// FormatMilli is a count of milli-units as a Kubernetes quantity, as documents store it.
func FormatMilli(m int64) string {
	return resource.NewMilliQuantity(m, resource.DecimalSI).String()
}

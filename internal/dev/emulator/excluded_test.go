package emulator

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// With $HCPSCHED_NO_EMULATOR set (make check sets it), no emulator starts: a test that
// needs one and was not left out of the run fails, naming the convention, instead of
// quietly slowing the fast loop down.
func TestStartRefusesWhileExcluded(t *testing.T) {
	for _, tc := range []struct {
		name    string
		value   string
		refused bool
	}{
		{name: "set", value: "1", refused: true},
		{name: "empty", value: "", refused: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(EnvExcluded, tc.value)
			e, err := Start(context.Background(), Options{})
			if !tc.refused {
				require.NoError(t, err)
				require.NoError(t, e.Stop())
				return
			}
			require.ErrorIs(t, err, ErrExcluded)
			assert.ErrorContains(t, err, "Emulator")
			assert.Nil(t, e)
		})
	}
}

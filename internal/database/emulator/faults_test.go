package emulator

import (
	"net/http"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestInjectedThrottling(t *testing.T) {
	e := StartForTest(t)
	client, err := e.NewClient()
	require.NoError(t, err)
	t.Cleanup(client.Close)
	db, c := newDatabaseAndContainer(t, client, containerSpec{})
	create(t, c, doc{ID: "a", PK: "p"})
	pk := azcosmos.NewPartitionKeyString("p")
	docs := "/dbs/" + db.ID() + "/colls/" + c.ID() + "/docs"

	// Fewer 429s than the client's retries: the SDK waits and succeeds.
	require.NoError(t, e.InjectFault(ctxT(t), Fault{Status: http.StatusTooManyRequests, Count: 2, RetryAfter: 5 * time.Millisecond, Method: http.MethodGet, PathPrefix: docs}))
	_, err = c.ReadItem(ctxT(t), pk, "a", nil)
	require.NoError(t, err)

	// More than it retries: the 429 surfaces.
	require.NoError(t, e.InjectFault(ctxT(t), Fault{Status: http.StatusTooManyRequests, Count: 10, RetryAfter: time.Millisecond, PathPrefix: docs}))
	_, err = c.ReadItem(ctxT(t), pk, "a", nil)
	got := asCosmosError(t, err)
	assert.Equal(t, http.StatusTooManyRequests, got.StatusCode)
	assert.Equal(t, "TooManyRequests", got.Code)

	require.NoError(t, e.ClearFaults(ctxT(t)))
	_, err = c.ReadItem(ctxT(t), pk, "a", nil)
	require.NoError(t, err)

	// Faults only hit matching requests.
	require.NoError(t, e.InjectFault(ctxT(t), Fault{Status: http.StatusServiceUnavailable, Count: 1, Method: http.MethodDelete}))
	_, err = c.ReadItem(ctxT(t), pk, "a", nil)
	require.NoError(t, err)
	require.NoError(t, e.ClearFaults(ctxT(t)))
}

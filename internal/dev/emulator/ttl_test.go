package emulator

import (
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func exists(t *testing.T, c *azcosmos.ContainerClient, pk, id string) bool {
	_, err := c.ReadItem(ctxT(t), azcosmos.NewPartitionKeyString(pk), id, nil)
	var respErr *azcore.ResponseError
	if errors.As(err, &respErr) && respErr.StatusCode == http.StatusNotFound {
		return false
	}
	return err == nil
}

// Problem 8: documents expire ttl seconds after their last write. As in
// Cosmos, item ttl counts only in a container with defaultTtl set; -1 means
// "no default expiry", n expires items without their own ttl after n seconds.
func TestTTLExpiry(t *testing.T) {
	client := sharedClient(t)
	minusOne, one := int32(-1), int32(1)
	noDefault := newContainer(t, client, containerSpec{})
	optIn := newContainer(t, client, containerSpec{defaultTTL: &minusOne})
	byDefault := newContainer(t, client, containerSpec{defaultTTL: &one})
	ttl1, never := 1, -1

	feed := newFeedReader(optIn, azcosmos.ChangeFeedOptions{})
	feed.continuation = fromNowContinuation()
	feed.expectNothingNew(t)

	beforeWrites := time.Now()
	create(t, optIn, doc{ID: "expires", PK: "p", TTL: &ttl1})
	create(t, optIn, doc{ID: "stays", PK: "p"})
	create(t, byDefault, doc{ID: "expires", PK: "p"})
	create(t, byDefault, doc{ID: "stays", PK: "p", TTL: &never})
	create(t, noDefault, doc{ID: "ttl-ignored", PK: "p", TTL: &ttl1})

	assert.Eventually(t, func() bool {
		return !exists(t, optIn, "p", "expires") && !exists(t, byDefault, "p", "expires")
	}, 5*time.Second, 20*time.Millisecond)
	assert.GreaterOrEqual(t, time.Since(beforeWrites), 990*time.Millisecond, "expired no earlier than its ttl")

	assert.True(t, exists(t, optIn, "p", "stays"))
	assert.True(t, exists(t, byDefault, "p", "stays"), "ttl -1 overrides the container default")
	assert.True(t, exists(t, noDefault, "p", "ttl-ignored"), "no defaultTtl: item ttl is ignored")

	// Gone from queries and from the change feed too.
	got, err := runQuery(t, optIn, "SELECT * FROM c", azcosmos.NewPartitionKey(), nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"stays"}, got.ids)
	assert.Equal(t, []string{"stays"}, feed.next(t).ids())
	feed.expectNothingNew(t)
}

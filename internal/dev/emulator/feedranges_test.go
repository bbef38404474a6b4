package emulator

import (
	"encoding/json"
	"net/http"
	"sort"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Problem 4: the partition key range id is a string, so ReadFeedRanges and
// ReadManyItems (and ReadChangeFeed, see changefeed_test.go) decode it.
func TestReadFeedRanges(t *testing.T) {
	client := sharedClient(t)
	db, c := newDatabaseAndContainer(t, client, containerSpec{})

	ranges, err := c.ReadFeedRanges(ctxT(t), nil)
	require.NoError(t, err)
	assert.Equal(t, []azcosmos.FeedRange{{MinInclusive: "", MaxExclusive: "FF"}}, ranges)

	resp, err := http.Get(shared.Endpoint + "/dbs/" + db.ID() + "/colls/" + c.ID() + "/pkranges")
	require.NoError(t, err)
	defer resp.Body.Close()
	var body struct {
		PartitionKeyRanges []map[string]json.RawMessage
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
	require.Len(t, body.PartitionKeyRanges, 1)
	assert.JSONEq(t, `"0"`, string(body.PartitionKeyRanges[0]["id"]))
}

func TestReadManyItems(t *testing.T) {
	client := sharedClient(t)
	c := newContainer(t, client, containerSpec{})
	for _, d := range []doc{{ID: "1", PK: "a"}, {ID: "2", PK: "a"}, {ID: "1", PK: "b"}, {ID: "3", PK: "c"}} {
		create(t, c, d)
	}
	item := func(id, pk string) azcosmos.ItemIdentity {
		return azcosmos.ItemIdentity{ID: id, PartitionKey: azcosmos.NewPartitionKeyString(pk)}
	}
	tests := []struct {
		name  string
		items []azcosmos.ItemIdentity
		want  []string // id/pk
	}{
		{"one item", []azcosmos.ItemIdentity{item("2", "a")}, []string{"2/a"}},
		{"one partition", []azcosmos.ItemIdentity{item("1", "a"), item("2", "a")}, []string{"1/a", "2/a"}},
		{"same id in two partitions", []azcosmos.ItemIdentity{item("1", "a"), item("1", "b")}, []string{"1/a", "1/b"}},
		{"missing items are skipped", []azcosmos.ItemIdentity{item("3", "c"), item("3", "a"), item("9", "c")}, []string{"3/c"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := c.ReadManyItems(ctxT(t), tt.items, nil)
			require.NoError(t, err)
			var got []string
			for _, it := range resp.Items {
				d := decode(t, it)
				got = append(got, d.ID+"/"+d.PK)
			}
			sort.Strings(got)
			assert.Equal(t, tt.want, got)
		})
	}
}

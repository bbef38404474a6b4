package emulator

import (
	"fmt"
	"net/http"
	"sort"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type queryResult struct {
	ids   []string
	pages int
}

func runQuery(t *testing.T, c *azcosmos.ContainerClient, sql string, pk azcosmos.PartitionKey, opts *azcosmos.QueryOptions) (queryResult, error) {
	t.Helper()
	var out queryResult
	pager := c.NewQueryItemsPager(sql, pk, opts)
	for pager.More() {
		page, err := pager.NextPage(ctxT(t))
		if err != nil {
			return out, err
		}
		out.pages++
		out.ids = append(out.ids, ids(t, page.Items)...)
	}
	sort.Strings(out.ids)
	return out, nil
}

// Problem 2: a query with a partition key sees only that partition (azcosmos
// sends enablecrosspartition: true on every query, which the stock server
// took as "ignore the partition key"); without one it spans all partitions.
func TestQueryPartitionScoping(t *testing.T) {
	client := sharedClient(t)
	c := newContainer(t, client, containerSpec{})
	for _, d := range []doc{
		{ID: "1", PK: "a", ResourceType: "Microsoft.RedHatOpenShift/hcpOpenShiftClusters", ResourceID: "/subscriptions/S1/resourceGroups/rg/x"},
		{ID: "2", PK: "a", ResourceType: "microsoft.redhatopenshift/hcpopenshiftclusters/nodepools", ResourceID: "/SUBSCRIPTIONS/s1/resourcegroups/RG/y"},
		{ID: "3", PK: "b", ResourceType: "MICROSOFT.REDHATOPENSHIFT/HCPOPENSHIFTCLUSTERS", ResourceID: "/subscriptions/s2/resourceGroups/rg/z"},
		{ID: "4", PK: "b", ResourceType: "other", ResourceID: "/subscriptions/s1/other"},
	} {
		create(t, c, d)
	}
	clusters := []azcosmos.QueryParameter{{Name: "@t", Value: "microsoft.redhatopenshift/hcpopenshiftclusters"}}
	s1 := []azcosmos.QueryParameter{{Name: "@p", Value: "/subscriptions/s1/"}}
	none := azcosmos.NewPartitionKey()

	tests := []struct {
		name string
		sql  string
		pk   azcosmos.PartitionKey
		opts *azcosmos.QueryOptions
		want []string
	}{
		{"partition a", "SELECT * FROM c", azcosmos.NewPartitionKeyString("a"), nil, []string{"1", "2"}},
		{"partition b", "SELECT * FROM c", azcosmos.NewPartitionKeyString("b"), nil, []string{"3", "4"}},
		{"empty partition", "SELECT * FROM c", azcosmos.NewPartitionKeyString("nobody"), nil, nil},
		{"cross-partition", "SELECT * FROM c", none, nil, []string{"1", "2", "3", "4"}},
		{"STRINGEQUALS ignoring case, cross-partition",
			"SELECT * FROM c WHERE STRINGEQUALS(c.resourceType, @t, true)", none,
			&azcosmos.QueryOptions{QueryParameters: clusters}, []string{"1", "3"}},
		{"STRINGEQUALS ignoring case, partition b",
			"SELECT * FROM c WHERE STRINGEQUALS(c.resourceType, @t, true)", azcosmos.NewPartitionKeyString("b"),
			&azcosmos.QueryOptions{QueryParameters: clusters}, []string{"3"}},
		{"STRINGEQUALS case-sensitive",
			"SELECT * FROM c WHERE STRINGEQUALS(c.resourceType, @t)", none,
			&azcosmos.QueryOptions{QueryParameters: clusters}, nil},
		{"STARTSWITH ignoring case",
			"SELECT * FROM c WHERE STARTSWITH(c.resourceID, @p, true)", none,
			&azcosmos.QueryOptions{QueryParameters: s1}, []string{"1", "2", "4"}},
		{"STARTSWITH case-sensitive",
			"SELECT * FROM c WHERE STARTSWITH(c.resourceID, @p)", none,
			&azcosmos.QueryOptions{QueryParameters: s1}, []string{"4"}},
		{"STARTSWITH ignoring case within partition a",
			"SELECT * FROM c WHERE STARTSWITH(c.resourceID, @p, true)", azcosmos.NewPartitionKeyString("a"),
			&azcosmos.QueryOptions{QueryParameters: s1}, []string{"1", "2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := runQuery(t, c, tt.sql, tt.pk, tt.opts)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got.ids)
		})
	}

	t.Run("COUNT sees only the partition", func(t *testing.T) {
		pager := c.NewQueryItemsPager("SELECT VALUE COUNT(1) FROM c", azcosmos.NewPartitionKeyString("a"), nil)
		page, err := pager.NextPage(ctxT(t))
		require.NoError(t, err)
		require.Len(t, page.Items, 1)
		assert.Equal(t, "2", string(page.Items[0]))
	})

	t.Run("cross-partition disabled without a partition key is refused", func(t *testing.T) {
		disabled := false
		_, err := runQuery(t, c, "SELECT * FROM c", none, &azcosmos.QueryOptions{EnableCrossPartitionQuery: &disabled})
		assert.Equal(t, http.StatusBadRequest, asCosmosError(t, err).StatusCode)
	})

	t.Run("syntax error is 400", func(t *testing.T) {
		_, err := runQuery(t, c, "SELEKT * FROM c", none, nil)
		assert.Equal(t, http.StatusBadRequest, asCosmosError(t, err).StatusCode)
	})
}

// Paging with x-ms-max-item-count and x-ms-continuation, within a partition
// and across partitions, and the Cosmos default page size of 100.
func TestQueryPaging(t *testing.T) {
	client := sharedClient(t)
	c := newContainer(t, client, containerSpec{})
	var want, wantA []string
	for i := 0; i < 25; i++ {
		d := doc{ID: fmt.Sprintf("%02d", i), PK: []string{"a", "b"}[i%2]}
		create(t, c, d)
		want = append(want, d.ID)
		if d.PK == "a" {
			wantA = append(wantA, d.ID)
		}
	}
	sort.Strings(want)
	sort.Strings(wantA)

	tests := []struct {
		name      string
		pk        azcosmos.PartitionKey
		pageSize  int32
		want      []string
		wantPages int
	}{
		{"cross-partition, pages of 10", azcosmos.NewPartitionKey(), 10, want, 3},
		{"cross-partition, pages of 5", azcosmos.NewPartitionKey(), 5, want, 5},
		{"partition a, pages of 4", azcosmos.NewPartitionKeyString("a"), 4, wantA, 4},
		{"partition a, one page", azcosmos.NewPartitionKeyString("a"), 100, wantA, 1},
		{"unlimited (-1)", azcosmos.NewPartitionKey(), -1, want, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := runQuery(t, c, `SELECT * FROM c WHERE c["value"] = 0`, tt.pk, &azcosmos.QueryOptions{PageSizeHint: tt.pageSize})
			require.NoError(t, err)
			assert.Equal(t, tt.want, got.ids)
			assert.Equal(t, tt.wantPages, got.pages)
		})
	}

	t.Run("default page size is 100", func(t *testing.T) {
		for i := 25; i < 150; i++ {
			create(t, c, doc{ID: fmt.Sprintf("%03d", i), PK: "c"})
		}
		pager := c.NewQueryItemsPager("SELECT * FROM c", azcosmos.NewPartitionKey(), nil)
		page, err := pager.NextPage(ctxT(t))
		require.NoError(t, err)
		assert.Len(t, page.Items, 100)
		assert.True(t, pager.More())
		page, err = pager.NextPage(ctxT(t))
		require.NoError(t, err)
		assert.Len(t, page.Items, 50)
		assert.False(t, pager.More())
	})
}

// Cosmos compares values of different types, and two objects or arrays with !=, as
// undefined, which a WHERE treats as false, so NOT does not turn it true either
// (https://learn.microsoft.com/azure/cosmos-db/nosql/query/equality-comparison-operators).
// The stock engine answered false for = and true for != across types. Patch conditions
// ("FROM c WHERE c.x != 'y'") are evaluated by the same engine.
func TestQueryComparisonAcrossTypesIsUndefined(t *testing.T) {
	client := sharedClient(t)
	c := newContainer(t, client, containerSpec{})
	pk := azcosmos.NewPartitionKeyString("p")
	for _, body := range []string{
		`{"id":"str","pk":"p","v":"a","o":{"x":1},"l":[1]}`,
		`{"id":"num","pk":"p","v":5,"o":{"x":2},"l":[2]}`,
		`{"id":"null","pk":"p","v":null}`,
		`{"id":"missing","pk":"p"}`,
	} {
		_, err := c.CreateItem(ctxT(t), pk, []byte(body), nil)
		require.NoError(t, err)
	}
	tests := []struct {
		sql  string
		want []string
	}{
		{"SELECT * FROM c WHERE c.v = 'a'", []string{"str"}},
		{"SELECT * FROM c WHERE c.v != 'b'", []string{"str"}},
		{"SELECT * FROM c WHERE c.v <> 'b'", []string{"str"}},
		{"SELECT * FROM c WHERE NOT (c.v = 'b')", []string{"str"}},
		{"SELECT * FROM c WHERE c.v != 4", []string{"num"}},
		{"SELECT * FROM c WHERE c.v = null", []string{"null"}},
		{"SELECT * FROM c WHERE c.v != null", nil},
		{"SELECT * FROM c WHERE c.o = {'x': 1}", []string{"str"}},
		{"SELECT * FROM c WHERE NOT (c.o = {'x': 1})", []string{"num"}},
		{"SELECT * FROM c WHERE c.o != {'x': 1}", nil},
		{"SELECT * FROM c WHERE c.l != [1]", nil},
	}
	for _, tt := range tests {
		t.Run(tt.sql, func(t *testing.T) {
			got, err := runQuery(t, c, tt.sql, pk, nil)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got.ids)
		})
	}
}

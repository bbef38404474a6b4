package informers_test

import (
	"context"
	"encoding/json"
	"sort"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/tools/cache"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/database/memory"
	"github.com/hcpsched/hcpsched/internal/dev/fixtures/arohcp"
	"github.com/hcpsched/hcpsched/internal/informers"
)

// What a cache keeps of a document follows its informer's Documents mode, for listed
// documents and for those the change feed brings alike: lean caches hold the declared
// fields only, full caches every field.
func TestCachesKeepWhatTheirDocumentsModeSays(t *testing.T) {
	const fixture = "hcpcluster-accepted-with-tags.json"
	tests := []struct {
		name        string
		factory     informers.Documents
		informer    informers.Documents // 0: the factory's
		wantUnknown bool
	}{
		{"lean factory", informers.LeanDocuments, 0, false},
		{"full factory", informers.FullDocuments, 0, true},
		{"full informer on a lean factory", informers.LeanDocuments, informers.FullDocuments, true},
		{"lean informer on a full factory", informers.FullDocuments, informers.LeanDocuments, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			t.Cleanup(cancel)
			store := memory.New()
			c := store.Container(api.ResourcesContainer)
			data := arohcp.Get(fixture)
			id, resourceID, _ := api.Identify(data)
			pk := "6b690bec-0c16-4ecb-8f67-781caf40bba7"
			_, err := c.Create(ctx, pk, data) // listed
			require.NoError(t, err)

			factory, err := informers.NewFactory(store, informers.Options{PollInterval: 20 * time.Millisecond, RelistPeriod: time.Hour, Documents: tt.factory, Registerer: prometheus.NewRegistry()})
			require.NoError(t, err)
			var inf *informers.Informer[api.ClusterProperties]
			if tt.informer != 0 {
				inf = informers.RegisterDocuments[api.ClusterProperties](factory, api.ResourcesContainer, api.ClusterResourceType, nil, tt.informer)
			} else {
				inf = informers.NewCaches(factory).Clusters()
			}
			want := tt.factory
			if tt.informer != 0 {
				want = tt.informer
			}
			assert.Equal(t, want, inf.Documents())
			factory.Start(ctx)
			require.True(t, factory.WaitForCacheSync(ctx))

			check := func(what string, stored []byte) {
				t.Helper()
				cached, err := inf.Lister().Get(resourceID)
				require.NoError(t, err, what)
				_, hasRID := cached.Unknown("_rid")
				_, hasTags := cached.Properties.Unknown("tags")
				assert.Equal(t, tt.wantUnknown, hasRID, "%s: envelope unknown fields", what)
				assert.Equal(t, tt.wantUnknown, hasTags, "%s: properties unknown fields", what)
				if stored == nil {
					return // listed, or replayed by the feed: either may be cached
				}
				decode := api.Decode[api.ClusterProperties]
				if !tt.wantUnknown {
					decode = api.DecodeLean[api.ClusterProperties]
				}
				expected, err := decode(stored)
				require.NoError(t, err)
				assert.Equal(t, expected, cached, "%s: the cache holds the stored document as its mode decodes it", what)
			}
			listed, err := c.Get(ctx, pk, id)
			require.NoError(t, err)
			check("listed", nil)

			// A foreign write through the feed: the feed's item carries _lsn.
			var doc map[string]any
			require.NoError(t, json.Unmarshal(listed.Body, &doc))
			doc["properties"].(map[string]any)["location"] = "elsewhere"
			body, err := json.Marshal(doc)
			require.NoError(t, err)
			written, err := c.Replace(ctx, pk, id, body, listed.ETag)
			require.NoError(t, err)
			require.Eventually(t, func() bool {
				d, err := inf.Lister().Get(resourceID)
				return err == nil && d.ETag == written.ETag
			}, 5*time.Second, 5*time.Millisecond)
			page, err := c.ChangeFeed(ctx, database.ChangeFeedOptions{Start: database.FromBeginning})
			require.NoError(t, err)
			require.NotEmpty(t, page.Items)
			fed := page.Items[len(page.Items)-1]
			require.Equal(t, id, fed.ID)
			check("fed", fed.Body)
			cached, err := inf.Lister().Get(resourceID)
			require.NoError(t, err)
			assert.Equal(t, "elsewhere", cached.Properties.Location)
			assert.Positive(t, cached.LSN, "the gate orders feed items by _lsn in every mode")
		})
	}
}

func TestRegisteringOneTypeInTwoModesPanics(t *testing.T) {
	factory, err := informers.NewFactory(memory.New(), informers.Options{Documents: informers.LeanDocuments, Registerer: prometheus.NewRegistry()})
	require.NoError(t, err)
	lean := informers.NewCaches(factory).Clusters()
	assert.Equal(t, informers.LeanDocuments, lean.Documents())
	assert.NotPanics(t, func() {
		informers.RegisterDocuments[api.ClusterProperties](factory, api.ResourcesContainer, api.ClusterResourceType, nil, informers.LeanDocuments)
	})
	assert.PanicsWithValue(t, "informers: Resources|microsoft.redhatopenshift/hcpopenshiftclusters registered with lean documents, asked for full", func() {
		informers.RegisterDocuments[api.ClusterProperties](factory, api.ResourcesContainer, api.ClusterResourceType, nil, informers.FullDocuments)
	})
}

func TestUnknownDocumentsModeIsRefused(t *testing.T) {
	_, err := informers.NewFactory(memory.New(), informers.Options{Documents: informers.Documents(9)})
	require.ErrorContains(t, err, "unknown documents mode Documents(9)")
}

// Each cache keeps only the indexes something reads: an index costs a copy of each
// indexed value and a set per value, per cached document.
func TestCachesIndexOnlyWhatIsRead(t *testing.T) {
	factory, err := informers.NewFactory(memory.New(), informers.Options{Registerer: prometheus.NewRegistry()})
	require.NoError(t, err)
	caches := informers.NewCaches(factory)
	indexes := func(inf interface{ GetIndexer() cache.Indexer }) []string {
		var names []string
		for name := range inf.GetIndexer().GetIndexers() {
			names = append(names, name)
		}
		sort.Strings(names)
		return names
	}
	assert.Equal(t, []string{informers.IndexBySubscription}, indexes(caches.Clusters()))
	assert.Equal(t, []string{informers.IndexByCluster, informers.IndexByIntendedManagementCluster}, indexes(caches.ServiceProviderClusters()))
	assert.Equal(t, []string{informers.IndexByProvisionShard}, indexes(caches.ManagementClusters()))
	assert.Equal(t, []string{informers.IndexByPendingCluster}, indexes(caches.ManagementClusterSchedulings()))
}

// Caches keep lean documents unless a caller asks for full ones.
func TestCachesAreLeanByDefault(t *testing.T) {
	assert.Equal(t, informers.LeanDocuments, informers.DefaultDocuments)
	factory, err := informers.NewFactory(memory.New(), informers.Options{Registerer: prometheus.NewRegistry()})
	require.NoError(t, err)
	caches := informers.NewCaches(factory)
	assert.Equal(t, informers.LeanDocuments, caches.Clusters().Documents())
	assert.Equal(t, informers.LeanDocuments, caches.ManagementClusterSchedulings().Documents())
}

package controllertest

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/informers"
)

// CachedType is one informer WaitForCaches watches: the documents of one type in one
// container, and what the informer's lister holds of each.
type CachedType struct {
	container    string
	resourceType string
	etag         func(resourceID string) string
}

// Cached names inf as the cache of resourceType in container.
func Cached[P any](inf *informers.Informer[P], container, resourceType string) CachedType {
	lister := inf.Lister()
	return CachedType{container: container, resourceType: resourceType, etag: func(rid string) string {
		d, err := lister.Get(rid)
		if err != nil {
			return ""
		}
		return d.ETag
	}}
}

// WaitForCaches waits until each cache's lister holds the stored version of every
// document of its type: a write the test made past the caches (ReplaceStored, a lost
// race) has reached them, so the next reconcile decides from it.
func (k *Kit) WaitForCaches(t testing.TB, caches ...CachedType) {
	t.Helper()
	containers := make([]database.Container, len(caches))
	for i, c := range caches {
		containers[i] = k.own(t, c.container)
	}
	require.Eventually(t, func() bool {
		for i, c := range caches {
			for item, err := range containers[i].List(context.Background(), database.ListOptions{ResourceType: c.resourceType}) {
				if err != nil {
					return false
				}
				_, rid, _ := api.Identify(item.Body)
				if c.etag(rid) != item.ETag {
					return false
				}
			}
		}
		return true
	}, WaitFor, Tick, "the caches did not catch up with the store")
}

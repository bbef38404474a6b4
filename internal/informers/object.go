// Package informers feeds client-go SharedIndexInformers from Cosmos change feeds: one
// pump per container reads the feed and fans items out by resourceType to the informers
// of each registered type. Controllers then read only from these caches.
package informers

import (
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	"github.com/hcpsched/hcpsched/internal/api"
)

// Object carries one document through client-go's caches. Its name is the lowercased
// resource ID (the cache key) and its ResourceVersion is the document's _etag, which
// Cosmos changes on every write whoever makes it, so a relist that finds nothing new is
// a no-op for event handlers and a foreign write is an update.
type Object[P any] struct {
	metav1.ObjectMeta
	Doc *api.Document[P]
	// version orders this write against others of the document (see compare), for the
	// change-feed gate and the write-through overlay alike.
	version version
}

func newObject[P any](d *api.Document[P], resourceID *api.ResourceID) *Object[P] {
	return &Object[P]{
		ObjectMeta: metav1.ObjectMeta{
			Name:            resourceID.Key(),
			ResourceVersion: d.ETag,
		},
		Doc:     d,
		version: versionOfDocument(d),
	}
}

func (o *Object[P]) storedVersion() version { return o.version }

func (o *Object[P]) GetObjectKind() schema.ObjectKind { return schema.EmptyObjectKind }

func (o *Object[P]) DeepCopyObject() runtime.Object {
	return &Object[P]{ObjectMeta: *o.ObjectMeta.DeepCopy(), Doc: o.Doc.DeepCopy(), version: o.version}
}

// KeyOf is the cache and workqueue key of a resource ID.
func KeyOf(resourceID string) string { return strings.ToLower(resourceID) }

// DocumentOf unwraps what a cache or an event handler holds, including the tombstone a
// handler receives for a delete it observed late.
func DocumentOf[P any](obj any) (*api.Document[P], bool) {
	switch o := obj.(type) {
	case *Object[P]:
		return o.Doc, true
	case cache.DeletedFinalStateUnknown:
		return DocumentOf[P](o.Obj)
	}
	return nil, false
}

// Encoded returns the document as it would be stored; tests use it to prove that no
// controller changed a cached object in place.
func (o *Object[P]) Encoded() ([]byte, error) { return api.Encode(o.Doc) }

// ResourceID is the document's resource ID as stored.
func (o *Object[P]) ResourceID() string {
	if o.Doc.ResourceID != "" {
		return o.Doc.ResourceID
	}
	if m := o.Doc.Metadata(); m != nil {
		return m.ResourceID
	}
	return o.Name
}

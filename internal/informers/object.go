// Package informers feeds client-go SharedIndexInformers from Cosmos change feeds: one
// pump per container reads the feed and fans items out by resourceType to the informers
// of each registered type. Controllers then read only from these caches.
package informers

import (
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"github.com/hcpsched/hcpsched/internal/api"
)

// Object carries one document through client-go's caches. Its name is the lowercased
// resource ID (the cache key) and its resource version is the document's _etag, which
// Cosmos changes on every write whoever makes it, so a relist that finds nothing new is
// a no-op for event handlers and a foreign write is an update.
//
// It implements metav1.Object itself rather than embedding metav1.ObjectMeta: the caches
// read only the name and the resource version, and ObjectMeta would add about 250 bytes
// to every cached document. The other metadata reads as empty and ignores writes.
type Object[P any] struct {
	// Name is the cache key, the lowercased resource ID.
	Name string
	Doc  *api.Document[P]
}

var _ metav1.Object = (*Object[api.RawProperties])(nil)

func newObject[P any](d *api.Document[P], resourceID *api.ResourceID) *Object[P] {
	return &Object[P]{Name: resourceID.Key(), Doc: d}
}

// storedVersion orders this write against others of the document (see compare), for
// the change-feed gate and the write-through overlay alike. It is read from the document
// each time rather than kept beside it: every cached document would carry a copy.
func (o *Object[P]) storedVersion() version { return versionOfDocument(o.Doc) }

func (o *Object[P]) GetObjectKind() schema.ObjectKind { return schema.EmptyObjectKind }

func (o *Object[P]) DeepCopyObject() runtime.Object {
	return &Object[P]{Name: o.Name, Doc: o.Doc.DeepCopy()}
}

func (o *Object[P]) GetName() string      { return o.Name }
func (o *Object[P]) SetName(name string)  { o.Name = name }
func (o *Object[P]) GetNamespace() string { return "" }
func (o *Object[P]) SetNamespace(string)  {}

// GetResourceVersion is the document's _etag.
func (o *Object[P]) GetResourceVersion() string {
	if o.Doc == nil {
		return ""
	}
	return o.Doc.ETag
}
func (o *Object[P]) SetResourceVersion(string)                     {}
func (o *Object[P]) GetGenerateName() string                       { return "" }
func (o *Object[P]) SetGenerateName(string)                        {}
func (o *Object[P]) GetUID() types.UID                             { return "" }
func (o *Object[P]) SetUID(types.UID)                              {}
func (o *Object[P]) GetGeneration() int64                          { return 0 }
func (o *Object[P]) SetGeneration(int64)                           {}
func (o *Object[P]) GetSelfLink() string                           { return "" }
func (o *Object[P]) SetSelfLink(string)                            {}
func (o *Object[P]) GetCreationTimestamp() metav1.Time             { return metav1.Time{} }
func (o *Object[P]) SetCreationTimestamp(metav1.Time)              {}
func (o *Object[P]) GetDeletionTimestamp() *metav1.Time            { return nil }
func (o *Object[P]) SetDeletionTimestamp(*metav1.Time)             {}
func (o *Object[P]) GetDeletionGracePeriodSeconds() *int64         { return nil }
func (o *Object[P]) SetDeletionGracePeriodSeconds(*int64)          {}
func (o *Object[P]) GetLabels() map[string]string                  { return nil }
func (o *Object[P]) SetLabels(map[string]string)                   {}
func (o *Object[P]) GetAnnotations() map[string]string             { return nil }
func (o *Object[P]) SetAnnotations(map[string]string)              {}
func (o *Object[P]) GetFinalizers() []string                       { return nil }
func (o *Object[P]) SetFinalizers([]string)                        {}
func (o *Object[P]) GetOwnerReferences() []metav1.OwnerReference   { return nil }
func (o *Object[P]) SetOwnerReferences([]metav1.OwnerReference)    {}
func (o *Object[P]) GetManagedFields() []metav1.ManagedFieldsEntry { return nil }
func (o *Object[P]) SetManagedFields([]metav1.ManagedFieldsEntry)  {}

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

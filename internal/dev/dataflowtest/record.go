// Package dataflowtest checks docs/cosmos-data-flow.md against the code: during a
// package's controller tests it records the JSON field paths every controller changes in
// Cosmos, and afterwards fails when a changed path is missing from that controller's Write
// rows. A write is credited to the controller named in its ctx (controller.WithName, which
// every reconcile's ctx carries), so where the code that writes lives does not matter.
package dataflowtest

import (
	"context"
	"slices"
	"strings"
	"sync"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/controller"
	"github.com/hcpsched/hcpsched/internal/database"
	"github.com/hcpsched/hcpsched/internal/dev/storetap"
)

// Write is one field a controller changed in one type of document.
type Write struct {
	// Controller is the name of the controller that wrote, as its ctx carried it (e.g.
	// Placement, LifecycleController); "" for a write made outside any controller.
	Controller string
	// Type is the document type as the data-flow document names it, e.g.
	// ServiceProviderCluster.
	Type string
	// Path is the changed field, relative to properties unless it is an envelope field.
	Path string
}

// Recorder collects Writes from any number of goroutines.
type Recorder struct {
	mu     sync.Mutex
	writes map[Write]bool
}

// Default is the recorder Wrap and WrapStore record into; a package's TestMain checks it
// after the tests.
var Default = &Recorder{}

// Add records w.
func (r *Recorder) Add(w Write) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.writes == nil {
		r.writes = map[Write]bool{}
	}
	r.writes[w] = true
}

// Writes returns every recorded Write, sorted.
func (r *Recorder) Writes() []Write {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]Write, 0, len(r.writes))
	for w := range r.writes {
		out = append(out, w)
	}
	slices.SortFunc(out, func(a, b Write) int {
		return strings.Compare(a.Controller+"\x00"+a.Type+"\x00"+a.Path, b.Controller+"\x00"+b.Type+"\x00"+b.Path)
	})
	return out
}

// WrapStore returns s with every container it opens wrapped by Wrap.
func WrapStore(s database.Store) database.Store { return store{Store: s} }

type store struct{ database.Store }

func (s store) Container(name string) database.Container { return Wrap(s.Store.Container(name)) }

// Wrap returns c recording into Default every field that a successful Create, Replace,
// Patch or Batch changes, credited to the controller named in the write's ctx. A write whose ctx
// names no controller is recorded as such, and Check reports it: wrap only what
// controllers write through, and seed tests through the unwrapped container.
func Wrap(c database.Container) database.Container {
	if w, ok := c.(*container); ok {
		return w
	}
	return &container{Container: c, rec: Default}
}

type container struct {
	database.Container
	rec *Recorder
}

func (c *container) Create(ctx context.Context, pk string, body []byte) (database.Item, error) {
	item, err := c.Container.Create(ctx, pk, body)
	if err == nil {
		c.record(ctx, nil, body)
	}
	return item, err
}

func (c *container) Replace(ctx context.Context, pk, id string, body []byte, ifMatch string) (database.Item, error) {
	// The stored version is read first; only when it is the one the Replace was guarded
	// on is it certainly what the Replace overwrote.
	before, getErr := c.Container.Get(ctx, pk, id)
	item, err := c.Container.Replace(ctx, pk, id, body, ifMatch)
	if err == nil && getErr == nil && before.ETag == ifMatch {
		c.record(ctx, before.Body, body)
	}
	return item, err
}

func (c *container) Patch(ctx context.Context, pk, id string, ops []database.PatchOperation, opts database.PatchOptions) (database.Item, error) {
	// As for Replace: the version read first is what the patch changed only when the
	// patch was guarded on it (or, unguarded, nothing else wrote in between; tests that
	// record do not race foreign writers against unguarded patches).
	before, getErr := c.Container.Get(ctx, pk, id)
	stored, answer, err := storetap.Patch(ctx, c.Container, pk, id, ops, opts)
	if err == nil && getErr == nil && (opts.IfMatch == "" || before.ETag == opts.IfMatch) {
		c.record(ctx, before.Body, stored.Body)
	}
	return answer, err
}

func (c *container) Batch(ctx context.Context, pk string, ops []database.BatchOperation) ([]database.BatchResult, error) {
	befores := make([][]byte, len(ops))
	for i, op := range ops {
		if op.Kind == database.BatchReplace {
			if item, err := c.Container.Get(ctx, pk, op.ID); err == nil && item.ETag == op.IfMatch {
				befores[i] = item.Body
			}
		}
	}
	results, err := c.Container.Batch(ctx, pk, ops)
	if err == nil {
		for i, op := range ops {
			switch {
			case op.Kind == database.BatchCreate:
				c.record(ctx, nil, op.Body)
			case op.Kind == database.BatchReplace && befores[i] != nil:
				c.record(ctx, befores[i], op.Body)
			}
		}
	}
	return results, err
}

func (c *container) record(ctx context.Context, before, after []byte) {
	name, _ := controller.NameFrom(ctx)
	_, rid, rtype := api.Identify(after)
	typ := TypeName(rtype, rid)
	paths, err := Diff(before, after)
	if err != nil {
		// An undecodable body fails the check rather than passing silently.
		c.rec.Add(Write{Controller: name, Type: typ, Path: "<undecodable: " + err.Error() + ">"})
		return
	}
	for _, p := range paths {
		c.rec.Add(Write{Controller: name, Type: typ, Path: p})
	}
}

// typeNames maps the last segment of a resource type to the data-flow document's name.
var typeNames = map[string]string{
	"hcpopenshiftclusters":    "HCPOpenShiftCluster",
	"serviceproviderclusters": "ServiceProviderCluster",
	"stamps":                  "Stamp",
	"managementclusters":      "ManagementCluster",
	"scheduling":              "ManagementClusterScheduling",
	"readdesires":             "ReadDesire",
}

// TypeName is the data-flow document's name for a document of resourceType, falling back
// to the type in resourceID when the envelope has none.
func TypeName(resourceType, resourceID string) string {
	if resourceType == "" {
		if rid, err := api.ParseResourceID(resourceID); err == nil {
			resourceType = rid.ResourceType()
		}
	}
	last := strings.ToLower(resourceType[strings.LastIndex(resourceType, "/")+1:])
	if name, ok := typeNames[last]; ok {
		return name
	}
	return resourceType
}

// Package docwrite is the one way either binary changes a stored document: a patch of
// the owned fields a change of a copy of the cached document touched, under If-Match on
// the cached etag, skipped when nothing changed, confined to the fields the caller says
// it owns, and written through to the caller's cache at once. How the owned fields reach
// the store (a partial-document Patch, or a whole-document Replace of a fresh read when
// the change is too large for one patch) is this package's business alone.
package docwrite

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"reflect"
	"slices"
	"strings"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/database"
)

// Outcome is what a write did.
type Outcome int

const (
	// Unchanged: the change left the document as it was; nothing was sent.
	Unchanged Outcome = iota
	// Written: the change is stored, and is in the cache.
	Written
	// LostRace: the document changed or went away since it was cached (412 or 404 on a
	// replace, 409 on a create); nothing was written. The change feed brings the newer
	// state, and the caller decides again on that instead of forcing its write.
	LostRace
)

func (o Outcome) String() string {
	switch o {
	case Unchanged:
		return "unchanged"
	case Written:
		return "written"
	case LostRace:
		return "lost race"
	}
	return fmt.Sprintf("Outcome(%d)", int(o))
}

// Cache is the write-through side of an informer: a stored document is visible to this
// process's listers as soon as the write returns, not a change-feed poll later.
type Cache[P any] interface {
	Assume(*api.Document[P])
}

// NoCache is the cache of a writer whose process has no informer for the documents it
// writes: the kube-applier containers, which only ever get point reads, and the
// register command, which runs no informers. Nothing can read a stale copy there.
type NoCache[P any] struct{}

// Assume does nothing: there is no cache to write through to.
func (NoCache[P]) Assume(*api.Document[P]) {}

// Writer writes one document type to one container and through to its cache.
type Writer[P any] struct {
	container database.Container
	cache     Cache[P]
}

// New returns the writer of documents of type P in c, cached in cache.
func New[P any](c database.Container, cache Cache[P]) Writer[P] {
	return Writer[P]{container: c, cache: cache}
}

// Container is where the writer writes.
func (w Writer[P]) Container() database.Container { return w.container }

// Fields names the parts of a document a writer owns, as dotted JSON paths from the
// document's root ("properties.spec.schedulingPolicy", "properties.status"). A path
// owns everything beneath it; "<list>[<type>]" owns one condition of a condition list
// (see conditions.go).
type Fields []string

// Result is what Update did, and the document as stored when it wrote.
type Result[P any] struct {
	Outcome Outcome
	// Stored is the document as stored after a write (for a patch, the changed copy at
	// the etag the store answered: see patched); nil otherwise.
	Stored *api.Document[P]
}

// Update applies change to a copy of cached, the document as this process's cache holds
// it, and writes the difference back as a Cosmos patch under If-Match on cached's etag,
// unless the copy encodes to the same bytes (the codec keeps the original bytes of every
// unchanged value, so equal bytes mean nothing changed and a write would only wake every
// reader of the document).
//
// change may set only the owned fields: a change anywhere else is an error and nothing
// is written, so a controller cannot drop or rewrite a field another component owns.
// cached itself is never modified.
//
// The patch sets, adds or removes only the changed leaves of the owned fields (see
// patch.go), plus cosmosMetadata.etag (cached's etag) and cosmosMetadata.instanceVersion
// (one more than cached's), the stamps api.Document.PrepareReplace gives a Replace; no
// other field is sent, so a field hcpsched does not know, or does not keep in its cache,
// is never rewritten. A change that needs more operations than one patch may hold is
// written the old way (see replaceFresh): change may therefore run twice, on cached and
// on a fresh read of the same version, and must depend on nothing but its input.
func (w Writer[P]) Update(ctx context.Context, cached *api.Document[P], owned Fields, change func(*api.Document[P]) error) (Result[P], error) {
	updated, before, after, err := applyChange(cached, owned, change)
	if err != nil {
		return Result[P]{}, err
	}
	if updated == nil {
		return Result[P]{Outcome: Unchanged}, nil
	}
	if cached.ETag == "" {
		return Result[P]{}, &database.OpError{Op: "patch", Container: w.container.Name(), ID: cached.ID, PartitionKey: cached.PartitionKey, Kind: database.ErrIfMatchRequired}
	}
	ops, err := diffNodes(before, after, owned, reflect.TypeFor[api.Document[P]]())
	if errors.Is(err, ErrNotOwned) {
		return Result[P]{}, fmt.Errorf("writing %s: %w", cached.ResourceID, err)
	}
	if err == nil && len(ops) == 0 {
		// The encodings differ only in what means the same (a null member that is now
		// absent): nothing to write.
		return Result[P]{Outcome: Unchanged}, nil
	}
	ops = append(ops, metadataOps(cached)...)
	if err != nil || len(ops) > database.MaxPatchOperations {
		return w.replaceFresh(ctx, cached, owned, change)
	}
	item, err := w.container.Patch(ctx, cached.PartitionKey, cached.ID, ops, database.PatchOptions{IfMatch: cached.ETag, Minimal: true})
	switch {
	case errors.Is(err, database.ErrPreconditionFailed), errors.Is(err, database.ErrNotFound):
		return Result[P]{Outcome: LostRace}, nil
	case err != nil:
		return Result[P]{}, fmt.Errorf("patching %s in %s: %w", cached.ResourceID, w.container.Name(), err)
	}
	stored := patched(updated, item.ETag)
	w.cache.Assume(stored)
	return Result[P]{Outcome: Written, Stored: stored}, nil
}

// patched is the document a patch under If-Match on the copy's etag stored: the store
// held exactly the version the copy was made from, so what it holds now is the changed
// copy with the stamps metadataOps sent, at the etag the store answered. The patch asks
// for no document back (PatchOptions.Minimal): reading and decoding one was about an
// eighth of what the backend allocates, for a copy this process already has. The copy is
// of the cached document, so it keeps what the cache keeps (a lean informer's fields)
// and nothing else, as the change feed's copy will.
//
// _ts stays the cached version's, a lower bound of the write's own (the store does not
// say it without the document): the caches order versions by _ts, and a lower bound
// never makes a later write look older than this one (see informers' version). _lsn,
// which only change-feed items carry, is cleared as in any write's answer.
func patched[P any](updated *api.Document[P], etag string) *api.Document[P] {
	updated.PrepareReplace()
	updated.ETag = etag
	updated.LSN = 0
	return updated
}

// Refresh point-reads the stored version of cached after a write of it lost the race,
// and makes it visible to the cache at once, the way Update does with its own writes:
// the writer that changed it may be another process, whose write reaches the cache only
// with a later change-feed poll, and until then every decision from the cached copy is
// refused by its If-Match again. The read is what the store holds, so the cache may take
// it as it takes a write's answer. Nothing is assumed when the document is gone or still
// the cached version; deciding what the fresh copy means is the caller's next pass.
func (w Writer[P]) Refresh(ctx context.Context, cached *api.Document[P]) error {
	item, err := w.container.Get(ctx, cached.PartitionKey, cached.ID)
	switch {
	case errors.Is(err, database.ErrNotFound):
		return nil
	case err != nil:
		return fmt.Errorf("reading %s from %s after a lost race: %w", cached.ResourceID, w.container.Name(), err)
	}
	if item.ETag == cached.ETag {
		return nil
	}
	stored, err := w.decodeStored(item)
	if err != nil {
		return fmt.Errorf("decoding %s as read: %w", cached.ResourceID, err)
	}
	w.cache.Assume(stored)
	return nil
}

// StoredDecoder is a cache that keeps less than the whole document (a lean informer):
// the document the store returns after a patch is decoded the way the cache decodes its
// change feed, so that the write-through copy holds what the feed's copy will hold, and
// costs no more to decode or to keep.
type StoredDecoder[P any] interface {
	DecodeStored(body []byte) (*api.Document[P], error)
}

// decodeStored decodes what the store returned after a patch for the cache.
func (w Writer[P]) decodeStored(item database.Item) (*api.Document[P], error) {
	if d, ok := w.cache.(StoredDecoder[P]); ok {
		return d.DecodeStored(item.Body)
	}
	return database.DecodeItem[P](item)
}

// metadataOps stamps a patch the way PrepareReplace stamps a Replace: cosmosMetadata.etag
// is the etag the patch is guarded by, instanceVersion one more than cached's, and a
// resourceID or partitionKey the metadata lacks is filled in from the envelope. A
// document without cosmosMetadata gets the whole object.
func metadataOps[P any](cached *api.Document[P]) []database.PatchOperation {
	const path = "/properties/cosmosMetadata"
	next := cached.InstanceVersion() + 1
	m := cached.Metadata()
	if m == nil {
		meta := api.CosmosMetadata{ResourceID: cached.ResourceID, ETag: cached.ETag, InstanceVersion: next, PartitionKey: cached.PartitionKey}
		return []database.PatchOperation{{Kind: database.PatchSet, Path: path, Value: mustJSON(meta)}}
	}
	ops := []database.PatchOperation{
		{Kind: database.PatchSet, Path: path + "/etag", Value: mustJSON(cached.ETag)},
		{Kind: database.PatchSet, Path: path + "/instanceVersion", Value: mustJSON(next)},
	}
	if m.ResourceID == "" && cached.ResourceID != "" {
		ops = append(ops, database.PatchOperation{Kind: database.PatchSet, Path: path + "/resourceID", Value: mustJSON(cached.ResourceID)})
	}
	if m.PartitionKey == "" && cached.PartitionKey != "" {
		ops = append(ops, database.PatchOperation{Kind: database.PatchSet, Path: path + "/partitionKey", Value: mustJSON(cached.PartitionKey)})
	}
	return ops
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("docwrite: encoding %T cannot fail: %v", v, err))
	}
	return b
}

// replaceFresh writes a change too large for one patch: it point-reads the whole
// document (decoded with every field, known or not), refuses it as a lost race unless it
// is the version cached was (so change decides on the same input), applies change to it
// and replaces it under If-Match. It costs a read more than a patch, and only changes
// of many owned leaves at once take it.
func (w Writer[P]) replaceFresh(ctx context.Context, cached *api.Document[P], owned Fields, change func(*api.Document[P]) error) (Result[P], error) {
	item, err := w.container.Get(ctx, cached.PartitionKey, cached.ID)
	switch {
	case errors.Is(err, database.ErrNotFound):
		return Result[P]{Outcome: LostRace}, nil
	case err != nil:
		return Result[P]{}, fmt.Errorf("reading %s from %s to replace it: %w", cached.ResourceID, w.container.Name(), err)
	}
	if item.ETag != cached.ETag {
		return Result[P]{Outcome: LostRace}, nil
	}
	fresh, err := database.DecodeItem[P](item)
	if err != nil {
		return Result[P]{}, fmt.Errorf("decoding %s as read: %w", cached.ResourceID, err)
	}
	updated, _, _, err := applyChange(fresh, owned, change)
	if err != nil {
		return Result[P]{}, err
	}
	if updated == nil {
		return Result[P]{Outcome: Unchanged}, nil
	}
	item, err = database.ReplaceItem(ctx, w.container, updated)
	switch {
	case errors.Is(err, database.ErrPreconditionFailed), errors.Is(err, database.ErrNotFound):
		return Result[P]{Outcome: LostRace}, nil
	case err != nil:
		return Result[P]{}, fmt.Errorf("replacing %s in %s: %w", cached.ResourceID, w.container.Name(), err)
	}
	// The fresh copy holds every field; the cache is given what it keeps of the answer.
	stored, err := w.decodeStored(item)
	if err != nil {
		return Result[P]{}, fmt.Errorf("decoding %s as replaced: %w", cached.ResourceID, err)
	}
	w.cache.Assume(stored)
	return Result[P]{Outcome: Written, Stored: stored}, nil
}

// applyChange runs change on a copy of doc and returns the copy with the encodings of
// doc and of the copy, as trees whose members are split out only where they are compared
// (the differ reads the same trees). A nil copy and no error mean the change left the
// document as it was (the codec keeps the original bytes of every unchanged value, so
// equal bytes mean nothing changed); a change outside owned is ErrNotOwned. doc itself
// is never modified.
func applyChange[P any](doc *api.Document[P], owned Fields, change func(*api.Document[P]) error) (updated *api.Document[P], before, after *node, err error) {
	updated = doc.DeepCopy()
	if err := change(updated); err != nil {
		return nil, nil, nil, err
	}
	beforeJSON, err := api.Encode(doc)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("encoding %s as cached: %w", doc.ResourceID, err)
	}
	afterJSON, err := api.Encode(updated)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("encoding %s as changed: %w", doc.ResourceID, err)
	}
	if bytes.Equal(beforeJSON, afterJSON) {
		return nil, nil, nil, nil
	}
	if before, err = parseNode(beforeJSON); err != nil {
		return nil, nil, nil, fmt.Errorf("reading %s as cached: %w", doc.ResourceID, err)
	}
	if after, err = parseNode(afterJSON); err != nil {
		return nil, nil, nil, fmt.Errorf("reading %s as changed: %w", doc.ResourceID, err)
	}
	if err := confinedNodes(before, after, owned); err != nil {
		return nil, nil, nil, fmt.Errorf("writing %s: %w", doc.ResourceID, err)
	}
	return updated, before, after, nil
}

// Create stores doc, a new document, unless one with its id exists already, which is
// LostRace and not an error: whoever created it first wins, and readers see that one.
// The store's answer is decoded as the cache decodes its change feed (decodeStored): a
// lean cache given the whole document would keep it whole, through every later write
// that starts from the cached copy, until the process restarts.
func (w Writer[P]) Create(ctx context.Context, doc *api.Document[P]) (Result[P], error) {
	item, err := database.CreateItem(ctx, w.container, doc)
	if errors.Is(err, database.ErrConflict) {
		return Result[P]{Outcome: LostRace}, nil
	}
	if err != nil {
		return Result[P]{}, fmt.Errorf("creating %s in %s: %w", doc.ResourceID, w.container.Name(), err)
	}
	stored, err := w.decodeStored(item)
	if err != nil {
		return Result[P]{}, fmt.Errorf("decoding %s as created: %w", doc.ResourceID, err)
	}
	w.cache.Assume(stored)
	return Result[P]{Outcome: Written, Stored: stored}, nil
}

// ErrNotOwned is returned, wrapped, when a change touches a field outside the owned ones.
var ErrNotOwned = errors.New("change touches a field the writer does not own")

// confined checks that before and after, two encodings of one document, differ only
// within owned.
func confined(before, after []byte, owned Fields) error {
	b, err := parseNode(before)
	if err != nil {
		return err
	}
	a, err := parseNode(after)
	if err != nil {
		return err
	}
	return confinedNodes(b, a, owned)
}

// confinedNodes is confined on parsed trees.
func confinedNodes(before, after *node, owned Fields) error {
	diff, err := firstDifference("", before, after, owned)
	if err != nil {
		return err
	}
	if diff != "" {
		return fmt.Errorf("%w: %s (owned: %s)", ErrNotOwned, diff, strings.Join(owned, ", "))
	}
	return nil
}

func decodeJSON(b []byte, v *any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	return d.Decode(v)
}

// emptyObject stands for an object that is not there, beneath which an owned path lies.
var emptyObject = &node{raw: json.RawMessage("{}"), kind: '{', parsed: true, obj: map[string]*node{}}

// firstDifference returns the path of the first value that differs between a and b
// outside the owned paths, or "" when there is none. a or b nil is absent, the same as
// null. Values with the same bytes are the same and are not taken apart, so a change
// costs about the size of what it changed, not of the document.
func firstDifference(path string, a, b *node, owned Fields) (string, error) {
	if path != "" && slices.Contains(owned, path) {
		return "", nil
	}
	if types := ownedConditions(path, owned); len(types) > 0 {
		va, vb, err := valuesOf(a, b)
		if err != nil {
			return "", err
		}
		return conditionDifference(path, va, vb, types), nil
	}
	if a != nil && b != nil && bytes.Equal(a.raw, b.raw) {
		return "", nil
	}
	aIsObject, bIsObject := a != nil && a.kind == '{', b != nil && b.kind == '{'
	if ownsBeneath(path, owned) {
		// An owned path lies beneath an object that appeared where there was nothing, or
		// went away: its fields are compared against nothing, so it is allowed only when
		// everything else beneath it is owned too. A value of another kind in its place
		// (a string where the object is) lies beneath no owned path, and replacing it
		// would lose it.
		if aIsObject && b.isNull() {
			b, bIsObject = emptyObject, true
		}
		if a.isNull() && bIsObject {
			a, aIsObject = emptyObject, true
		}
	}
	if !aIsObject || !bIsObject {
		va, vb, err := valuesOf(a, b)
		if err != nil {
			return "", err
		}
		if !reflect.DeepEqual(va, vb) {
			return orRoot(path), nil
		}
		return "", nil
	}
	if err := errors.Join(a.parse(), b.parse()); err != nil {
		return "", err
	}
	for k := range unionOfSorted(a.keys, b.keys) {
		ca, cb := a.obj[k], b.obj[k]
		if ca != nil && cb != nil && bytes.Equal(ca.raw, cb.raw) {
			// The same bytes differ nowhere beneath, owned or not: skip building the
			// member's path, which every unchanged member of the levels on a change's
			// way down would otherwise cost.
			continue
		}
		if d, err := firstDifference(join(path, k), ca, cb, owned); d != "" || err != nil {
			return d, err
		}
	}
	return "", nil
}

// unionOfSorted yields the strings of two sorted slices in order, each once.
func unionOfSorted(a, b []string) iter.Seq[string] {
	return func(yield func(string) bool) {
		i, j := 0, 0
		for i < len(a) || j < len(b) {
			var next string
			switch {
			case j == len(b) || (i < len(a) && a[i] < b[j]):
				next = a[i]
				i++
			case i == len(a) || b[j] < a[i]:
				next = b[j]
				j++
			default:
				next = a[i]
				i, j = i+1, j+1
			}
			if !yield(next) {
				return
			}
		}
	}
}

// valuesOf decodes two values for a comparison by meaning (numbers by their decimal
// text); absent and null are both nil.
func valuesOf(a, b *node) (va, vb any, err error) {
	for _, n := range []struct {
		node *node
		v    *any
	}{{a, &va}, {b, &vb}} {
		if n.node.isNull() {
			continue
		}
		if err := decodeJSON(n.node.raw, n.v); err != nil {
			return nil, nil, err
		}
	}
	return va, vb, nil
}

// ownsBeneath reports whether an owned path lies strictly beneath path.
func ownsBeneath(path string, owned Fields) bool {
	for _, o := range owned {
		if path == "" || strings.HasPrefix(o, path+".") {
			return true
		}
	}
	return false
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func orRoot(path string) string {
	if path == "" {
		return "the whole document"
	}
	return path
}

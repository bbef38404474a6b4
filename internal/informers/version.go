package informers

import (
	"github.com/hcpsched/hcpsched/internal/api"
)

// version identifies one stored write of a document by what Cosmos itself assigns, so
// that writes by components that do not keep cosmosMetadata.instanceVersion (legacy
// documents have none, or 0, and not every writer bumps it) are still ordered.
type version struct {
	// lsn is _lsn, the partition's write sequence number. Cosmos adds it to change-feed
	// items only, so list results and documents returned by writes have 0.
	lsn int64
	// ts is _ts, the server time of the write in whole seconds; it is taken never to go
	// backwards between two writes of one document.
	ts int64
	// etag is _etag, unique to each write.
	etag string
	// prev is cosmosMetadata.etag: the _etag the writer read before replacing, when it
	// recorded one. It can be stale (a writer that copies it unchanged), but it always
	// names some earlier write of the document.
	prev string
}

func versionOfDocument[P any](d *api.Document[P]) version {
	v := version{lsn: lsnOf(d), ts: d.Timestamp, etag: d.ETag}
	if m := d.Metadata(); m != nil {
		v.prev = m.ETag
	}
	return v
}

// lsnOf reads _lsn, which only change-feed items carry.
func lsnOf[P any](d *api.Document[P]) int64 { return max(d.LSN, 0) }

// order is how one version relates to another of the same document.
type order int

const (
	older order = iota
	same
	newer
	// unordered: written in the same second, neither names the other, and at least one
	// of the two has no _lsn. Callers decide which way to lean (see compare's users).
	unordered
)

// compare orders a against b. _lsn decides when both carry one (two feed items); else
// _ts, and within one second a write that names the other as its predecessor is the
// newer one.
func compare(a, b version) order {
	switch {
	case a.etag != "" && a.etag == b.etag:
		return same
	case a.lsn > 0 && b.lsn > 0:
		switch {
		case a.lsn > b.lsn:
			return newer
		case a.lsn < b.lsn:
			return older
		}
		return same
	case a.ts > b.ts:
		return newer
	case a.ts < b.ts:
		return older
	}
	aNamesB := a.prev != "" && a.prev == b.etag
	bNamesA := b.prev != "" && b.prev == a.etag
	switch {
	case aNamesB && !bNamesA:
		return newer
	case bNamesA && !aNamesB:
		return older
	}
	// Neither names the other, or (impossible for real writes) each names the other.
	return unordered
}

// supersedes reports whether a change carrying a may replace what a cache holds at b:
// anything not known to be the same write or an older one. Leaning towards delivery is
// what makes the gate converge: when a is in fact older, the newer write has a higher
// _lsn than a and the change feed brings it on a later poll, where two feed items
// compare exactly.
func supersedes(a, b version) bool {
	c := compare(a, b)
	return c == newer || c == unordered
}

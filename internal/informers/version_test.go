package informers

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

func TestCompare(t *testing.T) {
	for _, tc := range []struct {
		name string
		a, b version
		want order
	}{
		{"one write seen by the feed and by a list", version{lsn: 7, ts: 100, etag: "A"}, version{ts: 100, etag: "A"}, same},
		{"feed items order by _lsn", version{lsn: 8, ts: 100, etag: "B"}, version{lsn: 7, ts: 100, etag: "A"}, newer},
		{"_lsn wins over _ts", version{lsn: 7, ts: 101, etag: "A"}, version{lsn: 8, ts: 100, etag: "B"}, older},
		{"a later second is newer", version{ts: 101, etag: "B"}, version{lsn: 7, ts: 100, etag: "A"}, newer},
		{"an earlier second is older", version{lsn: 9, ts: 99, etag: "B"}, version{ts: 100, etag: "A"}, older},
		{"same second, a replaced b", version{ts: 100, etag: "B", prev: "A"}, version{lsn: 7, ts: 100, etag: "A"}, newer},
		{"same second, b replaced a", version{lsn: 7, ts: 100, etag: "A"}, version{ts: 100, etag: "B", prev: "A"}, older},
		{"same second, neither names the other", version{lsn: 7, ts: 100, etag: "A"}, version{ts: 100, etag: "B"}, unordered},
		{"a stale predecessor still names an earlier write", version{ts: 100, etag: "C", prev: "A"}, version{ts: 100, etag: "A"}, newer},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, compare(tc.a, tc.b))
			assert.Equal(t, tc.want == newer || tc.want == unordered, supersedes(tc.a, tc.b))
		})
	}
}

// versionedStatus is an event object that carries a version of the test's choosing.
type versionedStatus struct {
	metav1.Status
	v version
}

func (s *versionedStatus) storedVersion() version { return s.v }

// gateOp is one step of a list/watch sequence: a change published by the pump, or an
// item returned by the list.
type gateOp struct {
	list bool
	v    version
}

// replay runs ops through a watcher the way the reflector does (list items applied
// first, then the watch's events in order) and returns the etag the cache ends on and
// the etags of the events delivered.
func replay(t *testing.T, beforeWatch, afterWatch []gateOp) (string, []string) {
	t.Helper()
	const key = "k"
	w := newWatcher()
	defer w.Stop()
	cached := ""
	for _, op := range beforeWatch {
		if op.list {
			w.listed(key, &versionedStatus{v: op.v})
			cached = op.v.etag
			continue
		}
		w.send(watch.Modified, &versionedStatus{Status: metav1.Status{Message: op.v.etag}, v: op.v}, key)
	}
	w.start()
	for _, op := range afterWatch {
		require.False(t, op.list, "a list happens before its watch")
		w.send(watch.Modified, &versionedStatus{Status: metav1.Status{Message: op.v.etag}, v: op.v}, key)
	}
	w.expire() // a last event, so the test knows when the others are through
	var delivered []string
	for ev := range w.ResultChan() {
		if ev.Type == watch.Error {
			break
		}
		etag := ev.Object.(*versionedStatus).Message
		delivered = append(delivered, etag)
		cached = etag
	}
	return cached, delivered
}

// The list may overtake a change the feed queued while it ran, or return an older
// version than one the feed already queued: either way the cache ends on the newest
// write, at once or after the next feed poll. In every case A is older than B.
func TestGateConvergesAcrossListAndFeed(t *testing.T) {
	a := version{lsn: 1, ts: 100, etag: "A"}
	aListed := version{ts: 100, etag: "A"}
	bFeed := version{lsn: 2, ts: 100, etag: "B"}
	for _, tc := range []struct {
		name        string
		beforeWatch []gateOp
		afterWatch  []gateOp
		// never are writes the cache must not be stepped back to.
		never []string
	}{
		{"list overtakes a queued change that it names as its predecessor",
			[]gateOp{{v: a}, {list: true, v: version{ts: 100, etag: "B", prev: "A"}}}, []gateOp{{v: version{lsn: 2, ts: 100, etag: "B", prev: "A"}}}, []string{"A"}},
		{"list overtakes a queued change in a later second",
			[]gateOp{{v: a}, {list: true, v: version{ts: 101, etag: "B"}}}, []gateOp{{v: version{lsn: 2, ts: 101, etag: "B"}}}, []string{"A"}},
		{"list overtakes a queued change it cannot order: the next poll repairs it",
			[]gateOp{{v: a}, {list: true, v: version{ts: 100, etag: "B"}}}, []gateOp{{v: bFeed}}, nil},
		{"list returns an older version than a queued change",
			[]gateOp{{v: bFeed}, {list: true, v: aListed}}, nil, nil},
		{"replay of what the list returned",
			[]gateOp{{list: true, v: aListed}}, []gateOp{{v: a}, {v: bFeed}}, []string{"A"}},
		{"change older than the list",
			[]gateOp{{list: true, v: version{ts: 101, etag: "B"}}}, []gateOp{{v: a}}, []string{"A"}},
		{"foreign write in the second of the listed one",
			[]gateOp{{list: true, v: aListed}}, []gateOp{{v: bFeed}}, nil},
		{"feed replays a page",
			nil, []gateOp{{v: a}, {v: bFeed}, {v: a}, {v: bFeed}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, delivered := replay(t, tc.beforeWatch, tc.afterWatch)
			assert.Equal(t, "B", got, "the cache ends on the newest write")
			for _, etag := range tc.never {
				assert.NotContains(t, delivered, etag)
			}
			assert.True(t, slices.IsSorted(delivered) && len(slices.Compact(slices.Clone(delivered))) == len(delivered),
				"events never step back or repeat: %v", delivered)
		})
	}
}

// Whatever the fields hold, compare is consistent both ways round, so the gate and the
// overlay can never each think the other's version is the newer one.
func FuzzCompareIsAntisymmetric(f *testing.F) {
	f.Add(int64(7), int64(100), "A", "", int64(0), int64(100), "B", "A")
	f.Add(int64(0), int64(100), "A", "", int64(8), int64(100), "B", "")
	f.Add(int64(3), int64(101), "A", "B", int64(3), int64(99), "A", "")
	f.Fuzz(func(t *testing.T, lsnA, tsA int64, etagA, prevA string, lsnB, tsB int64, etagB, prevB string) {
		a := version{lsn: max(lsnA, 0), ts: tsA, etag: etagA, prev: prevA}
		b := version{lsn: max(lsnB, 0), ts: tsB, etag: etagB, prev: prevB}
		mirror := map[order]order{older: newer, newer: older, same: same, unordered: unordered}
		assert.Equal(t, mirror[compare(a, b)], compare(b, a), "compare(%+v, %+v)", a, b)
		if a.etag != "" {
			assert.Equal(t, same, compare(a, a), "every stored write has an _etag")
		}
	})
}

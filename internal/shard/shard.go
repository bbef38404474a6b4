// Package shard splits a controller's keys between replicas that run without leader
// election. Keys hash to one of a fixed number of shards; each replica holds leases on a
// fair share of the shards, kept as documents in a Cosmos container of hcpsched's own,
// and works only the keys of shards it holds. A lease is renewed every retry period;
// another replica takes it over only after it has seen it unchanged for a whole lease
// duration, while its holder gives it up once it could not renew it for the (shorter)
// renew deadline: so no key is ever worked by two replicas at once.
package shard

import (
	"hash/fnv"
	"strings"
	"time"
)

// Defaults of leaderless sharding, defined once: the flags and the configuration
// reference read them from here. The durations are leader election's (client-go's
// defaults), for the same reasons: a takeover within a lease duration of a crash, a
// renewal every retry period, and a margin between the renew deadline and the lease
// duration for a holder to stop before anyone else may start.
const (
	DefaultShards         = 16
	DefaultLeaseContainer = "hcpschedLeases"
	DefaultLeaseDuration  = 15 * time.Second
	DefaultRenewDeadline  = 10 * time.Second
	DefaultRetryPeriod    = 2 * time.Second
)

// Of is the shard of a key: FNV-1a of the lowercased key, modulo shards. Resource IDs
// compare case-insensitively, so every casing of one ID lands on one shard, on every
// replica and across restarts (FNV is fixed, unlike Go's map hash).
func Of(key string, shards int) int {
	if shards <= 1 {
		return 0
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(strings.ToLower(key)))
	return int(h.Sum32() % uint32(shards))
}

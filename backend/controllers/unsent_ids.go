package controllers

import "sync"

// unsentIDs are the pending Cluster Service IDs this process minted itself and has sent
// no create under yet, by cluster key. It is what lets ClusterServiceCreate skip the
// adoption search in the common path and still search wherever a create may have
// happened (docs/cosmos-data-flow.md, "Cluster Service calls per cluster"):
//
//   - PendingClusterServiceIDAssign enters an ID just before it writes it, and takes it
//     out again unless the write went through. The ID is fresh and random, so until this
//     process sends a create under it, no create can carry it: nobody else has it but
//     through the document this process just wrote.
//   - ClusterServiceCreate skips the search only while the cluster's pending ID is the one
//     entered here, and takes the entry out just before it sends the POST, whatever comes
//     back. A timeout, an error, a crash after the send or a lost 412 on the record all
//     leave no entry, so the next attempt searches and adopts what CS may have made.
//   - A pending ID this process did not mint (an earlier process's, another replica's,
//     ARO-HCP's own pending-ID controller's) is never in here: a process that starts
//     knows no ID, and searches before every create it has not itself seen to be the
//     first.
//
// Leaderless replicas that split the keys (Env.KeysMove) keep no record at all: a key
// can move to another replica, which sends the create, and come back, and the entry
// here would then be wrong. A nil *unsentIDs knows no ID: every create searches, as
// ARO-HCP's own controller does.
type unsentIDs struct {
	mu    sync.Mutex
	byKey map[string]string
}

func newUnsentIDs() *unsentIDs { return &unsentIDs{byKey: map[string]string{}} }

// unlessKeysMove is u, or nil (every create searches) where a cluster's key may leave
// this replica and come back (Env.KeysMove): an entry would then outlive a create another
// replica sent under the same ID.
func (u *unsentIDs) unlessKeysMove(e Env) *unsentIDs {
	if e.KeysMove {
		return nil
	}
	return u
}

// minting enters href as the ID about to be written for the cluster with key.
func (u *unsentIDs) minting(key, href string) {
	if u == nil {
		return
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	u.byKey[key] = href
}

// notWritten takes href out again: its write did not go through, or may not have.
func (u *unsentIDs) notWritten(key, href string) {
	if u == nil {
		return
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.byKey[key] == href {
		delete(u.byKey, key)
	}
}

// unsent reports whether href is an ID this process minted for the cluster with key and
// has sent no create under: then no create of the cluster can have reached Cluster
// Service, and the adoption search would find nothing.
func (u *unsentIDs) unsent(key, href string) bool {
	if u == nil || href == "" {
		return false
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.byKey[key] == href
}

// sending takes the cluster's entry out just before a create is sent: from then on its
// outcome may be unknown.
func (u *unsentIDs) sending(key string) { u.forget(key) }

// forget takes the cluster's entry out: it has nothing left to create, or is gone.
func (u *unsentIDs) forget(key string) {
	if u == nil {
		return
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	delete(u.byKey, key)
}

// holds reports whether the cluster with key has an entry.
func (u *unsentIDs) holds(key string) bool {
	if u == nil {
		return false
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	_, ok := u.byKey[key]
	return ok
}

// len is how many clusters have an unsent ID.
func (u *unsentIDs) len() int {
	if u == nil {
		return 0
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	return len(u.byKey)
}

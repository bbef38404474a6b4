package scenario

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"

	arohcp "github.com/openshift-online/ocm-sdk-go/arohcp/v1alpha1"

	"github.com/hcpsched/hcpsched/internal/dev/fakeclusterservice"
)

// posts are the cluster creates Cluster Service received, per cluster (lowercased Azure
// resource ID), read from the fake's request log.
type posts struct {
	// attempts counts every POST, whatever its answer; created only the 201s.
	attempts, created map[string]int
	// total is every create POST in the log, unreadable bodies included.
	total int
	// unreadable are POSTs whose body names no cluster.
	unreadable int
}

// countPosts reads the creates out of a request log.
func countPosts(log []fakeclusterservice.Request) posts {
	p := posts{attempts: map[string]int{}, created: map[string]int{}}
	for _, r := range log {
		if r.Method != http.MethodPost || strings.TrimSuffix(r.Path, "/") != fakeclusterservice.ClustersPath {
			continue
		}
		p.total++
		c, err := arohcp.UnmarshalCluster([]byte(r.Body))
		if err != nil {
			p.unreadable++
			continue
		}
		rid, ok := fakeclusterservice.AzureResourceID(c)
		if !ok {
			p.unreadable++
			continue
		}
		key := strings.ToLower(rid)
		p.attempts[key]++
		if r.Status == http.StatusCreated {
			p.created[key]++
		}
	}
	return p
}

// invariant: no cluster is created twice, every placed cluster is created once, and no
// cluster that must not reach Cluster Service (expectNone) is created at all. Without a
// single create POST in the log there is nothing to judge, and that fails too.
func (p posts) invariant(placed, expectNone []string) Invariant {
	inv := Invariant{Name: fmt.Sprintf("each placed cluster is created in Cluster Service exactly once (%d create POSTs in the request log)", p.total)}
	for _, key := range slices.Sorted(maps.Keys(p.created)) {
		if n := p.created[key]; n > 1 {
			inv.Violations = append(inv.Violations, fmt.Sprintf("%s was created %d times (%d POSTs)", key, n, p.attempts[key]))
		}
	}
	for _, key := range placed {
		if p.created[key] == 0 {
			inv.Violations = append(inv.Violations, fmt.Sprintf("%s is placed but was never created (%d POSTs)", key, p.attempts[key]))
		}
	}
	for _, key := range expectNone {
		if n := p.created[key]; n > 0 {
			inv.Violations = append(inv.Violations, fmt.Sprintf("%s must not be in Cluster Service but was created %d times", key, n))
		}
	}
	if p.unreadable > 0 {
		inv.Violations = append(inv.Violations, fmt.Sprintf("%d create POSTs name no cluster", p.unreadable))
	}
	if p.total == 0 {
		inv.Violations = append(inv.Violations, "the request log holds no create POST")
	}
	return inv
}

// distribution renders how many clusters got how many POSTs, and how many creates.
func (p posts) distribution() string {
	return fmt.Sprintf("POSTs per cluster %s; successful creates per cluster %s", histogram(p.attempts), histogram(p.created))
}

// histogram renders how many keys have each count, smallest count first:
// "1: 540 clusters, 2: 12 clusters".
func histogram(perKey map[string]int) string {
	byCount := map[int]int{}
	for _, n := range perKey {
		byCount[n]++
	}
	if len(byCount) == 0 {
		return "none"
	}
	parts := make([]string, 0, len(byCount))
	for _, n := range slices.Sorted(maps.Keys(byCount)) {
		parts = append(parts, fmt.Sprintf("%d: %d clusters", n, byCount[n]))
	}
	return strings.Join(parts, ", ")
}

package api

import (
	"errors"
	"fmt"
	"strings"
)

// ResourceID is a parsed ARM-style resource ID. It keeps the casing it was given: IDs
// written by other components must never be re-cased, only compared case-insensitively.
type ResourceID struct {
	raw            string
	SubscriptionID string
	ResourceGroup  string
	// Namespace is the resource provider, e.g. Microsoft.RedHatOpenShift.
	Namespace string
	// Types and Names hold the type/name pairs after the provider, outermost first.
	Types []string
	Names []string
}

// ParseResourceID parses IDs of the forms hcpsched stores:
//
//	/subscriptions/{s}   (the subscription, type Microsoft.Resources/subscriptions)
//	/subscriptions/{s}[/resourceGroups/{rg}]/providers/{ns}/{type}/{name}[/{type}/{name}...]
//	/providers/{ns}/{type}/{name}[/{type}/{name}...]   (tenant-level fleet resources)
//
// Every event handler and lister lookup parses IDs, so it walks the ID once and
// allocates the result and one array for the type/name pairs, nothing per segment.
func ParseResourceID(id string) (*ResourceID, error) {
	fail := func(msg string) (*ResourceID, error) {
		return nil, fmt.Errorf("invalid resource ID %q: %s", id, msg)
	}
	if !strings.HasPrefix(id, "/") {
		return fail("must start with '/'")
	}
	rest := id[1:]
	// next cuts the next segment off rest; ok is false at the end of the ID.
	next := func() (seg string, ok bool) {
		if rest == "" {
			return "", false
		}
		seg, rest, _ = strings.Cut(rest, "/")
		return seg, true
	}
	if rest == "" || strings.HasSuffix(id, "/") || strings.Contains(id, "//") {
		return fail("empty path segment")
	}
	r := &ResourceID{raw: id}
	seg, _ := next()
	if strings.EqualFold(seg, "subscriptions") {
		sub, ok := next()
		if !ok {
			return fail("missing subscription ID")
		}
		r.SubscriptionID = sub
		seg, ok = next()
		if !ok {
			// The subscription itself: ARM's Microsoft.Resources/subscriptions resource.
			r.Namespace = SubscriptionNamespace
			r.Types = []string{"subscriptions"}
			r.Names = []string{r.SubscriptionID}
			return r, nil
		}
		if strings.EqualFold(seg, "resourceGroups") {
			rg, ok := next()
			if !ok {
				return fail("missing resource group name")
			}
			r.ResourceGroup = rg
			if seg, ok = next(); !ok {
				return fail("no provider resource")
			}
		}
	}
	if !strings.EqualFold(seg, "providers") {
		return fail(fmt.Sprintf("expected 'providers', found %q", seg))
	}
	ns, ok := next()
	if !ok {
		return fail("missing provider namespace")
	}
	r.Namespace = ns
	if rest == "" {
		return fail("missing resource type and name")
	}
	segs := strings.Count(rest, "/") + 1
	if segs%2 != 0 {
		return fail("resource type without a name")
	}
	pairs := make([]string, segs)
	r.Types, r.Names = pairs[:0:segs/2], pairs[segs/2:segs/2]
	for rest != "" {
		t, _ := next()
		n, _ := next()
		if strings.EqualFold(t, "providers") {
			return fail("extension resources are not supported")
		}
		r.Types = append(r.Types, t)
		r.Names = append(r.Names, n)
	}
	return r, nil
}

// MustParseResourceID is for IDs built by hcpsched itself and for tests.
func MustParseResourceID(id string) *ResourceID {
	r, err := ParseResourceID(id)
	if err != nil {
		panic(err)
	}
	return r
}

// String returns the ID exactly as it was parsed.
func (r *ResourceID) String() string { return r.raw }

// Name is the last name segment.
func (r *ResourceID) Name() string { return r.Names[len(r.Names)-1] }

// ResourceType is the namespace and the type segments, e.g.
// Microsoft.RedHatOpenShift/hcpOpenShiftClusters/serviceProviderClusters.
func (r *ResourceID) ResourceType() string {
	return r.Namespace + "/" + strings.Join(r.Types, "/")
}

// Parent drops the last type/name pair; the top-level provider resource has no parent
// that hcpsched stores, so it returns nil.
func (r *ResourceID) Parent() *ResourceID {
	if len(r.Types) < 2 {
		return nil
	}
	return r.ancestorAt(len(r.Types) - 1)
}

// Ancestor walks up to the first ID, itself included, whose type matches resourceType
// case-insensitively. Controllers use it to turn a child's event into their own key, on
// every event: the levels are compared in place, and only the one returned is built.
func (r *ResourceID) Ancestor(resourceType string) (*ResourceID, bool) {
	for n := len(r.Types); n >= 1; n-- {
		if r.typeIs(n, resourceType) {
			return r.ancestorAt(n), true
		}
	}
	return nil, false
}

// typeIs reports whether the ID of the first n type/name pairs has resourceType (the
// namespace, then the n types).
func (r *ResourceID) typeIs(n int, resourceType string) bool {
	seg, rest, more := strings.Cut(resourceType, "/")
	if !strings.EqualFold(seg, r.Namespace) {
		return false
	}
	for _, t := range r.Types[:n] {
		if !more {
			return false
		}
		seg, rest, more = strings.Cut(rest, "/")
		if !strings.EqualFold(seg, t) {
			return false
		}
	}
	return !more
}

// ancestorAt is the ID of the first n type/name pairs, 1 <= n <= len(r.Types): r
// itself when n is all of them.
func (r *ResourceID) ancestorAt(n int) *ResourceID {
	if n == len(r.Types) {
		return r
	}
	a := *r
	cut := 0
	for i := n; i < len(r.Types); i++ {
		cut += len(r.Types[i]) + len(r.Names[i]) + 2
	}
	a.raw = r.raw[:len(r.raw)-cut]
	a.Types = r.Types[:n:n]
	a.Names = r.Names[:n:n]
	return &a
}

// Child appends a type/name pair. It builds the child from r without parsing again:
// the controllers derive an SPC's or a scheduling document's ID this way on every event.
func (r *ResourceID) Child(resourceType, name string) *ResourceID {
	if resourceType == "" || name == "" || strings.Contains(resourceType, "/") || strings.Contains(name, "/") ||
		strings.EqualFold(resourceType, "providers") || len(r.Types) == 0 || r.Namespace == SubscriptionNamespace {
		panic(fmt.Sprintf("child %s/%s of resource ID %q cannot be a valid resource ID", resourceType, name, r.raw))
	}
	n := len(r.Types)
	c := *r
	c.raw = r.raw + "/" + resourceType + "/" + name
	pairs := make([]string, 2*(n+1))
	c.Types = append(pairs[:0:n+1], r.Types...)
	c.Types = append(c.Types, resourceType)
	c.Names = append(pairs[n+1:n+1], r.Names...)
	c.Names = append(c.Names, name)
	return &c
}

// Equal compares case-insensitively, as every ARO-HCP reader does.
func (r *ResourceID) Equal(o *ResourceID) bool {
	return r != nil && o != nil && strings.EqualFold(r.raw, o.raw)
}

// Key is the lowercased ID, for maps and workqueue keys.
func (r *ResourceID) Key() string { return strings.ToLower(r.raw) }

// ResourceIDsEqual compares two ID strings case-insensitively.
func ResourceIDsEqual(a, b string) bool { return strings.EqualFold(a, b) }

// ErrInvalidResourceID is wrapped by document decoding when a resource ID does not parse.
var ErrInvalidResourceID = errors.New("invalid resource ID")

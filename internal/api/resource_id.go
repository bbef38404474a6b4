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
	segments       []string
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
func ParseResourceID(id string) (*ResourceID, error) {
	fail := func(msg string) (*ResourceID, error) {
		return nil, fmt.Errorf("invalid resource ID %q: %s", id, msg)
	}
	if !strings.HasPrefix(id, "/") {
		return fail("must start with '/'")
	}
	segs := strings.Split(id[1:], "/")
	for _, s := range segs {
		if s == "" {
			return fail("empty path segment")
		}
	}
	r := &ResourceID{raw: id, segments: segs}
	i := 0
	if strings.EqualFold(segs[0], "subscriptions") {
		if len(segs) < 2 {
			return fail("missing subscription ID")
		}
		r.SubscriptionID = segs[1]
		i = 2
		if i < len(segs) && strings.EqualFold(segs[i], "resourceGroups") {
			if i+1 >= len(segs) {
				return fail("missing resource group name")
			}
			r.ResourceGroup = segs[i+1]
			i += 2
		}
		if i == 2 && len(segs) == 2 {
			// The subscription itself: ARM's Microsoft.Resources/subscriptions resource.
			r.Namespace = SubscriptionNamespace
			r.Types = []string{"subscriptions"}
			r.Names = []string{r.SubscriptionID}
			return r, nil
		}
		if i == len(segs) {
			return fail("no provider resource")
		}
	}
	if !strings.EqualFold(segs[i], "providers") {
		return fail(fmt.Sprintf("expected 'providers', found %q", segs[i]))
	}
	if i+1 >= len(segs) {
		return fail("missing provider namespace")
	}
	r.Namespace = segs[i+1]
	rest := segs[i+2:]
	if len(rest) == 0 {
		return fail("missing resource type and name")
	}
	if len(rest)%2 != 0 {
		return fail("resource type without a name")
	}
	for j := 0; j < len(rest); j += 2 {
		if strings.EqualFold(rest[j], "providers") {
			return fail("extension resources are not supported")
		}
		r.Types = append(r.Types, rest[j])
		r.Names = append(r.Names, rest[j+1])
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
	segs := r.segments[:len(r.segments)-2]
	p := *r
	p.segments = segs
	p.raw = "/" + strings.Join(segs, "/")
	p.Types = r.Types[:len(r.Types)-1]
	p.Names = r.Names[:len(r.Names)-1]
	return &p
}

// Ancestor walks up to the first ID, itself included, whose type matches resourceType
// case-insensitively. Controllers use it to turn a child's event into their own key.
func (r *ResourceID) Ancestor(resourceType string) (*ResourceID, bool) {
	for cur := r; cur != nil; cur = cur.Parent() {
		if strings.EqualFold(cur.ResourceType(), resourceType) {
			return cur, true
		}
	}
	return nil, false
}

// Child appends a type/name pair.
func (r *ResourceID) Child(resourceType, name string) *ResourceID {
	c, err := ParseResourceID(r.raw + "/" + resourceType + "/" + name)
	if err != nil {
		panic(fmt.Sprintf("child of a valid resource ID cannot be invalid: %v", err))
	}
	return c
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

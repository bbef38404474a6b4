package fakeclusterservice

import (
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
)

const (
	defaultPageSize = 100
	maxPageSize     = 500
)

type pageRequest struct {
	page   int
	size   int
	search string
}

// parseListQuery reads CS's list parameters. Ordering is refused because the client never
// asks for it and the fake does not implement CS's order language.
func parseListQuery(r *http.Request) (pageRequest, error) {
	q := r.URL.Query()
	pr := pageRequest{page: 1, size: defaultPageSize, search: q.Get("search")}
	if v := q.Get("page"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return pr, badRequest("page %q must be a positive integer", v)
		}
		pr.page = n
	}
	if v := q.Get("size"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > maxPageSize {
			return pr, badRequest("size %q must be an integer between 0 and %d", v, maxPageSize)
		}
		pr.size = n
	}
	if q.Has("order") {
		return pr, badRequest("the fake does not support the 'order' parameter")
	}
	return pr, nil
}

// window returns the slice bounds of the requested page within total items.
func (pr pageRequest) window(total int) (from, to int) {
	from = (pr.page - 1) * pr.size
	if from > total {
		from = total
	}
	to = from + pr.size
	if to > total {
		to = total
	}
	return from, to
}

// list is one collection's list endpoint: its kind and href, the fields a search may
// name, and how to read and encode its objects.
type list[T any] struct {
	kind, href   string
	what         string // in errors
	searchFields []string
	fieldValue   func(T, string) string
	marshal      func([]T, io.Writer) error
}

// serve answers a list request: the search selects among all (in creation order, read
// under mu), and the page and size window what is returned.
func (l list[T]) serve(w http.ResponseWriter, r *http.Request, mu *sync.Mutex, all func() []T) error {
	pr, err := parseListQuery(r)
	if err != nil {
		return err
	}
	var want map[string]string
	if pr.search != "" {
		if want, err = whitelisted(pr.search, l.searchFields); err != nil {
			return err
		}
	}
	mu.Lock()
	var matched []T
	for _, o := range all() {
		if matchesAll(want, func(f string) string { return l.fieldValue(o, f) }) {
			matched = append(matched, o)
		}
	}
	mu.Unlock()
	from, to := pr.window(len(matched))
	items, err := encode(l.marshal, matched[from:to])
	if err != nil {
		return fmt.Errorf("encode %s: %w", l.what, err)
	}
	writeRaw(w, http.StatusOK, "application/json", listBody(l.kind, l.href, pr.page, to-from, len(matched), items))
	return nil
}

// inOrder returns the objects of ids, in that order.
func inOrder[T any](ids []string, objects map[string]T) []T {
	out := make([]T, 0, len(ids))
	for _, id := range ids {
		out = append(out, objects[id])
	}
	return out
}

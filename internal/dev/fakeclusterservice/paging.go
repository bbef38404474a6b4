package fakeclusterservice

import (
	"net/http"
	"strconv"
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

package database

import (
	"errors"
	"fmt"
	"net/http"
)

// The error vocabulary every store speaks. Callers test with errors.Is.
var (
	ErrNotFound           = errors.New("not found")
	ErrConflict           = errors.New("conflict")
	ErrPreconditionFailed = errors.New("precondition failed")
	ErrThrottled          = errors.New("throttled")
	// ErrBadRequest is a request Cosmos refuses as malformed (400), such as a patch
	// operation that cannot apply to the document.
	ErrBadRequest = errors.New("bad request")
	// ErrIfMatchRequired is returned, without I/O, for an unguarded Replace.
	ErrIfMatchRequired = errors.New("replace requires an If-Match etag")
)

// KindForStatus maps an HTTP status from Cosmos to the vocabulary; nil for others.
func KindForStatus(status int) error {
	switch status {
	case http.StatusBadRequest:
		return ErrBadRequest
	case http.StatusNotFound:
		return ErrNotFound
	case http.StatusConflict:
		return ErrConflict
	case http.StatusPreconditionFailed:
		return ErrPreconditionFailed
	case http.StatusTooManyRequests:
		return ErrThrottled
	}
	return nil
}

// OpError says which operation on which document failed. It matches both its kind (one
// of the sentinels, when the failure has one) and the underlying cause.
type OpError struct {
	Op           string
	Container    string
	PartitionKey string
	ID           string
	StatusCode   int
	Kind         error
	Err          error
}

func (e *OpError) Error() string {
	target := e.Container
	if e.ID != "" {
		target = fmt.Sprintf("%s/%s", e.Container, e.ID)
	}
	if e.PartitionKey != "" {
		target += fmt.Sprintf(" (partition %q)", e.PartitionKey)
	}
	msg := fmt.Sprintf("%s %s", e.Op, target)
	switch {
	case e.Kind != nil && e.Err != nil && e.Err != e.Kind:
		return fmt.Sprintf("%s: %v: %v", msg, e.Kind, e.Err)
	case e.Kind != nil:
		return fmt.Sprintf("%s: %v", msg, e.Kind)
	case e.Err != nil:
		return fmt.Sprintf("%s: %v", msg, e.Err)
	}
	return msg
}

func (e *OpError) Unwrap() []error {
	var errs []error
	if e.Kind != nil {
		errs = append(errs, e.Kind)
	}
	if e.Err != nil && e.Err != e.Kind {
		errs = append(errs, e.Err)
	}
	return errs
}

// BatchError reports the operation that made a batch fail; nothing in the batch applied.
type BatchError struct {
	Index      int
	StatusCode int
	Kind       error
}

func (e *BatchError) Error() string {
	if e.Kind != nil {
		return fmt.Sprintf("batch operation %d failed with status %d: %v; no operation was applied", e.Index, e.StatusCode, e.Kind)
	}
	return fmt.Sprintf("batch operation %d failed with status %d; no operation was applied", e.Index, e.StatusCode)
}

func (e *BatchError) Unwrap() error { return e.Kind }

package clusterservice

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	sdkerrors "github.com/openshift-online/ocm-sdk-go/errors"
)

// Callers branch on the two answers that change what they do next; everything else CS
// refuses is an *APIError to log or surface.
var (
	// ErrNotFound matches an *APIError with status 404.
	ErrNotFound = errors.New("not found")
	// ErrConflict matches an *APIError with status 409: an id or identity already taken.
	ErrConflict = errors.New("conflict")
)

// APIError is an error status answered by CS, with the fields of CS's JSON error body.
type APIError struct {
	Status      int
	ID          string
	Code        string
	Reason      string
	OperationID string
}

func (e *APIError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "cluster service answered %d", e.Status)
	if e.Code != "" {
		fmt.Fprintf(&b, " (%s)", e.Code)
	}
	if e.Reason != "" {
		fmt.Fprintf(&b, ": %s", e.Reason)
	}
	if e.OperationID != "" {
		fmt.Fprintf(&b, " [operation %s]", e.OperationID)
	}
	return b.String()
}

// Is lets errors.Is(err, ErrNotFound) and errors.Is(err, ErrConflict) work on wrapped errors.
func (e *APIError) Is(target error) bool {
	switch target {
	case ErrNotFound:
		return e.Status == http.StatusNotFound
	case ErrConflict:
		return e.Status == http.StatusConflict
	}
	return false
}

// sdkResponse is what every generated SDK response type offers.
type sdkResponse interface {
	Status() int
	Error() *sdkerrors.Error
}

// checkResponse turns the SDK's three ways of reporting a failure into one error: a
// transport error, an *errors.Error from a JSON error body, and, because the SDK returns a
// nil error when an error status has an empty body, a bare status.
func checkResponse(resp sdkResponse, err error) error {
	var sdkErr *sdkerrors.Error
	if errors.As(err, &sdkErr) {
		return fromSDKError(sdkErr)
	}
	if err != nil {
		return err
	}
	if status := resp.Status(); status >= http.StatusBadRequest {
		if body := resp.Error(); body != nil {
			return fromSDKError(body)
		}
		return &APIError{Status: status, Reason: "empty response body"}
	}
	return nil
}

func fromSDKError(e *sdkerrors.Error) *APIError {
	return &APIError{
		Status:      e.Status(),
		ID:          e.ID(),
		Code:        e.Code(),
		Reason:      e.Reason(),
		OperationID: e.OperationID(),
	}
}

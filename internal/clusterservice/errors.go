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

// checkResponse turns the SDK's ways of reporting a failure into one error: a transport
// error, an *errors.Error from a JSON error body, and a bare status for the answers the
// SDK lets through. Whatever the body, a status outside 2xx is an *APIError, so that
// errors.Is(err, ErrNotFound) holds for every 404: the SDK returns a nil error when an
// error status has an empty body, only a JSON decoding error when the body is not CS's
// error object, and no error at all for a 3xx (which CS never sends; a redirect without
// a Location reaches here unfollowed, its body read as the resource).
func checkResponse(resp sdkResponse, err error) error {
	var sdkErr *sdkerrors.Error
	if errors.As(err, &sdkErr) {
		return fromSDKError(sdkErr)
	}
	// A transport error comes with a nil response, whose Status is 0.
	status := resp.Status()
	if status == 0 || (status >= 200 && status < 300) {
		return err
	}
	if err != nil {
		// resp.Error() is then whatever the SDK had decoded when it failed, without a status.
		return &APIError{Status: status, Reason: "unreadable response body: " + err.Error()}
	}
	if body := resp.Error(); body != nil {
		return fromSDKError(body)
	}
	if status < http.StatusBadRequest {
		return &APIError{Status: status, Reason: "not a success status"}
	}
	return &APIError{Status: status, Reason: "empty response body"}
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

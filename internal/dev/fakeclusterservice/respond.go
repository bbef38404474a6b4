package fakeclusterservice

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"sync"

	sdkerrors "github.com/openshift-online/ocm-sdk-go/errors"
)

// apiError is a refusal that the handlers return and the router turns into CS's error shape.
type apiError struct {
	status int
	reason string
}

func (e *apiError) Error() string { return fmt.Sprintf("%d: %s", e.status, e.reason) }

func badRequest(format string, args ...any) error {
	return &apiError{status: http.StatusBadRequest, reason: fmt.Sprintf(format, args...)}
}

func notFound(format string, args ...any) error {
	return &apiError{status: http.StatusNotFound, reason: fmt.Sprintf(format, args...)}
}

func conflict(format string, args ...any) error {
	return &apiError{status: http.StatusConflict, reason: fmt.Sprintf(format, args...)}
}

// errorBody encodes CS's error shape with the SDK's encoder. A body is mandatory: the SDK
// turns an error status with an empty body into a nil error.
func errorBody(status int, reason string) ([]byte, error) {
	id := strconv.Itoa(status)
	obj, err := sdkerrors.NewError().
		ID(id).
		HREF(errorsPath + "/" + id).
		Code(errorCodePrefix + id).
		Reason(reason).
		OperationID(newID()).
		Build()
	if err != nil {
		return nil, fmt.Errorf("build error body: %w", err)
	}
	var buf bytes.Buffer
	if err := sdkerrors.MarshalError(obj, &buf); err != nil {
		return nil, fmt.Errorf("marshal error body: %w", err)
	}
	return buf.Bytes(), nil
}

func writeError(w http.ResponseWriter, logger *slog.Logger, status int, reason string) {
	body, err := errorBody(status, reason)
	if err != nil {
		logger.Error("cannot encode error response", "error", err)
		status = http.StatusInternalServerError
		body = []byte(`{"kind":"Error","id":"500","href":"` + errorsPath + `/500","code":"` +
			errorCodePrefix + `500","reason":"cannot encode error"}`)
	}
	writeRaw(w, status, "application/json", body)
}

func writeRaw(w http.ResponseWriter, status int, contentType string, body []byte) {
	if status != http.StatusNoContent {
		w.Header().Set("Content-Type", contentType)
	}
	w.WriteHeader(status)
	if len(body) > 0 {
		_, _ = w.Write(body)
	}
}

// encode runs one of the SDK's Marshal* functions into memory first, so that an encoding
// failure becomes a clean 500 instead of a truncated 200.
func encode[T any](marshal func(T, io.Writer) error, v T) ([]byte, error) {
	var buf bytes.Buffer
	if err := marshal(v, &buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// listBody writes CS's list envelope around items encoded by the SDK's list encoder.
func listBody(kind, href string, page, size, total int, items []byte) []byte {
	var buf bytes.Buffer
	fmt.Fprintf(&buf, `{"kind":%q,"href":%q,"page":%d,"size":%d,"total":%d,"items":`,
		kind, href, page, size, total)
	buf.Write(items)
	buf.WriteString("}")
	return buf.Bytes()
}

// writeObject answers with one object encoded by the SDK's marshaler.
func writeObject[T any](w http.ResponseWriter, status int, marshal func(T, io.Writer) error, v T) error {
	body, err := encode(marshal, v)
	if err != nil {
		return fmt.Errorf("encode response: %w", err)
	}
	writeRaw(w, status, "application/json", body)
	return nil
}

// getObject answers GET of the object id among objects (read under mu); what names its
// type in the 404.
func getObject[T any](w http.ResponseWriter, mu *sync.Mutex, objects map[string]T, id, what string, marshal func(T, io.Writer) error) error {
	mu.Lock()
	o, ok := objects[id]
	mu.Unlock()
	if !ok {
		return notFound("%s '%s' not found", what, id)
	}
	return writeObject(w, http.StatusOK, marshal, o)
}

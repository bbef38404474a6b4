package database

import "context"

// CallerNone is the caller of a request whose ctx names none: it was not made by a
// controller's reconcile. In hcpsched that is the informers' change-feed reads and
// relists, start-up (layout, cache sync) and the command-line tools.
const CallerNone = "none"

type callerKey struct{}

// WithCaller returns ctx carrying the name of the component (the controller) on whose
// behalf its requests are made. The controller framework sets it on every reconcile's
// ctx (controller.WithName), so that the Cosmos request metrics say which controller
// made each request.
func WithCaller(ctx context.Context, name string) context.Context {
	return context.WithValue(ctx, callerKey{}, name)
}

// CallerFrom returns the name WithCaller put in ctx; false when there is none (or it is
// empty).
func CallerFrom(ctx context.Context) (string, bool) {
	name, ok := ctx.Value(callerKey{}).(string)
	return name, ok && name != ""
}

// CallerLabel is CallerFrom's name, or CallerNone: the value of a metric's controller
// label.
func CallerLabel(ctx context.Context) string {
	if name, ok := CallerFrom(ctx); ok {
		return name
	}
	return CallerNone
}

// Package apperr is the service's one error type: a kind that maps to an HTTP status and a
// public detail that is safe to show to users. Internal causes stay in the wrapped error
// and are logged, not sent.
package apperr

import (
	"errors"
	"time"
)

// Kind classifies an error for the API.
type Kind int

const (
	KindInternal             Kind = iota // 500, cause logged
	KindInvalid                          // 400: the request cannot be served as asked
	KindUnprocessable                    // 422: well-formed JSON with wrong types or missing fields
	KindNotFound                         // 404
	KindConflict                         // 409: not allowed in the resource's current state
	KindTooLarge                         // 413
	KindUnavailable                      // 503
	KindUnauthenticated                  // 401: no identity, or one that is not valid
	KindForbidden                        // 403: an identity that may not do this
	KindTooManyRequests                  // 429
	KindUnsupportedMediaType             // 415: a body of a type the route does not take
)

// Error is an error with a kind and a public detail.
type Error struct {
	Kind   Kind
	Detail string
	Err    error // optional cause, never sent to clients
	// Lines are the input lines at fault (a CSV import's bad rows), sent as "errors".
	Lines []LineError
	// RetryAfter, when set, is sent as the Retry-After header (whole seconds, at least 1)
	// of a 429 or 503: when the client may try again.
	RetryAfter time.Duration
}

// LineError is one bad line of an input, 1-based.
type LineError struct {
	Line    int    `json:"line"`
	Message string `json:"message"`
}

func (e *Error) Error() string {
	if e.Err != nil {
		return e.Detail + ": " + e.Err.Error()
	}
	return e.Detail
}

func (e *Error) Unwrap() error { return e.Err }

// Invalid is a 400 with the given detail.
func Invalid(format string, a ...any) error {
	return &Error{Kind: KindInvalid, Detail: sprintf(format, a...)}
}

// Unprocessable is a 422 with the given detail.
func Unprocessable(format string, a ...any) error {
	return &Error{Kind: KindUnprocessable, Detail: sprintf(format, a...)}
}

// NotFound is a 404 with the given detail.
func NotFound(format string, a ...any) error {
	return &Error{Kind: KindNotFound, Detail: sprintf(format, a...)}
}

// Conflict is a 409 with the given detail.
func Conflict(format string, a ...any) error {
	return &Error{Kind: KindConflict, Detail: sprintf(format, a...)}
}

// Unauthenticated is a 401 with the given detail.
func Unauthenticated(format string, a ...any) error {
	return &Error{Kind: KindUnauthenticated, Detail: sprintf(format, a...)}
}

// Forbidden is a 403 with the given detail.
func Forbidden(format string, a ...any) error {
	return &Error{Kind: KindForbidden, Detail: sprintf(format, a...)}
}

// As returns the *Error in err's chain, if any.
func As(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}

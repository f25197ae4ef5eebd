package httpapi

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/backtestd/backtestd/internal/apperr"
	"github.com/backtestd/backtestd/internal/store"
)

// Envelope is the `{code, message, data}` response wrapper (api/openapi.yaml's Envelope).
type Envelope struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data"`
}

// ok wraps data in a success envelope.
func ok(data any) Envelope { return Envelope{Code: "ok", Message: "success", Data: data} }

// handlerFunc is an http.HandlerFunc that returns its error instead of writing it.
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

// handle adapts h, writing any returned error in the one place that maps kinds to statuses.
func (s *Server) handle(h handlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := h(w, r); err != nil {
			s.writeError(w, r, err)
		}
	}
}

var statusOf = map[apperr.Kind]int{
	apperr.KindInvalid:              http.StatusBadRequest,
	apperr.KindUnprocessable:        http.StatusUnprocessableEntity,
	apperr.KindNotFound:             http.StatusNotFound,
	apperr.KindConflict:             http.StatusConflict,
	apperr.KindTooLarge:             http.StatusRequestEntityTooLarge,
	apperr.KindUnavailable:          http.StatusServiceUnavailable,
	apperr.KindUnauthenticated:      http.StatusUnauthorized,
	apperr.KindForbidden:            http.StatusForbidden,
	apperr.KindTooManyRequests:      http.StatusTooManyRequests,
	apperr.KindUnsupportedMediaType: http.StatusUnsupportedMediaType,
}

// statusClientClosed is nginx's code for a request whose client went away before the answer.
const statusClientClosed = 499

func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	if e, isApp := apperr.As(err); isApp && e.Kind != apperr.KindInternal {
		if e.Err != nil {
			s.log.DebugContext(r.Context(), "request refused", "method", r.Method, "path", r.URL.Path, "detail", e.Detail, "cause", e.Err)
		}
		if e.RetryAfter > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(e.RetryAfter.Seconds()))))
		}
		if len(e.Lines) > 0 {
			writeJSON(w, statusOf[e.Kind], map[string]any{"detail": e.Detail, "errors": e.Lines})
			return
		}
		writeJSON(w, statusOf[e.Kind], map[string]string{"detail": e.Detail})
		return
	}
	if store.IsInvalidText(err) { // a backstop: the store cleans text before it is written
		s.writeError(w, r, errInvalidText)
		return
	}
	if errors.Is(err, context.Canceled) && r.Context().Err() != nil {
		// The client left (a page closed mid-request): nothing failed here, nobody reads the
		// answer, and an ERROR line would page someone for it. 499 as nginx logs it.
		s.log.DebugContext(r.Context(), "request abandoned by the client", "method", r.Method, "path", r.URL.Path, "err", err)
		w.WriteHeader(statusClientClosed)
		return
	}
	if apperr.DatabaseUnreachable(err) {
		// The database is away (restarting, failing over, unreachable): 503 with
		// Retry-After on every route, not a 500 that would page someone per request.
		s.log.WarnContext(r.Context(), "database unreachable", "method", r.Method, "path", r.URL.Path, "err", err)
		s.writeError(w, r, apperr.DatabaseUnavailable(err))
		return
	}
	s.internalError(w, r, err)
}

// internalError answers 500 without saying anything internal: the client gets the request
// id, the log gets the cause under the same id.
func (s *Server) internalError(w http.ResponseWriter, r *http.Request, err error, attrs ...any) {
	id := requestID(r.Context())
	s.log.ErrorContext(r.Context(), "internal error", append([]any{"method", r.Method, "path", r.URL.Path, "err", err}, attrs...)...)
	writeJSON(w, http.StatusInternalServerError, Envelope{Code: "error", Message: "internal error (request id " + id + ")"})
}

type requestIDKey struct{}

// withRequestID gives every request an id, in its context and in the X-Request-Id
// response header, so a user's report of a failure can be found in the log.
func withRequestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b [8]byte
		_, _ = rand.Read(b[:])
		id := hex.EncodeToString(b[:])
		w.Header().Set("X-Request-Id", id)
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), requestIDKey{}, id)))
	})
}

func requestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// errInvalidText refuses client text PostgreSQL could not store as given. The store would
// clean it (see store.SafeText), but a client that sends it should learn so, not find
// its text changed.
var errInvalidText = &apperr.Error{Kind: apperr.KindInvalid, Detail: `Invalid text: values must be valid UTF-8 without NUL (\u0000) characters`}

// safeText reports whether b (JSON when json is set) is text PostgreSQL stores as it is.
func safeText(b []byte, json bool) bool {
	c := store.SafeText(b, json)
	return len(c) == len(b) && bytes.Equal(c, b)
}

// refuseBadText answers 400 for a path or query string with NUL characters or invalid
// UTF-8, before any handler sees them.
func refuseBadText(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q, err := url.QueryUnescape(r.URL.RawQuery)
		if err != nil {
			q = r.URL.RawQuery // the handler answers for a malformed query
		}
		if !safeText([]byte(r.URL.Path), false) || !safeText([]byte(q), false) {
			writeJSON(w, http.StatusBadRequest, map[string]string{"detail": errInvalidText.Detail})
			return
		}
		next.ServeHTTP(w, r)
	})
}

// writeJSON writes v as JSON with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

// decodeJSON reads a JSON object from r's body into dst, refusing bodies over maxBytes,
// trailing data, and (when strict) unknown fields. Errors are apperr values with a
// detail that tells the user what to fix.
//
// The body must be declared application/json exactly (parameters such as charset=utf-8
// allowed), or the answer is 415: the types a page elsewhere may send without asking
// first (text/plain, forms) are never read as JSON. The body passes validJSON (depth,
// duplicate keys, surrogates, UTF-8) before the decoder sees it.
func decodeJSON(w http.ResponseWriter, r *http.Request, dst any, maxBytes int64, strict bool) error {
	if err := requireMediaType(r, "application/json"); err != nil {
		return err
	}
	raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBytes))
	if err != nil {
		return jsonError(err, maxBytes)
	}
	if err := validJSON(raw); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if strict {
		dec.DisallowUnknownFields()
	}
	if err := dec.Decode(dst); err != nil {
		return jsonError(err, maxBytes)
	}
	if err := dec.Decode(&struct{}{}); !errors.Is(err, io.EOF) {
		return apperr.Invalid("Malformed JSON: unexpected data after the JSON object")
	}
	return nil
}

// requireMediaType refuses, with 415, a request whose Content-Type is not one of types
// (compared as media types: case aside, parameters such as charset allowed; a missing
// Content-Type is refused too). Checking the media type itself, not whether the header
// mentions it, matters: "text/plain; charset=application/json" is a type a page on any
// site may send without a CORS preflight.
func requireMediaType(r *http.Request, types ...string) error {
	ct := r.Header.Get("Content-Type")
	if mt, _, err := mime.ParseMediaType(ct); err == nil && slices.Contains(types, mt) {
		return nil
	}
	want := strings.Join(types, " or ")
	if ct == "" {
		return &apperr.Error{Kind: apperr.KindUnsupportedMediaType, Detail: fmt.Sprintf("Content-Type must be %s; the request has none", want)}
	}
	return &apperr.Error{Kind: apperr.KindUnsupportedMediaType, Detail: fmt.Sprintf("Content-Type must be %s, got %s", want, quoteInput(ct))}
}

func jsonError(err error, maxBytes int64) error {
	var (
		syntax  *json.SyntaxError
		typeErr *json.UnmarshalTypeError
		tooBig  *http.MaxBytesError
	)
	switch {
	case errors.As(err, &tooBig):
		return &apperr.Error{Kind: apperr.KindTooLarge, Detail: fmt.Sprintf("Request body too large: the limit is %d bytes", maxBytes)}
	case errors.As(err, &syntax):
		return apperr.Invalid("Malformed JSON at byte %d: %v", syntax.Offset, syntax)
	case errors.Is(err, io.EOF):
		return apperr.Invalid("Request body is empty: a JSON object is required")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return apperr.Invalid("Malformed JSON: the body ends too early")
	case errors.As(err, &typeErr):
		if typeErr.Field == "" {
			return apperr.Unprocessable("Request body must be a JSON object, got %s", typeErr.Value)
		}
		return apperr.Unprocessable("Field '%s': expected %s, got %s", typeErr.Field, jsonTypeName(typeErr.Type.Kind().String()), typeErr.Value)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return apperr.Unprocessable("Unknown field %s", strings.TrimPrefix(err.Error(), "json: unknown field "))
	default:
		return apperr.Invalid("Malformed JSON: %v", err)
	}
}

func jsonTypeName(goKind string) string {
	switch goKind {
	case "string":
		return "string"
	case "float64", "float32":
		return "number"
	case "int", "int32", "int64", "uint", "uint32", "uint64":
		return "integer"
	case "bool":
		return "boolean"
	case "map", "struct":
		return "object"
	case "slice", "array":
		return "array"
	}
	return goKind
}

// logRequests logs each request at debug level; errors are logged where they are written.
func logRequests(log *slog.Logger) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			log.DebugContext(r.Context(), "request", "method", r.Method, "path", r.URL.Path)
			next.ServeHTTP(w, r)
		})
	}
}

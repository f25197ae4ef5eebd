package httpapi

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/backtestd/backtestd/internal/apperr"
)

// Cross-site request forgery is stopped here, for every route, with accounts on or off: a
// page on another site can make the user's browser send a form POST, or a fetch of a
// "simple" type (text/plain, forms) without a CORS preflight, and without accounts (or
// with the page's cookie) nothing else would tell it from the user's own request. So a
// state-changing request (any method but GET, HEAD and OPTIONS; a WebSocket upgrade is
// checked the same way, see upgrader) that a browser marks as coming from another origin
// is refused with 403 before anything reads its body or credentials. JSON routes also
// take application/json only (requireMediaType), a type no page elsewhere may send
// without a preflight that CORS refuses.
//
// A request is let through when
//   - its Origin is listed in CORS_ORIGINS (Config.CORSOrigins), or CORS_ORIGINS is "*"
//     without accounts (any page may then call the API; the service warns at start);
//   - the browser says it is same-origin or user-initiated (Sec-Fetch-Site: same-origin or
//     none; every current browser sends it, and a page cannot forge it);
//   - it has no Sec-Fetch-Site (an older browser, or not a browser) and its Origin's host
//     is the request's Host, or the first X-Forwarded-Host a reverse proxy set (a proxy
//     that rewrites Host to its upstream's name keeps the page's name there; a page
//     elsewhere cannot set that header without a preflight);
//   - it has neither Sec-Fetch-Site nor Origin: curl, scripts, API clients, which a page
//     cannot make a browser send.
//
// The origin's scheme is not compared with the request's when falling back to Host (the
// service cannot see it behind TLS termination): as in net/http's CrossOriginProtection,
// whose rule this is, an HTTP page of the same name is let through by browsers too old
// to send Sec-Fetch-Site.

// safeMethod says whether method reads only.
func safeMethod(method string) bool {
	return method == http.MethodGet || method == http.MethodHead || method == http.MethodOptions
}

// refuseCrossSite answers 403 to a state-changing request from another site (crossSite).
func (s *Server) refuseCrossSite() func(http.Handler) http.Handler {
	if anyOrigin(s.cfg.CORSOrigins) && s.auth == nil {
		return func(h http.Handler) http.Handler { return h } // CORS_ORIGINS=*: any page may
	}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !safeMethod(r.Method) {
				if err := s.crossSite(r); err != nil {
					s.writeError(w, r, err)
					return
				}
			}
			next.ServeHTTP(w, r)
		})
	}
}

// crossSite says why r must not change anything as coming from another site, or nil when
// it may (see the rule above). It does not look at the method.
func (s *Server) crossSite(r *http.Request) error {
	origin := r.Header.Get("Origin")
	if origin != "" && s.trustedOrigin(origin) {
		return nil
	}
	switch site := r.Header.Get("Sec-Fetch-Site"); site {
	case "same-origin", "none":
		return nil
	case "": // an older browser, or not a browser: the Origin decides
	default:
		return errCrossSite(origin, "the browser marks it Sec-Fetch-Site: "+quoteInput(site))
	}
	if origin == "" {
		return nil
	}
	u, err := url.Parse(origin)
	if err == nil && u.Host != "" && (strings.EqualFold(u.Host, r.Host) || strings.EqualFold(u.Host, forwardedHost(r))) {
		return nil
	}
	return errCrossSite(origin, "its Origin is neither this service's host nor listed in CORS_ORIGINS")
}

// trustedOrigin says whether origin is listed in CORS_ORIGINS (compared as browsers
// serialise origins: lower-case, no trailing slash).
func (s *Server) trustedOrigin(origin string) bool {
	if anyOrigin(s.cfg.CORSOrigins) {
		return s.auth == nil
	}
	origin = strings.ToLower(origin)
	for _, o := range s.cfg.CORSOrigins {
		if strings.TrimSuffix(strings.ToLower(o), "/") == origin {
			return true
		}
	}
	return false
}

// forwardedHost is the host a reverse proxy says the client asked for: the first of
// X-Forwarded-Host's values.
func forwardedHost(r *http.Request) string {
	h, _, _ := strings.Cut(r.Header.Get("X-Forwarded-Host"), ",")
	return strings.TrimSpace(h)
}

func errCrossSite(origin, why string) error {
	from := "a page on another site"
	if origin != "" {
		from = "a page on " + quoteInput(origin)
	}
	return &apperr.Error{Kind: apperr.KindForbidden, Detail: fmt.Sprintf(
		"Cross-site request refused: %s may not change anything here (%s). Only this service's own pages, origins listed in CORS_ORIGINS and clients that are not browsers may", from, why)}
}

package httpapi

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"
)

// What a browser may do with the service: which Host names it answers (DNS rebinding),
// and the headers that keep its pages from being framed or running others' scripts.

const (
	// pagePolicy is the Content-Security-Policy of the web page and the API docs: scripts,
	// styles and connections (fetch, WebSocket) only from the service itself (the built page
	// has no inline script; the docs' one is allowed by its hash, see docs.go), inline styles
	// because ECharts' tooltips and Swagger UI write style attributes, data: images (the
	// page's icon, Swagger's CSS), and never framed.
	pagePolicy = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; " +
		"connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
	// documentPolicy is every other answer's, the HTML report's included: no script at all,
	// the report's inline styles and nothing loaded from anywhere; never framed.
	documentPolicy = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)

// securityHeaders gives every answer a content security policy (documentPolicy; the page
// and the docs set pagePolicy over it) and forbids framing and content sniffing, so no
// page elsewhere can frame the service's pages to trick a user into clicking.
func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", documentPolicy)
		h.Set("X-Frame-Options", "DENY")
		h.Set("X-Content-Type-Options", "nosniff")
		next.ServeHTTP(w, r)
	})
}

// hostGuard refuses, with 421 Misdirected Request, a request (WebSocket upgrades
// included) whose Host is neither a loopback name or address (localhost, *.localhost,
// 127.0.0.0/8, ::1) nor listed in Config.AllowedHosts. A page on a name the attacker
// controls that resolves to 127.0.0.1 (DNS rebinding) is same-origin with itself, so CORS
// does not stop it; its requests still carry its own name as Host, which this refuses.
// Without accounts the check always applies; with accounts (where a rebound page has no
// credentials to use) only when ALLOWED_HOSTS is set. "*" in the list turns it off.
func (s *Server) hostGuard() func(http.Handler) http.Handler {
	if slices.Contains(s.cfg.AllowedHosts, "*") && s.auth == nil {
		s.log.Warn("ALLOWED_HOSTS=* without accounts: any web page the user visits can reach this service by DNS rebinding; list the service's names instead")
	}
	if slices.Contains(s.cfg.AllowedHosts, "*") || (s.auth != nil && len(s.cfg.AllowedHosts) == 0) {
		return func(h http.Handler) http.Handler { return h }
	}
	allowed := map[string]bool{}
	for _, h := range s.cfg.AllowedHosts {
		allowed[hostName(h)] = true
	}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if name := hostName(r.Host); !loopbackHost(name) && !allowed[name] {
				writeJSON(w, http.StatusMisdirectedRequest, map[string]string{"detail": fmt.Sprintf(
					"Misdirected Request: this service does not answer to the host name %q; if it is this service's name, add it to ALLOWED_HOSTS", name)})
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

// hostName is the host of a Host header or ALLOWED_HOSTS entry: without port or
// brackets, lower-case, without a trailing dot.
func hostName(hostport string) string {
	h := hostport
	if host, _, err := net.SplitHostPort(hostport); err == nil {
		h = host
	}
	h = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	return strings.TrimSuffix(strings.ToLower(h), ".")
}

// loopbackHost says whether name (as hostName gives it) always means this machine:
// localhost and its subdomains (browsers resolve them to loopback themselves, RFC 6761)
// and loopback addresses.
func loopbackHost(name string) bool {
	if name == "localhost" || strings.HasSuffix(name, ".localhost") {
		return true
	}
	ip, err := netip.ParseAddr(name)
	return err == nil && ip.Unmap().IsLoopback()
}

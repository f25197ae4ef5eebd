package httpapi

import "github.com/go-chi/chi/v5"

// mountResults mounts Result routes under /api/results.
func (s *Server) mountResults(r chi.Router) {}

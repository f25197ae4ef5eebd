package httpapi

import "github.com/go-chi/chi/v5"

// mountData mounts Data-source routes under /api/data.
func (s *Server) mountData(r chi.Router) {}

package httpapi

import "github.com/go-chi/chi/v5"

// mountStrategies mounts Strategy routes under /api/strategies.
func (s *Server) mountStrategies(r chi.Router) {}

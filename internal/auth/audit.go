package auth

import (
	"context"
	"time"

	"github.com/backtestd/backtestd/internal/apperr"
	"github.com/backtestd/backtestd/internal/store"
)

// Entry is one line of the audit log: who (Actor; "" for nobody) did what (Action, e.g.
// "strategy.replace") to what (Target, e.g. "str_3"), and the answer's status.
type Entry struct {
	Actor      string
	Action     string
	Target     string
	Status     int
	RemoteAddr string
	RequestID  string
}

// Record writes an entry to the audit log.
func (s *Service) Record(ctx context.Context, e Entry) error {
	var actor *string
	if e.Actor != "" {
		actor = &e.Actor
	}
	if err := s.st.InsertAudit(ctx, s.st.Pool, store.InsertAuditParams{Actor: actor, Action: e.Action, Target: store.Truncate(e.Target, 500), Status: int32(e.Status), RemoteAddr: e.RemoteAddr, RequestID: e.RequestID}); err != nil {
		return wrap(err, "audit %s", e.Action)
	}
	return nil
}

// record is Record for the service's own entries, whose failure must not fail a sign-in
// answer that is already decided.
func (s *Service) record(ctx context.Context, e Entry) { _ = s.Record(ctx, e) }

// AuditFilter selects audit entries: by actor, by action prefix ("task." for all task
// actions), in [Since, Until), Skip and Limit for paging (Limit 1..1000, default 100).
type AuditFilter struct {
	Actor, Action string
	Since, Until  *time.Time
	Skip, Limit   int
}

// AuditRecord is one stored audit entry.
type AuditRecord struct {
	ID         int64     `json:"id"`
	At         time.Time `json:"at"`
	Actor      *string   `json:"actor"`
	Action     string    `json:"action"`
	Target     string    `json:"target"`
	Status     int       `json:"status"`
	RemoteAddr string    `json:"remote_addr"`
	RequestID  string    `json:"request_id"`
}

// Audit lists entries newest first.
func (s *Service) Audit(ctx context.Context, f AuditFilter) ([]AuditRecord, error) {
	if f.Limit == 0 {
		f.Limit = 100
	}
	if f.Limit < 1 || f.Limit > 1000 || f.Skip < 0 || f.Skip > store.MaxOffset {
		return nil, apperr.Invalid("limit must be 1 to 1000 and skip 0 to %d", store.MaxOffset)
	}
	rows, err := s.st.ListAudit(ctx, s.st.Pool, store.ListAuditParams{Actor: f.Actor, Action: f.Action, Since: f.Since, Until: f.Until, Skip: int32(f.Skip), Lim: int32(f.Limit)})
	if err != nil {
		return nil, wrap(err, "read audit log")
	}
	out := make([]AuditRecord, len(rows))
	for i, r := range rows {
		out[i] = AuditRecord{ID: r.ID, At: r.At, Actor: r.Actor, Action: r.Action, Target: r.Target, Status: int(r.Status), RemoteAddr: r.RemoteAddr, RequestID: r.RequestID}
	}
	return out, nil
}

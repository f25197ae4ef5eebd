package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/backtestd/backtestd/internal/events"
	"github.com/backtestd/backtestd/internal/store"
)

// Get returns a task with its attempt history.
func (s *Service) Get(ctx context.Context, id string) (Task, error) {
	row, err := s.q.GetTaskWithAttempts(ctx, s.db.Pool, id)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return Task{}, TaskNotFound(id)
		}
		return Task{}, fmt.Errorf("get task %s: %w", id, err)
	}
	t := fromRow(row.Task)
	var atts []store.TaskAttempt
	if err := json.Unmarshal(row.Attempts, &atts); err != nil {
		return Task{}, fmt.Errorf("attempts of %s: %w", id, err)
	}
	t.Attempts = make([]Attempt, len(atts))
	for i, a := range atts {
		// Times in JSON carry the database session's offset; pgx gives the task's own in
		// this process's zone, and both are shown alike.
		t.Attempts[i] = Attempt{Attempt: int(a.Attempt), Status: a.Status, Error: a.Error,
			CreatedAt: a.CreatedAt.Local(), StartedAt: localTime(a.StartedAt), CompletedAt: localTime(a.CompletedAt),
			Runs: int(a.Runs), Worker: a.Worker, Interruptions: []Interruption{}}
		if err := json.Unmarshal(a.Interruptions, &t.Attempts[i].Interruptions); err != nil {
			return Task{}, fmt.Errorf("interruptions of %s attempt %d: %w", id, a.Attempt, err)
		}
	}
	return t, nil
}

func localTime(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	l := t.Local()
	return &l
}

// Progress returns the progress record of a task.
func (s *Service) Progress(ctx context.Context, id string) (ProgressInfo, error) {
	row, err := s.q.GetTask(ctx, s.db.Pool, id)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return ProgressInfo{}, TaskNotFound(id)
		}
		return ProgressInfo{}, fmt.Errorf("get task %s: %w", id, err)
	}
	return ProgressInfo{TaskID: row.ID, Status: row.Status, Progress: row.Progress,
		CurrentBar: int(row.CurrentBar), TotalBars: int(row.TotalBars)}, nil
}

// LogFilter selects log lines.
type LogFilter struct {
	Levels  []string // empty: all
	Attempt int      // 0: all attempts
	Skip    int
	Limit   int
}

// LogEntry is one stored log line as the logs route returns it.
type LogEntry struct {
	ID        int64      `json:"id"`
	TaskID    string     `json:"task_id"`
	Attempt   int        `json:"attempt"`
	Level     string     `json:"level"`
	Message   string     `json:"message"`
	Source    string     `json:"source"`
	Timestamp float64    `json:"timestamp"` // epoch seconds, as in the log event
	Time      time.Time  `json:"time"`
	BarTime   *time.Time `json:"bar_time"`
}

// Logs returns a page of a task's stored log lines, oldest first. Unknown ids give an
// empty list (unknown ids are not checked, as api/openapi.yaml says).
func (s *Service) Logs(ctx context.Context, id string, f LogFilter) ([]LogEntry, error) {
	p := store.ListTaskLogsParams{TaskID: id, Skip: int32(f.Skip), Lim: int32(f.Limit)}
	if len(f.Levels) > 0 {
		p.Levels = f.Levels
	}
	if f.Attempt > 0 {
		a := int32(f.Attempt)
		p.Attempt = &a
	}
	rows, err := s.q.ListTaskLogs(ctx, s.db.Pool, p)
	if err != nil {
		return nil, fmt.Errorf("logs of %s: %w", id, err)
	}
	out := make([]LogEntry, len(rows))
	for i, r := range rows {
		out[i] = LogEntry{ID: r.ID, TaskID: r.TaskID, Attempt: int(r.Attempt), Level: r.Level,
			Message: r.Message, Source: r.Source, Timestamp: events.EpochSeconds(r.Ts), Time: r.Ts}
		if r.HasBar {
			out[i].BarTime = &r.BarTime
		}
	}
	return out, nil
}

// FinalState returns the frames a subscriber joining now should see after `connected`:
// the complete event of a finished task, or the current progress of a running one. An
// unknown task gives none.
func (s *Service) FinalState(ctx context.Context, id string) (complete bool, attempt int, frame []byte, err error) {
	row, err := s.q.GetTask(ctx, s.db.Pool, id)
	if errors.Is(err, store.ErrNotFound) {
		return false, 0, nil, nil
	}
	if err != nil {
		return false, 0, nil, err
	}
	switch Status(row.Status) {
	case StatusRunning:
		return false, int(row.Attempt), events.ProgressFrame(events.Progress{TaskID: id, Progress: row.Progress,
			CurrentBar: int(row.CurrentBar), TotalBars: int(row.TotalBars)}), nil
	case StatusCompleted, StatusFailed, StatusCancelled:
		c := events.Complete{TaskID: id, Attempt: int(row.Attempt), Status: row.Status, Error: row.Error}
		if Status(row.Status) == StatusCompleted {
			if sum, err := s.storedSummary(ctx, id); err == nil {
				c.Result = sum
			}
		}
		return true, int(row.Attempt), events.CompleteFrame(c), nil
	}
	return false, 0, nil, nil
}

// Result returns a task and, once it completed, its stored summary (null before).
func (s *Service) Result(ctx context.Context, id string) (Task, json.RawMessage, error) {
	t, err := s.Get(ctx, id)
	if err != nil {
		return Task{}, nil, err
	}
	if t.Status != StatusCompleted {
		return t, nil, nil
	}
	sum, err := s.storedSummary(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return t, nil, nil
	}
	if err != nil {
		return Task{}, nil, fmt.Errorf("summary of %s: %w", id, err)
	}
	return t, sum, nil
}

package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/backtestd/backtestd/internal/events"
	"github.com/backtestd/backtestd/internal/findings"
	"github.com/backtestd/backtestd/internal/jsrt"
	"github.com/backtestd/backtestd/internal/provenance"
	"github.com/backtestd/backtestd/internal/store"
)

// runRecord is what a run records of itself as it runs: its provenance, and the per-bar
// prints of the series it read (stored once per series, see marketdata.Feeds.SavePrints).
type runRecord struct {
	prov   provenance.Provenance
	prints map[string][]provenance.Print // by series sha256
	// The run's last log lines, not yet published (lines) nor stored (chunk), and its
	// steps: they go with the completion.
	lines []events.LogLine
	chunk store.InsertTaskLogChunkParams
	steps int
	task  store.Task
	// findings are the run's own (internal/findings), stored with its result.
	findings []findings.Finding
}

// flushLogs stores and publishes the run's last lines when its completion could not
// (best effort, as the log sink's own writes).
func (r *runRecord) flushLogs(ctx context.Context, s *Service) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	s.storeChunk(ctx, r.chunk)
	r.chunk.Ts = nil
	r.publishLogs(ctx, s)
}

// publishLogs publishes the run's last lines when no completion did.
func (r *runRecord) publishLogs(ctx context.Context, s *Service) {
	s.publishLines(ctx, r.task, r.lines)
	r.lines = nil
}

// newRunRecord starts the record of a run of t with t's resolved settings.
func newRunRecord(t store.Task) *runRecord {
	return &runRecord{task: t, prints: map[string][]provenance.Print{}, prov: provenance.Provenance{
		EngineVersion: provenance.Engine(),
		Data:          []provenance.Feed{},
		Parameters:    map[string]any{},
		Settings: provenance.Settings{
			StrategyID: t.StrategyID, StrategyVersion: int(t.StrategyVersion), DataSource: t.DataSource,
			Symbols: t.Symbols, Benchmark: t.Benchmark, Timeframe: t.Timeframe, Timezone: t.Timezone,
			StartDate: t.StartDate.Format(time.DateOnly), EndDate: t.EndDate.Format(time.DateOnly),
			InitialCash: t.InitialCash, Commission: t.Commission,
		},
	}}
}

// declaredParams is how many parameters a version declares (its stored jsrt.Param list).
func declaredParams(declared json.RawMessage) int {
	var ps []jsrt.Param
	if len(declared) == 0 || json.Unmarshal(declared, &ps) != nil {
		return 0
	}
	return len(ps)
}

// version records the code run and its parameters: the declared defaults, overlaid by the
// task's values.
func (r *runRecord) version(code string, declared json.RawMessage, params map[string]any) {
	r.prov.CodeSHA256 = provenance.CodeSHA256(code)
	if len(declared) > 0 {
		var ps []jsrt.Param
		if err := json.Unmarshal(declared, &ps); err == nil {
			for _, p := range ps {
				r.prov.Parameters[p.Name] = p.Default
			}
		}
	}
	for k, v := range params {
		r.prov.Parameters[k] = v
	}
}

// feed records one series the run read.
func (r *runRecord) feed(f provenance.Feed, prints []provenance.Print) {
	r.prov.Data = append(r.prov.Data, f)
	r.prints[f.SHA256] = prints
}

// savePrints stores the per-bar prints of the run's series (new ones only). They only make
// a later comparison more precise: a failure is logged, not fatal.
func (s *Service) savePrints(ctx context.Context, taskID string, r *runRecord) {
	for sum, prints := range r.prints {
		if err := s.feeds.SavePrints(ctx, sum, prints); err != nil {
			s.log.Warn("store bar prints", "task", taskID, "err", err)
		}
	}
}

// Provenance returns the provenance of task id's completed run; nil when none is recorded
// (the task has not completed, or ran before provenance was kept).
func (s *Service) Provenance(ctx context.Context, id string) (*provenance.Provenance, error) {
	return loadProvenance(ctx, s.db, id)
}

func loadProvenance(ctx context.Context, db *store.Store, id string) (*provenance.Provenance, error) {
	raw, err := db.Queries.RunProvenance(ctx, db.Pool, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("provenance of %s: %w", id, err)
	}
	var p provenance.Provenance
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, fmt.Errorf("provenance of %s: %w", id, err)
	}
	return &p, nil
}

// Package studies runs parameter studies in the service: a backtest request run over many
// parameter combinations (a grid or a seeded random sample, less those a constraint leaves
// out), fanned out to River in batches over every worker process, each combination's
// figures stored as a typed row, ranked by an objective, shown as a leaderboard and a
// heatmap, judged by the overfitting statistics, and any combination promoted to an
// ordinary backtest. The plan, ranking and statistics are internal/sweep's; this package
// owns the lifecycle, the jobs and the tables.
package studies

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/backtestd/backtestd/internal/apperr"
	"github.com/backtestd/backtestd/internal/engine"
	"github.com/backtestd/backtestd/internal/events"
	"github.com/backtestd/backtestd/internal/fairshare"
	"github.com/backtestd/backtestd/internal/jobs"
	"github.com/backtestd/backtestd/internal/jsrt"
	"github.com/backtestd/backtestd/internal/marketdata"
	"github.com/backtestd/backtestd/internal/overfit"
	"github.com/backtestd/backtestd/internal/runner"
	"github.com/backtestd/backtestd/internal/store"
	"github.com/backtestd/backtestd/internal/sweep"
	"github.com/backtestd/backtestd/internal/tasks"
)

// Runner runs strategy code for studies: in the service, the pool of runner processes.
// Slot is a job's CPU place in this process, shared with the backtests (runner.Pool.Slot).
type Runner interface {
	Slot(ctx context.Context, owner string, kind fairshare.Kind) (release func(), ok bool)
	Run(ctx context.Context, cfg jsrt.RunConfig) (*engine.Result, error)
	RunBatch(ctx context.Context, cfg jsrt.RunConfig, params []map[string]any, objective string, onTrial func(runner.Trial)) error
	Constraint(ctx context.Context, expr string, combos []map[string]any) ([]bool, error)
}

// Config configures a Service.
type Config struct {
	Runner      Runner
	RunTimeout  time.Duration // of each combination's run; 0: jsrt's default
	MemoryLimit uint64        // of the runner process; 0: jsrt's default
	// BatchSize is the most combinations one job runs (0: chosen from the study's size, so
	// that a study spreads over many workers while each job still runs a good number).
	BatchSize int
	// Lease is how long a running batch's worker may go without renewing its lease before
	// another worker queues its pending trials again (0: tasks.DefaultLease).
	Lease time.Duration
	// UserMaxRunning is the fair share: how many units of work (backtests and study jobs)
	// of one user run at once over all workers (0: no limit; fairshare.Admit).
	UserMaxRunning int
	// Slice is about how long a batch job computes before it goes back to the queue with
	// the combinations it has not run, so that others' work waiting for a worker or a CPU
	// place gets its turn (0: DefaultSlice). A slice runs at least one combination.
	Slice time.Duration
}

// DefaultSlice is the default Config.Slice: short against the time a single backtest may
// wait for a place, long against the cost of queueing a batch again (a few queries and
// one load of the bars, some milliseconds).
const DefaultSlice = time.Second

// Service is the study lifecycle. Give it the River client with SetQueue.
type Service struct {
	cfg   Config
	db    *store.Store
	q     *store.Queries
	tasks *tasks.Service
	feeds *marketdata.Feeds
	pub   *events.Publisher
	queue *jobs.Client
	log   *slog.Logger
	// trialTime is the time of a combination, per study, in this process's last chunk.
	trialTime trialTimes
}

// New returns a service over db; ts checks the backtest fields of a study's request and
// makes the backtests promoted from it.
func New(cfg Config, db *store.Store, ts *tasks.Service, log *slog.Logger) *Service {
	if log == nil {
		log = slog.Default()
	}
	if cfg.RunTimeout <= 0 {
		cfg.RunTimeout = jsrt.DefaultWallTimeLimit
	}
	if cfg.Lease <= 0 {
		cfg.Lease = tasks.DefaultLease
	}
	if cfg.Slice <= 0 {
		cfg.Slice = DefaultSlice
	}
	return &Service{cfg: cfg, db: db, q: db.Queries, tasks: ts, feeds: marketdata.NewFeeds(db, 0),
		pub: events.NewPublisher(db.Pool), log: log}
}

// SetQueue gives the service the River client it enqueues batches with.
func (s *Service) SetQueue(c *jobs.Client) { s.queue = c }

// Request is the body of POST /api/studies: the fields of a backtest request (its
// strategy_params are the values every combination shares) and the study's own.
type Request struct {
	tasks.Request
	Name *string `json:"name"`
	// Space is, per parameter, a list of values or {start, stop, step} (stop included).
	Space      map[string]json.RawMessage `json:"space"`
	Method     *string                    `json:"method"`  // grid (default), random or bayes
	Samples    *int                       `json:"samples"` // of random and bayes: how many combinations
	Seed       *int64                     `json:"seed"`    // of random and bayes: the same seed, the same trials
	Constraint *string                    `json:"constraint"`
	Objective  *string                    `json:"objective"` // default sharpe_ratio
	Direction  *string                    `json:"direction"` // max (default) or min
	Blocks     *int                       `json:"blocks"`    // of the PBO, default 16
	// WalkForward, when set, runs the study on each fold's training window and each
	// fold's winner on the test window that follows.
	WalkForward *WalkForwardSpec `json:"walk_forward"`
	// Validation, when set, declares the study's combinatorial purged cross-validation,
	// which GET /api/studies/{id}/cpcv answers.
	Validation *Validation `json:"validation"`
}

// Study is a study as the API shows it.
type Study struct {
	ID              string           `json:"id"`
	Name            string           `json:"name"`
	Status          Status           `json:"status"`
	CanCancel       bool             `json:"can_cancel"` // what the state allows its owner (Machine)
	CanRetry        bool             `json:"can_retry"`  // and it has failed or cancelled combinations to run again
	StrategyID      string           `json:"strategy_id"`
	StrategyVersion int              `json:"strategy_version"`
	DataSource      string           `json:"data_source"`
	Symbols         []string         `json:"symbols"`
	Timeframe       string           `json:"timeframe"`
	StartDate       string           `json:"start_date"`
	EndDate         string           `json:"end_date"`
	InitialCash     float64          `json:"initial_cash"`
	Commission      float64          `json:"commission"`
	StrategyParams  json.RawMessage  `json:"strategy_params"`
	Space           map[string][]any `json:"space"`
	Method          string           `json:"method"`
	Samples         *int32           `json:"samples,omitempty"`
	Seed            *int64           `json:"seed,omitempty"`
	Constraint      *string          `json:"constraint"`
	Objective       string           `json:"objective"`
	Direction       string           `json:"direction"`
	Blocks          int              `json:"blocks"`
	WalkForward     json.RawMessage  `json:"walk_forward"` // null: none
	Validation      json.RawMessage  `json:"validation"`   // null: none
	Folds           int              `json:"folds"`        // 1 without walk-forward analysis
	Total           int              `json:"total"`        // combinations × folds
	Excluded        int              `json:"excluded"`
	Done            int              `json:"done"`
	Failed          int              `json:"failed"`
	Cancelled       int              `json:"cancelled"`
	Best            *Best            `json:"best"`
	Error           *string          `json:"error"`
	CreatedBy       *string          `json:"created_by"`
	PinnedAt        *time.Time       `json:"pinned_at"` // when a user pinned it (kept by retention); nil: not pinned
	CreatedAt       time.Time        `json:"created_at"`
	StartedAt       *time.Time       `json:"started_at"`
	CompletedAt     *time.Time       `json:"completed_at"`
}

// Best is the best combination so far.
type Best struct {
	Index     int             `json:"idx"`
	Params    json.RawMessage `json:"params"`
	Objective float64         `json:"objective"`
}

// NotFound is the 404 of the study routes.
func NotFound(id string) error { return apperr.NotFound("Study not found: %s", id) }

// Create validates req, plans its combinations, stores the study with one pending row per
// combination and enqueues its batches, all in one transaction. Everything is checked
// before anything runs: the backtest fields as POST /api/backtests checks them, the space,
// every combination's parameters by the strategy's parameters, the constraint and the objective.
func (s *Service) Create(ctx context.Context, req Request) (Study, error) {
	r, err := s.tasks.Resolve(ctx, req.Request)
	if err != nil {
		return Study{}, err
	}
	space, err := parseSpace(req.Space, r.Strategy)
	if err != nil {
		return Study{}, err
	}
	method := "grid"
	if req.Method != nil {
		method = *req.Method
	}
	var combos []map[string]any
	var samples *int32
	var seed *int64
	switch method {
	case "grid":
		if req.Samples != nil || req.Seed != nil {
			return Study{}, apperr.Invalid("samples and seed go with method random")
		}
		combos, err = space.Grid()
	case "random", "bayes":
		if req.Samples == nil {
			return Study{}, apperr.Invalid("method %s needs samples: how many combinations to run", method)
		}
		n, sd := int32(min(max(*req.Samples, math.MinInt32), math.MaxInt32)), int64(1)
		if req.Seed != nil {
			sd = *req.Seed
		}
		samples, seed = &n, &sd
		if method == "random" {
			combos, err = space.Random(*req.Samples, uint64(sd))
		} else if err = checkBayesSpace(space, &r.Strategy); err != nil {
			return Study{}, err
		} else if *req.Samples < 1 || *req.Samples > sweep.MaxCombinations {
			return Study{}, apperr.Invalid("samples must be from 1 to %d, got %d", sweep.MaxCombinations, *req.Samples)
		} else if req.WalkForward != nil {
			return Study{}, apperr.Invalid("walk_forward goes with method grid or random: a bayes study's rounds are not run per fold")
		}
	default:
		return Study{}, apperr.Invalid("method must be grid, random or bayes, got %q", method)
	}
	if err != nil {
		return Study{}, apperr.Invalid("space: %s", err)
	}
	var fixed map[string]any
	if err := json.Unmarshal(r.StrategyParams, &fixed); err != nil {
		return Study{}, fmt.Errorf("resolved strategy_params: %w", err)
	}
	for name := range space {
		if _, given := req.StrategyParams[name]; given {
			return Study{}, apperr.Invalid("%s is both in space and in strategy_params: vary it or fix it", name)
		}
	}
	if i, err := sweep.Complete(combos, fixed, &r.Strategy); err != nil {
		return Study{}, apperr.Invalid("combination %s: %s", sweep.Describe(space.Names(), combos[i]), err)
	}
	var constraint *string
	excluded := 0
	if req.Constraint != nil && strings.TrimSpace(*req.Constraint) != "" {
		expr := strings.TrimSpace(*req.Constraint)
		constraint = &expr
	}
	if constraint != nil && method != "bayes" { // a bayes study's proposals are judged as they come
		expr := *constraint
		keep, err := s.cfg.Runner.Constraint(ctx, expr, combos)
		var pe *jsrt.ParamError
		if errors.As(err, &pe) {
			return Study{}, apperr.Invalid("%s", pe.Message)
		}
		if err != nil {
			return Study{}, fmt.Errorf("evaluate the constraint: %w", err)
		}
		n := len(combos)
		combos = sweep.Keep(combos, keep)
		if excluded = n - len(combos); len(combos) == 0 {
			return Study{}, apperr.Invalid("the constraint leaves no combination (all %d left out)", excluded)
		}
	}
	objective := "sharpe_ratio"
	if req.Objective != nil {
		objective = strings.TrimSpace(*req.Objective)
	}
	if !KnownMetric(objective) {
		return Study{}, apperr.Invalid("unknown objective %q: use a summary field such as sharpe_ratio, total_return or max_drawdown_pct, or a statistic's key such as sortino_ratio", objective)
	}
	direction := "max"
	if req.Direction != nil {
		direction = *req.Direction
	}
	if direction != "max" && direction != "min" {
		return Study{}, apperr.Invalid("direction must be max or min, got %q", direction)
	}
	blocks := overfit.DefaultBlocks
	if req.Blocks != nil {
		blocks = *req.Blocks
	}
	if blocks < 2 || blocks > 24 || blocks%2 != 0 {
		return Study{}, apperr.Invalid("blocks must be an even number from 2 to 24, got %d", blocks)
	}
	name := ""
	if req.Name != nil {
		if name = strings.TrimSpace(*req.Name); len(name) > 200 {
			return Study{}, apperr.Invalid("name is too long: at most 200 characters")
		}
	}
	spaceJSON, err := json.Marshal(space)
	if err != nil {
		return Study{}, apperr.Invalid("space cannot be stored: %v", err)
	}
	var folds []store.CopyStudyFoldsParams
	var wfJSON []byte
	if wf := req.WalkForward; wf != nil {
		if folds, err = s.planFolds(ctx, *wf, r.DataSource, r.Symbols, r.DataVersions, r.Timeframe, r.StartDate, r.EndDate); err != nil {
			return Study{}, err
		}
		if n := len(folds) * len(combos); n > sweep.MaxCombinations {
			return Study{}, apperr.Invalid("%d folds × %d combinations make %d runs, more than %d: narrow the space or use fewer folds",
				len(folds), len(combos), n, sweep.MaxCombinations)
		}
		if wfJSON, err = json.Marshal(wf); err != nil {
			return Study{}, fmt.Errorf("walk_forward: %w", err)
		}
	}
	var validation []byte
	if v := req.Validation; v != nil {
		if req.WalkForward != nil {
			return Study{}, apperr.Invalid("validation and walk_forward are two ways to test a study out of sample: choose one")
		}
		if err := v.check(); err != nil {
			return Study{}, err
		}
		if validation, err = json.Marshal(v); err != nil {
			return Study{}, fmt.Errorf("validation: %w", err)
		}
	}
	nFolds := max(len(folds), 1)
	total := len(combos) * nFolds
	if method == "bayes" {
		obj := sweep.Objective{Metric: objective, Minimize: direction == "min"}
		if combos, err = s.firstRound(ctx, space, fixed, constraint, obj, *seed, int(*samples)); err != nil {
			return Study{}, err
		}
		total = min(int(*samples), space.Size())
	}
	var row store.Study
	err = s.db.WithTx(ctx, func(tx pgx.Tx) error {
		var err error
		row, err = s.q.CreateStudy(ctx, tx, store.CreateStudyParams{
			Name: name, StrategyID: r.StrategyID, StrategyVersion: r.StrategyVersion, DataSource: r.DataSource,
			Symbols: r.Symbols, Timeframe: r.Timeframe, Timezone: r.Timezone, StartDate: r.StartDate, EndDate: r.EndDate,
			InitialCash: r.InitialCash, Commission: r.Commission, StrategyParams: r.StrategyParams, Space: spaceJSON,
			Method: method, Samples: samples, Seed: seed, ConstraintExpr: constraint, Objective: objective,
			Direction: direction, Blocks: int32(blocks), Total: int32(total), Excluded: int32(excluded), CreatedBy: req.By,
			WalkForward: wfJSON, Folds: int32(nFolds), Validation: validation,
		})
		if err != nil {
			return fmt.Errorf("insert study: %w", err)
		}
		if err := s.insertTrials(ctx, tx, row.ID, 0, space, combos, nFolds); err != nil {
			return err
		}
		if len(r.DataVersions) > 0 { // as_of: every batch and fold reads these versions
			p := store.InsertStudyDataVersionsParams{StudyID: row.ID}
			for _, sym := range r.Symbols {
				if v := r.DataVersions[sym]; v > 0 {
					p.Symbols = append(p.Symbols, sym)
					p.Versions = append(p.Versions, int32(v))
				}
			}
			if err := s.q.InsertStudyDataVersions(ctx, tx, p); err != nil {
				return fmt.Errorf("record data versions of %s: %w", row.ID, err)
			}
		}
		for i := range folds {
			folds[i].StudyID = row.ID
		}
		if _, err := s.q.CopyStudyFolds(ctx, tx, folds); err != nil {
			return fmt.Errorf("store the folds: %w", err)
		}
		idx := make([]int32, len(combos)*nFolds)
		for i := range idx {
			idx[i] = int32(i)
		}
		return s.enqueue(ctx, tx, row, idx)
	})
	if err != nil {
		return Study{}, err
	}
	return fromRow(row, store.StudyProgressRow{}), nil
}

// insertTrials stores the plan from idx first on: a pending row per combination and fold
// (fold f's trial of combination c is idx first+f×len(combos)+c) and the typed copy of its
// varied parameters.
func (s *Service) insertTrials(ctx context.Context, tx pgx.Tx, id string, first int, space sweep.Space, combos []map[string]any, folds int) error {
	rows := make([]store.CopyStudyTrialsParams, 0, len(combos)*folds)
	var prm []store.CopyStudyTrialParamsParams
	for k := range folds * len(combos) {
		c := combos[k%len(combos)]
		b, err := json.Marshal(c)
		if err != nil {
			return apperr.Invalid("combination %d cannot be stored: %v", k%len(combos), err)
		}
		rows = append(rows, store.CopyStudyTrialsParams{StudyID: id, Idx: int32(first + k), Fold: int32(k / len(combos)), Params: b})
		for _, name := range space.Names() {
			p := store.CopyStudyTrialParamsParams{StudyID: id, Idx: int32(first + k), Name: name}
			switch v := c[name].(type) {
			case int64:
				f := float64(v)
				p.Num = &f
			case float64:
				p.Num = &v
			case bool:
				p.Flag = &v
			case string:
				p.Txt = &v
			default:
				t := fmt.Sprint(v)
				p.Txt = &t
			}
			prm = append(prm, p)
		}
	}
	if _, err := s.q.CopyStudyTrials(ctx, tx, rows); err != nil {
		return fmt.Errorf("store the combinations: %w", err)
	}
	if _, err := s.q.CopyStudyTrialParams(ctx, tx, prm); err != nil {
		return fmt.Errorf("store the combinations' parameters: %w", err)
	}
	return nil
}

// batchSize is how many combinations one job runs: about 32 jobs for a study, so that
// every worker gets a share, of 5 to 50 combinations each.
func (s *Service) batchSize(n int) int {
	if s.cfg.BatchSize > 0 {
		return s.cfg.BatchSize
	}
	return min(max((n+31)/32, 5), 50)
}

// insertOpts are the options of a study job of owner's: its place in the queue
// (fairshare.Priority).
func (s *Service) insertOpts(owner *string) *river.InsertOpts {
	return &river.InsertOpts{Priority: fairshare.Priority(fairshare.Study, owner, s.cfg.UserMaxRunning)}
}

// enqueue inserts the jobs running study's trials idx (in plan order), inside tx. A batch
// holds one fold's trials only: they run on the same bars.
func (s *Service) enqueue(ctx context.Context, tx pgx.Tx, st store.Study, idx []int32) error {
	if s.queue == nil {
		return errors.New("studies: no job queue configured")
	}
	perFold := max(st.Total/max(st.Folds, 1), 1)
	size := s.batchSize(len(idx))
	var params []river.InsertManyParams
	for len(idx) > 0 {
		n := min(size, len(idx))
		if end := slices.IndexFunc(idx[:n], func(i int32) bool { return i/perFold != idx[0]/perFold }); end > 0 {
			n = end
		}
		params = append(params, river.InsertManyParams{Args: BatchArgs{StudyID: st.ID, Trials: idx[:n]}, InsertOpts: s.insertOpts(st.CreatedBy)})
		idx = idx[n:]
	}
	if _, err := s.queue.InsertManyTx(ctx, tx, params); err != nil {
		return fmt.Errorf("enqueue %s: %w", st.ID, err)
	}
	return nil
}

// parseSpace reads the request's space: per parameter a list of values or {start, stop,
// step}; each parameter must be one the strategy declares.
func parseSpace(in map[string]json.RawMessage, info jsrt.StrategyInfo) (sweep.Space, error) {
	if len(in) == 0 {
		return nil, apperr.Invalid("space is required: per parameter, a list of values or {start, stop, step}")
	}
	declared := make([]string, len(info.Params))
	for i, p := range info.Params {
		declared[i] = p.Name
	}
	out := sweep.Space{}
	for name, raw := range in {
		if !slices.Contains(declared, name) {
			return nil, apperr.Invalid("space.%s: the strategy has no parameter %s (its parameters: %s)", name, name, strings.Join(declared, ", "))
		}
		raw = bytes.TrimSpace(raw)
		bad := func(format string, a ...any) error {
			return apperr.Invalid("space.%s: "+format, append([]any{name}, a...)...)
		}
		switch {
		case len(raw) > 0 && raw[0] == '[':
			dec := json.NewDecoder(bytes.NewReader(raw))
			dec.UseNumber()
			var vals []any
			if err := dec.Decode(&vals); err != nil {
				return nil, bad("not a list of values: %v", err)
			}
			if len(vals) == 0 {
				return nil, bad("an empty list")
			}
			for i, v := range vals {
				if n, ok := v.(json.Number); ok {
					if iv, err := n.Int64(); err == nil {
						vals[i] = iv
					} else if f, err := n.Float64(); err == nil {
						vals[i] = f
					}
				}
			}
			out[name] = vals
		case len(raw) > 0 && raw[0] == '{':
			var r struct{ Start, Stop, Step *float64 }
			dec := json.NewDecoder(bytes.NewReader(raw))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&r); err != nil || r.Start == nil || r.Stop == nil || r.Step == nil {
				return nil, bad("a range is {\"start\": number, \"stop\": number, \"step\": number}")
			}
			vals, err := sweep.Range(*r.Start, *r.Stop, *r.Step)
			if err != nil {
				return nil, bad("%s", err)
			}
			out[name] = vals
		default:
			return nil, bad("must be a list of values or {start, stop, step}")
		}
	}
	return out, nil
}

// KnownMetric says whether metric names a summary field or a statistic a study can rank by.
func KnownMetric(metric string) bool {
	t0 := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	eq := []engine.EquityPoint{{Time: t0, Value: 100}, {Time: t0.AddDate(0, 0, 1), Value: 101}}
	stats := engine.ComputeStatistics(100, eq, nil, 0, nil)
	return metric != "" && sweep.Known(metric, &stats)
}

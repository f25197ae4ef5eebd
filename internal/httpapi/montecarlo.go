package httpapi

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/backtestd/backtestd/internal/apperr"
	"github.com/backtestd/backtestd/internal/auth"
	"github.com/backtestd/backtestd/internal/montecarlo"
)

// maxSeed keeps a seed exact in a JSON number (a browser's float64).
const maxSeed = 1<<53 - 1

// resultMonteCarlo simulates a result's trades or returns (montecarlo.Run): method
// shuffle|bootstrap|block (default shuffle), runs (default montecarlo.DefaultRuns, fewer for
// long results), seed (default 1), block (block only), loss (comma-separated shares of the
// capital). It holds the runs' figures and fan points while it works: a heavy read.
// Method price_paths reruns the strategy in a job instead (resultPricePaths).
func (s *Server) resultMonteCarlo(w http.ResponseWriter, r *http.Request) error {
	opts, err := monteCarloOptions(r)
	if err != nil {
		return err
	}
	id := chi.URLParam(r, "task_id")
	if opts.Method == montecarlo.PricePaths {
		return s.resultPricePaths(w, r, id, opts)
	}
	cost, err := s.report.MonteCarloCost(r.Context(), id, opts.Runs)
	if err != nil {
		return err
	}
	w, done, err := s.heavy(w, r, cost, "The Monte Carlo simulation of "+id)
	if err != nil {
		return err
	}
	defer done()
	a, err := s.report.MonteCarlo(r.Context(), id, opts)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, ok(a))
	return nil
}

// pricePathsPoll is the Retry-After of a price_paths answer still being computed.
const pricePathsPoll = "1"

// resultPricePaths answers method price_paths (pricepaths.Service.Get): 200 with the
// answer once the reruns completed; until then 202 with their progress (and Retry-After),
// the first request with these parameters starting them. The same request again reads the
// stored answer.
func (s *Server) resultPricePaths(w http.ResponseWriter, r *http.Request, id string, opts montecarlo.Options) error {
	if s.paths == nil {
		return &apperr.Error{Kind: apperr.KindUnavailable, Detail: "Monte Carlo on price paths is not available in this process"}
	}
	// Starting reruns runs the strategy, as a backtest does: a viewer reads the reruns a
	// researcher or an admin started.
	var mayStart error
	if s.auth != nil {
		if err := auth.Create.Check(identity(r), true); err != nil {
			mayStart = apperr.Forbidden("%s: Monte Carlo on price paths with these runs, seed and block has not been run, and starting it reruns the strategy", strings.TrimSuffix(err.Error(), "."))
		}
	}
	a, progress, err := s.paths.Get(r.Context(), id, auth.By(caller(r)), mayStart, opts)
	if err != nil {
		return err
	}
	if progress != nil {
		w.Header().Set("Retry-After", pricePathsPoll)
		writeJSON(w, http.StatusAccepted, ok(progress))
		return nil
	}
	writeJSON(w, http.StatusOK, ok(a))
	return nil
}

// monteCarloOptions reads the query of resultMonteCarlo; what depends on the result (runs
// against its length, block against its bars) montecarlo.Run checks.
func monteCarloOptions(r *http.Request) (montecarlo.Options, error) {
	var opts montecarlo.Options
	var err error
	if opts.Method, err = montecarlo.ParseMethod(queryDefault(r, "method", string(montecarlo.Shuffle))); err != nil {
		return opts, apperr.Invalid("%s", err.Error())
	}
	if opts.Runs, err = queryInt(r, "runs", 0, 1, montecarlo.MaxRuns); err != nil {
		return opts, err
	}
	if opts.Block, err = queryInt(r, "block", 0, 1, 1<<30); err != nil {
		return opts, err
	}
	if opts.Seed, err = querySeed(r); err != nil {
		return opts, err
	}
	if raw := strings.TrimSpace(r.URL.Query().Get("loss")); raw != "" {
		opts.Losses = []float64{}
		for _, f := range strings.Split(raw, ",") {
			l, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
			if err != nil || !(l > 0 && l <= 1) {
				return opts, apperr.Invalid("Invalid loss '%s': comma-separated shares of the capital above 0 and at most 1 (0.5 is half)", raw)
			}
			opts.Losses = append(opts.Losses, l)
		}
		if len(opts.Losses) > montecarlo.MaxLosses {
			return opts, apperr.Invalid("Invalid loss '%s': at most %d shares", raw, montecarlo.MaxLosses)
		}
	}
	return opts, nil
}

// resultSignificance tests whether a result's closed trades beat chance (montecarlo.Test):
// method random_entries|ttest (default random_entries), runs (random_entries: default
// montecarlo.DefaultRuns), seed (default 1). Random runs hold their metric and the bars'
// opens while they work: a heavy read, sized as a Monte Carlo simulation of the result.
func (s *Server) resultSignificance(w http.ResponseWriter, r *http.Request) error {
	opts := montecarlo.SigOptions{Method: queryDefault(r, "method", montecarlo.RandomEntries)}
	if opts.Method != montecarlo.RandomEntries && opts.Method != montecarlo.TTest {
		return apperr.Invalid("Unsupported method '%s': %s or %s", opts.Method, montecarlo.RandomEntries, montecarlo.TTest)
	}
	var err error
	if opts.Runs, err = queryInt(r, "runs", 0, 1, montecarlo.MaxRuns); err != nil {
		return err
	}
	if opts.Seed, err = querySeed(r); err != nil {
		return err
	}
	id := chi.URLParam(r, "task_id")
	cost, err := s.report.MonteCarloCost(r.Context(), id, opts.Runs)
	if err != nil {
		return err
	}
	w, done, err := s.heavy(w, r, cost, "The significance test of "+id)
	if err != nil {
		return err
	}
	defer done()
	a, err := s.report.Significance(r.Context(), id, opts)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, ok(a))
	return nil
}

// querySeed reads a simulation's seed (default 1), exact in a JSON number.
func querySeed(r *http.Request) (uint64, error) {
	raw := strings.TrimSpace(r.URL.Query().Get("seed"))
	if raw == "" {
		return 1, nil
	}
	seed, err := strconv.ParseUint(raw, 10, 64)
	if err != nil || seed > maxSeed {
		return 0, apperr.Invalid("Invalid seed '%s': expected an integer from 0 to %d", r.URL.Query().Get("seed"), uint64(maxSeed))
	}
	return seed, nil
}

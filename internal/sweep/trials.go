package sweep

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/backtestd/backtestd/internal/engine"
	"github.com/backtestd/backtestd/internal/overfit"
)

// Trial is one combination's run.
type Trial struct {
	Params  map[string]any `json:"params"`
	Value   *float64       `json:"objective"` // nil: the run does not define the objective, or failed
	Summary engine.Summary `json:"summary"`
	Error   string         `json:"error,omitempty"` // why the run failed
	Returns []float64      `json:"-"`               // per bar, for the overfitting statistics
}

// Rank orders trials best first by the objective; trials without a value follow, failed
// ones last. Equal values keep their order (the grid's). The order is found on indexes
// and each trial then moved once: a Trial holds its whole summary, and a stable sort
// swapping them took 1.5 ms for 1,000 trials, on one core while a study's other cores
// waited.
func Rank(trials []Trial, o Objective) {
	class := func(t *Trial) int {
		switch {
		case t.Error != "":
			return 2
		case t.Value == nil:
			return 1
		}
		return 0
	}
	order := make([]int, len(trials))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(i, j int) int {
		ti, tj := &trials[i], &trials[j]
		ci, cj := class(ti), class(tj)
		switch {
		case ci != cj:
			return cmp.Compare(ci, cj)
		case ci != 0 || *ti.Value == *tj.Value:
			return 0
		case o.Better(*ti.Value, *tj.Value):
			return -1
		case o.Better(*tj.Value, *ti.Value):
			return 1
		}
		return 0
	})
	ranked := make([]Trial, len(trials))
	for k, i := range order {
		ranked[k] = trials[i]
	}
	copy(trials, ranked)
}

// Explanations of the overfitting statistics, for people who are not statisticians.
const (
	DeflatedExplanation = "The chance that the best combination's edge is real rather than the luck of trying this many " +
		"combinations. Its Sharpe ratio is compared with the best one that pure luck would give among as many tries, " +
		"allowing for the length of the test and for returns with fat tails. Below 0.95, the winner may well be luck."
	PBOExplanation = "How often the combination that did best on one half of the history did worse than the median on the " +
		"other half, over every way of cutting the history into two halves. Near 0.5, the ranking is luck; near 0, " +
		"what wins on one half keeps winning on the other."
)

// Overfit is what a study's own trials say of its winner.
type Overfit struct {
	// Deflated is the Deflated Sharpe Ratio of the best trial (Rank's first), among the
	// trials that ran; nil when it cannot be computed (Notes says why).
	Deflated *overfit.Deflated `json:"deflated_sharpe"`
	// PBO is the Probability of Backtest Overfitting of the trials that ran, comparing
	// them by Sharpe ratio; nil when it cannot be computed.
	PBO   *overfit.PBO `json:"pbo"`
	Notes []string     `json:"notes,omitempty"`
}

// Overfitting computes the overfitting statistics of ranked trials (see Rank), with blocks
// blocks for the PBO (0: overfit.DefaultBlocks), on up to jobs goroutines; the figures do
// not depend on jobs.
func Overfitting(trials []Trial, blocks, jobs int) Overfit {
	var out Overfit
	var returns [][]float64
	for _, t := range trials {
		if t.Error == "" && len(t.Returns) > 0 {
			returns = append(returns, t.Returns)
		}
	}
	sharpes := overfit.Sharpes(returns, jobs)
	if len(trials) == 0 || trials[0].Error != "" || len(trials[0].Returns) == 0 {
		out.Notes = append(out.Notes, "no trial ran")
		return out
	}
	if d, err := overfit.DeflatedSharpe(trials[0].Returns, sharpes); err != nil {
		out.Notes = append(out.Notes, err.Error())
	} else if !math.IsNaN(d.Probability) {
		out.Deflated = &d
	} else {
		out.Notes = append(out.Notes, "deflated Sharpe ratio: undefined for the best trial's returns")
	}
	if p, err := overfit.Overfitting(returns, blocks, jobs); err != nil {
		out.Notes = append(out.Notes, err.Error())
	} else {
		out.PBO = &p
	}
	return out
}

// Describe is a parameter combination as text: "fast=5 slow=20".
func Describe(names []string, params map[string]any) string {
	s := ""
	for i, n := range names {
		if i > 0 {
			s += " "
		}
		s += fmt.Sprintf("%s=%v", n, params[n])
	}
	return s
}

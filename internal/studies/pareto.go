package studies

import (
	"strings"

	"github.com/backtestd/backtestd/internal/apperr"
	"github.com/backtestd/backtestd/internal/sweep"
)

// ParetoAxis is one of the two objectives of the leaderboard's Pareto ranking.
type ParetoAxis struct {
	Metric    string `json:"metric"`    // a leaderboard metric, or "objective"
	Direction string `json:"direction"` // max or min: which way is better
}

// Pareto is how the leaderboard's pareto_rank was computed.
type Pareto struct {
	Objectives  []ParetoAxis `json:"objectives"`
	Front       int          `json:"front"` // trials on the Pareto front (rank 1)
	Explanation string       `json:"explanation"`
}

// ParetoExplanation says what the Pareto rank means, for people who are not statisticians.
const ParetoExplanation = "The Pareto front (rank 1) is the combinations that no other combination beats on one of " +
	"the two objectives without doing worse on the other: each is a best trade-off, and which to prefer is a matter " +
	"of taste (more return for more drawdown, say). Rank 2 is the front of the rest once rank 1 is set aside, and so on."

// RankedTrial is a row of the leaderboard: a combination and its Pareto rank.
type RankedTrial struct {
	Trial
	// ParetoRank is 1 on the Pareto front of Board.Pareto's objectives, 2 on the front of
	// the rest, …; null when the combination lacks one of the two figures.
	ParetoRank *int `json:"pareto_rank"`
}

// minimised are the leaderboard metrics where less is better.
var minimised = map[string]bool{"max_drawdown": true, "max_drawdown_pct": true, "max_drawdown_duration": true, "lost": true}

// paretoAxes reads the pareto query value: two metrics, comma-separated, each with an
// optional :max or :min (default: which way the metric is better; the objective's, the
// study's direction). Empty: the objective against max_drawdown_pct (or, when the
// objective is the drawdown, sharpe_ratio against it).
func paretoAxes(v, objective, direction string) ([]ParetoAxis, error) {
	if v == "" {
		v = "objective,max_drawdown_pct"
		if objective == "max_drawdown_pct" {
			v = "sharpe_ratio,objective"
		}
	}
	parts := strings.Split(v, ",")
	if len(parts) != 2 {
		return nil, apperr.Invalid("pareto must be two metrics, comma-separated (e.g. sharpe_ratio,max_drawdown_pct:min), got %q", v)
	}
	out := make([]ParetoAxis, 2)
	for i, p := range parts {
		name, dir, hasDir := strings.Cut(strings.TrimSpace(p), ":")
		if _, ok := metrics[name]; !ok {
			return nil, apperr.Invalid("pareto: %q is not one of %s", name, strings.Join(MetricNames(), ", "))
		}
		if !hasDir {
			dir = "max"
			if minimised[name] || (name == "objective" && direction == "min") {
				dir = "min"
			}
		}
		if dir != "max" && dir != "min" {
			return nil, apperr.Invalid("pareto: %s's direction must be max or min, got %q", name, dir)
		}
		out[i] = ParetoAxis{Metric: name, Direction: dir}
	}
	if out[0].Metric == out[1].Metric {
		return nil, apperr.Invalid("pareto needs two different metrics, got %s twice", out[0].Metric)
	}
	return out, nil
}

// paretoRanks ranks trials on axes (sweep.ParetoRanks), by index in trials; 0 for a
// trial without both figures.
func paretoRanks(trials []Trial, axes []ParetoAxis) ([]int, int) {
	x, y, ok := make([]float64, len(trials)), make([]float64, len(trials)), make([]bool, len(trials))
	for i := range trials {
		a, b := metrics[axes[0].Metric](&trials[i]), metrics[axes[1].Metric](&trials[i])
		if a == nil || b == nil || Status(trials[i].Status) != StatusCompleted {
			continue
		}
		x[i], y[i], ok[i] = *a, *b, true
		if axes[0].Direction == "min" {
			x[i] = -x[i]
		}
		if axes[1].Direction == "min" {
			y[i] = -y[i]
		}
	}
	ranks := sweep.ParetoRanks(x, y, ok)
	front := 0
	for _, r := range ranks {
		if r == 1 {
			front++
		}
	}
	return ranks, front
}

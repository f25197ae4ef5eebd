package sweep

import (
	"slices"
	"sort"
)

// ParetoRanks ranks points of two objectives, both to be maximised, by non-dominated
// sorting (Deb et al., NSGA-II, 2002): rank 1 is the Pareto front, the points no other
// point beats on one objective without losing on the other; rank 2 the front of what is
// left, and so on. A point dominates another when it is at least as good on both and
// better on one; equal points share a rank. Points whose ok is false get rank 0. It takes
// O(n log n): sorted by the first objective, a point joins the first front whose last
// point does not dominate it.
func ParetoRanks(x, y []float64, ok []bool) []int {
	ranks := make([]int, len(x))
	order := make([]int, 0, len(x))
	for i := range x {
		if ok[i] {
			order = append(order, i)
		}
	}
	slices.SortStableFunc(order, func(a, b int) int {
		switch {
		case x[a] != x[b]:
			if x[a] > x[b] {
				return -1
			}
			return 1
		case y[a] > y[b]:
			return -1
		case y[a] < y[b]:
			return 1
		}
		return 0
	})
	// last[k] is the last point put on front k+1: within a front y rises as x falls, so it
	// has the front's best y, and a later point (x no higher) is dominated by the front
	// exactly when that point beats it on (y, then x).
	var last []int
	dominates := func(q, p int) bool { return y[q] > y[p] || (y[q] == y[p] && x[q] > x[p]) }
	for _, p := range order {
		k := sort.Search(len(last), func(k int) bool { return !dominates(last[k], p) })
		if k == len(last) {
			last = append(last, p)
		} else {
			last[k] = p
		}
		ranks[p] = k + 1
	}
	return ranks
}

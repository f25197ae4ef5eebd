package engine

import (
	"slices"
	"testing"
)

func TestLabelStrategies(t *testing.T) {
	for _, c := range []struct {
		names, want []string
	}{
		{[]string{"MultiCross", "MultiCross", "Hold"}, []string{"MultiCross #0", "MultiCross #1", "Hold"}},
		{[]string{"Hold", "MultiCross", "Hold", "MultiCross"}, []string{"Hold #0", "MultiCross #1", "Hold #2", "MultiCross #3"}},
		{[]string{"A", "B"}, []string{"A", "B"}},
		{nil, nil},
	} {
		list := make([]StrategyResult, len(c.names))
		for i, n := range c.names {
			list[i].Name, list[i].Label = n, "stale"
		}
		LabelStrategies(list)
		got := make([]string, len(list))
		for i, r := range list {
			got[i] = r.Label
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%q labelled %q, want %q", c.names, got, c.want)
		}
	}
}

package results_test

import (
	"testing"
	"time"

	"github.com/backtestd/backtestd/internal/results"
)

func TestFormatTime(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in   time.Time
		want string
	}{
		{time.Date(2024, 3, 9, 0, 0, 0, 0, time.UTC), "2024-03-09"},
		{time.Date(1970, 12, 31, 0, 0, 0, 0, time.UTC), "1970-12-31"},
		{time.Date(5, 1, 1, 0, 0, 0, 0, time.UTC), "0005-01-01"},
		{time.Date(2024, 3, 9, 0, 0, 0, 0, time.FixedZone("x", -3600)), "2024-03-09T01:00:00Z"},
		{time.Date(2024, 3, 9, 14, 30, 0, 0, time.UTC), "2024-03-09T14:30:00Z"},
		{time.Date(2024, 3, 9, 0, 0, 0, 5, time.UTC), "2024-03-09T00:00:00Z"},
		{time.Date(12000, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(12000, 1, 1, 0, 0, 0, 0, time.UTC).Format(time.DateOnly)},
	} {
		if got := results.FormatTime(c.in); got != c.want {
			t.Errorf("FormatTime(%v) = %q, want %q", c.in, got, c.want)
		}
	}
}

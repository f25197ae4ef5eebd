package report_test

import (
	"testing"

	"github.com/backtestd/backtestd/internal/report"
	"github.com/backtestd/backtestd/internal/results/resultstest"
)

// BenchmarkChart10k measures a chart read as the endpoint does it (load the stored rows and
// the bars, build the option object, encode it as JSON with AppendJSON) on a 10,000-bar
// result.
// Target < 50 ms.
func BenchmarkChart10k(b *testing.B) {
	tb := resultstest.BenchResult(b)
	for _, kind := range report.ChartTypes {
		b.Run(kind, func(b *testing.B) {
			for b.Loop() {
				c, err := service(tb).Chart(tb.Ctx, "task_1", kind, "", report.View{})
				if err != nil {
					b.Fatal(err)
				}
				if out := c.AppendJSON(nil); len(out) == 0 {
					b.Fatal("empty chart")
				}
			}
		})
	}
}

// BenchmarkExportHTML10k measures the HTML report of a 10,000-bar result: the loads, the
// statistics record, both charts and every table.
func BenchmarkExportHTML10k(b *testing.B) {
	tb := resultstest.BenchResult(b)
	var size int
	for b.Loop() {
		page, err := service(tb).ExportHTML(tb.Ctx, "task_1")
		if err != nil {
			b.Fatal(err)
		}
		size = len(page)
	}
	b.ReportMetric(float64(size)/1024, "KiB")
}

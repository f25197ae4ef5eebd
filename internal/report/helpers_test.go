package report_test

import (
	"github.com/backtestd/backtestd/internal/marketdata"
	"github.com/backtestd/backtestd/internal/report"
	"github.com/backtestd/backtestd/internal/results/resultstest"
)

// service is a report.Service over b's database, reading bars as the service does.
func service(b *resultstest.Bundle) *report.Service {
	return report.New(b.Results(), marketdata.NewService(b.Store, nil).Bars)
}

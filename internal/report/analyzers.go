package report

import (
	"github.com/backtestd/backtestd/internal/engine"
)

// analyzerGroup is the tearsheet's statistics group of backtrader's analyzers beyond the
// statistics (Returns, VWR, Calmar, SharpeRatio_A), each with its backtrader name in its note.
func analyzerGroup(a engine.Analyzers) statGroup {
	opt := func(v *float64, digits int, unit string) string {
		if v == nil {
			return "—"
		}
		return formatNumber(*v, digits) + unit
	}
	var rtot100, ravg100 *float64
	if a.Returns.Total != nil {
		v := *a.Returns.Total * 100
		rtot100 = &v
	}
	if a.Returns.Average != nil {
		v := *a.Returns.Average * 100
		ravg100 = &v
	}
	// The Returns analyzer's period follows the bars: a day (252 a year), a week (52) or a
	// month (12); engine.ReturnsResult.Annualiser says which.
	period, tann := "day", "252"
	switch a.Returns.Annualiser {
	case 52:
		period, tann = "week", "52"
	case 12:
		period, tann = "month", "12"
	}
	return statGroup{Name: "Analyzers (backtrader)", Metrics: []figure{
		{Key: "returns_rtot", Label: "Log return", Value: opt(rtot100, 2, "%"), Note: "Returns: rtot, the log of the final value over the initial cash"},
		{Key: "returns_ravg", Label: "Log return per " + period, Value: opt(ravg100, 4, "%"), Note: "Returns: ravg, rtot over the " + period + "s of the run"},
		{Key: "returns_rnorm100", Label: "Annualised (" + tann + " " + period + "s)", Value: opt(a.Returns.Normal100, 2, "%"), Note: "Returns: rnorm100, exp(ravg × " + tann + ") − 1"},
		{Key: "vwr", Label: "VWR", Value: opt(a.VWR, 3, ""), Note: "VWR: the annualised return reduced by the variability of the values per " + period + " (tau 0.20, sdev_max 2.0)"},
		{Key: "calmar", Label: "Calmar (36 months)", Value: opt(a.Calmar.Value, 6, ""), Note: "Calmar: the log return per month over 36 months over the largest monthly drawdown in percent"},
		{Key: "sharpe_annualized", Label: "Sharpe, yearly (SharpeRatio_A)", Value: opt(a.Sharpe.Annualized, 3, ""), Note: "SharpeRatio_A: yearly returns less 1%, population deviation"},
		{Key: "sharpe_monthly_annualized", Label: "Sharpe, monthly × √12", Value: opt(a.Sharpe.MonthlyAnnualized, 3, ""), Note: "SharpeRatio_A(timeframe=Months): monthly returns less 1% a year, × √12"},
	}}
}

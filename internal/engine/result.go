package engine

import "time"

// Bar is one OHLCV bar; Time is in UTC.
type Bar struct {
	Time   time.Time `json:"time"`
	Open   float64   `json:"open"`
	High   float64   `json:"high"`
	Low    float64   `json:"low"`
	Close  float64   `json:"close"`
	Volume int64     `json:"volume"`
}

// Feed is the bar series of one symbol, in ascending time order.
type Feed struct {
	Symbol string `json:"symbol"`
	Bars   []Bar  `json:"bars"`
	// Stamps, when set, are the times the strategy sees for the bars, where these differ
	// from when the bars are delivered (a resampled feed: see Resample).
	Stamps []time.Time `json:"-"`
	// Replay, when set, is the coarser bar each bar builds (a replayed feed: see Replay).
	Replay *Replayed `json:"-"`
}

// Result is everything one run produces.
type Result struct {
	InitialCash float64        `json:"initial_cash"`
	FinalValue  float64        `json:"final_value"`
	FinalCash   float64        `json:"final_cash"`
	Positions   []PositionOut  `json:"positions"`
	Symbols     []SymbolResult `json:"symbols"` // one per feed, in order
	Equity      []EquityPoint  `json:"equity"`
	Executions  []Execution    `json:"executions"`
	Trades      []Trade        `json:"trades"`
	OrderEvents []OrderEvent   `json:"order_events"`
	OpenOrders  []OrderEvent   `json:"open_orders"`
	Analyzers   Analyzers      `json:"analyzers"`
	Summary     Summary        `json:"summary"`
	Logs        []LogEntry     `json:"logs"` // kept only when Config.OnLog is nil
	// Strategies is each strategy's share of a run of several (RunAll), in the order they
	// run; nil for one strategy.
	Strategies []StrategyResult `json:"strategies,omitempty"`
	FirstNext  int              `json:"first_next_bar"` // 1-based bar of the first next() call, 0 if never
}

// SymbolResult is one feed's share of a run. The feeds' PnL sum to the final value less
// the initial cash, and their Contribution to the total return.
type SymbolResult struct {
	Symbol string `json:"symbol"`
	// PnL is the cash its fills (and, for futures, daily settlements) moved plus its
	// position's value at the end: realised and unrealised, net of commission.
	PnL          float64 `json:"pnl"`
	Contribution float64 `json:"contribution"` // PnL / initial cash
	Trades       int     `json:"trades"`       // closed round trips
	Won          int     `json:"won"`          // closed with a net pnl of 0 or more, as TradeAnalyzer counts
	Lost         int     `json:"lost"`
	OpenTrades   int     `json:"open_trades"`
	PnLClosed    float64 `json:"pnl_closed"` // net pnl of the closed round trips
	Executions   int     `json:"executions"`
	Commission   float64 `json:"commission"` // paid on its fills
	Exposure     float64 `json:"exposure"`   // fraction of the run's bars that ended holding it
	FinalSize    float64 `json:"final_size"`
	FinalPrice   float64 `json:"final_price"` // the final position's average price
	// Joined, for a feed joined from others (a strategy's static chain or rollover), are
	// the spans of their bars it is made of; none for a feed the run was given.
	Joined []Span `json:"joined,omitempty"`
}

// AddExecution counts fill x of the symbol.
func (s *SymbolResult) AddExecution(x Execution) {
	s.Executions++
	s.Commission += x.Commission
}

// AddTrade counts round trip t of the symbol.
func (s *SymbolResult) AddTrade(t Trade) {
	switch {
	case t.IsOpen:
		s.OpenTrades++
		return
	case t.PnLNet >= 0:
		s.Won++
	default:
		s.Lost++
	}
	s.Trades++
	s.PnLClosed += t.PnLNet
}

// PositionOut is a position at the end of a run.
type PositionOut struct {
	Symbol string  `json:"symbol"`
	Size   float64 `json:"size"`
	Price  float64 `json:"price"`
}

// EquityPoint is the portfolio after one bar's fills, marked at its close.
type EquityPoint struct {
	Time          time.Time `json:"time"`
	Value         float64   `json:"value"`
	Cash          float64   `json:"cash"`
	Return        float64   `json:"return"`         // value/previous value - 1
	Drawdown      float64   `json:"drawdown"`       // percent below the running peak
	DrawdownMoney float64   `json:"drawdown_money"` // money below the running peak
}

// Execution is one fill.
type Execution struct {
	Ref          int       `json:"ref"`
	Symbol       string    `json:"symbol"`
	Time         time.Time `json:"time"`
	Side         string    `json:"side"` // "buy" or "sell"
	ExecType     string    `json:"exectype"`
	Price        float64   `json:"price"`
	Size         float64   `json:"size"`  // signed: + buy, - sell
	Value        float64   `json:"value"` // backtrader's executed.value (cost basis for closing fills)
	Commission   float64   `json:"commission"`
	PnL          float64   `json:"pnl"` // realised gross pnl
	CreatedTime  time.Time `json:"created_time"`
	CreatedPrice float64   `json:"created_price"`
	// Status is the order's after this execution: "Partial" while some of it is left to
	// fill on later bars (a volume filler), "Completed" on its last part.
	Status   string `json:"status"`
	Strategy int    `json:"strategy,omitempty"` // the index of the strategy whose order it filled
}

// Trade is a round trip: a position that left zero and (unless IsOpen)
// returned to it.
type Trade struct {
	Ref        int        `json:"ref"`
	TradeID    int        `json:"tradeid"`
	Symbol     string     `json:"symbol"`
	OpenTime   time.Time  `json:"open_time"`
	CloseTime  *time.Time `json:"close_time"`
	Size       float64    `json:"size"` // largest signed size held
	EntryPrice float64    `json:"entry_price"`
	ExitPrice  float64    `json:"exit_price"`
	PnLGross   float64    `json:"pnl_gross"`
	PnLNet     float64    `json:"pnl_net"`
	Commission float64    `json:"commission"`
	BarLen     int        `json:"barlen"`
	IsOpen     bool       `json:"is_open"`
	Strategy   int        `json:"strategy,omitempty"` // the index of the strategy whose orders made it
}

// OrderEvent is an order rejection (Margin), cancellation, or, in
// OpenOrders, an order still pending at the end.
type OrderEvent struct {
	Ref          int       `json:"ref"`
	Symbol       string    `json:"symbol"`
	Side         string    `json:"side"`
	ExecType     string    `json:"exectype"`
	Status       string    `json:"status"`
	CreatedTime  time.Time `json:"created_time"`
	CreatedPrice float64   `json:"created_price"`
	Price        float64   `json:"price"`
	Size         float64   `json:"size"`               // requested, signed
	Time         time.Time `json:"time"`               // bar of the event
	Strategy     int       `json:"strategy,omitempty"` // the index of the strategy that made the order
}

// LogEntry is one log line of a run.
type LogEntry struct {
	Time    time.Time `json:"time"` // bar time
	Wall    time.Time `json:"wall"`
	Level   string    `json:"level"` // DEBUG, INFO, WARNING, ERROR
	Message string    `json:"message"`
	Source  string    `json:"source"` // "strategy" or "engine"
}

// Analyzers holds the figures of backtrader's analyzers.
type Analyzers struct {
	Sharpe        SharpeResult        `json:"sharpe"`
	Drawdown      DrawdownResult      `json:"drawdown"`
	SQN           SQNResult           `json:"sqn"`
	TradeAnalyzer TradeAnalyzerResult `json:"trades"`
	// The returns family (returns.go) and the pyfolio report (pyfolio.go).
	Returns      ReturnsResult    `json:"returns"`
	VWR          *float64         `json:"vwr"`
	Calmar       CalmarResult     `json:"calmar"`
	AnnualReturn []PeriodValue    `json:"annual_return"`
	TimeReturn   TimeReturnResult `json:"time_return"`
	PyFolio      PyFolioResult    `json:"pyfolio"`
}

// SharpeResult: DailyAnnualized uses daily returns × √252, Default yearly
// returns less 1% (backtrader's plain SharpeRatio), Annualized backtrader's SharpeRatio_A
// with its defaults (yearly, so equal to Default), MonthlyAnnualized SharpeRatio_A by
// month (monthly returns less 1% a year, × √12). Nil when undefined.
type SharpeResult struct {
	DailyAnnualized   *float64 `json:"daily_annualized"`
	Default           *float64 `json:"default"`
	Annualized        *float64 `json:"annualized"`
	MonthlyAnnualized *float64 `json:"monthly_annualized"`
}

// DrawdownResult is backtrader's DrawDown analyzer.
type DrawdownResult struct {
	MaxPct       float64 `json:"max_drawdown_pct"`
	MaxMoney     float64 `json:"max_moneydown"`
	MaxLenBars   int     `json:"max_len_bars"`
	FinalPct     float64 `json:"final_drawdown_pct"`
	FinalMoney   float64 `json:"final_moneydown"`
	FinalLenBars int     `json:"final_len_bars"`
}

// SQNResult is the system quality number over closed trades.
type SQNResult struct {
	Value  float64 `json:"sqn"`
	Trades int     `json:"trades"`
}

// TradeAnalyzerResult mirrors backtrader's TradeAnalyzer. Averages are nil
// when there is nothing to average.
type TradeAnalyzerResult struct {
	Total             int      `json:"total"`
	Open              int      `json:"open"`
	Closed            int      `json:"closed"`
	Won               int      `json:"won"`
	Lost              int      `json:"lost"`
	PnLNetTotal       *float64 `json:"pnl_net_total"`
	PnLGrossTotal     *float64 `json:"pnl_gross_total"`
	WonPnLAverage     *float64 `json:"won_pnl_average"`
	LostPnLAverage    *float64 `json:"lost_pnl_average"`
	WonPnLTotal       *float64 `json:"won_pnl_total"`
	LostPnLTotal      *float64 `json:"lost_pnl_total"`
	StreakWonLongest  int      `json:"streak_won_longest"`
	StreakLostLongest int      `json:"streak_lost_longest"`
	LenTotalBars      int      `json:"len_total_bars"`
}

// Summary holds the API's 12 summary keys (api/openapi.yaml's Summary) plus the stored extras. Nil
// pointers mean the figure is undefined (JSON null).
type Summary struct {
	InitialCash         float64  `json:"initial_cash"`
	FinalValue          float64  `json:"final_value"`
	TotalReturn         float64  `json:"total_return"`
	AnnualReturn        *float64 `json:"annual_return"`
	SharpeRatio         *float64 `json:"sharpe_ratio"`
	MaxDrawdown         float64  `json:"max_drawdown"`
	MaxDrawdownPct      float64  `json:"max_drawdown_pct"`
	TotalTrades         int      `json:"total_trades"`
	WinRate             float64  `json:"win_rate"`
	ProfitFactor        *float64 `json:"profit_factor"`
	AvgWin              *float64 `json:"avg_win"`
	AvgLoss             *float64 `json:"avg_loss"`
	Won                 int      `json:"won"`
	Lost                int      `json:"lost"`
	SQN                 float64  `json:"sqn"`
	MaxDrawdownDuration int      `json:"max_drawdown_duration"` // calendar days
}

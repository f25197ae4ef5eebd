// Package engine is the backtest engine: bars and feeds, a broker with backtrader's fill,
// commission and margin rules, orders (market, limit, stop, stop-limit, close, brackets,
// OCO), indicators computed over whole series, backtrader's analyzers and the statistics
// record. It is pure Go with no I/O: strategies reach it through the Strategy interface
// (package jsrt hosts JavaScript ones), and nothing here knows of HTTP, SQL or processes.
package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"sync"
	"time"
)

// Config configures one run.
type Config struct {
	Feeds      []Feed
	Cash       float64 // starting cash; 0 means 10000
	Commission float64 // fraction of traded value per execution (PercentCommission); see SetCommission for others
	OnProgress func(current, total int)
	OnLog      func(LogEntry)
	// QuietEngine drops the engine's own log lines (orders submitted, filled, cancelled,
	// trades closed) for a caller that keeps or shows only the strategy's: they are then
	// not even formatted, which a run with many orders notices.
	QuietEngine bool
	// SummaryOnly leaves out of the result what a caller that reads only its summary,
	// equity curve, trades and statistics does not (a study's runs): backtrader's Returns,
	// VWR, Calmar, AnnualReturn and TimeReturn analyzers, the Sharpe ratios of years and
	// months, and PyFolio's transactions. The rest of the result is the same; a tenth of a
	// short run's CPU.
	SummaryOnly bool
	// TradeFrom, when set, makes the bars before it warm-up only: indicators see them, but
	// the strategy is not called, no order exists, and the equity curve, the figures and
	// the statistics start at the first bar at or after it (a walk-forward fold's
	// out-of-sample run, warmed up on the bars before its window).
	TradeFrom time.Time
}

// Strategy is driven by the engine once per bar.
type Strategy interface {
	// Next runs on each bar once every feed has passed its minimum period.
	Next(e *Engine) error
	// Prenext runs on the warm-up bars before that.
	Prenext(e *Engine) error
	// NotifyOrder receives a copy of an order whose status changed.
	NotifyOrder(e *Engine, o *Order) error
	// NotifyTrade receives a trade that opened or closed.
	NotifyTrade(e *Engine, t *TradeState) error
	// Stop runs once after the last bar.
	Stop(e *Engine) error
}

// NotificationFilter is implemented by a Strategy whose NotifyOrder or NotifyTrade does
// nothing: the engine then skips copying what it would deliver there, an order's copy on
// each change of its status and a trade's on each opening and close.
type NotificationFilter interface {
	// Notified reports whether NotifyOrder and NotifyTrade do anything. Run asks once,
	// before the first bar.
	Notified() (orders, trades bool)
}

// Position is the holding in one feed.
type Position struct {
	Size  float64
	Price float64

	adjBase float64 // futures: the price the position was last settled in cash at
}

// update is backtrader's Position.update; it returns the opened and
// closed parts of size.
func (p *Position) update(size, price float64) (opened, closed float64) {
	oldsize := p.Size
	p.Size += size
	switch {
	case p.Size == 0:
		opened, closed = 0, size
		p.Price = 0
	case oldsize == 0:
		opened, closed = size, 0
		p.Price = price
	case oldsize > 0:
		if size > 0 {
			opened, closed = size, 0
			p.Price = (p.Price*oldsize + size*price) / p.Size
		} else if p.Size > 0 {
			opened, closed = 0, size
		} else {
			opened, closed = p.Size, -oldsize
			p.Price = price
		}
	default:
		if size < 0 {
			opened, closed = size, 0
			p.Price = (p.Price*oldsize + size*price) / p.Size
		} else if p.Size < 0 {
			opened, closed = 0, size
		} else {
			opened, closed = p.Size, -oldsize
			p.Price = price
		}
	}
	return
}

// TradeState is a round trip in progress or just closed.
type TradeState struct {
	Ref        int
	Owner      int // the strategy whose orders make it (see Order.Owner)
	Feed       int
	TradeID    int     // the strategy's own grouping of orders (backtrader's tradeid)
	Size       float64 // current signed size
	MaxSize    float64 // largest signed size held
	Price      float64 // average entry price (backtrader's trade.price)
	ExitPrice  float64
	EntryPrice float64 // Price as round trips report it: its first fill's own price, not size*price/size
	PnL        float64 // gross
	PnLComm    float64 // net
	Commission float64
	OpenTime   time.Time
	CloseTime  time.Time
	OpenBar    int
	BarLen     int
	IsOpen     bool
	IsClosed   bool
	JustOpened bool
}

// tradeKey names a trade's slot: backtrader keeps trades per strategy, feed and tradeid.
type tradeKey struct{ owner, feed, id int }

func (a tradeKey) compare(b tradeKey) int {
	return cmp.Or(cmp.Compare(a.owner, b.owner), cmp.Compare(a.feed, b.feed), cmp.Compare(a.id, b.id))
}

type note struct {
	order *Order
	trade *TradeState
}

// quiet says which notifications nobody receives (see NotificationFilter).
type quiet struct{ orders, trades bool }

// Engine runs one backtest. It is not safe for concurrent use.
type Engine struct {
	cfg       Config
	feeds     []Feed
	timeline  []time.Time // union of bar times; nil for a single feed
	steps     int
	step      int
	grown     int   // the steps so far that lengthened a feed (strategyLen)
	cursor    []int // per feed index of the current bar, -1 before its first
	indCursor []int // the bar indicators are read at: the cursor, but one behind in NextOpen
	coo       bool  // cheat-on-open: the strategy's NextOpen runs before the broker
	timed     bool  // the strategy has timers (SetTimers)
	// dailyStamps: the first feed's bars are all at midnight, so timers see each at the end
	// of its session (TimerClock).
	dailyStamps bool
	ticked      []bool
	cash        float64
	ci          CommInfo
	slip        Slippage
	pos         []Position
	submitted   []*Order
	pending     []*Order
	orders      []*Order
	nextRef     int
	tradeRef    int
	opened      int                      // trades notified as opened
	trades      map[tradeKey]*TradeState // per strategy, feed and tradeid, the latest trade (open or closed)
	closed      []Trade
	notes       []note
	quiet       quiet
	scratch     []Position
	flow        []float64 // per feed, the cash its fills and settlements moved
	held        []int     // per feed, the steps that ended with a position in it
	// activate holds bracket children whose parent filled: they become active at the start
	// of the next bar, as in backtrader (never on their parent's fill bar).
	activate []*Order

	coc      bool            // cheat-on-close (SetCheatOnClose)
	eosbar   bool            // kept for backtrader's set_eosbar, which changes nothing
	sessEnd  []time.Duration // per feed, the time of day sessions end at; nil: all the default
	filler   Filler
	credit   []float64   // per feed, interest charged and not yet added to a closing commission
	credited []time.Time // per feed, when its position last changed or was charged interest
	// noInt2Pnl keeps the interest out of closing commissions (SetInt2Pnl(false)).
	noInt2Pnl bool
	// compensates maps a feed to the feed whose position its fills move (Compensate).
	compensates map[int]int

	// members are the run's strategies (one unless RunAll runs several), each with its own
	// warm-up; owner is the one being called, whose orders Submit makes (multi.go).
	members []member
	owner   int
	history []*orderHistory // the order histories to execute (AddOrderHistory)

	res Result
}

// ErrNoBars is returned when no feed has any bar.
var ErrNoBars = errors.New("no bars to run on")

// New prepares an engine for the given feeds.
func New(cfg Config) (*Engine, error) {
	if len(cfg.Feeds) == 0 {
		return nil, ErrNoBars
	}
	if cfg.Cash == 0 {
		cfg.Cash = 10000
	}
	e := &Engine{cfg: cfg, feeds: cfg.Feeds, cash: cfg.Cash, ci: PercentCommission(cfg.Commission)}
	n := len(cfg.Feeds)
	e.cursor = make([]int, n)
	e.indCursor = make([]int, n)
	e.ticked = make([]bool, n)
	e.members = []member{newMember(n)}
	e.pos = make([]Position, n)
	e.scratch = make([]Position, n)
	e.flow = make([]float64, n)
	e.held = make([]int, n)
	e.credit = make([]float64, n)
	e.credited = make([]time.Time, n)
	e.trades = map[tradeKey]*TradeState{}
	for i := range e.cursor {
		e.cursor[i] = -1
		e.indCursor[i] = -1
	}
	if n == 1 {
		// a single feed is its own timeline
		e.steps = len(cfg.Feeds[0].Bars)
	} else {
		seen := map[int64]bool{}
		for _, f := range cfg.Feeds {
			for _, b := range f.Bars {
				k := b.Time.UnixNano()
				if !seen[k] {
					seen[k] = true
					e.timeline = append(e.timeline, b.Time)
				}
			}
		}
		sort.Slice(e.timeline, func(i, j int) bool { return e.timeline[i].Before(e.timeline[j]) })
		e.steps = len(e.timeline)
		if err := e.replayAligned(); err != nil {
			return nil, err
		}
	}
	if e.steps == 0 {
		return nil, ErrNoBars
	}
	if last := e.timeAt(e.steps - 1); last.Before(cfg.TradeFrom) {
		return nil, fmt.Errorf("no bar to trade on: the last bar (%s) is before the first trading time %s",
			last.Format(time.RFC3339), cfg.TradeFrom.Format(time.RFC3339))
	}
	return e, nil
}

// Feeds returns the engine's feeds.
func (e *Engine) Feeds() []Feed { return e.feeds }

// Bars is the number of steps of the run.
func (e *Engine) Bars() int { return e.steps }

func (e *Engine) timeAt(step int) time.Time {
	if e.timeline == nil {
		return e.feeds[0].Bars[step].Time
	}
	return e.timeline[step]
}

// Cursor returns a pointer to feed i's current bar index; it moves as the
// run advances, so indicator views can read it without a call.
func (e *Engine) Cursor(i int) *int { return &e.cursor[i] }

// RequireMinPeriod makes the current strategy's next wait until feed has at least bars
// bars.
func (e *Engine) RequireMinPeriod(feed, bars int) {
	if mp := e.members[e.owner].minPeriod; bars > mp[feed] {
		mp[feed] = bars
	}
}

// Now is the time of the current step.
func (e *Engine) Now() time.Time {
	if e.step < e.steps {
		return e.timeAt(e.step)
	}
	return e.timeAt(e.steps - 1)
}

// Step is the current 0-based step of the timeline.
func (e *Engine) Step() int { return e.step }

// Cash is the broker's cash.
func (e *Engine) Cash() float64 { return e.cash }

// Position returns the position in feed i.
func (e *Engine) Position(i int) Position { return e.pos[i] }

// Value is the portfolio value marked at the current closes.
func (e *Engine) Value() float64 { return e.value() }

// FeedValue is the signed market value of the position in feed i.
func (e *Engine) FeedValue(i int) float64 {
	c := e.cursor[i]
	if c < 0 {
		return 0
	}
	return e.ci.valueSize(e.pos[i].Size, e.feeds[i].Bars[c].Close)
}

// value mirrors backtrader's BackBroker._get_value with leverage 1.
func (e *Engine) value() float64 {
	unlever := 0.0
	for k := range e.pos {
		a, b := e.posValue(k)
		unlever += a
		unlever += b // added apart, as backtrader does, for the same rounding
	}
	return e.cash + unlever
}

// posValue is feed k's position's part of the portfolio value, in backtrader's two terms.
func (e *Engine) posValue(k int) (float64, float64) {
	p := &e.pos[k]
	c := e.cursor[k]
	if c < 0 {
		return 0, 0
	}
	cl := e.feeds[k].Bars[c].Close
	dvalue := e.ci.valueSize(p.Size, cl)
	if dvalue > 0 {
		dunreal := e.ci.pnl(p.Size, p.Price, cl)
		return e.ci.unlever(dvalue - dunreal), dunreal
	}
	return dvalue, 0
}

// Log records an engine or strategy log line at the current bar.
func (e *Engine) Log(level, source, msg string) {
	if source == "engine" && e.cfg.QuietEngine {
		return
	}
	le := LogEntry{Time: e.Now(), Wall: time.Now().UTC(), Level: level, Message: msg, Source: source}
	if e.cfg.OnLog != nil { // streamed: not kept as well, however much a strategy logs
		e.cfg.OnLog(le)
		return
	}
	e.res.Logs = append(e.res.Logs, le)
}

// recycled is the per-bar storage of results given back by Recycle.
var recycled sync.Pool // of *perBarStorage

type perBarStorage struct {
	equity    []EquityPoint
	positions []float64
}

// perBar is empty storage for a run's equity points and position rows, with room for
// points and positions values: a recycled result's when it has the room.
func perBar(points, positions int) ([]EquityPoint, []float64) {
	if s, ok := recycled.Get().(*perBarStorage); ok && cap(s.equity) >= points && cap(s.positions) >= positions {
		return s.equity[:0], s.positions[:0]
	}
	return make([]EquityPoint, 0, points), make([]float64, 0, positions)
}

// Recycle gives res's equity curve and position rows back, for the next run's to be
// written over instead of allocated: a study keeps only a summary and the returns of most
// of its runs, and these two were a third of what each run allocated (and of the
// collector's work). Nothing may use res afterwards.
func Recycle(res *Result) {
	if res == nil || cap(res.Equity) == 0 {
		return
	}
	recycled.Put(&perBarStorage{equity: res.Equity[:0], positions: res.Analyzers.PyFolio.Positions.Flat[:0]})
	res.Equity, res.Analyzers.PyFolio.Positions.Flat = nil, nil
}

// Run drives the strategy over every bar and returns the result.
func (e *Engine) Run(ctx context.Context, s Strategy) (*Result, error) {
	return e.RunAll(ctx, []Strategy{s})
}

// RunAll drives several strategies over every bar on one broker (backtrader's
// addstrategy called more than once) and returns the result: strategy i is the one
// SetOwner(i) named while it was set up. Each bar, every strategy in turn gets its own
// notifications and then its next().
func (e *Engine) RunAll(ctx context.Context, strats []Strategy) (*Result, error) {
	n := e.steps
	e.res.InitialCash = e.cfg.Cash
	eq, pos := perBar(n, n*(len(e.feeds)+1))
	e.res.Equity = eq
	e.res.Analyzers.PyFolio.Positions = Rows{Width: len(e.feeds) + 1, Flat: pos}
	var delivering []note
	if err := e.bind(strats); err != nil {
		return nil, err
	}
	single := len(e.feeds) == 1
	// Check for cancellation and report progress about every 1% of the bars, and at
	// least every 1,024 bars so a long run stops promptly.
	every := min(max(n/100, 1), 1024)
	checkAt := 0
	for e.step = 0; e.step < n; e.step++ {
		if e.step == checkAt {
			checkAt += every
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("backtest stopped at bar %d: %w", e.step, err)
			}
			if e.cfg.OnProgress != nil {
				e.cfg.OnProgress(e.step, n)
			}
		}
		t := e.timeAt(e.step)
		if single {
			e.cursor[0] = e.step
			e.ticked[0] = true
		} else {
			for k := range e.feeds {
				c := e.cursor[k] + 1
				e.ticked[k] = c < len(e.feeds[k].Bars) && e.feeds[k].Bars[c].Time.Equal(t)
				if e.ticked[k] {
					e.cursor[k] = c
				}
			}
		}
		copy(e.indCursor, e.cursor)
		e.grow()
		for _, c := range e.activate {
			c.inactive = false
		}
		e.activate = e.activate[:0]
		if t.Before(e.cfg.TradeFrom) {
			continue // warm-up: the cursors moved, nothing else happens
		}
		if err := e.eachTimers(true); err != nil {
			return nil, err
		}
		if err := e.eachNextOpen(); err != nil {
			return nil, err
		}
		e.checkSubmitted()
		e.chargeInterest()
		if e.history != nil {
			e.orderHistory()
		}
		e.tryFills()
		e.settle()
		v := e.value()
		e.res.Equity = append(e.res.Equity, EquityPoint{Time: t, Value: v, Cash: e.cash})
		e.recordPositions()
		if err := e.eachTimers(false); err != nil {
			return nil, err
		}
		for k := range e.pos {
			if e.pos[k].Size != 0 {
				e.held[k]++
			}
		}

		delivering, e.notes = e.notes, delivering[:0]
		for i := range e.members {
			if err := e.stepMember(i, delivering); err != nil {
				return nil, err
			}
		}
		clear(delivering)
	}
	e.step = n - 1
	for i := range e.members {
		e.owner = i
		if err := e.members[i].s.Stop(e); err != nil {
			return nil, err
		}
	}
	if e.cfg.OnProgress != nil {
		e.cfg.OnProgress(n, n)
	}
	return e.finish(), nil
}

// symbolResults fills Result.Symbols from the run's fills, trades, cash flows and holdings.
func (e *Engine) symbolResults() {
	r := &e.res
	r.Symbols = make([]SymbolResult, len(e.feeds))
	at := make(map[string]int, len(e.feeds))
	for k, f := range e.feeds {
		a, b := e.posValue(k)
		s := SymbolResult{Symbol: f.Symbol, PnL: e.flow[k] + a + b, FinalSize: e.pos[k].Size, FinalPrice: e.pos[k].Price}
		if r.InitialCash != 0 {
			s.Contribution = s.PnL / r.InitialCash
		}
		if len(r.Equity) > 0 {
			s.Exposure = float64(e.held[k]) / float64(len(r.Equity))
		}
		r.Symbols[k] = s
		if _, dup := at[f.Symbol]; !dup {
			at[f.Symbol] = k
		}
	}
	for _, x := range r.Executions {
		r.Symbols[at[x.Symbol]].AddExecution(x)
	}
	for _, t := range r.Trades {
		r.Symbols[at[t.Symbol]].AddTrade(t)
	}
}

func (e *Engine) finish() *Result {
	r := &e.res
	r.FinalCash = e.cash
	if len(r.Equity) > 0 {
		r.FinalValue = r.Equity[len(r.Equity)-1].Value
	}
	for k, p := range e.pos {
		r.Positions = append(r.Positions, PositionOut{Symbol: e.feeds[k].Symbol, Size: p.Size, Price: p.Price})
	}
	r.Trades = e.closed
	for _, key := range slices.SortedFunc(maps.Keys(e.trades), tradeKey.compare) {
		if tr := e.trades[key]; tr.IsOpen {
			r.Trades = append(r.Trades, Trade{
				Ref: tr.Ref, TradeID: tr.TradeID, Symbol: e.feeds[key.feed].Symbol, OpenTime: tr.OpenTime, Size: tr.MaxSize,
				EntryPrice: tr.EntryPrice, PnLGross: tr.PnL, PnLNet: tr.PnLComm, Commission: tr.Commission,
				BarLen: e.barNo(key.feed) - tr.OpenBar, IsOpen: true, Strategy: tr.Owner,
			})
		}
	}
	// Like backtrader's get_orders_open: accepted orders still pending.
	// Orders created on the last bar never reached the broker's check.
	for _, o := range e.orders {
		if o.Status == Accepted || o.Status == Partial {
			r.OpenOrders = append(r.OpenOrders, e.orderEvent(o))
		}
	}
	if r.Executions == nil {
		r.Executions = []Execution{}
	}
	e.symbolResults()
	pf := &r.Analyzers.PyFolio
	for _, f := range e.feeds {
		pf.Symbols = append(pf.Symbols, f.Symbol)
	}
	pf.Symbols = append(pf.Symbols, "cash")
	if !e.cfg.SummaryOnly {
		pf.Transactions = transactions(e.feeds, r.Executions)
	}
	if r.Trades == nil {
		r.Trades = []Trade{}
	}
	if r.OrderEvents == nil {
		r.OrderEvents = []OrderEvent{}
	}
	if r.OpenOrders == nil {
		r.OpenOrders = []OrderEvent{}
	}
	if r.Logs == nil {
		r.Logs = []LogEntry{}
	}
	analyze(r, e.opened, !e.cfg.SummaryOnly)
	e.strategyResults()
	return r
}

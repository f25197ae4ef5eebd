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
	"math"
	"slices"
	"sort"
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
	Feed       int
	TradeID    int     // the strategy's own grouping of orders (backtrader's tradeid)
	Size       float64 // current signed size
	MaxSize    float64 // largest signed size held
	Price      float64 // average entry price
	ExitPrice  float64
	EntryPrice float64 // raw entry fill price (position average after scale-ins)
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

// tradeKey names a trade's slot: backtrader keeps trades per feed and tradeid.
type tradeKey struct{ feed, id int }

func (a tradeKey) compare(b tradeKey) int {
	return cmp.Or(cmp.Compare(a.feed, b.feed), cmp.Compare(a.id, b.id))
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
	cursor    []int // per feed index of the current bar, -1 before its first
	indCursor []int // the bar indicators are read at: the cursor, but one behind in NextOpen
	coo       bool  // cheat-on-open: the strategy's NextOpen runs before the broker
	ticked    []bool
	minPeriod []int // per feed, in bars
	cash      float64
	ci        CommInfo
	slip      Slippage
	pos       []Position
	submitted []*Order
	pending   []*Order
	orders    []*Order
	nextRef   int
	tradeRef  int
	opened    int                      // trades notified as opened
	trades    map[tradeKey]*TradeState // per feed and tradeid, the latest trade (open or closed)
	closed    []Trade
	notes     []note
	quiet     quiet
	scratch   []Position
	flow      []float64 // per feed, the cash its fills and settlements moved
	held      []int     // per feed, the steps that ended with a position in it
	// activate holds bracket children whose parent filled: they become active at the start
	// of the next bar, as in backtrader (never on their parent's fill bar).
	activate []*Order

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
	e.minPeriod = make([]int, n)
	e.pos = make([]Position, n)
	e.scratch = make([]Position, n)
	e.flow = make([]float64, n)
	e.held = make([]int, n)
	e.trades = map[tradeKey]*TradeState{}
	for i := range e.cursor {
		e.cursor[i] = -1
		e.indCursor[i] = -1
		e.minPeriod[i] = 1
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

// RequireMinPeriod makes next wait until feed has at least bars bars.
func (e *Engine) RequireMinPeriod(feed, bars int) {
	if bars > e.minPeriod[feed] {
		e.minPeriod[feed] = bars
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
		return dvalue - dunreal, dunreal
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

// Submit creates an order. It is checked against cash at the next bar.
func (e *Engine) Submit(r OrderRequest) (*Order, error) {
	if r.Feed < 0 || r.Feed >= len(e.feeds) {
		return nil, fmt.Errorf("unknown data feed %d", r.Feed)
	}
	c := e.cursor[r.Feed]
	if c < 0 {
		return nil, fmt.Errorf("data feed %d has no bar yet", r.Feed)
	}
	if !(r.Size > 0) || math.IsInf(r.Size, 0) {
		return nil, fmt.Errorf("order size must be a positive number, got %v", r.Size)
	}
	bar := e.feeds[r.Feed].Bars[c]
	switch r.Type {
	case Limit, Stop:
		if r.Price == 0 { // not given: the creating bar's close, as in backtrader
			r.Price = bar.Close
		}
		if !(r.Price > 0) {
			return nil, fmt.Errorf("%s order needs a positive price", r.Type)
		}
	case StopLimit:
		if !(r.Price > 0) || !(r.PLimit > 0) {
			return nil, fmt.Errorf("StopLimit order needs a positive price (stop) and plimit")
		}
	case StopTrail, StopTrailLimit:
		if r.TrailAmount < 0 || r.TrailPercent < 0 || r.TrailPercent >= 1 || math.IsInf(r.TrailAmount, 0) || r.TrailAmount != r.TrailAmount || r.TrailPercent != r.TrailPercent {
			return nil, fmt.Errorf("%s order needs trailamount >= 0 or trailpercent from 0 to less than 1", r.Type)
		}
		if r.Type == StopTrailLimit && (!(r.Price > 0) || !(r.PLimit > 0)) {
			return nil, fmt.Errorf("StopTrailLimit order needs a positive price (the reference of the first stop) and plimit")
		}
		if r.Price == 0 {
			r.Price = bar.Close
		}
		if !(r.Price > 0) {
			return nil, fmt.Errorf("%s order needs a positive price", r.Type)
		}
	}
	e.nextRef++
	o := &Order{
		Ref: e.nextRef, Feed: r.Feed, Side: r.Side, Type: r.Type,
		Size: float64(r.Side) * r.Size, Price: r.Price, PLimit: r.PLimit,
		TrailAmount: r.TrailAmount, TrailPercent: r.TrailPercent, ValidUntil: r.ValidUntil, TradeID: r.TradeID,
		Status: Submitted, CreatedTime: bar.Time, CreatedBar: e.step,
	}
	o.Remaining = o.Size
	o.CreatedPrice = r.Price
	if o.CreatedPrice == 0 {
		o.CreatedPrice = bar.Close
	}
	if o.Type.trailing() {
		// The first stop: the reference price moved by the distance (backtrader starts
		// from an infinite stop and trails it once).
		ref := o.Price
		o.limitOffset = ref - o.PLimit
		o.Price = math.Inf(int(o.Side))
		o.trailAdjust(ref)
	}
	if r.OCO != nil {
		if r.OCO.ocoGroup == nil {
			g := []*Order{r.OCO}
			r.OCO.ocoGroup = &g
		}
		*r.OCO.ocoGroup = append(*r.OCO.ocoGroup, o)
		o.ocoGroup = r.OCO.ocoGroup
	}
	e.orders = append(e.orders, o)
	e.submitted = append(e.submitted, o)
	e.notify(o)
	if !e.cfg.QuietEngine {
		e.Log("INFO", "engine", fmt.Sprintf("order %d submitted: %s %s %g %s", o.Ref, o.Side, o.Type, math.Abs(o.Size), e.feeds[o.Feed].Symbol))
	}
	return o, nil
}

// Bracket submits a parent order with a stop-loss and a take-profit child
// on the opposite side. The children become active on the bar after the parent
// fills (as in backtrader); a fill of one child cancels the other.
func (e *Engine) Bracket(parent OrderRequest, stopPrice, limitPrice float64) ([]*Order, error) {
	p, err := e.Submit(parent)
	if err != nil {
		return nil, err
	}
	out := []*Order{p}
	opp := -parent.Side
	var kids []*Order
	for _, k := range []struct {
		t     ExecType
		price float64
	}{{Stop, stopPrice}, {Limit, limitPrice}} {
		if !(k.price > 0) {
			continue
		}
		c, err := e.Submit(OrderRequest{Feed: parent.Feed, Side: opp, Type: k.t, Size: parent.Size, Price: k.price,
			ValidUntil: parent.ValidUntil, TradeID: parent.TradeID}) // as backtrader passes valid and tradeid on
		if err != nil {
			return nil, err
		}
		c.parent = p
		c.inactive = true
		kids = append(kids, c)
		out = append(out, c)
	}
	p.children = kids
	if len(kids) > 1 {
		g := append([]*Order(nil), kids...)
		for _, k := range kids {
			k.ocoGroup = &g
		}
	}
	return out, nil
}

// Cancel cancels a live order. It reports whether anything was cancelled. An order
// submitted on this bar and not yet accepted by the broker cannot be cancelled: as in
// backtrader (whose broker only cancels pending orders), the cancel is ignored and the
// order stays live; a WARNING line in the log says so.
func (e *Engine) Cancel(o *Order) bool {
	if o == nil || !o.Status.Alive() {
		return false
	}
	if o.Status == Submitted {
		e.Log("WARNING", "engine", fmt.Sprintf("cancel of order %d ignored: it was submitted on this bar and is not yet accepted by the broker, so it stays live (as in backtrader); cancel it on a later bar", o.Ref))
		return false
	}
	e.cancel(o)
	return true
}

func (e *Engine) cancel(o *Order) {
	e.end(o, Canceled, "INFO", fmt.Sprintf("order %d cancelled: %s %s %g %s", o.Ref, o.Side, o.Type, math.Abs(o.Size), e.feeds[o.Feed].Symbol))
}

// end finishes a live order without a fill (cancelled, expired or rejected): it is
// recorded, notified and logged, and its OCO group and bracket children go with it.
func (e *Engine) end(o *Order, st Status, level, msg string) {
	o.Status = st
	e.event(o)
	e.notify(o)
	e.Log(level, "engine", msg)
	e.ocoCheck(o)
	for _, c := range o.children {
		if c.Status.Alive() {
			e.cancel(c)
		}
	}
}

func (e *Engine) event(o *Order) {
	e.res.OrderEvents = append(e.res.OrderEvents, e.orderEvent(o))
}

func (e *Engine) orderEvent(o *Order) OrderEvent {
	return OrderEvent{
		Ref: o.Ref, Symbol: e.feeds[o.Feed].Symbol, Side: o.Side.String(), ExecType: o.Type.String(),
		Status: o.Status.String(), CreatedTime: o.CreatedTime, CreatedPrice: o.CreatedPrice,
		Price: o.Price, Size: o.Size, Time: e.Now(),
	}
}

func (e *Engine) notify(o *Order) {
	if e.quiet.orders {
		return
	}
	snap := *o
	e.notes = append(e.notes, note{order: &snap})
}

// ocoCheck cancels the other live members of o's group.
func (e *Engine) ocoCheck(o *Order) {
	if o.ocoGroup == nil {
		return
	}
	g := *o.ocoGroup
	for _, m := range g {
		m.ocoGroup = nil
	}
	for i := len(g) - 1; i >= 0; i-- {
		if m := g[i]; m != o && m.Status.Alive() {
			e.cancel(m)
		}
	}
}

// Orders returns all orders of the run in creation order.
func (e *Engine) Orders() []*Order { return e.orders }

// checkSubmitted accepts or rejects new orders with a trial execution at
// their reference prices, carrying cash and positions through the batch.
func (e *Engine) checkSubmitted() {
	if len(e.submitted) == 0 {
		return
	}
	cash := e.cash
	copy(e.scratch, e.pos)
	for _, o := range e.submitted {
		if o.Status != Submitted {
			continue
		}
		price := o.CreatedPrice
		if e.coo && o.Type == Market { // backtrader prices it at the open it will fill at
			price = e.feeds[o.Feed].Bars[e.cursor[o.Feed]].Open
		}
		opened, closed := e.scratch[o.Feed].update(o.Remaining, price)
		if closed != 0 {
			cash += e.ci.valueSize(-closed, price)
			cash -= e.ci.commission(closed, price)
		}
		if opened != 0 {
			cash -= e.ci.valueSize(opened, price)
			cash -= e.ci.commission(opened, price)
		}
		if cash >= 0 {
			o.Status = Accepted
			e.pending = append(e.pending, o)
			e.notify(o)
			continue
		}
		e.reject(o)
	}
	e.submitted = e.submitted[:0]
}

// expire ends an order past its validity, with its bracket children and OCO group.
func (e *Engine) expire(o *Order) {
	e.end(o, Expired, "INFO", fmt.Sprintf("order %d expired: %s %s %g %s (valid until %s)", o.Ref, o.Side, o.Type, math.Abs(o.Size), e.feeds[o.Feed].Symbol, o.ValidUntil.Format(time.RFC3339)))
}

func (e *Engine) reject(o *Order) {
	e.end(o, Margin, "WARNING", fmt.Sprintf("order %d (%s %s %v) rejected: Margin (not enough cash)", o.Ref, o.Side, o.Type, math.Abs(o.Size)))
}

// OpenStrategy is a Strategy with cheat-on-open (backtrader's next_open): NextOpen runs
// on each new bar before the broker, from the bar after the first Next on.
type OpenStrategy interface {
	Strategy
	NextOpen(e *Engine) error
}

// SetCheatOnOpen turns cheat-on-open on: a strategy's NextOpen sees the new bar's open
// (its data lines are at the new bar, its indicators still at the previous one, as in
// backtrader), and a market order placed there fills at that open.
func (e *Engine) SetCheatOnOpen(on bool) { e.coo = on }

// IndicatorCursor is the index of the bar feed i's indicators are read at.
func (e *Engine) IndicatorCursor(i int) *int { return &e.indCursor[i] }

func (e *Engine) nextOpen(s Strategy) error {
	o, ok := s.(OpenStrategy)
	if !e.coo || !ok || e.res.FirstNext == 0 {
		return nil
	}
	for k := range e.indCursor {
		if e.ticked[k] {
			e.indCursor[k]--
		}
	}
	err := o.NextOpen(e)
	copy(e.indCursor, e.cursor)
	return err
}

// settle marks futures positions to the close in cash, as backtrader's broker does at
// the end of each bar; stock positions settle nothing.
func (e *Engine) settle() {
	if e.ci.stocklike() {
		return
	}
	for k := range e.pos {
		p := &e.pos[k]
		if p.Size == 0 || !e.ticked[k] {
			continue
		}
		cl := e.feeds[k].Bars[e.cursor[k]].Close
		adj := e.ci.cashAdjust(p.Size, p.adjBase, cl)
		e.cash += adj
		e.flow[k] += adj
		p.adjBase = cl
	}
}

// tryFills goes once through the accepted orders, in submission order, on the bar, as
// backtrader's broker does: an order past its validity expires; otherwise an active order
// on a feed with a bar now is tried, and a trailing stop still alive then follows the close.
func (e *Engine) tryFills() {
	if len(e.pending) == 0 {
		return
	}
	for i := 0; i < len(e.pending); i++ {
		o := e.pending[i]
		if !o.Status.Alive() {
			continue
		}
		b := &e.feeds[o.Feed].Bars[e.cursor[o.Feed]]
		if o.Type != Market && !o.ValidUntil.IsZero() && b.Time.After(o.ValidUntil) {
			e.expire(o)
			continue
		}
		if o.inactive || !e.ticked[o.Feed] {
			continue
		}
		if price, ok := e.fillPrice(o, b); ok {
			before := e.cash
			e.execute(o, price, b.Time)
			e.flow[o.Feed] += e.cash - before
		}
		if o.Status.Alive() && o.Type.trailing() {
			o.trailAdjust(b.Close)
		}
	}
	live := e.pending[:0]
	for _, o := range e.pending {
		if o.Status.Alive() {
			live = append(live, o)
		}
	}
	for i := len(live); i < len(e.pending); i++ {
		e.pending[i] = nil
	}
	e.pending = live
}

// limitFill is backtrader's _try_exec_limit: at the open (slipped within the limit) when
// the bar opens through the limit, else at the limit when the bar reaches it.
func (e *Engine) limitFill(buy bool, p float64, b *Bar) (float64, bool) {
	if buy {
		if p >= b.Open {
			return e.slip.up(min(b.High, p), b.Open, e.slip.Open, true)
		}
		if p >= b.Low {
			return p, true
		}
		return 0, false
	}
	if p <= b.Open {
		// backtrader passes the limit, not max(low, limit), as the floor here
		return e.slip.down(p, b.Open, e.slip.Open, true)
	}
	if p <= b.High {
		return p, true
	}
	return 0, false
}

// fillPrice is the price o fills at on bar b, if it fills (backtrader's _try_exec_*).
func (e *Engine) fillPrice(o *Order, b *Bar) (float64, bool) {
	buy := o.Side == Buy
	switch o.Type {
	case Market:
		if buy {
			return e.slip.up(b.High, b.Open, e.slip.Open, false)
		}
		return e.slip.down(b.Low, b.Open, e.slip.Open, false)
	case Close:
		return b.Close, true
	case Limit:
		return e.limitFill(buy, o.Price, b)
	case Stop, StopTrail:
		s := o.Price
		if buy {
			if b.Open >= s {
				return e.slip.up(b.High, b.Open, e.slip.Open, false)
			}
			if b.High >= s {
				return e.slip.up(b.High, s, true, false)
			}
			return 0, false
		}
		if b.Open <= s {
			return e.slip.down(b.Low, b.Open, e.slip.Open, false)
		}
		if b.Low <= s {
			return e.slip.down(b.Low, s, true, false)
		}
		return 0, false
	case StopLimit, StopTrailLimit:
		if o.triggered {
			return e.limitFill(buy, o.PLimit, b)
		}
		s, pl := o.Price, o.PLimit
		if buy {
			if b.Open >= s {
				o.triggered = true
				return e.limitFill(buy, pl, b)
			}
			if b.High >= s {
				o.triggered = true
				if b.Open > b.Close {
					if pl >= s {
						return e.slip.up(b.High, s, true, true)
					} else if pl >= b.Close {
						return pl, true
					}
				} else if pl >= s {
					return e.slip.up(b.High, s, true, true)
				}
			}
			return 0, false
		}
		if b.Open <= s {
			o.triggered = true
			return e.limitFill(buy, pl, b)
		}
		if b.Low <= s {
			o.triggered = true
			if b.Open <= b.Close { // backtrader: popen <= pclose (the buy side tests popen > pclose)
				if pl <= s {
					return e.slip.down(b.Low, s, true, true)
				} else if pl <= b.Close {
					return pl, true
				}
			} else if pl <= s {
				return e.slip.down(b.Low, s, true, true)
			}
		}
		return 0, false
	}
	return 0, false
}

// execute fills o at price, as backtrader's BackBroker._execute does.
func (e *Engine) execute(o *Order, price float64, t time.Time) {
	pos := &e.pos[o.Feed]
	size := o.Remaining
	porig := pos.Price
	probe := *pos
	opened, closed := probe.update(size, price)
	var pnl float64 // stays +0 for an opening fill; -closed*(...) would give -0 there
	if closed != 0 {
		pnl = e.ci.pnl(-closed, porig, price)
	}
	cash := e.cash
	var closedValue, closedComm, openedValue, openedComm float64
	if closed != 0 {
		closedValue = e.ci.valueSize(-closed, porig)
		if e.ci.stocklike() {
			cash += closedValue + pnl
		} else { // futures: the margin comes back; gains were settled at each close
			cash += closedValue
		}
		closedComm = e.ci.commission(closed, price)
		cash -= closedComm
		cash += e.ci.cashAdjust(-closed, pos.adjBase, price)
		e.cash = cash
	}
	popened := opened
	if opened != 0 {
		openedValue = e.ci.valueSize(opened, price)
		cash -= openedValue
		openedComm = e.ci.commission(opened, price)
		cash -= openedComm
		if cash < 0 {
			opened, openedValue, openedComm = 0, 0, 0
		} else {
			if math.Abs(probe.Size) > math.Abs(opened) {
				// contracts held before this fill are settled to its price, the new base
				cash += e.ci.cashAdjust(probe.Size-opened, pos.adjBase, price)
			}
			pos.adjBase = price
			e.cash = cash
		}
	}
	if execSize := closed + opened; execSize != 0 {
		pos.update(execSize, price)
		prev := o.ExecSize
		o.ExecSize += execSize
		// backtrader's OrderData.addbit, also for the first fill: (size*price)/size can
		// differ from price in the last bit, and strategies compute exits from it.
		o.ExecPrice = (o.ExecPrice*prev + price*execSize) / o.ExecSize
		o.ExecTime = t
		o.ExecValue += closedValue + openedValue
		o.ExecComm += closedComm + openedComm
		o.ExecPnL += pnl
		o.Remaining -= execSize
		if o.Remaining == 0 {
			o.Status = Completed
		} else {
			o.Status = Partial
		}
		e.res.Executions = append(e.res.Executions, Execution{
			Ref: o.Ref, Symbol: e.feeds[o.Feed].Symbol, Time: t, Side: o.Side.String(), ExecType: o.Type.String(),
			Price: price, Size: execSize, Value: closedValue + openedValue, Commission: closedComm + openedComm,
			PnL: pnl, CreatedTime: o.CreatedTime, CreatedPrice: o.CreatedPrice,
		})
		if !e.cfg.QuietEngine {
			e.Log("INFO", "engine", fmt.Sprintf("order %d filled: %s %g %s @ %.4f, commission %.4f",
				o.Ref, o.Side, math.Abs(execSize), e.feeds[o.Feed].Symbol, price, closedComm+openedComm))
		}
		e.notify(o)
		var last *TradeState
		if closed != 0 {
			last = e.tradeUpdate(o, closed, price, closedComm, t, false)
		}
		if opened != 0 {
			last = e.tradeUpdate(o, opened, price, openedComm, t, true)
		}
		// As backtrader, a trade is notified as opened once per fill, if the last trade
		// the fill updated has just opened (so backtrader's TradeAnalyzer counts it).
		if last != nil && last.JustOpened {
			if !e.quiet.trades {
				snap := *last
				e.notes = append(e.notes, note{trade: &snap})
			}
			e.opened++
		}
		e.ocoCheck(o)
		if o.Status == Completed {
			e.activate = append(e.activate, o.children...)
		}
	}
	if popened != 0 && opened == 0 {
		e.reject(o)
	}
}

// tradeUpdate is backtrader's Trade.update for one execution bit of o: the part that
// closed (reduced) the feed's position or the part that opened (added to) it. As in
// backtrader's Strategy._addnotification, trades are kept per feed and tradeid, and the
// position, which is the feed's across tradeids, decides which part is which: a closing
// part goes to the tradeid's latest trade even when that one is closed (it opens again,
// under its old ref), an opening part starts a new trade when the latest one is closed.
func (e *Engine) tradeUpdate(o *Order, size, price, comm float64, t time.Time, opening bool) *TradeState {
	feed := o.Feed
	key := tradeKey{feed, o.TradeID}
	tr := e.trades[key]
	if tr == nil || (opening && tr.IsClosed) {
		e.tradeRef++
		tr = &TradeState{Ref: e.tradeRef, Feed: feed, TradeID: o.TradeID}
		e.trades[key] = tr
	}
	tr.Commission += comm
	old := tr.Size
	tr.Size += size
	tr.JustOpened = old == 0 && size != 0
	bar := e.cursor[feed]
	if tr.JustOpened {
		tr.OpenBar = bar
		tr.OpenTime = t
		tr.MaxSize = 0
	}
	tr.IsOpen = tr.Size != 0
	tr.BarLen = bar - tr.OpenBar
	tr.IsClosed = old != 0 && tr.Size == 0
	var pnl float64
	if math.Abs(tr.Size) > math.Abs(old) {
		tr.Price = (old*tr.Price + size*price) / tr.Size
		tr.EntryPrice = e.pos[feed].Price
		if math.Abs(tr.Size) > math.Abs(tr.MaxSize) {
			tr.MaxSize = tr.Size
		}
	} else {
		pnl = e.ci.pnl(-size, tr.Price, price)
	}
	tr.PnL += pnl
	tr.PnLComm = tr.PnL - tr.Commission
	if tr.IsClosed {
		tr.ExitPrice = price
		tr.CloseTime = t
		ct := t
		e.closed = append(e.closed, Trade{
			Ref: tr.Ref, TradeID: tr.TradeID, Symbol: e.feeds[feed].Symbol, OpenTime: tr.OpenTime, CloseTime: &ct,
			Size: tr.MaxSize, EntryPrice: tr.EntryPrice, ExitPrice: price, PnLGross: tr.PnL, PnLNet: tr.PnLComm,
			Commission: tr.Commission, BarLen: tr.BarLen,
		})
		if !e.cfg.QuietEngine {
			e.Log("INFO", "engine", fmt.Sprintf("trade %d closed: %s, pnl %.4f, net %.4f, %d bars",
				tr.Ref, e.feeds[feed].Symbol, tr.PnL, tr.PnLComm, tr.BarLen))
		}
		if !e.quiet.trades {
			snap := *tr
			e.notes = append(e.notes, note{trade: &snap})
		}
	}
	return tr
}

// Run drives the strategy over every bar and returns the result.
func (e *Engine) Run(ctx context.Context, s Strategy) (*Result, error) {
	n := e.steps
	e.res.InitialCash = e.cfg.Cash
	e.res.Equity = make([]EquityPoint, 0, n)
	var delivering []note
	if f, ok := s.(NotificationFilter); ok {
		o, t := f.Notified()
		e.quiet = quiet{orders: !o, trades: !t}
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
		for _, c := range e.activate {
			c.inactive = false
		}
		e.activate = e.activate[:0]
		if t.Before(e.cfg.TradeFrom) {
			continue // warm-up: the cursors moved, nothing else happens
		}
		if err := e.nextOpen(s); err != nil {
			return nil, err
		}
		e.checkSubmitted()
		e.tryFills()
		e.settle()
		v := e.value()
		e.res.Equity = append(e.res.Equity, EquityPoint{Time: t, Value: v, Cash: e.cash})
		for k := range e.pos {
			if e.pos[k].Size != 0 {
				e.held[k]++
			}
		}

		if len(e.notes) > 0 {
			delivering, e.notes = e.notes, delivering[:0]
			// orders first, then trades
			for _, nt := range delivering {
				if nt.order != nil {
					if err := s.NotifyOrder(e, nt.order); err != nil {
						return nil, err
					}
				}
			}
			for _, nt := range delivering {
				if nt.trade != nil {
					if err := s.NotifyTrade(e, nt.trade); err != nil {
						return nil, err
					}
				}
			}
			clear(delivering)
		}
		ready := true
		for k, c := range e.cursor {
			if c+1 < e.minPeriod[k] {
				ready = false
				break
			}
		}
		var err error
		if ready {
			if e.res.FirstNext == 0 {
				e.res.FirstNext = e.step + 1
			}
			err = s.Next(e)
		} else {
			err = s.Prenext(e)
		}
		if err != nil {
			return nil, err
		}
	}
	e.step = n - 1
	if err := s.Stop(e); err != nil {
		return nil, err
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
				BarLen: e.cursor[key.feed] - tr.OpenBar, IsOpen: true,
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
	analyze(r, e.opened)
	return r
}

package engine

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// member is one strategy of a run and what the engine keeps for it alone: as in
// backtrader, each strategy has its own warm-up, first next, orders, trades and
// notifications, while the broker (cash, positions per feed) is shared.
type member struct {
	s         Strategy
	minPeriod []int // per feed, in bars
	firstNext int   // 1-based step of its first next, 0 before
	// atMinPeriod: at this step its feed furthest from its warm-up has just reached it
	// (backtrader's minperstatus 0, when it calls nextstart instead of next)
	atMinPeriod bool
	opened      int // its trades notified as opened (its TradeAnalyzer's total)
}

func newMember(feeds int) member {
	m := member{minPeriod: make([]int, feeds)}
	for k := range m.minPeriod {
		m.minPeriod[k] = 1
	}
	return m
}

// AtMinPeriod reports whether the strategy being stepped has, at this step, every feed
// at or past its warm-up and one exactly at it: backtrader calls nextstart then instead
// of next, on one step with a single feed and on every step a slower feed (a weekly one
// beside a daily one) stays at its minimum period.
func (e *Engine) AtMinPeriod() bool { return e.members[e.owner].atMinPeriod }

// SetOwner makes strategy i (0-based, in the order RunAll will be given them) the one
// being set up: the orders Submit makes and the warm-up RequireMinPeriod asks for are
// its own from now on. The engine sets it itself around every call into a strategy once
// the run has begun; a host calls it before each strategy's own set-up (its init).
func (e *Engine) SetOwner(i int) {
	for len(e.members) <= i {
		e.members = append(e.members, newMember(len(e.feeds)))
	}
	e.owner = i
}

// Owner is the index of the strategy being set up or called.
func (e *Engine) Owner() int { return e.owner }

// bind attaches the strategies to their members and works out which notifications
// nobody receives.
func (e *Engine) bind(strats []Strategy) error {
	if len(strats) == 0 {
		return errors.New("no strategy to run")
	}
	for len(e.members) < len(strats) {
		e.members = append(e.members, newMember(len(e.feeds)))
	}
	if len(e.members) > len(strats) {
		return fmt.Errorf("%d strategies were set up but %d given to run", len(e.members), len(strats))
	}
	q := quiet{orders: true, trades: true}
	for i, s := range strats {
		e.members[i].s = s
		o, t := true, true
		if f, ok := s.(NotificationFilter); ok {
			o, t = f.Notified()
		}
		q.orders = q.orders && !o
		q.trades = q.trades && !t
	}
	e.quiet = q
	return nil
}

// eachTimers runs every strategy's timers of one kind, in the strategies' order (as
// backtrader keeps the timers in the order the strategies added them).
func (e *Engine) eachTimers(cheat bool) error {
	if !e.timed {
		return nil
	}
	for i := range e.members {
		e.owner = i
		if err := e.timers(e.members[i].s, cheat); err != nil {
			return err
		}
	}
	return nil
}

// eachNextOpen is cheat-on-open for every strategy past its first next.
func (e *Engine) eachNextOpen() error {
	if !e.coo {
		return nil
	}
	for i := range e.members {
		e.owner = i
		if err := e.nextOpen(e.members[i].s, e.members[i].firstNext); err != nil {
			return err
		}
	}
	return nil
}

// stepMember is backtrader's Strategy._next for strategy i: the notifications of its own
// orders and trades (orders first, then trades), then next() or, during its warm-up,
// prenext().
func (e *Engine) stepMember(i int, notes []note) error {
	m := &e.members[i]
	e.owner = i
	s := m.s
	for _, nt := range notes {
		if nt.order != nil && nt.order.Owner == i {
			if err := s.NotifyOrder(e, nt.order); err != nil {
				return err
			}
		}
	}
	for _, nt := range notes {
		if nt.trade != nil && nt.trade.Owner == i {
			if err := s.NotifyTrade(e, nt.trade); err != nil {
				return err
			}
		}
	}
	// backtrader's _getminperstatus: the most bars any feed still lacks; with feeds of
	// several timeframes the slowest can sit exactly at its minimum period for several
	// steps, each of which is a nextstart
	status := math.MinInt
	for k, c := range e.cursor {
		status = max(status, m.minPeriod[k]-(c+1))
	}
	if status > 0 {
		return s.Prenext(e)
	}
	m.atMinPeriod = status == 0
	if m.firstNext == 0 {
		m.firstNext = e.strategyLen()
		if i == 0 {
			e.res.FirstNext = m.firstNext
		}
	}
	return s.Next(e)
}

// StrategyResult is one strategy's share of a run of several: its orders, fills and
// round trips, and backtrader's analyzers of its trades (each strategy's TradeAnalyzer
// and SQN see its own trades; the figures of the portfolio's value are the run's).
type StrategyResult struct {
	Name          string              `json:"name"`  // the host's name for it (the class name)
	Label         string              `json:"label"` // how its trades and fills name it (LabelStrategies)
	FirstNext     int                 `json:"first_next_bar"`
	Orders        int                 `json:"orders"`
	Executions    int                 `json:"executions"`
	Commission    float64             `json:"commission"`
	Trades        int                 `json:"trades"` // closed round trips
	Won           int                 `json:"won"`
	Lost          int                 `json:"lost"`
	OpenTrades    int                 `json:"open_trades"`
	PnLClosed     float64             `json:"pnl_closed"` // net pnl of its closed round trips
	TradeAnalyzer TradeAnalyzerResult `json:"trade_analyzer"`
	SQN           SQNResult           `json:"sqn"`
}

// strategyResults fills Result.Strategies for a run of several strategies.
func (e *Engine) strategyResults() {
	if len(e.members) < 2 {
		return
	}
	r := &e.res
	r.Strategies = make([]StrategyResult, len(e.members))
	for _, o := range e.orders {
		r.Strategies[o.Owner].Orders++
	}
	for _, x := range r.Executions {
		s := &r.Strategies[x.Strategy]
		s.Executions++
		s.Commission += x.Commission
	}
	own := make([][]Trade, len(e.members))
	for _, t := range r.Trades {
		own[t.Strategy] = append(own[t.Strategy], t)
		s := &r.Strategies[t.Strategy]
		switch {
		case t.IsOpen:
			s.OpenTrades++
			continue
		case t.PnLNet >= 0:
			s.Won++
		default:
			s.Lost++
		}
		s.Trades++
		s.PnLClosed += t.PnLNet
	}
	for i, m := range e.members {
		s := &r.Strategies[i]
		s.FirstNext = m.firstNext
		s.TradeAnalyzer = tradeAnalyzer(own[i], m.opened)
		s.SQN = sqn(own[i])
	}
}

// LabelStrategies sets the label that names each strategy of a run in its trades and fills
// (the page's, the HTML report's and the CSV export's): its name, and for a name two or more
// share also its number (By strategy's #), "MultiCross #1", so that their rows can be told
// apart. Results stored before labels existed are labelled on reading.
func LabelStrategies(list []StrategyResult) {
	seen := make(map[string]int, len(list))
	for _, r := range list {
		seen[r.Name]++
	}
	for i := range list {
		r := &list[i]
		r.Label = r.Name
		if seen[r.Name] > 1 {
			r.Label = fmt.Sprintf("%s #%d", r.Name, i)
		}
	}
}

// HistoricalOrder is one entry of an order history (backtrader's add_order_history): Size
// units of feed Feed (positive buys, negative sells) at Price, executed on the feed's first
// bar at or after Time.
type HistoricalOrder struct {
	Time  time.Time
	Size  float64
	Price float64
	Feed  int
}

type orderHistory struct {
	orders []HistoricalOrder
	next   int
	notify bool
	// daily: per feed, all its bars are at midnight, so a bar stands for its whole day
	// (backtrader stamps daily bars with the session's end).
	daily []bool
}

// AddOrderHistory adds a history of orders to execute in the broker, for measuring a
// record of trades made elsewhere (backtrader's cerebro.add_order_history): each order
// is made for the first strategy, accepted and executed whole at its price on its feed's
// first bar at or after its time, with the commission, without a cash check before. With
// notify false the strategy's NotifyOrder does not receive them (their trades are
// notified all the same), as backtrader's histnotify.
func (e *Engine) AddOrderHistory(orders []HistoricalOrder, notify bool) error {
	for i, o := range orders {
		switch {
		case o.Feed < 0 || o.Feed >= len(e.feeds):
			return fmt.Errorf("order history[%d]: unknown data feed %d", i, o.Feed)
		case o.Size == 0 || math.IsInf(o.Size, 0) || o.Size != o.Size:
			return fmt.Errorf("order history[%d]: size must be a number other than 0 (positive buys, negative sells), got %v", i, o.Size)
		case !(o.Price > 0) || math.IsInf(o.Price, 0):
			return fmt.Errorf("order history[%d]: price must be a positive number, got %v", i, o.Price)
		case i > 0 && o.Time.Before(orders[i-1].Time):
			return fmt.Errorf("order history[%d]: the orders must be in time order, %s is before %s", i,
				o.Time.Format(time.RFC3339), orders[i-1].Time.Format(time.RFC3339))
		}
	}
	h := &orderHistory{orders: orders, notify: notify, daily: make([]bool, len(e.feeds))}
	for k, f := range e.feeds {
		h.daily[k] = midnightStamps(f.Bars)
	}
	e.history = append(e.history, h)
	return nil
}

// orderHistory is backtrader's _process_order_history, in the broker after the new
// orders' check and the interest, before the pending orders are tried: the history's
// orders due by their feed's current bar are made and accepted.
func (e *Engine) orderHistory() {
	for _, h := range e.history {
		for h.next < len(h.orders) {
			ho := h.orders[h.next]
			c := e.cursor[ho.Feed]
			if c < 0 {
				break // the feed has not started yet
			}
			bar := e.feeds[ho.Feed].Bars[c]
			at := bar.Time
			if h.daily[ho.Feed] {
				at = at.Add(SessionEnd)
			}
			if ho.Time.After(at) {
				break
			}
			h.next++
			side := Buy
			if ho.Size < 0 {
				side = Sell
			}
			e.nextRef++
			o := &Order{
				Ref: e.nextRef, Feed: ho.Feed, Side: side, Type: Historical, Size: ho.Size, Price: ho.Price,
				Status: Accepted, CreatedTime: bar.Time, CreatedPrice: ho.Price, CreatedBar: e.step, CreatedClose: bar.Close,
				Remaining: ho.Size, histQuiet: !h.notify,
			}
			e.orders = append(e.orders, o)
			e.pending = append(e.pending, o)
			e.notify(o)
			if !e.cfg.QuietEngine {
				e.Log("INFO", "engine", fmt.Sprintf("order %d from the order history: %s %g %s @ %g", o.Ref, o.Side, math.Abs(o.Size), e.feeds[o.Feed].Symbol, o.Price))
			}
		}
	}
}

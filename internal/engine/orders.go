package engine

import "time"

// Side is the direction of an order.
type Side int8

// Order sides.
const (
	Buy  Side = 1
	Sell Side = -1
)

func (s Side) String() string {
	if s == Buy {
		return "buy"
	}
	return "sell"
}

// ExecType is how an order executes.
type ExecType int8

// Execution types, as in backtrader.
const (
	Market ExecType = iota
	Close
	Limit
	Stop
	StopLimit
	StopTrail      // a Stop whose price follows the close at a distance (TrailAmount or TrailPercent)
	StopTrailLimit // a StopLimit whose stop trails as StopTrail's and whose limit keeps its offset
	Historical     // an order of the order history (AddOrderHistory): filled whole at its price on its bar
)

var execTypeNames = [...]string{"Market", "Close", "Limit", "Stop", "StopLimit", "StopTrail", "StopTrailLimit", "Historical"}

// ExecTypeNames lists the execution types by name, for messages.
const ExecTypeNames = "Market, Close, Limit, Stop, StopLimit, StopTrail or StopTrailLimit"

func (t ExecType) String() string { return execTypeNames[t] }

// trailing reports whether t's stop follows the price.
func (t ExecType) trailing() bool { return t == StopTrail || t == StopTrailLimit }

// ExecTypeIsTrailing reports whether the exectype named s is a trailing stop.
func ExecTypeIsTrailing(s string) bool {
	t, ok := ParseExecType(s)
	return ok && t.trailing()
}

// ParseExecType maps the names of execTypeNames (any case) to an ExecType.
func ParseExecType(s string) (ExecType, bool) {
	for i, n := range execTypeNames {
		if equalFold(n, s) {
			return ExecType(i), true
		}
	}
	return 0, false
}

func equalFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i]|0x20, b[i]|0x20
		if x != y {
			return false
		}
	}
	return true
}

// Status is an order's state.
type Status int8

// Order states, as in backtrader.
const (
	Created Status = iota
	Submitted
	Accepted
	Partial
	Completed
	Canceled
	Expired
	Margin
	Rejected
)

var statusNames = [...]string{"Created", "Submitted", "Accepted", "Partial", "Completed", "Canceled", "Expired", "Margin", "Rejected"}

func (s Status) String() string { return statusNames[s] }

// Alive reports whether the order can still execute.
func (s Status) Alive() bool { return s == Created || s == Submitted || s == Accepted || s == Partial }

// OrderRequest describes a new order. Size is a positive quantity; Side
// gives the direction.
type OrderRequest struct {
	Feed   int
	Side   Side
	Type   ExecType
	Size   float64
	Price  float64 // limit or stop price; for market orders an optional reference price
	PLimit float64 // limit price of a stop-limit order
	OCO    *Order  // join this order's one-cancels-others group

	// Trailing stops: the distance of the stop from the close, in money or as a fraction
	// of the close (TrailAmount wins when both are set). Price, when set, is the reference
	// the first stop is computed from instead of the creating bar's close.
	TrailAmount  float64
	TrailPercent float64

	// ValidUntil is the last moment the order is valid: it is Expired on its feed's first
	// bar after that time (backtrader's valid). Zero is good till cancelled. Market orders
	// never expire.
	ValidUntil time.Time

	// TradeID groups orders into trades of their own on the same feed (backtrader's
	// tradeid, default 0); the position stays one per feed.
	TradeID int

	// Parent makes this order a child of another (backtrader's parent=): it is inactive
	// until the parent fills completely, is cancelled with it, and a child that fills
	// cancels the group's other orders (a bracket's stop and target).
	Parent *Order
	// Hold keeps the order (status Created) until an order of its group is submitted
	// without Hold, which sends the whole group (backtrader's transmit=False).
	Hold bool
	// NoCOC keeps a market order out of cheat-on-close (backtrader's coc=False info).
	NoCOC bool
}

// ValidDay is backtrader's Order.DAY validity for an order created at t: the end of t's
// day. On daily bars such an order expires on the next bar, before it could fill.
func ValidDay(t time.Time) time.Time {
	y, m, d := t.Date()
	return time.Date(y, m, d, 23, 59, 59, 9999000, t.Location())
}

// Order is a live order. Strategies receive value copies in
// notifications; the engine owns the original.
type Order struct {
	Ref          int
	Feed         int
	Side         Side
	Type         ExecType
	Size         float64 // requested, signed
	Price        float64 // limit or stop price; a trailing stop's current stop
	PLimit       float64
	TrailAmount  float64
	TrailPercent float64
	ValidUntil   time.Time // zero: good till cancelled
	TradeID      int       // which of the feed's trades its fills belong to (backtrader's tradeid)
	Status       Status
	CreatedTime  time.Time
	CreatedPrice float64
	CreatedBar   int     // timeline step
	CreatedClose float64 // the creating bar's close (what cheat-on-close fills at)

	// Executed totals.
	ExecTime  time.Time
	ExecPrice float64 // average fill price
	ExecSize  float64 // signed
	ExecValue float64
	ExecComm  float64
	ExecPnL   float64
	Remaining float64 // signed size still to fill

	// Owner is the index of the strategy that made the order (RunAll; 0 with one
	// strategy): its notifications go to that strategy, its fills to that strategy's trades.
	Owner int

	// Host is free for the strategy host (e.g. a cached script object).
	Host any

	triggered   bool
	limitOffset float64 // StopTrailLimit: stop minus limit, kept as the stop trails
	ocoGroup    *[]*Order
	parent      *Order
	pc          *orderGroup // the parent's group, for a parent or a child; nil for a lone order
	pcDone      bool        // a lone order's group was ended (cancelled, expired, rejected)
	inactive    bool        // child waiting for its parent to fill
	noCOC       bool
	dteos       time.Time // Close orders: the end of the creating bar's session
	pannotated  float64   // Close orders: the last close seen before the session's end
	histQuiet   bool      // an order of a history added with notify false: not notified
}

// orderGroup is backtrader's parent/children queue (_pchildren): the parent first until it
// fills, then its children. gone is set once the group was cancelled or a child filled.
type orderGroup struct {
	list []*Order
	gone bool
}

// IsBuy reports whether the order buys.
func (o *Order) IsBuy() bool { return o.Side == Buy }

// trailAdjust moves a trailing stop after price, never back: a sell stop up to price less
// the distance, a buy stop down to price plus it (backtrader's Order.trailadjust).
func (o *Order) trailAdjust(price float64) {
	amount := o.TrailAmount
	if amount == 0 {
		amount = price * o.TrailPercent
	}
	if o.Side == Buy {
		if p := price + amount; p < o.Price {
			o.Price = p
			if o.Type == StopTrailLimit {
				o.PLimit = p - o.limitOffset
			}
		}
	} else if p := price - amount; p > o.Price {
		o.Price = p
		if o.Type == StopTrailLimit {
			o.PLimit = p - o.limitOffset
		}
	}
	o.CreatedPrice = o.Price // backtrader keeps the stop in created.price
}

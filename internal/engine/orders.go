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
)

var execTypeNames = [...]string{"Market", "Close", "Limit", "Stop", "StopLimit"}

func (t ExecType) String() string { return execTypeNames[t] }

// ParseExecType maps "Market", "Close", "Limit", "Stop" and "StopLimit"
// (any case) to an ExecType.
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
}

// Order is a live order. Strategies receive value copies in
// notifications; the engine owns the original.
type Order struct {
	Ref          int
	Feed         int
	Side         Side
	Type         ExecType
	Size         float64 // requested, signed
	Price        float64
	PLimit       float64
	Status       Status
	CreatedTime  time.Time
	CreatedPrice float64
	CreatedBar   int // timeline step

	// Executed totals.
	ExecTime  time.Time
	ExecPrice float64 // average fill price
	ExecSize  float64 // signed
	ExecValue float64
	ExecComm  float64
	ExecPnL   float64
	Remaining float64 // signed size still to fill

	// Host is free for the strategy host (e.g. a cached script object).
	Host any

	triggered bool
	ocoGroup  *[]*Order
	parent    *Order
	children  []*Order
	inactive  bool // bracket child waiting for its parent to fill
}

// IsBuy reports whether the order buys.
func (o *Order) IsBuy() bool { return o.Side == Buy }

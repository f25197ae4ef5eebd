package engine

import "time"

// PyFolioResult is what backtrader's PyFolio analyzer gives beside its returns (the
// equity curve's): the positions and the transactions, as pyfolio reads them.
type PyFolioResult struct {
	// Symbols names the columns of Positions: each feed, then "cash".
	Symbols []string `json:"symbols"`
	// Positions has one row per equity point: each feed's position value (backtrader's
	// PositionsValue: size × close, negative short; the margin held for futures), then
	// the cash.
	Positions [][]float64 `json:"positions"`
	// Transactions are the fills of each bar summed per feed (backtrader's Transactions).
	Transactions []Transaction `json:"transactions"`
}

// Transaction is one feed's fills of one bar, net: the size, their average price as a
// position built by them alone would have it, the feed's index (sid), its symbol and the
// cash they moved before commission (−size × price). A bar whose fills net to nothing has
// none.
type Transaction struct {
	Time   time.Time `json:"time"`
	Amount float64   `json:"amount"`
	Price  float64   `json:"price"`
	SID    int       `json:"sid"`
	Symbol string    `json:"symbol"`
	Value  float64   `json:"value"`
}

// recordPositions appends the current bar's row of PyFolioResult.Positions.
func (e *Engine) recordPositions() {
	n := len(e.feeds) + 1
	if len(e.pfRow)+n > cap(e.pfRow) {
		e.pfRow = make([]float64, 0, max(n*(e.steps-e.step), n))
	}
	start := len(e.pfRow)
	for k := range e.feeds {
		e.pfRow = append(e.pfRow, e.FeedValue(k)) // broker.get_value([data]) with shortcash
	}
	e.pfRow = append(e.pfRow, e.cash)
	e.res.Analyzers.PyFolio.Positions = append(e.res.Analyzers.PyFolio.Positions, e.pfRow[start:len(e.pfRow):len(e.pfRow)])
}

// transactions sums each bar's fills per feed as backtrader's Transactions analyzer does.
func transactions(feeds []Feed, xs []Execution) []Transaction {
	out := []Transaction{}
	at := make(map[string]int, len(feeds))
	for k, f := range feeds {
		if _, dup := at[f.Symbol]; !dup {
			at[f.Symbol] = k
		}
	}
	pos := make([]Position, len(feeds))
	seen := make([]bool, len(feeds))
	flush := func(t time.Time) {
		for k := range pos {
			if seen[k] && pos[k].Size != 0 {
				out = append(out, Transaction{Time: t, Amount: pos[k].Size, Price: pos[k].Price, SID: k,
					Symbol: feeds[k].Symbol, Value: -pos[k].Size * pos[k].Price})
			}
			pos[k], seen[k] = Position{}, false
		}
	}
	for i, x := range xs {
		if i > 0 && !x.Time.Equal(xs[i-1].Time) {
			flush(xs[i-1].Time)
		}
		k := at[x.Symbol]
		pos[k].update(x.Size, x.Price)
		seen[k] = true
	}
	if len(xs) > 0 {
		flush(xs[len(xs)-1].Time)
	}
	return out
}

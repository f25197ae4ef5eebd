package engine

import (
	bin "encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"time"
)

// PyFolioResult is what backtrader's PyFolio analyzer gives beside its returns (the
// equity curve's): the positions and the transactions, as pyfolio reads them.
type PyFolioResult struct {
	// Symbols names the columns of Positions: each feed, then "cash".
	Symbols []string `json:"symbols"`
	// Positions has one row per equity point: each feed's position value (backtrader's
	// PositionsValue: size × close, negative short; the margin held for futures), then
	// the cash.
	Positions Rows `json:"positions"`
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

// Rows is a table of numbers kept flat (one allocation for a run, not one per bar) and
// written in JSON as an array of rows.
type Rows struct {
	Width int
	Flat  []float64
}

// Len is the number of rows.
func (r Rows) Len() int {
	if r.Width == 0 {
		return 0
	}
	return len(r.Flat) / r.Width
}

// Row is row i.
func (r Rows) Row(i int) []float64 { return r.Flat[i*r.Width : (i+1)*r.Width : (i+1)*r.Width] }

// GobEncode packs the rows as little-endian numbers after the width: gob would write each
// float64 as a byte-reversed variable-length integer, 10,000 of them for a 5,000-bar run
// sent from its runner process.
func (r Rows) GobEncode() ([]byte, error) {
	b := make([]byte, 8+8*len(r.Flat))
	bin.LittleEndian.PutUint64(b, uint64(r.Width))
	for i, v := range r.Flat {
		bin.LittleEndian.PutUint64(b[8+8*i:], math.Float64bits(v))
	}
	return b, nil
}

// GobDecode reads what GobEncode wrote.
func (r *Rows) GobDecode(b []byte) error {
	if len(b) < 8 || len(b)%8 != 0 {
		return fmt.Errorf("rows: %d bytes", len(b))
	}
	*r = Rows{Width: int(bin.LittleEndian.Uint64(b))}
	if n := len(b)/8 - 1; n > 0 {
		r.Flat = make([]float64, n)
		for i := range r.Flat {
			r.Flat[i] = math.Float64frombits(bin.LittleEndian.Uint64(b[8+8*i:]))
		}
	}
	return nil
}

// MarshalJSON writes the rows as [[...], ...].
func (r Rows) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 2+len(r.Flat)*20)
	b = append(b, '[')
	for i := range r.Len() {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '[')
		for j, v := range r.Row(i) {
			if j > 0 {
				b = append(b, ',')
			}
			b = appendJSONFloat(b, v)
		}
		b = append(b, ']')
	}
	return append(b, ']'), nil
}

// appendJSONFloat writes v as encoding/json does.
func appendJSONFloat(b []byte, v float64) []byte {
	if a := abs(v); a != 0 && (a < 1e-6 || a >= 1e21) {
		n := len(b)
		b = strconv.AppendFloat(b, v, 'e', -1, 64)
		// clean up e-09 to e-9, as encoding/json does
		if m := len(b) - n; m >= 4 && b[len(b)-4] == 'e' && b[len(b)-3] == '-' && b[len(b)-2] == '0' {
			b[len(b)-2] = b[len(b)-1]
			b = b[:len(b)-1]
		}
		return b
	}
	return strconv.AppendFloat(b, v, 'f', -1, 64)
}

func abs(v float64) float64 {
	if v < 0 {
		return -v
	}
	return v
}

// UnmarshalJSON reads [[...], ...]; every row must be as wide as the first.
func (r *Rows) UnmarshalJSON(data []byte) error {
	var rows [][]float64
	if err := json.Unmarshal(data, &rows); err != nil {
		return err
	}
	*r = Rows{}
	for i, row := range rows {
		if i == 0 {
			r.Width = len(row)
			r.Flat = make([]float64, 0, len(rows)*len(row))
		} else if len(row) != r.Width {
			return fmt.Errorf("row %d has %d values, the first %d", i, len(row), r.Width)
		}
		r.Flat = append(r.Flat, row...)
	}
	return nil
}

// recordPositions appends the current bar's row of PyFolioResult.Positions.
func (e *Engine) recordPositions() {
	pf := &e.res.Analyzers.PyFolio.Positions
	for k := range e.feeds {
		pf.Flat = append(pf.Flat, e.FeedValue(k)) // broker.get_value([data]) with shortcash
	}
	pf.Flat = append(pf.Flat, e.cash)
}

// Transactions is PyFolioResult.Transactions of a run on feeds named symbols (in order)
// that made the fills xs: what storage derives them from again (results.RestorePositions).
func Transactions(symbols []string, xs []Execution) []Transaction {
	feeds := make([]Feed, len(symbols))
	for i, s := range symbols {
		feeds[i].Symbol = s
	}
	return transactions(feeds, xs)
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

package jsrt

import (
	"fmt"
	"time"

	"github.com/backtestd/backtestd/internal/engine"
	"github.com/dop251/goja"
)

// addOrderHistoryMethod is this.broker.addOrderHistory(orders, {notify}), backtrader's
// cerebro.add_order_history: orders is an array of [date, size, price] or [date, size,
// price, data] (data: a feed's index, one of this.datas or a symbol), sorted by date; a
// date is 'YYYY-MM-DD', 'YYYY-MM-DDTHH:MM:SS[.ffffff]' (UTC) or a Date. notify (default
// true) sends the orders to notifyOrder. Call it in init().
func (h *host) addOrderHistoryMethod() func(goja.FunctionCall) goja.Value {
	return func(call goja.FunctionCall) goja.Value {
		if h.inited {
			h.throw("addOrderHistory must be called in init()")
		}
		arr, ok := call.Argument(0).(*goja.Object)
		if !ok || arr.ClassName() != "Array" {
			h.throw("addOrderHistory expects an array of [date, size, price] or [date, size, price, data]")
		}
		notify := true
		if op := h.readOpts(call.Argument(1)); op.o != nil {
			if v := op.get("notify"); v != nil {
				notify = v.ToBoolean()
			}
		}
		n := int(arr.Get("length").ToInteger())
		orders := make([]engine.HistoricalOrder, 0, n)
		for i := range n {
			row, ok := arr.Get(fmt.Sprint(i)).(*goja.Object)
			if !ok || row.ClassName() != "Array" {
				h.throw("addOrderHistory: entry %d must be an array [date, size, price] or [date, size, price, data]", i)
			}
			m := int(row.Get("length").ToInteger())
			if m != 3 && m != 4 {
				h.throw("addOrderHistory: entry %d has %d fields; use [date, size, price] or [date, size, price, data]", i, m)
			}
			t, err := historyTime(row.Get("0"))
			if err != nil {
				h.throw("addOrderHistory: entry %d: %s", i, err.Error())
			}
			o := engine.HistoricalOrder{Time: t, Size: row.Get("1").ToFloat(), Price: row.Get("2").ToFloat()}
			if m == 4 {
				o.Feed = h.historyFeed(row.Get("3"), i)
			}
			orders = append(orders, o)
		}
		if err := h.eng.AddOrderHistory(orders, notify); err != nil {
			h.throw("addOrderHistory: %s", err.Error())
		}
		return goja.Undefined()
	}
}

// historyTime reads an order history's date as backtrader's _process_order_history does.
func historyTime(v goja.Value) (time.Time, error) {
	if t, ok := v.Export().(time.Time); ok {
		return t.UTC(), nil
	}
	s := v.String()
	for _, layout := range []string{"2006-01-02", "2006-01-02T15:04:05", "2006-01-02T15:04:05.999999"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("date %q is not YYYY-MM-DD, YYYY-MM-DDTHH:MM:SS[.ffffff] or a Date", s)
}

// historyFeed is an order history entry's data: an index, a data object or a symbol.
func (h *host) historyFeed(v goja.Value, i int) int {
	if _, ok := v.Export().(string); ok {
		for k, f := range h.eng.Feeds() {
			if f.Symbol == v.String() {
				return k
			}
		}
		h.throw("addOrderHistory: entry %d names the symbol %q, which is none of the run's feeds", i, v.String())
	}
	return h.feedOf(v)
}

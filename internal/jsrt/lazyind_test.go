package jsrt

import (
	"context"
	"strconv"
	"testing"

	"github.com/backtestd/backtestd/internal/engine"
)

// ind, the lines' methods, the broker's and the prelude's host functions are made on first
// use (lazyFuncs); to a strategy they are still objects of named functions.
func TestIndIsMadeOnFirstUse(t *testing.T) {
	t.Parallel()
	bars := walk(12)
	for _, c := range []struct{ name, expr string }{
		{"same function each read", `ind.SMA === ind.SMA && ind.Apply === ind.Apply`},
		{"named", `ind.SMA.name === 'SMA' && ind.CrossOver.name === 'CrossOver' && this.data.close.sub.name === 'sub'`},
		{"every name listed", `Object.keys(ind).length === ` + strconv.Itoa(len(indicatorNames())) + ` && Object.keys(ind)[0] === 'SMA'`},
		{"in and hasOwnProperty", `'EMA' in ind && Object.prototype.hasOwnProperty.call(ind, 'EMA') && !('Nope' in ind) && ind.Nope === undefined`},
		{"descriptor as a plain property", `(() => { const d = Object.getOwnPropertyDescriptor(ind, 'RSI'); return d.writable && d.enumerable && d.configurable && typeof d.value === 'function'; })()`},
		{"assign a new name", `(() => { ind.Mine = 7; return ind.Mine === 7 && Object.keys(ind).includes('Mine'); })()`},
		{"assign over a function", `(() => { const f = ind.WMA; ind.WMA = 1; const ok = ind.WMA === 1; ind.WMA = f; return ok && ind.WMA === f; })()`},
		{"delete", `(() => { delete ind.TRIX; return !('TRIX' in ind) && !Object.keys(ind).includes('TRIX') && ind.TRIX === undefined; })()`},
		{"still the prototype chain", `typeof ind.toString === 'function' && ind.constructor === Object`},
		{"lines keep Array's methods", `typeof this.data.close.map === 'function' && [...this.data.close].length === this.data.close.length && Array.isArray(Object.getPrototypeOf(Object.getPrototypeOf(this.data.close))) === Array.isArray(Array.prototype)`},
		{"broker's methods", `this.broker.getCash === this.broker.getCash && this.broker.getCash.name === 'getCash' && this.broker.setSlippagePerc.name === 'setSlippagePerc' && this.broker.getCash() === this.broker.cash && 'setCoc' in this.broker`},
		{"a line's method computes as ind's", `Object.is(this.data.close.sub(this.data.open)[0], ind.Sub(this.data.close, this.data.open)[0]) && typeof this.data.close.gt === 'function'`},
	} {
		code := `class T extends Strategy { init() { if (!(` + c.expr + `)) throw new Error('false'); } }`
		if _, err := Run(context.Background(), RunConfig{Code: code, Feeds: []engine.Feed{{Symbol: "X", Bars: bars}}}); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}

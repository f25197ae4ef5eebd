package jsrt

import "github.com/dop251/goja"

// scriptName is the source name given to strategy code, so stack frames
// that belong to the strategy can be told from the prelude's.
const scriptName = "strategy.js"

// preludeSrc defines the Strategy base class. It is a function of the host
// object so that host functions stay out of reach of strategy code.
const preludeSrc = `(function (host) {
  'use strict';
  class Strategy {
    init() {}
    next() {}
    nextStart() { this.next(); }
    nextOpen() {}
    notifyOrder(order) {}
    notifyTrade(trade) {}
    notifyTimer(timer, when) {}
    stop() {}
    buy(opts) { return host.order(this, 'buy', opts); }
    sell(opts) { return host.order(this, 'sell', opts); }
    close(opts) { return host.close(this, opts); }
    cancel(order) { return host.cancel(order); }
    buyBracket(opts) { return host.bracket(this, 'buy', opts); }
    sellBracket(opts) { return host.bracket(this, 'sell', opts); }
    orderTargetSize(opts) { return host.target(this, 'size', opts); }
    orderTargetValue(opts) { return host.target(this, 'value', opts); }
    orderTargetPercent(opts) { return host.target(this, 'percent', opts); }
    getPosition(data) { return host.getPosition(data); }
    setSizer(sizer) { host.setSizer(this, sizer); }
    signalAdd(type, line) { host.signalAdd(this, type, line); }
    addTimer(opts) { return host.addTimer(opts); }
    log(message, level) { host.log(message, level); }
  }
  Strategy.params = {};
  return Strategy;
})`

// The host's own scripts, compiled once: a goja Program is immutable and runs in any
// number of runtimes at once, so a run does not parse and compile them again.
var (
	preludeProgram = goja.MustCompile("prelude.js", preludeSrc, false)
	// driveProgram calls its argument: see host.run.
	driveProgram = goja.MustCompile("drive.js", "(function (f) { f(); })", false)
	// funcKindsProgram reads what tells async and generator functions apart (see funcKinds);
	// asyncGenProgram makes one of each, whose prototypes only a method that is not a plain
	// function needs (making them builds goja's async and generator machinery, about 2% of
	// a study's CPU when every run did it).
	funcKindsProgram = goja.MustCompile("", "[Function.prototype.toString, Function.prototype]", false)
	asyncGenProgram  = goja.MustCompile("", "[async function () {}, function* () {}]", false)
)

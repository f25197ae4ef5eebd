#!/usr/bin/env python3
"""Makes backtrader fixtures for the engine's parity tests. Not run by CI.

Each strategy below has a JavaScript twin in strategies/<name>.js (or, lacking one, the example
examples/<name>.js); internal/jsrt's TestParity runs it on the same data and compares executions, trades, order events,
the equity curve bar by bar and the analyzers with expected/<name>__<data>.json, which
this script writes in the format of ../shared/reference/expected (see its README).

Usage, from the repository root, with backtrader's source (mementum/backtrader, pure
Python; these fixtures were made with 1.9.78.123, commit b853d7c9) unpacked somewhere:

    BACKTRADER=/tmp/bt-py python3 testdata/backtrader/gen.py [strategy ...]
"""
import calendar
import datetime
import itertools
import json
import math
import os
import sys

sys.path.insert(0, os.environ.get("BACKTRADER", "/tmp/bt-py"))
import backtrader as bt  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.environ.get("BACKTESTD_REFERENCE_DIR", os.path.join(HERE, "..", "..", "..", "shared", "reference"))
DATA = os.path.join(DATA, "data")


class StopLimitExit(bt.Strategy):
    """Enters long at market every `every` bars when flat; then exits with a sell StopLimit
    whose limit lies above its stop (stop_pct of the close, limit limit_pct of the stop),
    replaced after `hold` bars unfilled. Exercises the trigger-bar rule: filled at the limit
    only on a bar whose open <= close."""
    params = dict(size=10, every=7, stop_pct=0.99, limit_pct=1.005, hold=5)

    def __init__(self):
        self.exit = None
        self.placed = 0
        self.cancelled_on = {}  # order ref -> bar of the cancel (see Recorder)

    def notify_order(self, order):
        # notifications carry copies of the order: compare references
        if self.exit is not None and order.ref == self.exit.ref and not order.alive():
            self.exit = None

    def next(self):
        if self.position.size == 0:
            if self.exit is None and len(self) % self.p.every == 0:
                self.buy(size=self.p.size)
        elif self.exit is None:
            stop = self.data.close[0] * self.p.stop_pct
            self.exit = self.sell(exectype=bt.Order.StopLimit, price=stop, plimit=stop * self.p.limit_pct,
                                  size=self.position.size)
            self.placed = len(self)
        elif len(self) - self.placed >= self.p.hold:
            self.cancel(self.exit)
            self.cancelled_on[self.exit.ref] = self.data.datetime.date(0)


class BracketMarket(bt.Strategy):
    """Every `every` bars when flat with no live orders: a bracket entered at market, its
    stop and target `band` below and above the signal close. The children become active on
    the bar after the entry fills, never on the entry bar, even when that bar crosses
    them."""
    params = dict(size=10, every=5, band=0.03)

    def __init__(self):
        self.live = set()

    def notify_order(self, order):
        if not order.alive():
            self.live.discard(order.ref)

    def next(self):
        if self.position.size == 0 and not self.live and len(self) % self.p.every == 0:
            c = self.data.close[0]
            orders = self.buy_bracket(size=self.p.size, exectype=bt.Order.Market,
                                      stopprice=c * (1 - self.p.band), limitprice=c * (1 + self.p.band))
            self.live.update(o.ref for o in orders)


class CancelUnaccepted(bt.Strategy):
    """Every `every` bars when flat: buy at market. When the buy fills, a protective sell
    Stop is placed from notify_order, and next() of the same bar cancels it at once: the
    broker has not accepted it yet, so backtrader ignores that cancel and the stop stays
    live. After `hold` bars the stop is cancelled for real and the position closed."""
    params = dict(size=10, every=6, stop_pct=0.98, hold=4)

    def __init__(self):
        self.guard = None
        self.placed = None
        self.cancelled_on = {}  # order ref -> bar of an effective cancel (see Recorder)

    def notify_order(self, order):
        if order.status == order.Completed and order.isbuy():
            self.guard = self.sell(exectype=bt.Order.Stop, price=order.executed.price * self.p.stop_pct,
                                  size=order.executed.size)
            self.placed = len(self)
        elif self.guard is not None and order.ref == self.guard.ref and not order.alive():
            self.guard = None

    def next(self):
        if self.guard is not None and self.placed == len(self):
            self.cancel(self.guard)  # not yet accepted: ignored
        elif self.guard is not None and len(self) - self.placed >= self.p.hold:
            self.cancel(self.guard)
            self.cancelled_on[self.guard.ref] = self.data.datetime.date(0)
            self.close()
        elif self.position.size == 0 and self.guard is None and len(self) % self.p.every == 0:
            self.buy(size=self.p.size)


class BracketDefault(bt.Strategy):
    """Every `every` bars when flat with no live orders: buy_bracket with its defaults, an
    entry Limit order at the signal bar's close, a stop and a target `band` below and above
    it; an entry still unfilled after `hold` bars is cancelled with its children."""
    params = dict(size=10, every=5, band=0.03, hold=3)

    def __init__(self):
        self.live = set()
        self.entry = None
        self.placed = 0
        self.cancelled_on = {}  # order ref -> bar of an effective cancel (see Recorder)

    def notify_order(self, order):
        if not order.alive():
            self.live.discard(order.ref)

    def next(self):
        if self.entry is not None and self.entry.ref in self.live and self.entry.status == bt.Order.Accepted \
                and len(self) - self.placed >= self.p.hold:
            self.cancel(self.entry)
            for ref in self.live:
                self.cancelled_on[ref] = self.data.datetime.date(0)
        elif self.position.size == 0 and not self.live and len(self) % self.p.every == 0:
            c = self.data.close[0]
            orders = self.buy_bracket(size=self.p.size, stopprice=c * (1 - self.p.band), limitprice=c * (1 + self.p.band))
            self.entry, self.placed = orders[0], len(self)
            self.live.update(o.ref for o in orders)


class PollOrders(bt.Strategy):
    """No notify_order at all: the strategy polls the order it keeps (status, alive(),
    executed.price), which backtrader updates in place. Every `every` bars when flat, a buy
    Limit `limit_pct` of the close; once it has filled, a sell Limit `target` above its
    executed price; an order unfilled after `hold` bars is cancelled, and a position left
    without an exit is closed at market."""
    params = dict(size=10, every=4, limit_pct=0.99, target=1.02, hold=3)

    def __init__(self):
        self.order = None
        self.placed = 0
        self.cancelled_on = {}  # order ref -> bar of an effective cancel (see Recorder)

    def next(self):
        o = self.order
        if o is not None and o.alive():
            if len(self) - self.placed >= self.p.hold:
                self.cancel(o)
                self.cancelled_on[o.ref] = self.data.datetime.date(0)
            return
        if self.position.size == 0:
            if len(self) % self.p.every == 0:
                self.order = self.buy(exectype=bt.Order.Limit, price=self.data.close[0] * self.p.limit_pct,
                                      size=self.p.size)
                self.placed = len(self)
        elif o is not None and o.status == bt.Order.Completed and o.isbuy():
            self.order = self.sell(exectype=bt.Order.Limit, price=o.executed.price * self.p.target,
                                   size=self.position.size)
            self.placed = len(self)
        else:
            self.order = self.close()
            self.placed = len(self)


class TrailPercent(bt.Strategy):
    """Every `every` bars when flat with no live order: buy at market. When the buy fills, a
    sell StopTrail `trailpercent` below the close, which follows the close up and never
    down; it closes the position when the price falls back through it."""
    params = dict(size=10, every=5, trailpercent=0.03)

    def __init__(self):
        self.live = None

    def notify_order(self, order):
        if order.status == order.Completed and order.isbuy():
            self.live = self.sell(exectype=bt.Order.StopTrail, trailpercent=self.p.trailpercent, size=order.executed.size)
        elif self.live is not None and order.ref == self.live.ref and not order.alive():
            self.live = None

    def next(self):
        if self.position.size == 0 and self.live is None and len(self) % self.p.every == 0:
            self.buy(size=self.p.size)


class TrailAmountLimit(bt.Strategy):
    """Short side, trailing by an amount with a limit: every `every` bars when flat with
    no live order, sell at market; when the sell fills, a buy StopTrailLimit `amount` above
    the close whose limit lies `offset` above its stop, both following the close down. One
    still unfilled after `hold` bars is cancelled and the position closed at market."""
    params = dict(size=10, every=6, amount=1.5, offset=0.5, hold=12)

    def __init__(self):
        self.live = None
        self.placed = 0
        self.cancelled_on = {}  # order ref -> bar of an effective cancel (see Recorder)

    def notify_order(self, order):
        if order.status == order.Completed and order.issell() and self.position.size < 0:
            c = self.data.close[0]
            self.live = self.buy(exectype=bt.Order.StopTrailLimit, price=c, plimit=c + self.p.offset,
                                 trailamount=self.p.amount, size=-order.executed.size)
            self.placed = len(self)
        elif self.live is not None and order.ref == self.live.ref and not order.alive():
            self.live = None

    def next(self):
        if self.live is not None and self.live.status == bt.Order.Accepted and len(self) - self.placed >= self.p.hold:
            self.cancel(self.live)
            self.cancelled_on[self.live.ref] = self.data.datetime.date(0)
            self.close()
        elif self.position.size == 0 and self.live is None and len(self) % self.p.every == 0:
            self.sell(size=self.p.size)


class ValidOrders(bt.Strategy):
    """Order validity: every `every` bars when flat with no live order, a buy Limit
    `limit_pct` of the close, valid in turn for the day (DAY: on daily bars it expires on
    the next bar), for `days` days (a timedelta), until a date `days` later, or good till
    cancelled; a filled entry is closed at market after `hold` bars. Expired orders are
    notified as Expired on the bar after their validity."""
    params = dict(size=10, every=3, limit_pct=0.99, days=4, hold=2)

    def __init__(self):
        self.live = None
        self.count = 0
        self.filled = None

    def notify_order(self, order):
        if self.live is not None and order.ref == self.live.ref and not order.alive():
            self.live = None
            if order.status == order.Completed:
                self.filled = len(self)

    def next(self):
        if self.position.size != 0:
            if self.filled is not None and len(self) - self.filled >= self.p.hold:
                self.close()
                self.filled = None
            return
        if self.live is None and len(self) % self.p.every == 0:
            kind = self.count % 4
            self.count += 1
            today = self.data.datetime.date(0)
            valid = [bt.Order.DAY, datetime.timedelta(days=self.p.days), today + datetime.timedelta(days=self.p.days), None][kind]
            self.live = self.buy(exectype=bt.Order.Limit, price=self.data.close[0] * self.p.limit_pct, size=self.p.size,
                                 valid=valid)


class SlipPerc(bt.Strategy):
    """Percentage slippage with backtrader's set_slippage_perc defaults (open, limit and
    match on, out off): every `every` bars when flat with no live order, enter at market,
    long and short in turn; once filled, exit with a Limit `target` beyond the entry, a
    Stop `stop` against it and a StopLimit, in turn, each cancelled after `hold` bars."""
    params = dict(size=10, every=4, perc=0.004, target=0.02, stop=0.015, hold=6)

    def __init__(self):
        self.broker.set_slippage_perc(self.p.perc)
        self.live = None
        self.placed = 0
        self.n = 0
        self.cancelled_on = {}  # order ref -> bar of an effective cancel (see Recorder)

    def notify_order(self, order):
        if self.live is not None and order.ref == self.live.ref and not order.alive():
            self.live = None

    def next(self):
        pos = self.position.size
        if self.live is not None:
            if self.live.status == bt.Order.Accepted and len(self) - self.placed >= self.p.hold:
                self.cancel(self.live)
                self.cancelled_on[self.live.ref] = self.data.datetime.date(0)
            return
        if pos == 0:
            if len(self) % self.p.every == 0:
                self.n += 1
                self.live = (self.buy if self.n % 2 else self.sell)(size=self.p.size)
                self.placed = len(self)
            return
        c = self.data.close[0]
        long_ = pos > 0
        exit_ = self.sell if long_ else self.buy
        kind = self.n % 3
        if kind == 0:
            price = c * (1 + self.p.target) if long_ else c * (1 - self.p.target)
            self.live = exit_(exectype=bt.Order.Limit, price=price, size=abs(pos))
        elif kind == 1:
            price = c * (1 - self.p.stop) if long_ else c * (1 + self.p.stop)
            self.live = exit_(exectype=bt.Order.Stop, price=price, size=abs(pos))
        else:
            price = c * (1 - self.p.stop) if long_ else c * (1 + self.p.stop)
            plimit = price * (0.995 if long_ else 1.005)
            self.live = exit_(exectype=bt.Order.StopLimit, price=price, plimit=plimit, size=abs(pos))
        self.placed = len(self)


class SlipFixedNoMatch(SlipPerc):
    """SlipPerc's orders with fixed slippage, not slipping at the open and without
    matching: a stop whose slipped price lies beyond the bar does not fill on that bar."""
    params = dict(fixed=0.08)

    def __init__(self):
        super().__init__()
        self.broker.set_slippage_fixed(self.p.fixed, slip_open=False, slip_match=False, slip_limit=False)


class SizerCross(bt.Strategy):
    """Moving-average crossover sized by a sizer, never by the strategy: buy() on a cross
    up when flat, sell() on a cross down when long (sizers size a sell that closes a
    position to the position). The subclasses set the sizer."""
    params = dict(fast=10, slow=30)

    def __init__(self):
        self.cross = bt.ind.CrossOver(bt.ind.SMA(self.data.close, period=self.p.fast),
                                      bt.ind.SMA(self.data.close, period=self.p.slow))

    def next(self):
        if self.position.size == 0 and self.cross[0] > 0:
            self.buy()
        elif self.position.size > 0 and self.cross[0] < 0:
            self.sell()


class SizerPercent(SizerCross):
    """PercentSizer: 30% of the cash, fractional shares."""
    params = dict(percents=30)

    def __init__(self):
        super().__init__()
        self.setsizer(bt.sizers.PercentSizer(percents=self.p.percents))


class SizerAllInInt(SizerCross):
    """AllInSizerInt: all the cash in whole shares at the signal close; when the next open
    is higher the buy cannot be paid and is rejected (Margin)."""

    def __init__(self):
        super().__init__()
        self.setsizer(bt.sizers.AllInSizerInt())


class TenthSizer(bt.Sizer):
    """A sizer of one's own: a tenth of the cash in whole shares for a buy, the position
    for a sell."""

    def _getsizing(self, comminfo, cash, data, isbuy):
        if not isbuy:
            return self.broker.getposition(data).size
        return int(cash * 0.1 / data.close[0])


class SizerCustom(SizerCross):
    """A custom sizer (TenthSizer)."""

    def __init__(self):
        super().__init__()
        self.setsizer(TenthSizer())


class MinPerShare(bt.CommInfoBase):
    """Per-share commission with a minimum per fill part, as a broker like IB charges: a
    CommInfoBase of one's own, the way backtrader's documentation shows."""
    params = (("commission", 0.01), ("minimum", 1.0), ("stocklike", True),
              ("commtype", bt.CommInfoBase.COMM_FIXED))

    def _getcommission(self, size, price, pseudoexec):
        return max(abs(size) * self.p.commission, self.p.minimum)


class CommPerShareMin(bt.Strategy):
    """A crossover trading 50 and 200 shares in turn under a per-share commission of
    `per_share` with a minimum of `minimum` per fill part: the minimum applies to the small
    trades, the per-share rate to the large ones; reversals pay it on both parts."""
    params = dict(fast=10, slow=30, per_share=0.01, minimum=1.0)

    def __init__(self):
        self.broker.addcommissioninfo(MinPerShare(commission=self.p.per_share, minimum=self.p.minimum))
        self.cross = bt.ind.CrossOver(bt.ind.SMA(self.data.close, period=self.p.fast),
                                      bt.ind.SMA(self.data.close, period=self.p.slow))
        self.n = 0

    def next(self):
        if self.cross[0] == 0:
            return
        self.n += 1
        size = 50 if self.n % 2 else 200
        if self.cross[0] > 0:
            self.order_target_size(target=size)
        else:
            self.order_target_size(target=-size)


class CommFutures(bt.Strategy):
    """Futures: setcommission(commission=2.0, margin=1000, mult=10), 2.0 per contract; a
    crossover long and short, adding a contract `add_after` bars into a position and
    reversing on the opposite cross, so positions are opened, added to, reversed and
    closed, with gains settled in cash at every close."""
    params = dict(fast=10, slow=30, per_contract=2.0, margin=1000.0, mult=10.0, add_after=5)

    def __init__(self):
        self.broker.setcommission(commission=self.p.per_contract, margin=self.p.margin, mult=self.p.mult)
        self.cross = bt.ind.CrossOver(bt.ind.SMA(self.data.close, period=self.p.fast),
                                      bt.ind.SMA(self.data.close, period=self.p.slow))
        self.since = 0

    def next(self):
        pos = self.position.size
        if self.cross[0] > 0:
            self.order_target_size(target=1)
            self.since = len(self)
        elif self.cross[0] < 0:
            self.order_target_size(target=-1)
            self.since = len(self)
        elif pos != 0 and abs(pos) == 1 and len(self) - self.since == self.p.add_after:
            (self.buy if pos > 0 else self.sell)(size=1)


class CheatOnOpen(bt.Strategy):
    """Cheat-on-open (Cerebro(cheat_on_open=True)): next_open sees the new bar's open
    before the broker runs, with the indicators still at the previous bar, and a market
    order it places fills at that same open; exits placed in next() fill at the next open
    as usual."""
    cerebro_kwargs = dict(cheat_on_open=True)
    params = dict(period=20, size=10)

    def __init__(self):
        self.sma = bt.ind.SMA(self.data.close, period=self.p.period)

    def next_open(self):
        if self.position.size == 0 and self.data.open[0] > self.sma[0]:
            self.buy(size=self.p.size)

    def next(self):
        if self.position.size > 0 and self.data.close[0] < self.sma[0]:
            self.close()


class TradeIds(bt.Strategy):
    """Four trades on one feed told apart by tradeid; the position stays one. Tradeid 1
    follows an SMA(10)/SMA(30) crossover with 10 shares; tradeid 2 holds 5 shares for
    `hold` bars every `every` bars; tradeid 3 sells 3 shares every `every3` bars and buys
    them back `hold` bars later, closing part of a position other tradeids opened (backtrader
    opens a trade of its own for it, and reopens that closed trade under its old ref when it
    sells again); tradeid 4 is a limit-entry bracket valid `days` days, children included."""
    params = dict(every=13, hold=6, every3=29, bracket_every=41, days=3)

    def __init__(self):
        self.cross = bt.ind.CrossOver(bt.ind.SMA(period=10), bt.ind.SMA(period=30))
        self.t1 = False
        self.t2_at = None
        self.t3_at = None
        self.live4 = set()

    def notify_order(self, order):
        if not order.alive():
            self.live4.discard(order.ref)

    def next(self):
        n = len(self)
        if self.cross[0] > 0 and not self.t1:
            self.buy(size=10, tradeid=1)
            self.t1 = True
        elif self.cross[0] < 0 and self.t1:
            self.sell(size=10, tradeid=1)
            self.t1 = False
        if self.t2_at is None and n % self.p.every == 0:
            self.buy(size=5, tradeid=2)
            self.t2_at = n
        elif self.t2_at is not None and n - self.t2_at >= self.p.hold:
            self.sell(size=5, tradeid=2)
            self.t2_at = None
        if self.t3_at is None and n % self.p.every3 == 0:
            self.sell(size=3, tradeid=3)
            self.t3_at = n
        elif self.t3_at is not None and n - self.t3_at >= self.p.hold:
            self.buy(size=3, tradeid=3)
            self.t3_at = None
        if not self.live4 and n % self.p.bracket_every == 0:
            c = self.data.close[0]
            orders = self.buy_bracket(size=4, price=c * 0.99, stopprice=c * 0.95, limitprice=c * 1.05,
                                      valid=datetime.timedelta(days=self.p.days), tradeid=4)
            self.live4.update(o.ref for o in orders)


class WeeklyTrend(bt.Strategy):
    """Daily entries filtered by the weekly trend, on weekly bars resampled from the daily
    feed (backtrader's resampledata): long `size` shares when the last weekly close is
    above its SMA(`wperiod`) and the daily close crosses above its SMA(`dperiod`); out when
    the daily close falls under that SMA."""
    params = dict(wperiod=10, dperiod=20, size=10)
    resample = dict(timeframe=bt.TimeFrame.Weeks)

    def __init__(self):
        self.wsma = bt.ind.SMA(self.data1.close, period=self.p.wperiod)
        self.dsma = bt.ind.SMA(self.data0.close, period=self.p.dperiod)
        self.cross = bt.ind.CrossOver(self.data0.close, self.dsma)

    def next(self):
        if not self.position and self.data1.close[0] > self.wsma[0] and self.cross[0] > 0:
            self.buy(size=self.p.size)
        elif self.position and self.data0.close[0] < self.dsma[0]:
            self.close()


class TwoMonthBreakout(bt.Strategy):
    """Breakouts of the last completed two-month bar (months resampled with compression
    2): long `size` shares when the daily close rises above that bar's high, out when it
    falls under its low."""
    params = dict(size=10)
    resample = dict(timeframe=bt.TimeFrame.Months, compression=2)

    def next(self):
        if not self.position and self.data0.close[0] > self.data1.high[0]:
            self.buy(size=self.p.size)
        elif self.position and self.data0.close[0] < self.data1.low[0]:
            self.close()


class Pairs(bt.Strategy):
    """Pairs trading on two feeds, examples/pairs.js: when the z-score of the spread (the
    first close less `ratio` times the second) is beyond `entry`, sell the dear leg and buy
    the cheap one; close both when it comes back within `exit`."""
    params = dict(period=30, ratio=0.5, entry=2, exit=0.5, size=10)

    def __init__(self):
        a, b = self.datas[0], self.datas[1]
        spread = a.close - self.p.ratio * b.close
        self.z = (spread - bt.ind.SMA(spread, period=self.p.period)) / bt.ind.StdDev(spread, period=self.p.period)

    def next(self):
        a, b = self.datas[0], self.datas[1]
        size = self.p.size
        other = int(math.floor(size * self.p.ratio + 0.5))  # JavaScript's Math.round
        if self.getposition(a).size == 0:
            if self.z[0] > self.p.entry:
                self.sell(data=a, size=size)
                self.buy(data=b, size=other)
            elif self.z[0] < -self.p.entry:
                self.buy(data=a, size=size)
                self.sell(data=b, size=other)
        elif abs(self.z[0]) < self.p.exit:
            self.close(data=a)
            self.close(data=b)



# ---- Orders and the broker (issue 37, branch h-orders): ports of backtrader's samples
# order-close, bracket, cheat-on-close, volumefilling and credit-interest. ----


class OrderCloseIntraday(bt.Strategy):
    """samples/order-close on 5-minute bars, its dice replaced by a count: every `every`
    bars with no live order, a Close order buys when flat or closes the position. Placed
    during a session, it fills at that session's last close, dated that bar, and executes
    on the next session's first bar, where its trade is dated."""
    params = dict(every=37, size=1)
    intraday = True

    def __init__(self):
        self.order = None

    def notify_order(self, order):
        if self.order is not None and order.ref == self.order.ref and not order.alive():
            self.order = None

    def next(self):
        if self.order is None and len(self) % self.p.every == 0:
            if self.position:
                self.order = self.close(exectype=bt.Order.Close)
            else:
                self.order = self.buy(exectype=bt.Order.Close, size=self.p.size)


class OrderCloseSession(OrderCloseIntraday):
    """OrderCloseIntraday with the feed's sessionend at 17:30, the time of each session's
    last bar, and broker.set_eosbar(True) (which backtrader 1.9.78 reads nowhere): a Close
    order fills on the session's 17:30 bar at its close."""
    data_kwargs = dict(sessionend=datetime.time(17, 30))

    def __init__(self):
        super().__init__()
        self.broker.set_eosbar(True)


class BracketParentChild(bt.Strategy):
    """samples/bracket without buy_bracket: on an SMA crossover up when flat with no live
    order, a buy Limit `limit` under the close valid `limdays` days sent with
    transmit=False, a sell Stop and a sell Limit 2% of the close under and over it valid
    `limdays2` days, children of it (parent=), the last one transmitting the three. The
    children become active when the entry fills and are cancelled when it expires."""
    params = dict(p1=5, p2=15, limit=0.005, limdays=3, limdays2=1000)

    def __init__(self):
        self.cross = bt.ind.CrossOver(bt.ind.SMA(period=self.p.p1), bt.ind.SMA(period=self.p.p2))
        self.orefs = []

    def notify_order(self, order):
        if not order.alive() and order.ref in self.orefs:
            self.orefs.remove(order.ref)

    def prices(self):
        close = self.data.close[0]
        p1 = close * (1.0 - self.p.limit)
        return p1, p1 - 0.02 * close, p1 + 0.02 * close

    def next(self):
        if self.orefs or self.position or self.cross[0] <= 0.0:
            return
        p1, p2, p3 = self.prices()
        valid1, valid2 = datetime.timedelta(self.p.limdays), datetime.timedelta(self.p.limdays2)
        o1 = self.buy(exectype=bt.Order.Limit, price=p1, valid=valid1, transmit=False)
        o2 = self.sell(exectype=bt.Order.Stop, price=p2, valid=valid2, parent=o1, transmit=False)
        o3 = self.sell(exectype=bt.Order.Limit, price=p3, valid=valid2, parent=o1, transmit=True)
        self.orefs = [o1.ref, o2.ref, o3.ref]


class BracketLegs(BracketParentChild):
    """samples/bracket with buy_bracket: the entry valid `limdays` days, the exits given
    their own validity of `limdays2` days through stopargs and limitargs."""

    def next(self):
        if self.orefs or self.position or self.cross[0] <= 0.0:
            return
        p1, p2, p3 = self.prices()
        valid2 = datetime.timedelta(self.p.limdays2)
        os_ = self.buy_bracket(price=p1, valid=datetime.timedelta(self.p.limdays),
                               stopprice=p2, stopargs=dict(valid=valid2),
                               limitprice=p3, limitargs=dict(valid=valid2))
        self.orefs = [o.ref for o in os_]


class CheatOnClose(bt.Strategy):
    """broker.set_coc(True): an SMA crossover buys and closes at market; each fill takes the
    signal bar's close, is dated that bar and moves the cash on the next."""
    params = dict(p1=10, p2=30, size=10)

    def __init__(self):
        self.broker.set_coc(True)
        self.cross = bt.ind.CrossOver(bt.ind.SMA(period=self.p.p1), bt.ind.SMA(period=self.p.p2))

    def next(self):
        if self.cross[0] > 0 and not self.position:
            self.buy(size=self.p.size)
        elif self.cross[0] < 0 and self.position:
            self.close()


class VolumeFixedSize(bt.Strategy):
    """samples/volumefilling: buy `size` when flat, close when long, `opbreak` bars after the
    last order completed, with the broker's filler FixedSize(size=`fill`): each bar fills at
    most `fill` units, the order Partial until done."""
    params = dict(size=30, opbreak=3, fill=7)

    def make_filler(self):
        return bt.broker.fillers.FixedSize(size=self.p.fill)

    def __init__(self):
        self.broker.set_filler(self.make_filler())
        self.doop = 0

    def notify_order(self, order):
        if order.status == order.Completed:
            self.doop = -self.p.opbreak

    def next(self):
        if self.doop == 0:
            if not self.position.size:
                self.buy(size=self.p.size)
            else:
                self.close()
        self.doop += 1


class VolumeBarPerc(VolumeFixedSize):
    """VolumeFixedSize with FixedBarPerc(perc=`perc`): a bar fills `perc` percent of its
    volume in whole units."""
    params = dict(size=200, perc=0.0004)

    def make_filler(self):
        return bt.broker.fillers.FixedBarPerc(perc=self.p.perc)


class VolumeBarPoint(VolumeFixedSize):
    """VolumeFixedSize with BarPointPerc(minmov=`minmov`, perc=`perc`): the bar's volume
    spread over its range in steps of minmov, `perc` percent of one step's share."""
    params = dict(size=200, minmov=0.01, perc=0.05)

    def make_filler(self):
        return bt.broker.fillers.BarPointPerc(minmov=self.p.minmov, perc=self.p.perc)


class CreditInterest(bt.Strategy):
    """samples/credit-interest: an SMA crossover long and short (`stake` units), with
    setcommission(interest=`interest`, interest_long=`interest_long`): open positions pay
    the yearly rate by calendar day on their value, added to the closing fill's commission."""
    params = dict(p1=10, p2=30, stake=10, interest=0.05, interest_long=False)

    def __init__(self):
        self.broker.setcommission(commission=0.001, interest=self.p.interest, interest_long=self.p.interest_long)
        self.cross = bt.ind.CrossOver(bt.ind.SMA(period=self.p.p1), bt.ind.SMA(period=self.p.p2))

    def next(self):
        if self.cross[0] > 0:
            self.order_target_size(target=self.p.stake)
        elif self.cross[0] < 0:
            self.order_target_size(target=-self.p.stake)


class CreditInterestLong(CreditInterest):
    """CreditInterest with interest_long=True: long positions pay too."""
    params = dict(interest=0.03, interest_long=True)


class CreditInterestNoPnl(CreditInterestLong):
    """CreditInterestLong with broker.set_int2pnl(False): the interest is taken from the
    cash but kept out of the closing fills' commissions and the trades' pnlcomm."""

    def __init__(self):
        super(CreditInterestNoPnl, self).__init__()
        self.broker.set_int2pnl(False)


class Compensate(bt.Strategy):
    """samples/future-spot without its random parts, on orcl and orcl_fut (orcl 0.3% dearer,
    a future over its spot): data1 (the second feed) compensates
    data0 (`data1.compensate(data0)`), so orders on data1, priced and filled on data1's
    bars, move data0's position and trades. Flat, it buys `size` of data0 on even bars and
    sells `size`/2 of data1 (a short of data0) on odd ones; `hold` bars later it closes
    a long by selling data1 and a short by buying data0."""
    params = dict(hold=10, size=10)

    def __init__(self):
        self.data1.compensate(self.data0)
        self.entered = 0

    def next(self):
        pos = self.getposition(self.data0).size
        if not pos:
            if len(self) - self.entered > self.p.hold:
                if len(self) % 2 == 0:
                    self.buy(data=self.data0, size=self.p.size)
                else:
                    self.sell(data=self.data1, size=self.p.size // 2)
                self.entered = len(self)
        elif len(self) - self.entered >= self.p.hold:
            if pos > 0:
                self.sell(data=self.data1, size=pos)
            else:
                self.buy(data=self.data0, size=-pos)


class Leverage(bt.Strategy):
    """setcommission(leverage=`leverage`): an SMA crossover buys `leverage` times what the
    cash pays for (95% of it) and closes on the cross down; a long position takes its value
    over the leverage in cash."""
    params = dict(p1=10, p2=30, leverage=2.0)

    def __init__(self):
        self.broker.setcommission(commission=0.001, leverage=self.p.leverage)
        self.cross = bt.ind.CrossOver(bt.ind.SMA(period=self.p.p1), bt.ind.SMA(period=self.p.p2))

    def next(self):
        if self.cross[0] > 0 and not self.position:
            self.buy(size=int(self.broker.getcash() * self.p.leverage * 0.95 / self.data.close[0]))
        elif self.cross[0] < 0 and self.position:
            self.close()


class OneSided(bt.Strategy):
    """One round trip, bought on bar `entry` and closed on bar `exit`: the trade analyzer's
    won or lost group stays empty, and backtrader reports its pnl total and average as
    0.0 once a trade has closed."""
    params = dict(size=10, entry=50, exit=60)

    def next(self):
        if len(self) == self.p.entry:
            self.buy(size=self.p.size)
        elif len(self) == self.p.exit:
            self.close()


ORDER_STRATEGIES = {
    "one_sided": (OneSided, ["orcl.csv", "nvda.csv"]),
    "order_close_intraday": (OrderCloseIntraday, ["es_min5.csv"]),
    "order_close_session": (OrderCloseSession, ["es_min5.csv"]),
    "bracket_parent_child": (BracketParentChild, ["orcl.csv", "nvda.csv"]),
    "bracket_legs": (BracketLegs, ["orcl.csv", "nvda.csv"]),
    "cheat_on_close": (CheatOnClose, ["orcl.csv", "nvda.csv"]),
    "volume_fixed_size": (VolumeFixedSize, ["orcl.csv"]),
    "volume_bar_perc": (VolumeBarPerc, ["orcl.csv"]),
    "volume_bar_point": (VolumeBarPoint, ["nvda.csv"]),
    "credit_interest": (CreditInterest, ["orcl.csv", "yhoo.csv"]),
    "credit_interest_long": (CreditInterestLong, ["orcl.csv"]),
    "credit_interest_int2pnl": (CreditInterestNoPnl, ["orcl.csv", "yhoo.csv"]),
    "compensate": (Compensate, [("orcl.csv", "orcl_fut.csv")]),
    "leverage": (Leverage, ["orcl.csv", "nvda.csv"]),
}
# ---- end of the orders and broker block ----
# ---- Analyzers (issue 37, h-analyzers): backtrader's returns family and PyFolio ----
# Strategies with more_analyzers = True also get Returns, VWR, Calmar, AnnualReturn,
# TimeReturn by month and year, SharpeRatio_A (yearly and monthly) and PyFolio, recorded
# under "analyzers_more" (see add_more_analyzers and more_analyzers_out).


class AnalyzersLongShort(bt.Strategy):
    """A crossover that is always in the market once it starts, long `size` shares after
    a cross up and short after a cross down (order_target_size), so that the position
    values of the PyFolio report cover shorts too."""
    more_analyzers = True
    params = dict(fast=10, slow=30, size=10)

    def __init__(self):
        self.cross = bt.ind.CrossOver(bt.ind.SMA(self.data.close, period=self.p.fast),
                                      bt.ind.SMA(self.data.close, period=self.p.slow))

    def next(self):
        if self.cross[0] > 0:
            self.order_target_size(target=self.p.size)
        elif self.cross[0] < 0:
            self.order_target_size(target=-self.p.size)


class AnalyzersPairs(Pairs):
    """examples/pairs.js with the analyzers: PyFolio's positions and transactions per feed."""
    more_analyzers = True


class AnalyzersFutures(CommFutures):
    """comm_futures with the analyzers: a futures position's value is the margin it holds."""
    more_analyzers = True


def add_more_analyzers(cerebro):
    cerebro.addobserver(bt.observers.Broker)  # AnnualReturn reads stats.broker
    cerebro.addanalyzer(bt.analyzers.Returns, _name="returns")
    cerebro.addanalyzer(bt.analyzers.VWR, _name="vwr")
    cerebro.addanalyzer(bt.analyzers.Calmar, _name="calmar")
    cerebro.addanalyzer(bt.analyzers.AnnualReturn, _name="annual")
    cerebro.addanalyzer(bt.analyzers.TimeReturn, _name="tr_months", timeframe=bt.TimeFrame.Months)
    cerebro.addanalyzer(bt.analyzers.TimeReturn, _name="tr_years", timeframe=bt.TimeFrame.Years)
    cerebro.addanalyzer(bt.analyzers.SharpeRatio_A, _name="sharpe_a")
    cerebro.addanalyzer(bt.analyzers.SharpeRatio_A, _name="sharpe_a_months", timeframe=bt.TimeFrame.Months)
    cerebro.addanalyzer(bt.analyzers.PyFolio, _name="pyfolio")


def more_analyzers_out(strat):
    def num(v):
        return None if v is None or math.isnan(v) or math.isinf(v) else v

    def key(k):
        return str(k) if isinstance(k, int) else k.strftime("%Y-%m-%d")

    a = strat.analyzers
    ret = a.returns.get_analysis()
    pf = a.pyfolio.get_analysis()
    positions = list(pf["positions"].items())
    transactions = list(pf["transactions"].items())
    return dict(
        returns=dict(rtot=num(ret["rtot"]), ravg=num(ret["ravg"]), rnorm=num(ret["rnorm"]), rnorm100=num(ret["rnorm100"])),
        vwr=num(a.vwr.get_analysis()["vwr"]),
        calmar=dict(calmar=num(a.calmar.calmar), by_month=[[key(k), num(v)] for k, v in a.calmar.get_analysis().items()]),
        annual_return=[[key(k), num(v)] for k, v in a.annual.get_analysis().items()],
        time_return=dict(months=[[key(k), num(v)] for k, v in a.tr_months.get_analysis().items()],
                         years=[[key(k), num(v)] for k, v in a.tr_years.get_analysis().items()]),
        sharpe_annualized=num(a.sharpe_a.get_analysis()["sharperatio"]),
        sharpe_monthly_annualized=num(a.sharpe_a_months.get_analysis()["sharperatio"]),
        pyfolio=dict(
            symbols=positions[0][1],
            positions=[[key(k)] + v for k, v in positions[1:]],
            transactions=[[key(k)] + t for k, v in transactions[1:] for t in v]))
# ---- end of Analyzers ----


# ---- Timers (issue 37, h-analyzers): add_timer / notify_timer, after samples/timers ----
# Each notify_timer call is logged by the strategy as (tid, when, bar date) into
# "timer_calls"; the JavaScript twins log "timer <tid> <when>" lines, which the parity
# test compares with them.


class TimerBase(bt.Strategy):
    def start(self):
        self.timer_calls = []

    def record_timer(self, timer, when):
        self.timer_calls.append([timer.p.tid, when.strftime("%Y-%m-%dT%H:%M:%S"), self.data.datetime.date(0).strftime("%Y-%m-%d")])


class TimerMonthly(TimerBase):
    """A monthly investment plan run by timers: at the session start of the 1st and the 15th
    of each month (monthcarry: the next trading day when the day has no bar) buy `size`
    shares; at the session end of each Wednesday (weekcarry: the next trading day of the
    week when Wednesday has no bar), sell half the position once it holds `most` shares or
    more. A third timer at 15:30 plus 30 minutes on Mondays and Fridays only logs."""
    params = dict(size=10, most=40)

    def __init__(self):
        self.add_timer(when=bt.timer.SESSION_START, monthdays=[1, 15], monthcarry=True)
        self.add_timer(when=bt.timer.SESSION_END, weekdays=[3], weekcarry=True)
        self.add_timer(when=datetime.time(15, 30), offset=datetime.timedelta(minutes=30), weekdays=[1, 5])

    def notify_timer(self, timer, when, *args, **kwargs):
        self.record_timer(timer, when)
        if timer.p.tid == 0:
            self.buy(size=self.p.size)
        elif timer.p.tid == 1 and self.position.size >= self.p.most:
            self.sell(size=self.position.size // 2)


class TimerCheat(TimerBase):
    """Cheat timers (cheat=True, with cheat-on-open so that the broker fills at the open):
    on Mondays (weekcarry) before the broker, buy `size` shares when flat, filled at that
    bar's open; a plain timer on the 10th and the 20th of the month (monthcarry off) closes
    the position after the broker, at the next open. The indicator is read as next_open
    reads it, one bar behind."""
    cerebro_kwargs = dict(cheat_on_open=True)
    params = dict(size=10, period=10)

    def __init__(self):
        self.sma = bt.ind.SMA(self.data.close, period=self.p.period)
        self.add_timer(when=bt.timer.SESSION_START, weekdays=[1], weekcarry=True, cheat=True)
        self.add_timer(when=bt.timer.SESSION_END, offset=datetime.timedelta(hours=-1), monthdays=[10, 20],
                       monthcarry=False)

    def notify_timer(self, timer, when, *args, **kwargs):
        self.record_timer(timer, when)
        if timer.p.tid == 0:
            if self.position.size == 0 and len(self.sma) > 0 and self.data.open[0] > self.sma[0]:
                self.buy(size=self.p.size)
        elif self.position.size:
            self.close()
# ---- end of Timers ----
# ---- Several strategies and order history (issue 37, h-multi) ----
class MultiCross(bt.Strategy):
    """A long-only moving-average crossover that keeps its own holding (the position is
    the feed's, shared with the run's other strategies): buys `size` on a cross up and
    sells them on a cross down."""
    params = dict(fast=10, slow=30, size=10)

    def __init__(self):
        self.cross = bt.ind.CrossOver(bt.ind.SMA(period=self.p.fast), bt.ind.SMA(period=self.p.slow))
        self.held = 0

    def next(self):
        if self.cross[0] > 0 and not self.held:
            self.buy(size=self.p.size)
            self.held = self.p.size
        elif self.cross[0] < 0 and self.held:
            self.sell(size=self.held)
            self.held = 0


class MultiHold(bt.Strategy):
    """Timed holds beside the crossovers: every `every` bars a Limit buy of `size` at
    `limit_pct` of the close valid `valid` days; `hold` bars after it fills, a market sell
    of what it bought. Its trades are its own, on the position it shares."""
    params = dict(every=15, size=3, hold=5, limit_pct=0.995, valid=4)

    def __init__(self):
        self.filled = None
        self.live = None

    def notify_order(self, order):
        if self.live is not None and order.ref == self.live.ref and not order.alive():
            self.live = None
            if order.status == order.Completed and order.isbuy():
                self.filled = len(self)

    def next(self):
        if self.filled is not None and len(self) - self.filled >= self.p.hold:
            self.sell(size=self.p.size)
            self.filled = None
        elif self.filled is None and self.live is None and len(self) % self.p.every == 0:
            self.live = self.buy(exectype=bt.Order.Limit, price=self.data.close[0] * self.p.limit_pct, size=self.p.size,
                                 valid=datetime.timedelta(days=self.p.valid))


class MultiShort(bt.Strategy):
    """A short-only crossover beside a long one: sells `size` on a cross down and buys them
    back on a cross up. The shared position crosses zero both ways, so a fill's closing and
    opening parts (the position's) go to this strategy's trades, which close and reopen on
    them as backtrader books them."""
    params = dict(fast=5, slow=20, size=7)

    def __init__(self):
        self.cross = bt.ind.CrossOver(bt.ind.SMA(period=self.p.fast), bt.ind.SMA(period=self.p.slow))
        self.held = 0

    def next(self):
        if self.cross[0] < 0 and not self.held:
            self.sell(size=self.p.size)
            self.held = self.p.size
        elif self.cross[0] > 0 and self.held:
            self.buy(size=self.held)
            self.held = 0


MULTI_OPPOSED = [MultiCross, MultiShort]


# Several strategies: a list of classes or (class, params) run together (cerebro.addstrategy
# for each); the JavaScript twin's `strategies` array lists the same.
MULTI_RUN = [MultiCross, (MultiCross, dict(fast=5, slow=20, size=5)), MultiHold]

# samples/order-history's ORDER_HISTORY, on its data (datas/2005-2006-day-001.txt).
ORDER_HISTORY = (
    ('2005-02-01', 1, 2984.63), ('2005-03-04', -1, 3079.93), ('2005-03-08', 1, 3113.82),
    ('2005-03-22', -1, 3040.55), ('2005-04-08', 1, 3092.07), ('2005-04-20', -1, 2957.92),
    ('2005-05-13', 1, 2991.71), ('2005-08-19', -1, 3284.35), ('2005-08-22', 1, 3328.84),
    ('2005-08-25', -1, 3293.69), ('2005-09-12', 1, 3361.1), ('2005-10-18', -1, 3356.73),
    ('2005-11-09', 1, 3361.92), ('2006-01-24', -1, 3544.78), ('2006-02-06', 1, 3678.87),
    ('2006-03-13', -1, 3801.03), ('2006-03-20', 1, 3833.25), ('2006-04-13', -1, 3777.24),
    ('2006-05-02', 1, 3839.24), ('2006-05-16', -1, 3711.46), ('2006-06-30', 1, 3592.01),
    ('2006-07-21', -1, 3580.53), ('2006-08-01', 1, 3687.82), ('2006-09-14', -1, 3809.08),
    ('2006-09-25', 1, 3815.13), ('2006-12-01', -1, 3993.03), ('2006-12-18', 1, 4140.99),
)


class OrderHistory(bt.Strategy):
    """samples/order-history's empty strategy: the orders come from the history, added
    with notify=True; the twin logs each finished order as the sample prints it."""
    params = dict()
    order_history = ORDER_HISTORY
    history_notify = True

    def next(self):
        pass


class OrderHistoryCross(MultiCross):
    """The history (notify=False) under a crossover of its own, whose market orders and
    the history's share the position; the history's orders are the first strategy's."""
    order_history = ORDER_HISTORY[:14]
    history_notify = False
    params = dict(fast=10, slow=30, size=2)


class MultiCopy(bt.Strategy):
    """samples/multi-copy's TheStrategy without its prints (two of them on one feed, the
    sample without --copydata): a MACD and a 10/30 SMA crossover each buy half the stake
    on a cross up and close the feed's (shared) position, or half of it when it is the
    stake, on a cross down. One strategy's close sells what the other holds too, so its
    trades open on fills that close the other's holding and flip sign without growing."""
    params = dict(stake=100, macd1=12, macd2=26, macdsig=9, sma1=10, sma2=30)

    def __init__(self):
        self.smasig = bt.ind.CrossOver(bt.ind.SMA(period=self.p.sma1), bt.ind.SMA(period=self.p.sma2))
        macd = bt.ind.MACD(period_me1=self.p.macd1, period_me2=self.p.macd2, period_signal=self.p.macdsig)
        self.macdsig = bt.ind.CrossOver(macd.macd, macd.signal)

    def next(self):
        buysize = self.p.stake // 2
        if self.macdsig[0] > 0.0:
            self.buy(size=buysize)
        if self.smasig[0] > 0.0:
            self.buy(size=buysize)
        size = self.position.size
        if size == self.p.stake:
            size //= 2
        if self.macdsig[0] < 0.0:
            self.close(size=size)
        if self.smasig[0] < 0.0:
            self.close(size=size)


class MultiCopy2(MultiCopy):
    """samples/multi-copy's TheStrategy2: the same with other periods and twice the stake."""
    params = dict(stake=200, macd1=15, macd2=22, macdsig=7, sma1=15, sma2=50)


class FlipLong(bt.Strategy):
    """On the 2nd bar of every `every` buys 10; on the `every`/2th sells 25, more than the shared
    position (its 10 and FlipHold's 5), so its fill closes the position and opens a short:
    its trade flips from +10 to -5 on the closing part, keeping its price, and grows to -15
    on the opening part; on the 3*`every`/4th, buys 15, whose closing part and opening part
    close its trade."""
    params = dict(every=40)

    def next(self):
        k = len(self) % self.p.every
        if k == 2:
            self.buy(size=10)
        elif k == self.p.every // 2:
            self.sell(size=25)
        elif k == 3 * self.p.every // 4:
            self.buy(size=15)


class FlipHold(bt.Strategy):
    """Holds 5 from the 5th to the 35th bar of every `every` (beside FlipLong)."""
    params = dict(every=40)

    def next(self):
        k = len(self) % self.p.every
        if k == 5:
            self.buy(size=5)
        elif k == self.p.every - 5:
            self.sell(size=5)


MULTI_COPY = [MultiCopy, MultiCopy2]
MULTI_FLIP = [FlipLong, FlipHold]


MULTI_STRATEGIES = {
    "multi_strategies": (MULTI_RUN, ["orcl.csv", "nvda.csv"]),
    "multi_copy": (MULTI_COPY, ["yhoo.csv", "orcl.csv"]),
    "multi_flip": (MULTI_FLIP, ["orcl.csv"]),
    "multi_opposed": (MULTI_OPPOSED, ["orcl.csv", "yhoo.csv"]),
    "order_history": (OrderHistory, ["estx50_day.csv"]),
    "order_history_cross": (OrderHistoryCross, ["estx50_day.csv"]),
}
# ---- end of several strategies and order history ----


# ---- Signals (issue 37, h-signals): SignalStrategy and cerebro.add_signal, after samples/signals-strategy ----
class SMACloseSignal(bt.Indicator):
    """samples/signals-strategy's main signal: the close minus its SMA(period)."""
    lines = ("signal",)
    params = (("period", 30),)

    def __init__(self):
        self.lines.signal = self.data - bt.indicators.SMA(period=self.p.period)


class SMAExitSignal(bt.Indicator):
    """samples/signals-strategy's exit signal: SMA(p1) minus SMA(p2)."""
    lines = ("signal",)
    params = (("p1", 5), ("p2", 30))

    def __init__(self):
        sma1 = bt.indicators.SMA(period=self.p.p1)
        sma2 = bt.indicators.SMA(period=self.p.p2)
        self.lines.signal = sma1 - sma2


class SignalsLongShort(bt.SignalStrategy):
    """samples/signals-strategy as it runs by default (--signal longshort): one
    SIGNAL_LONGSHORT, the close minus its SMA(smaperiod); market orders of the default
    sizer's one share; long above the average, short under it, reversed with a close and
    an opening order on the same bar."""
    fixture_params = dict(smaperiod=30)

    @classmethod
    def add_signals(cls, p):
        return [(bt.SIGNAL_LONGSHORT, SMACloseSignal, dict(period=p["smaperiod"]))]


class SmaSignals(SignalsLongShort):
    """--signal longonly --exitsignal longexit: SIGNAL_LONG on the close against its
    SMA(smaperiod), SIGNAL_LONGEXIT on SMA(exitperiod) minus SMA(smaperiod): a long is
    left only when the fast average falls under the slow one (a LONGEXIT disables the
    exit on the main signal's short indication); never short."""
    fixture_params = dict(smaperiod=30, exitperiod=5)

    @classmethod
    def add_signals(cls, p):
        return [(bt.SIGNAL_LONG, SMACloseSignal, dict(period=p["smaperiod"])),
                (bt.SIGNAL_LONGEXIT, SMAExitSignal, dict(p1=p["exitperiod"], p2=p["smaperiod"]))]


class SignalsShortExit(SignalsLongShort):
    """--signal shortonly with a SIGNAL_SHORTEXIT (the sample's --exitsignal shortexit
    names SIGNAL_LONGEXIT, a slip that leaves shorts to the main signal): short under the
    average, covered when SMA(exitperiod) rises over SMA(smaperiod); 5 shares a trade
    (FixedSize)."""
    fixture_params = dict(smaperiod=30, exitperiod=5, stake=5)

    def __init__(self):
        self.setsizer(bt.sizers.FixedSize(stake=self.fixture_params["stake"]))

    @classmethod
    def add_signals(cls, p):
        return [(bt.SIGNAL_SHORT, SMACloseSignal, dict(period=p["smaperiod"])),
                (bt.SIGNAL_SHORTEXIT, SMAExitSignal, dict(p1=p["exitperiod"], p2=p["smaperiod"]))]


class SignalsAccumulate(SignalsLongShort):
    """SIGNAL_LONG on the close against SMA(smaperiod) and SIGNAL_SHORT on SMA(exitperiod)
    minus SMA(smaperiod), with cerebro.signal_accumulate(True) and
    signal_concurrent(True), 10 shares an order: a long is added to on every bar both
    signals stay long (until the cash runs out: Margin), left when the close falls under
    its average, reversed to a short when the fast average falls under the slow one."""
    fixture_params = dict(smaperiod=30, exitperiod=5, stake=10)
    accumulate = True
    concurrent = True

    def __init__(self):
        self.setsizer(bt.sizers.FixedSize(stake=self.fixture_params["stake"]))

    @classmethod
    def add_signals(cls, p):
        return [(bt.SIGNAL_LONG, SMACloseSignal, dict(period=p["smaperiod"])),
                (bt.SIGNAL_SHORT, SMAExitSignal, dict(p1=p["exitperiod"], p2=p["smaperiod"]))]


class SignalsData(SignalsLongShort):
    """The longshort signal of the first feed's close (orcl) trading the second feed
    (SignalStrategy's _data="nvda_gaps": nvda with every ninth bar from 2000 left out), 3
    shares an order: an entry made on the day before a missing bar waits a day longer, and
    while it waits no signal order is placed (not concurrent), closes included."""
    fixture_params = dict(smaperiod=30, stake=3)
    signal_kwargs = dict(_data="nvda_gaps")

    def __init__(self):
        self.setsizer(bt.sizers.FixedSize(stake=self.fixture_params["stake"]))


class SignalsDataConcurrent(SignalsData):
    """SignalsData with signal_concurrent(True): while an entry waits for its feed's next
    bar, the next bar's signals may place another (a reversal doubled, an entry made
    twice)."""
    concurrent = True


SIGNAL_STRATEGIES = {
    "signals_data": (SignalsData, [("orcl.csv", "nvda_gaps.csv")]),
    "signals_data_concurrent": (SignalsDataConcurrent, [("orcl.csv", "nvda_gaps.csv")]),
    "signals_longshort": (SignalsLongShort, ["orcl.csv", "nvda.csv"]),
    "signals": (SmaSignals, ["orcl.csv", "yhoo.csv"]),  # examples/signals.js
    "signals_short_exit": (SignalsShortExit, ["orcl.csv", "nvda.csv"]),
    "signals_accumulate": (SignalsAccumulate, ["orcl.csv", "yhoo.csv"]),
}


def add_signal_strategy(cerebro, cls):
    """cerebro.add_signal for each of cls's signals, cls as the SignalStrategy that runs
    them (cerebro.signal_strategy) with its accumulate and concurrent settings."""
    for sigtype, sigcls, kw in cls.add_signals(cls.fixture_params):
        cerebro.add_signal(sigtype, sigcls, **kw)
    cerebro.signal_strategy(cls, **getattr(cls, "signal_kwargs", {}))
    cerebro.signal_accumulate(getattr(cls, "accumulate", False))
    cerebro.signal_concurrent(getattr(cls, "concurrent", False))
# ---- end of Signals ----


# ---- Futures (h-futures): cheat timers without cheat-on-open, chained and rolled-over feeds ----
class TimerCheatNoCoo(TimerBase):
    """Cheat timers (cheat=True) without cheat-on-open: they still run before the broker, but
    a market buy made there (Mondays, weekcarry, when flat and the open is above the moving
    average read one bar behind) fills at the next bar's open, as one made in next(); a sell
    Limit at the bar's open made by the cheat timer of the 10th and the 20th (monthcarry off)
    fills on that bar, the broker trying it after the timer. A plain timer on Fridays logs."""
    params = dict(size=10, period=10)

    def __init__(self):
        self.sma = bt.ind.SMA(self.data.close, period=self.p.period)
        self.add_timer(when=bt.timer.SESSION_START, weekdays=[1], weekcarry=True, cheat=True)
        self.add_timer(when=bt.timer.SESSION_START, monthdays=[10, 20], monthcarry=False, cheat=True)
        self.add_timer(when=bt.timer.SESSION_END, weekdays=[5])

    def notify_timer(self, timer, when, *args, **kwargs):
        self.record_timer(timer, when)
        if timer.p.tid == 0:
            if self.position.size == 0 and len(self.sma) > 0 and self.data.open[0] > self.sma[0]:
                self.buy(size=self.p.size)
        elif timer.p.tid == 1 and self.position.size:
            self.sell(size=self.position.size, exectype=bt.Order.Limit, price=self.data.open[0])


def expiry_week(dt, d):
    """samples/rollover's checkdate: True in the ISO week of the third Friday of the active
    contract's month (its name ends in a month code H, M, U or Z and a year digit)."""
    month = dict(H=3, M=6, U=9, Z=12)[d._name[-2]]
    year = dt.year // 10 * 10 + int(d._name[-1])
    if year < dt.year:
        year += 10
    exp = datetime.date(year, month, 21 - (calendar.weekday(year, month, 1) + 2) % 7)
    return dt.isocalendar()[:2] == exp.isocalendar()[:2]


def volume_overtaken(d0, d1):
    """samples/rollover's checkvolume: roll once the next contract trades more."""
    return d0.volume[0] < d1.volume[0]


class FuturesCross(bt.Strategy):
    """A moving-average crossover on a joined futures feed (data/ESH1.csv … ESH2.csv, made
    by futures_data.py): buy `size` contracts when the fast average crosses above the slow
    one, close when it crosses below. Records the contract each bar came from (the feed's
    `_d`) where it changes, as "rolls"."""
    params = dict(fast=5, slow=15, size=2)

    def __init__(self):
        self.cross = bt.ind.CrossOver(bt.ind.SMA(period=self.p.fast), bt.ind.SMA(period=self.p.slow))
        self.rolls = []

    def record_roll(self):
        name = self.data0._d._name
        if not self.rolls or self.rolls[-1][1] != name:
            self.rolls.append([day(self.data0.datetime[0]), name])

    def prenext(self):
        self.record_roll()

    def next(self):
        self.record_roll()
        if self.position.size == 0 and self.cross[0] > 0:
            self.buy(size=self.p.size)
        elif self.position.size > 0 and self.cross[0] < 0:
            self.close()


class ChainCross(FuturesCross):
    """FuturesCross on cerebro.chaindata: each contract to its end, then the next one's bars
    after it."""
    chain = dict(name="ES")


class RollDateCross(FuturesCross):
    """FuturesCross on cerebro.rolloverdata with checkdate only: roll on the first bar of
    the expiry week."""
    rollover = dict(name="ES", checkdate=expiry_week)


class RollVolumeCross(FuturesCross):
    """FuturesCross on cerebro.rolloverdata with checkdate and checkcondition: roll in the
    expiry week once the next contract's volume is higher."""
    rollover = dict(name="ES", checkdate=expiry_week, checkcondition=volume_overtaken)


CONTRACTS = ("ESH1.csv", "ESM1.csv", "ESU1.csv", "ESZ1.csv", "ESH2.csv")
FUTURES_STRATEGIES = {
    "timer_cheat_nocoo": (TimerCheatNoCoo, ["orcl.csv", "yhoo.csv"]),
    "chain_futures": (ChainCross, [CONTRACTS]),
    "rollover_date": (RollDateCross, [CONTRACTS]),
    "rollover_volume": (RollVolumeCross, [CONTRACTS]),
}
# ---- end of Futures ----


# ---- Data filters (issue 37, h-filters): bt.filters on the feed the strategy trades ----
# A strategy's `filters` are (filter class, kwargs) pairs added to its feed with
# data.addfilter before the run (see run); backtrader's broker then fills against the
# filtered bars. source_bars records the CSV's bars, which a filter may drop.


class HeikinAshiTrend(bt.Strategy):
    """bt.filters.HeikinAshi on the feed: long `size` when two green candles in a row (close
    above open) close above the SMA(`period`) of the candles' closes; out at market on the
    first red candle. Orders fill at the candles' prices."""
    params = dict(size=10, period=10)
    filters = [(bt.filters.HeikinAshi, {})]

    def __init__(self):
        self.sma = bt.ind.SMA(self.data.close, period=self.p.period)

    def next(self):
        d = self.data
        green = d.close[0] > d.open[0]
        if not self.position and green and d.close[-1] > d.open[-1] and d.close[0] > self.sma[0]:
            self.buy(size=self.p.size)
        elif self.position and not green:
            self.close()


class RenkoBricks(bt.Strategy):
    """bt.filters.Renko(size=`brick`) on the feed, after samples/renko (an RSI on the
    bricks): long `size` after two rising bricks with the RSI(`period`) under `top`; a sell
    Stop one brick under the entry brick's bottom protects it, and the position is closed
    at market on a falling brick."""
    params = dict(size=10, period=14, top=70.0)
    filters = [(bt.filters.Renko, dict(size=1.0))]

    def __init__(self):
        self.rsi = bt.ind.RSI(self.data, period=self.p.period)
        self.guard = None

    def notify_order(self, order):
        if order.status == order.Completed and order.isbuy():
            self.guard = self.sell(exectype=bt.Order.Stop, price=self.data.open[0] - 1.0, size=order.executed.size)
        elif self.guard is not None and order.ref == self.guard.ref and not order.alive():
            self.guard = None

    def next(self):
        d = self.data
        rising = d.close[0] > d.open[0]
        if not self.position:
            if rising and d.close[-1] > d.open[-1] and self.rsi[0] < self.p.top:
                self.buy(size=self.p.size)
        elif not rising:
            if self.guard is not None:
                self.cancel(self.guard)
                self.cancelled_on[self.guard.ref] = self.data.datetime.date(0)
            self.close()

    def start(self):
        self.cancelled_on = {}  # order ref -> bar of an effective cancel (see Recorder)


class RenkoHilo(RenkoBricks):
    """RenkoBricks with Renko(hilo=True, size=0.5, align=0.5, roundstart=False): bricks
    decided on the high and low."""
    filters = [(bt.filters.Renko, dict(hilo=True, size=0.5, align=0.5, roundstart=False))]


class HeikinAshiRenko(HeikinAshiTrend):
    """HeikinAshiTrend on Heikin-Ashi candles made into Renko bricks of 1.0 (two filters in
    turn on one feed)."""
    filters = [(bt.filters.HeikinAshi, {}), (bt.filters.Renko, dict(size=1.0))]


class ReplayWeekly(bt.Strategy):
    """After samples/data-replay: cerebro.replaydata(timeframe=Weeks), the week's bar
    rebuilt day by day and next() called on every day. Long `size` when the close crosses
    above the SMA(`period`) of the weeks (the current, unfinished week included); out when
    the close falls under the last finished week's low."""
    params = dict(period=10, size=10)
    replay = dict(timeframe=bt.TimeFrame.Weeks)

    def __init__(self):
        self.sma = bt.ind.SMA(self.data.close, period=self.p.period)
        self.cross = bt.ind.CrossOver(self.data.close, self.sma)

    def next(self):
        if not self.position and self.cross[0] > 0:
            self.buy(size=self.p.size)
        elif self.position and self.data.close[0] < self.data.low[-1]:
            self.close()


class ReplayMonths(bt.Strategy):
    """replaydata(timeframe=Months, compression=2): a buy Limit at the unfinished two-month
    bar's low plus a tenth of its range when the RSI(`period`) of the bars is under `low`,
    valid `days` days; the position is closed at market when the bar's high exceeds the
    previous bar's high."""
    params = dict(period=6, low=50.0, size=10, days=10)
    replay = dict(timeframe=bt.TimeFrame.Months, compression=2)

    def __init__(self):
        self.rsi = bt.ind.RSI(self.data.close, period=self.p.period)
        self.live = None

    def notify_order(self, order):
        if self.live is not None and order.ref == self.live.ref and not order.alive():
            self.live = None

    def next(self):
        d = self.data
        if not self.position:
            if self.live is None and self.rsi[0] < self.p.low:
                self.live = self.buy(exectype=bt.Order.Limit, price=d.low[0] + (d.high[0] - d.low[0]) / 10.0,
                                     size=self.p.size, valid=datetime.timedelta(days=self.p.days))
        elif d.high[0] > d.high[-1]:
            self.close()


class CalendarCross(bt.Strategy):
    """bt.filters.CalendarDays(fill_price=0, fill_vol=0), after samples/calendar-days: the
    missing calendar days filled with bars at the last close (backtrader also fills the
    date of the bar after a gap, before that bar), and an SMA crossover over calendar
    days: long `size` when SMA(`fast`) crosses above SMA(`slow`), out when it crosses
    under. Orders placed on a Friday fill on Saturday's filler bar."""
    params = dict(fast=7, slow=28, size=10)
    filters = [(bt.filters.CalendarDays, dict(fill_price=0, fill_vol=0))]

    def __init__(self):
        self.cross = bt.ind.CrossOver(bt.ind.SMA(self.data.close, period=self.p.fast),
                                      bt.ind.SMA(self.data.close, period=self.p.slow))

    def next(self):
        if not self.position and self.cross[0] > 0:
            self.buy(size=self.p.size)
        elif self.position and self.cross[0] < 0:
            self.close()


class CalendarMid(CalendarCross):
    """CalendarCross on HeikinAshi candles, the days filled at the last candle's high-low
    midpoint (CalendarDays(fill_price=-1, fill_vol=0))."""
    filters = [(bt.filters.HeikinAshi, {}), (bt.filters.CalendarDays, dict(fill_price=-1, fill_vol=0))]


class HeikinAshiWeekly(WeeklyTrend):
    """WeeklyTrend on Heikin-Ashi candles, the weekly bars resampled from the candles
    (HeikinAshi, then resampledata(timeframe=Weeks) of the filtered feed)."""
    filters = [(bt.filters.HeikinAshi, {})]


class SessionFillerCross(bt.Strategy):
    """bt.filters.SessionFiller(fill_vol=0), after samples/data-filler, on 5-minute bars
    with bars missing inside sessions and at their starts and ends (es_min5_gaps, the
    feed's session 09:00-17:30): the missing bars filled at the last close, and an SMA
    crossover long `size` contracts when SMA(`fast`) crosses above SMA(`slow`), out when it
    crosses under."""
    params = dict(fast=5, slow=20, size=1)
    intraday = True
    data_kwargs = dict(sessionstart=datetime.time(9, 0), sessionend=datetime.time(17, 30))
    filters = [(bt.filters.SessionFiller, dict(fill_vol=0))]

    def __init__(self):
        self.cross = bt.ind.CrossOver(bt.ind.SMA(self.data.close, period=self.p.fast),
                                      bt.ind.SMA(self.data.close, period=self.p.slow))

    def next(self):
        if not self.position and self.cross[0] > 0:
            self.buy(size=self.p.size)
        elif self.position and self.cross[0] < 0:
            self.close()


class DayStepsOpen(bt.Strategy):
    """bt.filters.BarReplayer_Open (DayStepsFilter), after samples/daysteps: each day
    delivered first as its open alone, then whole, next() called on both (backtrader
    replays the feed). At the open (the data's length has grown), when flat with nothing
    pending and the open above the SMA(`period`) of the closes (the day as it stands, its
    close the open), a buy Limit `off` under the open, good till filled (it can fill on
    the same day's whole bar); in a position, a close at market when the day opens under
    the previous day's low (filled at the next day's open: backtrader fills a market order
    only after its bar's time). On the whole day, in a position, a close at market when
    the close falls under the SMA."""
    params = dict(period=10, size=10, off=0.005)
    filters = [(bt.filters.BarReplayer_Open, {})]

    def __init__(self):
        self.sma = bt.ind.SMA(self.data.close, period=self.p.period)
        self.lcontrol = 0
        self.order = None

    def notify_order(self, order):
        if self.order is not None and order.ref == self.order.ref and not order.alive():
            self.order = None

    def next(self):
        d = self.data
        opening = len(d) > self.lcontrol
        self.lcontrol = len(d)
        if self.order is not None:
            return
        if opening:
            if not self.position and d.open[0] > self.sma[0]:
                self.order = self.buy(exectype=bt.Order.Limit, price=d.open[0] * (1.0 - self.p.off), size=self.p.size)
            elif self.position and d.open[0] < d.low[-1]:
                self.order = self.close()
        elif self.position and d.close[0] < self.sma[0]:
            self.order = self.close()


class DaySplitClose(bt.Strategy):
    """bt.filters.DaySplitter_Close with cerebro.replaydata(timeframe=Days), as the filter
    is made for: each day comes as its open, high and low (the close their average, at
    the session start, half the volume) and then its close alone (at the session end, the
    rest), and the replayed day ends at the session end, so each part is a bar. On the
    first part (an odd length), flat, when its close is above the SMA(`period`) of the
    parts' closes and its volume above the previous day's first part's, a market buy: it
    fills at the same day's close. In a position, the close part under the SMA closes it
    at the next day's open."""
    params = dict(period=10, size=10)
    stamp_time = True
    filters = [(bt.filters.DaySplitter_Close, {})]
    replay = dict(timeframe=bt.TimeFrame.Days)

    def __init__(self):
        self.sma = bt.ind.SMA(self.data.close, period=self.p.period)

    def next(self):
        d = self.data
        if len(d) % 2 == 1:
            if not self.position and d.close[0] > self.sma[0] and d.volume[0] > d.volume[-2]:
                self.buy(size=self.p.size)
        elif self.position and d.close[0] < self.sma[0]:
            self.close()


class DaySplitSession(DaySplitClose):
    """DaySplitClose with the feed's session 09:30-16:00 (the parts' times) and
    DaySplitter_Close(closevol=0.3): 70% of the volume in the first part."""
    data_kwargs = dict(sessionstart=datetime.time(9, 30), sessionend=datetime.time(16, 0))
    filters = [(bt.filters.DaySplitter_Close, dict(closevol=0.3))]


class SessionFilterCross(SessionFillerCross):
    """bt.filters.SessionFilter with the feed's session 10:00-16:00 on 5-minute bars that
    run from 09:05 to 17:30: the bars before 10:00 and after 16:00 dropped (both ends
    kept), and SessionFillerCross's SMA crossover on the rest."""
    data_kwargs = dict(sessionstart=datetime.time(10, 0), sessionend=datetime.time(16, 0))
    filters = [(bt.filters.SessionFilter, {})]


class ReplayPairs(bt.Strategy):
    """After samples/data-replay and samples/multidata-strategy: two feeds, each replayed
    to weeks (cerebro.replaydata twice), next() on every day with each week as it stands.
    Each feed has its SMA(`period`) of weeks and the crossover of its close with it: long
    `size` on a feed whose close crosses above, out when its close falls under its last
    finished week's low."""
    params = dict(period=10, size=10)
    replay = dict(timeframe=bt.TimeFrame.Weeks)

    def __init__(self):
        self.cross = [bt.ind.CrossOver(d.close, bt.ind.SMA(d.close, period=self.p.period)) for d in self.datas]

    def next(self):
        for d, cross in zip(self.datas, self.cross):
            pos = self.getposition(d).size
            if not pos and cross[0] > 0:
                self.buy(data=d, size=self.p.size)
            elif pos and d.close[0] < d.low[-1]:
                self.close(data=d)


class ReplayPairsMonths(ReplayPairs):
    """ReplayPairs with the first feed replayed to weeks and the second to months, each
    feed's week or month as it stands (replaydata with each its own timeframe)."""
    replay = [dict(timeframe=bt.TimeFrame.Weeks), dict(timeframe=bt.TimeFrame.Months)]
    params = dict(period=6, size=10)


# ---- Filters with replay, filters in turn (issue 51, H5) ----
class DaySplitReplay(bt.Strategy):
    """samples/pinkfish-challenge with bt.filters.DaySplitter_Close: a feed declared in
    minutes, each daily bar split in two and replaydata(timeframe=Days), so the two parts
    form one day bar (the length counts days, the second part completes the day with its
    close and both volumes). On a day's first part (the length grown), flat, when the
    high is the Highest(high, `highperiod`) of the days, a buy at market (filled at the
    day's close part); `sellafter` days after the entry a sell at market."""
    params = dict(highperiod=20, sellafter=2, size=10)
    stamp_time = True
    data_kwargs = dict(timeframe=bt.TimeFrame.Minutes, compression=1)
    filters = [(bt.filters.DaySplitter_Close, {})]
    replay = dict(timeframe=bt.TimeFrame.Days)

    def __init__(self):
        self.highest = bt.ind.Highest(self.data.high, period=self.p.highperiod)
        self.lcontrol = 0
        self.inmarket = 0

    def next(self):
        if not self.position:
            if len(self.data) > self.lcontrol and self.data.high[0] == self.highest[0]:
                self.buy(size=self.p.size)
                self.inmarket = len(self)
        elif len(self) - self.inmarket >= self.p.sellafter:
            self.sell(size=self.position.size)
        self.lcontrol = len(self.data)


class SessionFilterFiller(SessionFillerCross):
    """bt.filters.SessionFilter, then bt.filters.SessionFiller(fill_vol=0) on 5-minute bars
    with the feed's session 10:00-15:55: the bars outside it dropped, then the missing bars
    inside it filled at the last close (es_min5_gaps lacks some), and SessionFillerCross's
    SMA crossover."""
    data_kwargs = dict(sessionstart=datetime.time(10, 0), sessionend=datetime.time(15, 55))
    filters = [(bt.filters.SessionFilter, {}), (bt.filters.SessionFiller, dict(fill_vol=0))]


# ---- Filters written by the user (issue 51, item 5): backtrader's samples' own classes ----
def sample_module(folder, filename, name):
    """Imports one of backtrader's samples/ scripts as module `name` (its classes use
    backtrader's metaclasses, which look their module up in sys.modules)."""
    import importlib.util
    path = os.path.join(os.environ.get("BACKTRADER", "/tmp/bt-py"), "samples", folder, filename)
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


class WeekDaysCross(CalendarCross):
    """samples/weekdays-filler's own WeekDaysFiller(fillclose=True) on the feed: a bar at the
    last close for each weekday without one, stamped at the session end; then CalendarCross's
    SMA crossover over weekdays."""
    params = dict(fast=5, slow=20, size=10)
    filters = [(sample_module("weekdays-filler", "weekdaysfiller.py", "weekdaysfiller").WeekDaysFiller,
                dict(fillclose=True))]


class DayStepsClose(bt.Strategy):
    """samples/pinkfish-challenge's own DayStepsCloseFilter on a feed declared in days, run
    as backtrader runs by default (preloaded): each day's open-high-low part is rewritten
    with the day's whole bar, stamped at the session end, before the strategy runs, so the
    strategy sees whole days. The sample's strategy: flat, when the high is the
    Highest(high, `highperiod`), a buy at market; `sellafter` bars later a sell."""
    params = dict(highperiod=20, sellafter=2, size=10)
    filters = [(sample_module("pinkfish-challenge", "pinkfish-challenge.py", "pinkfish_challenge").DayStepsCloseFilter, {})]

    def __init__(self):
        self.highest = bt.ind.Highest(self.data.high, period=self.p.highperiod)
        self.inmarket = 0

    def next(self):
        if not self.position:
            if self.data.high[0] == self.highest[0]:
                self.buy(size=self.p.size)
                self.inmarket = len(self)
        elif len(self) - self.inmarket >= self.p.sellafter:
            self.sell(size=self.position.size)


class InsideBarMerge(object):
    """A filter class of the fixtures' own (not backtrader's): a bar inside the one before it
    (its high at most, its low at least the previous bar's) is merged into that one, which
    takes its close and both volumes, and leaves the stream."""

    def __init__(self, data):
        pass

    def __call__(self, data):
        if len(data) < 2 or data.high[0] > data.high[-1] or data.low[0] < data.low[-1]:
            return False
        bar = [data.lines[i][-1] for i in range(data.size())]
        bar[data.Close] = data.close[0]
        bar[data.Volume] = data.volume[-1] + data.volume[0]
        data._updatebar(bar, ago=-1)
        data.backwards()
        return True


def pull_close(data, weight=0.5):
    """A filter function of the fixtures' own: the close pulled `weight` of the way to the
    middle of the bar's range."""
    data.close[0] = (1 - weight) * data.close[0] + weight * (data.high[0] + data.low[0]) / 2
    return False


class FilterChain(WeekDaysCross):
    """WeekDaysCross's crossover on the feed through InsideBarMerge (a class), then
    pull_close(weight=0.25) (a function)."""
    params = dict(fast=5, slow=20, size=10)
    filters = [(InsideBarMerge, {}), (pull_close, dict(weight=0.25))]


USER_FILTER_STRATEGIES = {
    "weekdays_filler": (WeekDaysCross, ["orcl.csv", "nvda.csv"]),
    "day_steps_close": (DayStepsClose, ["yhoo.csv"]),
    "filter_chain": (FilterChain, ["orcl.csv"]),
}
# ---- end of filters written by the user ----


FILTER51_STRATEGIES = {
    "day_split_replay": (DaySplitReplay, ["yhoo.csv", "orcl.csv"]),
    "session_filter_filler": (SessionFilterFiller, ["es_min5_gaps.csv"]),
}
# ---- end of issue 51 (H5) ----


FILTER_STRATEGIES = {
    "day_steps_open": (DayStepsOpen, ["orcl.csv", "nvda.csv"]),
    "day_split_close": (DaySplitClose, ["orcl.csv", "nvda.csv"]),
    "day_split_session": (DaySplitSession, ["yhoo.csv"]),
    "session_filter": (SessionFilterCross, ["es_min5.csv", "es_min5_gaps.csv"]),
    "replay_pairs": (ReplayPairs, [("orcl.csv", "nvda.csv"), ("ESH1.csv", "ESM1.csv")]),
    "replay_pairs_months": (ReplayPairsMonths, [("orcl.csv", "yhoo.csv")]),
    "session_filler": (SessionFillerCross, ["es_min5_gaps.csv"]),
    "heikin_ashi_weekly": (HeikinAshiWeekly, ["orcl.csv"]),
    "calendar_days": (CalendarCross, ["orcl.csv", "nvda.csv"]),
    "calendar_mid": (CalendarMid, ["yhoo.csv"]),
    "replay_weekly": (ReplayWeekly, ["orcl.csv", "nvda.csv"]),
    "replay_months": (ReplayMonths, ["orcl.csv", "yhoo.csv"]),
    "heikin_ashi": (HeikinAshiTrend, ["orcl.csv", "nvda.csv"]),
    "renko": (RenkoBricks, ["orcl.csv", "yhoo.csv"]),
    "renko_hilo": (RenkoHilo, ["nvda.csv"]),
    "heikin_ashi_renko": (HeikinAshiRenko, ["orcl.csv"]),
}
# ---- end of Data filters ----


# ---- nextstart with feeds of two timeframes (issue 47, H3): tests/test_data_multiframe.py ----
class MultiFrameNextStart(bt.Strategy):
    """tests/test_data_multiframe.py's setup: backtrader's 2006 daily and weekly feeds of
    its own datas (no resampling), an SMA(30) on each. nextstart runs on every daily bar
    of the week in which the weekly feed reaches its 30th bar (147-151) and sells 1 each
    time; the bar after the last, next() places a buy Limit at 1.0 (open to the end) of as
    many as the bar number of that last nextstart (backtrader's test's chkmin, 151) and, a
    bar later, one of as many as the next() calls so far (nextstart's default calls next)."""
    params = dict(period=30)

    def __init__(self):
        bt.ind.SMA(self.data0, period=self.p.period)
        bt.ind.SMA(self.data1, period=self.p.period)
        self.chkmin, self.nextcalls = 0, 0

    def nextstart(self):
        self.chkmin = len(self)
        self.sell(data=self.data0, size=1)
        super(MultiFrameNextStart, self).nextstart()

    def next(self):
        self.nextcalls += 1
        if len(self) == self.chkmin + 1:
            self.buy(data=self.data0, size=self.chkmin, exectype=bt.Order.Limit, price=1.0)
        elif len(self) == self.chkmin + 2:
            self.buy(data=self.data0, size=self.nextcalls, exectype=bt.Order.Limit, price=1.0)


MULTIFRAME_STRATEGIES = {
    "multiframe_nextstart": (MultiFrameNextStart, [("bt2006_day.csv", "bt2006_week.csv")]),
}
# ---- end of nextstart with two timeframes ----


STRATEGIES = {
    # Timers (h-analyzers)
    "timer_monthly": (TimerMonthly, ["orcl.csv", "nvda.csv"]),
    "timer_cheat": (TimerCheat, ["orcl.csv", "yhoo.csv"]),
    # Analyzers (h-analyzers)
    "analyzers_long_short": (AnalyzersLongShort, ["orcl.csv", "nvda.csv"]),
    "analyzers_pairs": (AnalyzersPairs, [("orcl.csv", "nvda.csv")]),
    "analyzers_futures": (AnalyzersFutures, ["yhoo.csv"]),
    # Several feeds in one run: a tuple of data files, all from `fromdate` on.
    "pairs": (Pairs, [("orcl.csv", "nvda.csv")]),
    "weekly_trend": (WeeklyTrend, ["orcl.csv", "nvda.csv"]),
    "resample_two_months": (TwoMonthBreakout, ["orcl.csv", "yhoo.csv"]),
    "trade_ids": (TradeIds, ["orcl.csv", "nvda.csv"]),
    "cheat_on_open": (CheatOnOpen, ["orcl.csv", "nvda.csv"]),
    "comm_per_share_min": (CommPerShareMin, ["orcl.csv", "nvda.csv"]),
    "comm_futures": (CommFutures, ["orcl.csv", "yhoo.csv"]),
    "sizer_percent": (SizerPercent, ["orcl.csv", "nvda.csv"]),
    "sizer_allin_int": (SizerAllInInt, ["orcl.csv", "yhoo.csv"]),
    "sizer_custom": (SizerCustom, ["orcl.csv", "nvda.csv"]),
    "slip_perc": (SlipPerc, ["orcl.csv", "nvda.csv"]),
    "slip_fixed_nomatch": (SlipFixedNoMatch, ["orcl.csv", "yhoo.csv"]),
    "trail_percent": (TrailPercent, ["orcl.csv", "nvda.csv"]),
    "trail_amount_limit": (TrailAmountLimit, ["orcl.csv", "yhoo.csv"]),
    "valid_orders": (ValidOrders, ["orcl.csv", "nvda.csv"]),
    "poll_orders": (PollOrders, ["orcl.csv", "yhoo.csv"]),
    "bracket_default": (BracketDefault, ["orcl.csv", "nvda.csv"]),
    "cancel_unaccepted": (CancelUnaccepted, ["orcl.csv", "nvda.csv"]),
    "stoplimit_exit": (StopLimitExit, ["orcl.csv", "nvda.csv"]),
    "bracket_market": (BracketMarket, ["orcl.csv", "yhoo.csv"]),
}
STRATEGIES.update(ORDER_STRATEGIES)
STRATEGIES.update(FUTURES_STRATEGIES)
STRATEGIES.update(FILTER_STRATEGIES)  # Data filters (h-filters)
STRATEGIES.update(FILTER51_STRATEGIES)  # filters with replay, in turn (issue 51)
STRATEGIES.update(USER_FILTER_STRATEGIES)  # filters written by the user (issue 51)
STRATEGIES.update(MULTI_STRATEGIES)
STRATEGIES.update(SIGNAL_STRATEGIES)  # Signals (h-signals)
STRATEGIES.update(MULTIFRAME_STRATEGIES)  # nextstart with two timeframes (issue 47)


# How times are written: dates, or date and time for an intraday strategy (see run).
STAMP = ["%Y-%m-%d"]


def day(dt):
    return bt.num2date(dt).strftime(STAMP[0])


class Recorder(bt.Analyzer):
    """Everything the parity test compares, as the reference fixtures record it."""

    def start(self):
        self.equity, self.executions, self.events, self.trades = [], [], [], []
        self.first_next = None
        self.last_fill = None
        # The largest size of each trade (the engine's Trade.Size) and its entry price (as
        # backtrader's trade.price, the average of the fills that grew the trade, which a
        # fill flipping its sign without growing it keeps; its first fill's own price, as the
        # position's, where trade.price has size*price/size): followed fill by fill per tradeid, as backtrader's
        # Strategy._addnotification books the closing and the opening part of each fill,
        # since notify_trade only comes when a trade opens and closes; closed trades' per
        # tradeid in the order they closed (one feed: they close in order).
        self.tstate = {}
        self.closed_max = {}

    def notify_order(self, o):
        side = "buy" if o.isbuy() else "sell"
        if o.status in (o.Completed, o.Partial):
            # The fill's own price: executed.price is an average (price*size/size), which
            # can differ from it in the last bit.
            self.last_fill = o.executed.exbits[-1].price
            bit = o.executed.exbits[-1]
            # a compensating feed's fills are booked to the compensated feed's trades
            tdata = o.data._compensate if o.data._compensate is not None else o.data
            key = (tdata._name, o.tradeid)
            if bit.closed:
                self.track(key, bit.closed, bit, False)
            if bit.opened:
                self.track(key, bit.opened, bit, True)
            x = dict(
                ref=o.ref, date=day(o.executed.dt), side=side, exectype=o.ExecTypes[o.exectype],
                # the fill's own part (an order filled in parts, Partial then Completed,
                # has one execution per part; executed.* are the totals)
                price=self.last_fill, order_executed_price=o.executed.price, size=bit.size,
                value=bit.value, commission=bit.comm, pnl=bit.pnl + 0.0,  # -0.0 as executed.pnl writes it
                created_date=day(o.created.dt), created_price=o.created.price)
            if len(self.strategy.datas) > 1 and not hasattr(self.strategy, "resample"):
                x["data"] = o.data._name
            self.executions.append(x)
        elif o.status in (o.Canceled, o.Margin, o.Rejected, o.Expired):
            # The bar it happened on: a cancel by the strategy happens in its next() and is
            # notified on the following bar; others are notified on their own bar.
            on = getattr(self.strategy, "cancelled_on", {}).get(o.ref, self.data.datetime.datetime(0))
            self.events.append(dict(
                ref=o.ref, side=side, exectype=o.ExecTypes[o.exectype], status=o.getstatusname(),
                created_date=day(o.created.dt), created_price=o.created.price, requested_size=o.created.size,
                bar_date=on.strftime(STAMP[0])))

    def track(self, tid, size, bit, opening):  # tid: (data name, tradeid)
        st = self.tstate.get(tid)
        if st is None or (opening and st["closed"]):
            st = self.tstate[tid] = dict(size=0, max=None, entry=None, closed=False)
        old, new = st["size"], st["size"] + size
        if old == 0:
            st["max"] = None
        if abs(new) > abs(old):
            st["entry"] = bit.price if old == 0 else (st["entry"] * old + size * bit.price) / new
            if st["max"] is None or abs(new) > abs(st["max"]):
                st["max"] = new
        st["size"], st["closed"] = new, old != 0 and new == 0
        if st["closed"]:
            self.closed_max.setdefault(tid, []).append((st["max"], st["entry"], bit.price))

    def notify_trade(self, t):
        if t.isclosed:
            size, entry, exit_price = self.closed_max[(t.data._name, t.tradeid)].pop(0)
            extra = dict(data=t.data._name) if len(self.strategy.datas) > 1 and not hasattr(self.strategy, "resample") else {}
            self.trades.append(dict(
                **extra, ref=t.ref, tradeid=t.tradeid, open_date=day(t.dtopen), close_date=day(t.dtclose), size=size,
                entry_price=entry, exit_price=exit_price, trade_price=t.price,
                pnl_gross=t.pnl, pnl_net=t.pnlcomm, commission=t.commission, barlen=t.barlen))

    def nextstart(self):
        # backtrader calls nextstart again on each bar while a slower feed (a resampled
        # one) has exactly its warm-up of bars; the first call is the first next.
        if self.first_next is None:
            self.first_next = len(self.strategy)
        self.next()

    def next(self):
        # the step's time: the strategy's clock (the latest of its feeds' times), which is
        # data0's unless data0 ended before another feed (h-filters3)
        clock = self.strategy if len(self.strategy.datas) > 1 else self.data
        self.equity.append([clock.datetime.datetime(0).strftime(STAMP[0]), self.strategy.broker.getvalue()])


def source_bars(d, fromdate=None):
    """The bars of a data file before any filter (h-filters), from fromdate on when given."""
    path = os.path.join(HERE, "data", d)
    path = path if os.path.exists(path) else os.path.join(DATA, d)
    since = fromdate.strftime("%Y-%m-%d") if fromdate else ""
    with open(path) as f:
        return sum(1 for line in list(f)[1:] if line.strip() and line[:10] >= since)


def run(name, cls, data):
    entries = [e if isinstance(e, tuple) else (e, {}) for e in (cls if isinstance(cls, list) else [cls])]
    cls = entries[0][0]
    # Order and trade numbers start at 1 for each run, as in the reference fixtures.
    bt.Order.refbasis = itertools.count(1)
    bt.trade.Trade.refbasis = itertools.count(1)
    cerebro = bt.Cerebro(stdstats=False, **getattr(cls, "cerebro_kwargs", {}))
    cerebro.broker.setcash(10000.0)
    cerebro.broker.setcommission(commission=0.001)
    several = isinstance(data, tuple)
    datas = data if several else (data,)
    fromdate = datetime.datetime(2000, 1, 1) if several else None
    intraday = getattr(cls, "intraday", False)
    STAMP[0] = "%Y-%m-%d %H:%M:%S" if intraday or getattr(cls, "stamp_time", False) else "%Y-%m-%d"
    joined = getattr(cls, "rollover", getattr(cls, "chain", None))
    joined_feeds = []
    for n, d in enumerate(datas):
        # data of the project's own (testdata/backtrader/data) before the shared data
        path = os.path.join(HERE, "data", d)
        path = path if os.path.exists(path) else os.path.join(DATA, d)
        kw = dict(dtformat="%Y-%m-%d %H:%M:%S", timeframe=bt.TimeFrame.Minutes, compression=5) if intraday \
            else dict(dtformat="%Y-%m-%d")
        kw.update(getattr(cls, "data_kwargs", {}))
        feed = bt.feeds.GenericCSVData(dataname=path, datetime=0, open=1,
                                       high=2, low=3, close=4, volume=5, openinterest=-1, headers=True,
                                       **kw, **(dict(fromdate=fromdate) if fromdate else {}))
        if joined is not None:  # Futures (h-futures): joined below, not added one by one
            joined_feeds.append(feed)
            feed._name = d[:-4]
            continue
        for flt, fkw in getattr(cls, "filters", []):  # Data filters (h-filters)
            feed.addfilter(flt, **fkw)
        if hasattr(cls, "replay"):  # Replay (h-filters): the replayed feed is the strategy's data
            replay = cls.replay[n] if isinstance(cls.replay, list) else cls.replay  # one per feed (h-filters3)
            cerebro.replaydata(feed, name=d[:-4], **replay)
        else:
            cerebro.adddata(feed, name=d[:-4])
        if not several:
            break
    if joined is not None:
        feed = (cerebro.rolloverdata if hasattr(cls, "rollover") else cerebro.chaindata)(*joined_feeds, **joined)
    if hasattr(cls, "resample"):
        cerebro.resampledata(feed, **cls.resample)
    if hasattr(cls, "add_signals"):  # Signals (h-signals): the signals' own SignalStrategy
        add_signal_strategy(cerebro, cls)
    for c, kw in entries if not hasattr(cls, "add_signals") else []:
        cerebro.addstrategy(c, **kw)
    if hasattr(cls, "order_history"):  # Order history (h-multi)
        cerebro.add_order_history(cls.order_history, notify=cls.history_notify)
    cerebro.addanalyzer(Recorder, _name="rec")
    cerebro.addanalyzer(bt.analyzers.SharpeRatio, _name="sharpe_d", timeframe=bt.TimeFrame.Days, factor=252,
                        annualize=True, riskfreerate=0.0)
    cerebro.addanalyzer(bt.analyzers.SharpeRatio, _name="sharpe")
    cerebro.addanalyzer(bt.analyzers.DrawDown, _name="dd")
    cerebro.addanalyzer(bt.analyzers.SQN, _name="sqn")
    cerebro.addanalyzer(bt.analyzers.TradeAnalyzer, _name="ta")
    if getattr(cls, "more_analyzers", False):  # Analyzers (h-analyzers)
        add_more_analyzers(cerebro)
    strats = cerebro.run()
    strat = strats[0]
    rec = strat.analyzers.rec
    dd = strat.analyzers.dd.get_analysis()
    ta = strat.analyzers.ta.get_analysis()
    closed = ta.get("total", {}).get("closed", 0)

    def g(d, *keys):
        for k in keys:
            if k not in d:
                return None
            d = d[k]
        return d

    broker = strat.broker
    pos = strat.getposition(strat.data)
    out = dict(
        engine="backtrader %s (mementum/backtrader, python %s)" % (bt.__version__, sys.version.split()[0]),
        strategy=name, strategy_class=cls.__name__, params=getattr(cls, "fixture_params", None) or dict(cls.params._getitems()),
        data=datas[0],
        **(dict(datas=list(datas)) if several else {}),
        range=dict(fromdate=fromdate.strftime("%Y-%m-%d") if fromdate else None, todate=None),
        settings=dict(cash=10000.0, commission=0.001),
        bars=len(rec.equity), **(dict(data_bars=len(strat.data0)) if len(strat.data0) != len(rec.equity) else {}),
        **(dict(source_bars=source_bars(datas[0], fromdate)) if hasattr(cls, "filters") or hasattr(cls, "replay") else {}),  # Data filters (h-filters)
        first_next_bar=dict(bar=rec.first_next),
        final_value=broker.getvalue(), final_cash=broker.getcash(), final_position_size=pos.size,
        final_position_price=pos.price,
        sharpe=dict(daily_annualized=strat.analyzers.sharpe_d.get_analysis()["sharperatio"],
                    default=strat.analyzers.sharpe.get_analysis()["sharperatio"]),
        drawdown=dict(max_drawdown_pct=dd.max.drawdown, max_moneydown=dd.max.moneydown, max_len_bars=dd.max.len,
                      final_drawdown_pct=dd.drawdown, final_moneydown=dd.moneydown, final_len_bars=dd.len),
        sqn=dict(sqn=strat.analyzers.sqn.get_analysis().sqn, trades=strat.analyzers.sqn.get_analysis().trades),
        trade_analyzer=dict(
            total=g(ta, "total", "total") or 0, open=g(ta, "total", "open") or 0, closed=closed,
            won=g(ta, "won", "total") or 0, lost=g(ta, "lost", "total") or 0,
            pnl_net_total=g(ta, "pnl", "net", "total") if closed else None,
            pnl_gross_total=g(ta, "pnl", "gross", "total") if closed else None,
            won_pnl_average=g(ta, "won", "pnl", "average") if closed else None,
            lost_pnl_average=g(ta, "lost", "pnl", "average") if closed else None,
            won_pnl_total=g(ta, "won", "pnl", "total") if closed else None,
            lost_pnl_total=g(ta, "lost", "pnl", "total") if closed else None,
            streak_won_longest=g(ta, "streak", "won", "longest") or 0,
            streak_lost_longest=g(ta, "streak", "lost", "longest") or 0,
            len_total_bars=g(ta, "len", "total") or 0),
        trades=rec.trades, executions=rec.executions, order_events=rec.events,
        orders_open_at_end=[dict(ref=o.ref, side="buy" if o.isbuy() else "sell", exectype=o.ExecTypes[o.exectype],
                                 status=o.getstatusname(), created_date=day(o.created.dt), price=o.created.price,
                                 size=o.created.size) for o in broker.get_orders_open()],
        equity=rec.equity)
    if getattr(cls, "more_analyzers", False):  # Analyzers (h-analyzers)
        out["analyzers_more"] = more_analyzers_out(strat)
    if hasattr(strat, "timer_calls"):  # Timers (h-analyzers)
        out["timer_calls"] = strat.timer_calls
    if joined is not None:  # Futures (h-futures)
        out["joined"] = "rollover" if hasattr(cls, "rollover") else "chain"
        out["rolls"] = strat.rolls
    if len(strats) > 1:  # Several strategies (h-multi): what each strategy has of its own
        out["strategies"] = [strategy_out(s, kw) for s, (_, kw) in zip(strats, entries)]
        for k in ("trades", "executions", "order_events"):
            out[k] = []
    path = os.path.join(HERE, "expected", "%s__%s.json" % (name, "_".join(d[:-4] for d in datas)))
    with open(path, "w") as f:
        json.dump(out, f, indent=1)
    print("%s: %d executions, %d trades, %d order events, final value %r" % (
        os.path.relpath(path), len(rec.executions), len(rec.trades), len(rec.events), broker.getvalue()))


def strategy_out(strat, kw):
    """One strategy's own part of a run of several: its orders, fills, trades and the
    analyzers of its trades (Recorder, TradeAnalyzer and SQN are per strategy)."""
    rec, ta, sq = strat.analyzers.rec, strat.analyzers.ta.get_analysis(), strat.analyzers.sqn.get_analysis()
    closed = ta.get("total", {}).get("closed", 0)

    def g(d, *keys):
        for k in keys:
            if k not in d:
                return None
            d = d[k]
        return d

    return dict(
        strategy_class=type(strat).__name__, params=dict(strat.params._getitems()), given_params=kw,
        first_next_bar=dict(bar=rec.first_next),
        sqn=dict(sqn=sq.sqn, trades=sq.trades),
        trade_analyzer=dict(
            total=g(ta, "total", "total") or 0, open=g(ta, "total", "open") or 0, closed=closed,
            won=g(ta, "won", "total") or 0, lost=g(ta, "lost", "total") or 0,
            pnl_net_total=g(ta, "pnl", "net", "total") if closed else None,
            pnl_gross_total=g(ta, "pnl", "gross", "total") if closed else None,
            won_pnl_average=g(ta, "won", "pnl", "average") if closed else None,
            lost_pnl_average=g(ta, "lost", "pnl", "average") if closed else None,
            won_pnl_total=g(ta, "won", "pnl", "total") if closed else None,
            lost_pnl_total=g(ta, "lost", "pnl", "total") if closed else None,
            streak_won_longest=g(ta, "streak", "won", "longest") or 0,
            streak_lost_longest=g(ta, "streak", "lost", "longest") or 0,
            len_total_bars=g(ta, "len", "total") or 0),
        trades=rec.trades, executions=rec.executions, order_events=rec.events)


if __name__ == "__main__":
    for name in sys.argv[1:] or sorted(STRATEGIES):
        cls, datas = STRATEGIES[name]
        for data in datas:
            run(name, cls, data)

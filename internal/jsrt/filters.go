package jsrt

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/backtestd/backtestd/internal/engine"
	"github.com/dop251/goja"
)

// filterKeys are the keys each filter of a static filters declaration accepts, beside
// filter and data; a key outside them is refused, so a misspelt parameter never passes
// silently as its default.
var filterKeys = map[string][]string{
	"heikinashi":    nil,
	"renko":         {"size", "autosize", "dynamic", "align", "roundstart", "hilo"},
	"calendardays":  {"fill_price", "fill_vol"},
	"sessionfiller": {"minutes", "sessionstart", "sessionend", "fill_price", "fill_vol", "skip_first_fill"},
	"sessionfilter": {"sessionstart", "sessionend"},

	"daysplitter_close": {"closevol", "sessionstart", "sessionend"},

	"barreplayer_open": nil, // backtrader's DayStepsFilter
}

// reshaping are the filters that add or drop bars: not combined with resampling, whose
// bars backtrader would build past them, and, but for those in anyPlace, the last of
// their feed's filters.
var reshaping = map[string]string{"renko": "Renko", "calendardays": "CalendarDays", "sessionfiller": "SessionFiller",
	"barreplayer_open": "BarReplayer_Open", "sessionfilter": "SessionFilter", "daysplitter_close": "DaySplitter_Close"}

// anyPlace are the reshaping filters others may follow: SessionFilter takes a bar out of
// the stream before the filters after it see it, which then work on the bars it keeps.
var anyPlace = map[string]bool{"sessionfilter": true}

// beforeReplay are the filters a static replay may follow: backtrader runs a feed's
// filters on each bar before its replay, and these read nothing but the bar itself (the
// others read the bars before it, which are then the replayed bar as it stands).
var beforeReplay = map[string]bool{"sessionfilter": true, "daysplitter_close": true}

// filtered returns feeds with the filters the strategy class declares in its static
// filters (backtrader's data.addfilter) applied to them, in order: an object or an array
// of them, each {filter: 'HeikinAshi' | 'Renko', data: index of the feed (0), and the
// filter's parameters}. A filter rewrites the feed the run trades on, as in backtrader,
// where the broker fills against the filtered bars.
func (h *host) filtered(cls *goja.Object, feeds []engine.Feed) ([]engine.Feed, error) {
	specs, err := staticList(cls, "filters", "an object {filter, data, ...}")
	if err != nil || specs == nil {
		return feeds, err
	}
	specs, user, err := userFilterEntries(cls, specs, len(feeds))
	if err != nil {
		return nil, err
	}
	out := slices.Clone(feeds)
	last := make([]string, len(feeds)) // a feed's filter that must be its last
	declared := func(key string) bool { return hasStatic(cls, key) }
	for k, u := range user {
		if u == nil {
			continue
		}
		for _, key := range []string{"replay", "resample"} {
			if declared(key) {
				return nil, fmt.Errorf("filters[%d]: a filter written in JavaScript cannot be combined with static %s: backtrader runs the %s in the same loop, on the bars it rebuilds, which is not imitated", u.at[0], key, key)
			}
		}
		if out[k], err = h.userFiltered(out[k], k, u.entries, u.at); err != nil {
			return nil, err
		}
	}
	if declared("replay") {
		for i, s := range specs {
			m, _ := s.(map[string]any)
			name, _ := m["filter"].(string)
			if _, known := filterKeys[strings.ToLower(name)]; known && !beforeReplay[strings.ToLower(name)] {
				return nil, fmt.Errorf("filters[%d]: %v cannot be combined with static replay: backtrader runs it before the replay on the bars the replay rebuilds, which is not imitated; SessionFilter and DaySplitter_Close can", i, m["filter"])
			}
		}
	}
	resampled := declared("resample")
	for i, s := range specs {
		m, ok := s.(map[string]any)
		if !ok && s != nil {
			return nil, fmt.Errorf("filters[%d] must be an object {filter, data, ...}", i)
		}
		if m == nil { // a filter written in JavaScript, run above
			continue
		}
		name, _ := m["filter"].(string)
		kind := strings.ToLower(name)
		allowed, known := filterKeys[kind]
		if !known {
			return nil, fmt.Errorf("filters[%d].filter must be 'HeikinAshi', 'Renko', 'CalendarDays', 'SessionFiller', 'SessionFilter', 'DaySplitter_Close' or 'BarReplayer_Open', got %v", i, m["filter"])
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if k != "filter" && k != "data" && !slices.Contains(allowed, k) {
				return nil, fmt.Errorf("filters[%d]: %s has no parameter %q", i, name, k)
			}
		}
		data := int64(0)
		switch d := m["data"].(type) {
		case nil:
		case int64:
			data = d
		default:
			return nil, fmt.Errorf("filters[%d].data must be a whole number, got %v", i, m["data"])
		}
		if data < 0 || data >= int64(len(feeds)) {
			return nil, fmt.Errorf("filters[%d].data must be the index of one of the run's %d feeds, got %d", i, len(feeds), data)
		}
		if last[data] != "" {
			// backtrader's Renko drops a bar without telling the filters after it, which
			// then rework the previous brick, and its CalendarDays hands its bars past them.
			return nil, fmt.Errorf("filters[%d]: %s must be the last filter of its feed (this.datas[%d])", i, last[data], data)
		}
		if nm, ok := reshaping[kind]; ok {
			if resampled {
				return nil, fmt.Errorf("filters[%d]: %s cannot be combined with static resample", i, nm)
			}
			if !anyPlace[kind] {
				last[data] = nm
			}
		}
		switch kind {
		case "heikinashi":
			out[data] = engine.HeikinAshi(out[data])
		case "renko":
			p, err := renkoParams(m)
			if err != nil {
				return nil, fmt.Errorf("filters[%d]: %w", i, err)
			}
			f, err := engine.Renko(out[data], p)
			if err != nil {
				return nil, fmt.Errorf("filters[%d]: %s", i, strings.TrimPrefix(err.Error(), "renko: "))
			}
			if len(f.Bars) == 0 {
				return nil, fmt.Errorf("filters[%d]: Renko made no brick of this.datas[%d]'s %d bars", i, data, len(out[data].Bars))
			}
			out[data] = f
		case "calendardays":
			price, err := num(m, "fill_price", 0)
			if err != nil {
				return nil, fmt.Errorf("filters[%d]: %w", i, err)
			}
			vol, err := num(m, "fill_vol", 0)
			if err != nil {
				return nil, fmt.Errorf("filters[%d]: %w", i, err)
			}
			if vol != math.Trunc(vol) || vol < 0 || vol > 1e15 {
				return nil, fmt.Errorf("filters[%d]: fill_vol must be a whole number of 0 or more, got %v", i, vol)
			}
			f, err := engine.CalendarDays(out[data], price, int64(vol))
			if err != nil {
				return nil, fmt.Errorf("filters[%d]: %s", i, strings.TrimPrefix(err.Error(), "calendardays: "))
			}
			out[data] = f
		case "sessionfiller":
			p, err := sessionFillerParams(m)
			if err != nil {
				return nil, fmt.Errorf("filters[%d]: %w", i, err)
			}
			f, err := engine.SessionFiller(out[data], p)
			if err != nil {
				return nil, fmt.Errorf("filters[%d]: %s", i, strings.TrimPrefix(err.Error(), "sessionfiller: "))
			}
			out[data] = f
		case "sessionfilter":
			start, end, err := sessionTimes(m)
			if err != nil {
				return nil, fmt.Errorf("filters[%d]: %w", i, err)
			}
			f, err := engine.SessionFilter(out[data], start, end)
			if err != nil {
				return nil, fmt.Errorf("filters[%d]: %s", i, strings.TrimPrefix(err.Error(), "sessionfilter: "))
			}
			if len(f.Bars) == 0 {
				return nil, fmt.Errorf("filters[%d]: SessionFilter kept none of this.datas[%d]'s %d bars", i, data, len(out[data].Bars))
			}
			out[data] = f
		case "daysplitter_close":
			start, end, err := sessionTimes(m)
			if err != nil {
				return nil, fmt.Errorf("filters[%d]: %w", i, err)
			}
			cv, err := num(m, "closevol", 0.5)
			if err != nil {
				return nil, fmt.Errorf("filters[%d]: %w", i, err)
			}
			f, err := engine.DaySplitterClose(out[data], cv, start, end)
			if err != nil {
				return nil, fmt.Errorf("filters[%d]: %s", i, strings.TrimPrefix(err.Error(), "daysplitter_close: "))
			}
			out[data] = f
		case "barreplayer_open":
			// the split feed is replayed (next() on both steps, lengths in whole bars),
			// which the engine does for a run of one feed, as for static replay
			if len(feeds) != 1 {
				return nil, fmt.Errorf("filters[%d]: BarReplayer_Open needs a run of one feed, this one has %d", i, len(feeds))
			}
			out[data] = engine.BarReplayerOpen(out[data])
		}
	}
	return out, nil
}

// userFilters are the filters of one feed written in JavaScript: the entries of static
// filters and their indexes there.
type userFilters struct {
	entries []*goja.Object
	at      []int
}

// userFilterEntries takes the entries whose filter is a class or function of the
// strategy file out of specs (leaving nil in their place) and groups them by feed. Such
// a feed takes no built-in filter: backtrader runs all of a feed's filters in one loop
// over one buffer, which the built-in ones, applied to the whole series, do not imitate.
func userFilterEntries(cls *goja.Object, specs []any, nfeeds int) ([]any, []*userFilters, error) {
	raw, _ := cls.Get("filters").(*goja.Object)
	elem := func(i int) *goja.Object {
		if raw.ClassName() != "Array" {
			return raw
		}
		e, _ := raw.Get(strconv.Itoa(i)).(*goja.Object)
		return e
	}
	user := make([]*userFilters, nfeeds)
	builtin := make([]string, nfeeds)
	out := slices.Clone(specs)
	for i, s := range specs {
		m, ok := s.(map[string]any)
		if !ok {
			continue
		}
		data, ok := m["data"].(int64)
		if !ok && m["data"] != nil || data < 0 || data >= int64(nfeeds) {
			return nil, nil, fmt.Errorf("filters[%d].data must be the index of one of the run's %d feeds, got %v", i, nfeeds, m["data"])
		}
		if _, isName := m["filter"].(string); isName || m["filter"] == nil {
			builtin[data] = fmt.Sprint(m["filter"])
			if user[data] != nil {
				return nil, nil, fmt.Errorf("filters[%d]: %v cannot share this.datas[%d] with a filter written in JavaScript: backtrader runs them in one loop over one buffer, which is not imitated", i, m["filter"], data)
			}
			continue
		}
		if builtin[data] != "" {
			return nil, nil, fmt.Errorf("filters[%d]: a filter written in JavaScript cannot share this.datas[%d] with %s: backtrader runs them in one loop over one buffer, which is not imitated", i, data, builtin[data])
		}
		if user[data] == nil {
			user[data] = &userFilters{}
		}
		user[data].entries = append(user[data].entries, elem(i))
		user[data].at = append(user[data].at, i)
		out[i] = nil
	}
	return out, user, nil
}

// sessionFillerParams reads SessionFiller's parameters: the bars' size in minutes (no
// default: backtrader reads the feed's timeframe and compression), the session as
// 'HH:MM[:SS]' (backtrader's feed defaults, the whole day), fill_price and fill_vol (0)
// and skip_first_fill (true).
func sessionFillerParams(m map[string]any) (engine.SessionFillerParams, error) {
	p := engine.SessionFillerParams{SkipFirstFill: true}
	if m["minutes"] == nil {
		return p, errors.New("minutes, the bars' size in minutes, is required")
	}
	minutes, err := num(m, "minutes", 0)
	if err != nil {
		return p, err
	}
	if minutes != math.Trunc(minutes) || minutes < 1 || minutes > 1440 {
		return p, fmt.Errorf("minutes must be the bars' size, a whole number of minutes from 1 to 1440, got %v", m["minutes"])
	}
	p.Unit = time.Duration(minutes) * time.Minute
	if p.Start, p.End, err = sessionTimes(m); err != nil {
		return p, err
	}
	if p.FillPrice, err = num(m, "fill_price", 0); err != nil {
		return p, err
	}
	vol, err := num(m, "fill_vol", 0)
	if err != nil {
		return p, err
	}
	if vol != math.Trunc(vol) || vol < 0 || vol > 1e15 {
		return p, fmt.Errorf("fill_vol must be a whole number of 0 or more, got %v", vol)
	}
	p.FillVol = int64(vol)
	switch v := m["skip_first_fill"].(type) {
	case nil:
	case bool:
		p.SkipFirstFill = v
	default:
		return p, fmt.Errorf("skip_first_fill must be true or false, got %v", v)
	}
	return p, nil
}

// sessionTimes reads a filter's sessionstart and sessionend, times of day as
// 'HH:MM[:SS[.fraction]]', with backtrader's feed defaults (the whole day: midnight to engine.DefaultSessionEnd).
func sessionTimes(m map[string]any) (start, end time.Duration, err error) {
	end = engine.DefaultSessionEnd
	for _, x := range []struct {
		key string
		dst *time.Duration
	}{{"sessionstart", &start}, {"sessionend", &end}} {
		key, dst := x.key, x.dst
		switch v := m[key].(type) {
		case nil:
		case string:
			t, err := time.Parse("15:04:05", v)
			if err != nil {
				if t, err = time.Parse("15:04", v); err != nil {
					return 0, 0, fmt.Errorf("%s must be a time of day (HH:MM or HH:MM:SS), got %q", key, v)
				}
			}
			*dst = time.Duration(t.Hour())*time.Hour + time.Duration(t.Minute())*time.Minute + time.Duration(t.Second())*time.Second +
				time.Duration(t.Nanosecond()) // '23:59:59.99999', backtrader's default end, as written
		default:
			return 0, 0, fmt.Errorf("%s must be a time of day (HH:MM or HH:MM:SS), got %v", key, m[key])
		}
	}
	return start, end, nil
}

// renkoParams reads Renko's parameters with backtrader's defaults (size none, autosize
// 20, align 1, roundstart true, dynamic and hilo false).
func renkoParams(m map[string]any) (engine.RenkoParams, error) {
	p := engine.RenkoParams{Autosize: 20, Align: 1, RoundStart: true}
	num := func(key string, dst *float64) (err error) {
		*dst, err = num(m, key, *dst)
		return err
	}
	flag := func(key string, dst *bool) error {
		switch x := m[key].(type) {
		case nil:
		case bool:
			*dst = x
		default:
			return fmt.Errorf("%s must be true or false, got %v", key, m[key])
		}
		return nil
	}
	for _, err := range []error{num("size", &p.Size), num("autosize", &p.Autosize), num("align", &p.Align),
		flag("dynamic", &p.Dynamic), flag("roundstart", &p.RoundStart), flag("hilo", &p.Hilo)} {
		if err != nil {
			return p, err
		}
	}
	if m["size"] != nil && !(p.Size > 0) {
		return p, fmt.Errorf("size must be above 0, got %v", m["size"])
	}
	return p, nil
}

// num reads a filter's number parameter key, def when it is not given (or null).
func num(m map[string]any, key string, def float64) (float64, error) {
	switch x := m[key].(type) {
	case nil:
		return def, nil
	case int64:
		return float64(x), nil
	case float64:
		return x, nil
	}
	return 0, fmt.Errorf("%s must be a number, got %v", key, m[key])
}

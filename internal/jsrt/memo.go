package jsrt

import (
	"sync"

	"github.com/backtestd/backtestd/internal/engine"
)

// Memo keeps series between runs of the same code on the same feeds (a study's batch): a
// data column, or an indicator of one input and whole-number parameters, is computed once
// and shared. Sharing is safe because a series is never written after it is made (a line
// refuses writes), and runs sharing a Memo all see the same feeds. Only indicators whose
// input has a key (a data column or a memoised indicator) are memoised: a custom
// indicator's output may depend on anything the strategy computed. Runs on several
// goroutines may share a Memo: a series is computed by the first run that asks for it while
// the others asking for it wait, and runs asking for other series do not.
type Memo struct {
	mu sync.Mutex
	m  map[string]*memoEntry
}

// memoEntry is one series, computed once.
type memoEntry struct {
	once sync.Once
	s    engine.Series
	ok   bool // computed: false after a computation that panicked
}

// NewMemo returns an empty Memo for runs on one set of feeds.
func NewMemo() *Memo { return &Memo{m: map[string]*memoEntry{}} }

// Len is how many series the memo holds: how many were computed.
func (m *Memo) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.m)
}

func (m *Memo) get(key string, compute func() engine.Series) engine.Series {
	m.mu.Lock()
	e, ok := m.m[key]
	if !ok {
		e = &memoEntry{}
		m.m[key] = e
	}
	m.mu.Unlock()
	e.once.Do(func() { e.s, e.ok = compute(), true })
	if !e.ok { // its computation panicked in another run: this one computes (and fails) as alone
		return compute()
	}
	return e.s
}

// memoised is compute() for the indicator call (its name and parameters) of in, taken from
// the run's memo when it has one and in has a key; key is the result's ("" when not
// memoised).
func (h *host) memoised(in *line, call string, compute func() engine.Series) (s engine.Series, key string) {
	if h.memo == nil || in.key == "" {
		return compute(), ""
	}
	key = call + "(" + in.key + ")"
	return h.memo.get(key, compute), key
}

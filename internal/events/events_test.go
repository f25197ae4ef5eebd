package events_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/backtestd/backtestd/internal/events"
	"github.com/backtestd/backtestd/internal/pgtest"
)

func frames(s *events.Sub) []string {
	var out []string
	for {
		select {
		case f := <-s.C:
			out = append(out, string(f))
		default:
			return out
		}
	}
}

func TestHubFanOutAndIsolation(t *testing.T) {
	t.Parallel()
	h := events.NewHub()
	a, b, other, sess, bobs := events.NewSub(), events.NewSub(), events.NewSub(), events.NewSub(), events.NewSub()
	h.SubscribeTask(a, "task_1")
	h.SubscribeTask(b, "task_1")
	h.SubscribeTask(b, "task_1") // twice is once
	h.SubscribeTask(other, "task_2")
	h.SubscribeSession(sess, events.Session{Owner: "alice", ID: "s1"})
	h.SubscribeSession(bobs, events.Session{Owner: "bob", ID: "s1"}) // the same id, bob's
	h.Deliver(events.Message{Event: events.KindProgress, Task: "task_1", Progr: &events.Progress{TaskID: "task_1", Progress: 50, CurrentBar: 5, TotalBars: 10}})
	h.Deliver(events.Message{Event: events.KindLog, Task: "task_1", Session: "s1", Owner: "alice", Logs: []events.LogLine{{Level: "INFO", Message: "hi", Time: 1.5, Source: "strategy", Path: "str_1@v1"}}})
	h.Deliver(events.Message{Event: events.KindLog, Task: "task_3", Session: "s2", Owner: "alice", Logs: []events.LogLine{{Level: "INFO", Message: "not yours"}}})
	// Sessions belong to users: bob's task with alice's session id, and a task with it
	// but no owner, reach neither alice's session nor (for the ownerless one) bob's.
	h.Deliver(events.Message{Event: events.KindLog, Task: "task_4", Session: "s1", Owner: "bob", Logs: []events.LogLine{{Level: "INFO", Message: "bob's"}}})
	h.Deliver(events.Message{Event: events.KindLog, Task: "task_5", Session: "s1", Logs: []events.LogLine{{Level: "INFO", Message: "nobody's"}}})
	done := events.Complete{TaskID: "task_1", Status: "completed", Result: json.RawMessage(`{"final_value":1}`)}
	h.Deliver(events.Message{Event: events.KindComplete, Task: "task_1", Done: &done})
	h.Deliver(events.Message{Event: events.KindComplete, Task: "task_1", Done: &done}) // sent once per subscriber

	want := []string{
		`{"event":"progress","data":{"task_id":"task_1","progress":50,"current_bar":5,"total_bars":10}}`,
		`{"event":"log","data":{"task_id":"task_1","level":"INFO","message":"hi","timestamp":1.5}}`,
		`{"event":"complete","data":{"task_id":"task_1","attempt":0,"status":"completed","error":null,"result":{"final_value":1}}}`,
	}
	for _, s := range []*events.Sub{a, b} {
		if got := frames(s); strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("task subscriber got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
	if got := frames(other); len(got) != 0 {
		t.Errorf("other task's subscriber got %v", got)
	}
	wantSess := `{"event":"log_message","data":{"name":"backtestd.strategy.task_1","levelname":"INFO","message":"hi","timestamp":1.5,"pathname":"str_1@v1","lineno":0}}`
	if got := frames(sess); len(got) != 1 || got[0] != wantSess {
		t.Errorf("session subscriber got %v, want %s", got, wantSess)
	}
	if got := frames(bobs); len(got) != 1 || !strings.Contains(got[0], `"message":"bob's"`) {
		t.Errorf("bob's session subscriber got %v, want bob's line only", got)
	}

	// A retried task finishes again: its next attempt's complete event is delivered.
	retried := events.Complete{TaskID: "task_1", Attempt: 2, Status: "failed"}
	h.Deliver(events.Message{Event: events.KindComplete, Task: "task_1", Done: &retried})
	if got := frames(a); len(got) != 1 || !strings.Contains(got[0], `"attempt":2`) {
		t.Errorf("complete of attempt 2: %v", got)
	}

	h.Unsubscribe(a)
	h.Unsubscribe(b)
	h.Unsubscribe(other)
	h.Unsubscribe(sess)
	h.Unsubscribe(bobs)
	if tasks, sessions, subs := h.Counts(); tasks+sessions+subs != 0 {
		t.Errorf("after unsubscribing: %d tasks, %d sessions, %d subscribers", tasks, sessions, subs)
	}
}

func TestHubSkipsProgressForAReaderThatFallsBehind(t *testing.T) {
	t.Parallel()
	h := events.NewHub()
	slow, fine := events.NewSub(), events.NewSub()
	h.SubscribeTask(slow, "t")
	h.SubscribeTask(fine, "t")
	for i := 0; i <= events.SubBuffer; i++ {
		h.Deliver(events.Message{Event: events.KindProgress, Task: "t", Progr: &events.Progress{TaskID: "t", CurrentBar: i}})
		<-fine.C // this one keeps up and misses nothing
	}
	// The slow reader keeps its connection and the room for the task's end.
	h.Deliver(events.Message{Event: events.KindComplete, Task: "t", Done: &events.Complete{TaskID: "t", Attempt: 1, Status: "completed"}})
	got := frames(slow)
	if len(got) != events.SubBuffer-events.CompleteReserve+1 || !strings.Contains(got[len(got)-1], `"event":"complete"`) {
		t.Fatalf("slow reader got %d frames ending %.60s; want the progress that fit, then complete", len(got), got[len(got)-1])
	}
	if got := frames(fine); len(got) != 1 || !strings.Contains(got[0], `"event":"complete"`) {
		t.Fatalf("the reader that kept up got %v", got)
	}
	select {
	case <-slow.Done():
		t.Fatal("a reader that fell behind on progress was dropped")
	default:
	}
}

func TestHubDropsSubscriberThatCannotTakeComplete(t *testing.T) {
	t.Parallel()
	h := events.NewHub()
	dead := events.NewSub()
	h.SubscribeTask(dead, "t")
	for i := 0; i < events.SubBuffer+1; i++ { // completes of many attempts, never read
		h.Deliver(events.Message{Event: events.KindComplete, Task: "t", Done: &events.Complete{TaskID: "t", Attempt: i, Status: "failed"}})
	}
	select {
	case <-dead.Done():
	default:
		t.Fatal("a subscriber whose buffer is full is still open")
	}
	if _, _, subs := h.Counts(); subs != 0 {
		t.Fatalf("%d subscribers, want 0", subs)
	}
}

// listen starts a listener on a fresh database and returns a publisher for it.
func listen(t *testing.T) (*events.Hub, *events.Publisher) {
	t.Helper()
	ctx := context.Background()
	url := pgtest.NewDatabase(t)
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	h := events.NewHub()
	l := events.NewListener(url, h, slog.New(slog.NewTextHandler(io.Discard, nil)))
	lctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); _ = l.Run(lctx) }()
	t.Cleanup(func() { cancel(); <-done; pool.Close() })
	<-l.Ready()
	return h, events.NewPublisher(pool)
}

func TestPublishLogsCapsStreamedLines(t *testing.T) {
	t.Parallel()
	h, pub := listen(t)
	sub := events.NewSub()
	h.SubscribeTask(sub, "task_1")
	var lines []events.LogLine
	for i := 0; i < 1000; i++ {
		lines = append(lines, events.LogLine{Level: "INFO", Message: fmt.Sprint(i)})
	}
	if err := pub.PublishLogs(context.Background(), "task_1", events.Session{ID: "task_1"}, lines); err != nil {
		t.Fatal(err)
	}
	var last string
	for n := 0; n < events.MaxStreamedLines; n++ {
		select {
		case f := <-sub.C:
			last = string(f)
		case <-time.After(10 * time.Second):
			t.Fatalf("received %d lines", n)
		}
	}
	if !strings.Contains(last, `"message":"901 log lines not streamed`) {
		t.Fatalf("last line %s", last)
	}
	select {
	case f := <-sub.C:
		t.Fatalf("more than %d lines streamed: %s", events.MaxStreamedLines, f)
	case <-time.After(200 * time.Millisecond):
	}
}

// A batch of long lines streams what one NOTIFY carries, then says how many it left out.
func TestPublishLogsOneNotify(t *testing.T) {
	t.Parallel()
	h, pub := listen(t)
	sub := events.NewSub()
	h.SubscribeTask(sub, "task_2")
	var lines []events.LogLine
	for i := 0; i < 90; i++ {
		lines = append(lines, events.LogLine{Level: "INFO", Message: fmt.Sprintf("%03d %s", i, strings.Repeat("y", 200))})
	}
	if err := pub.PublishLogs(context.Background(), "task_2", events.Session{ID: "task_2"}, lines); err != nil {
		t.Fatal(err)
	}
	var got []string
	for {
		wait := 500 * time.Millisecond // the frames of one NOTIFY come together
		if len(got) == 0 {
			wait = 10 * time.Second
		}
		select {
		case f := <-sub.C:
			got = append(got, string(f))
			continue
		case <-time.After(wait):
		}
		break
	}
	if len(got) < 10 || len(got) >= len(lines) {
		t.Fatalf("%d frames streamed of %d lines", len(got), len(lines))
	}
	for i, f := range got[:len(got)-1] {
		if !strings.Contains(f, fmt.Sprintf(`"message":"%03d y`, i)) {
			t.Fatalf("frame %d: %s", i, f)
		}
	}
	want := fmt.Sprintf(`"message":"%d log lines not streamed`, len(lines)-(len(got)-1))
	if !strings.Contains(got[len(got)-1], want) {
		t.Fatalf("last frame %s, want %s", got[len(got)-1], want)
	}
}

func TestPublishThroughListener(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h, pub := listen(t)
	sub := events.NewSub()
	h.SubscribeTask(sub, "task_9")

	// A batch far over the NOTIFY limit (20 KB) is split; a single huge line is shortened.
	// It stays under what a subscriber may fall behind (SubBuffer-CompleteReserve frames):
	// a slow reader (a busy machine) must still get every line, in order.
	const n = 200
	var lines []events.LogLine
	for i := 0; i < n; i++ {
		lines = append(lines, events.LogLine{Level: "INFO", Message: fmt.Sprintf("line %03d %s", i, strings.Repeat("x", 100))})
	}
	lines = append(lines, events.LogLine{Level: "ERROR", Message: strings.Repeat("é", 20000)})
	errc := make(chan error, 1)
	go func() { errc <- pub.Publish(ctx, events.Message{Event: events.KindLog, Task: "task_9", Logs: lines}) }()
	defer func() {
		if err := <-errc; err != nil {
			t.Fatal(err)
		}
	}()
	got := 0
	defer func() {
		// A complete event with an error far over the limit still arrives, shortened.
		long := strings.Repeat("boom ", 4000)
		if err := pub.Publish(ctx, events.Message{Event: events.KindComplete, Task: "task_9",
			Done: &events.Complete{TaskID: "task_9", Attempt: 1, Status: "failed", Error: &long}}); err != nil {
			t.Fatalf("publish complete: %v", err)
		}
		select {
		case f := <-sub.C:
			if !strings.Contains(string(f), `"event":"complete"`) || !strings.Contains(string(f), "boom boom") || len(f) > events.MaxPayload {
				t.Fatalf("complete frame of %d bytes: %.200s", len(f), f)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("complete event with a long error never arrived")
		}
	}()
	for got < len(lines) {
		select {
		case f := <-sub.C:
			var m struct {
				Event string
				Data  struct{ Message string }
			}
			if err := json.Unmarshal(f, &m); err != nil || m.Event != "log" {
				t.Fatalf("frame %s: %v", f, err)
			}
			if got < n && !strings.HasPrefix(m.Data.Message, fmt.Sprintf("line %03d", got)) {
				t.Fatalf("line %d out of order: %.20s", got, m.Data.Message)
			}
			if got == n && (!strings.HasSuffix(m.Data.Message, "…") || len(m.Data.Message) > events.MaxPayload) {
				t.Fatalf("huge line not shortened: %d bytes", len(m.Data.Message))
			}
			got++
		case <-time.After(10 * time.Second):
			t.Fatalf("received %d of %d lines", got, len(lines))
		}
	}
}

func TestHubCapsSubscriptionsPerSubscriber(t *testing.T) {
	t.Parallel()
	h := events.NewHub()
	s := events.NewSub()
	for i := 0; i < events.MaxSubscriptions; i++ {
		if !h.SubscribeTask(s, fmt.Sprintf("task_%d", i)) {
			t.Fatalf("subscription %d refused below the cap", i)
		}
	}
	if h.SubscribeTask(s, "task_over") || h.SubscribeSession(s, events.Session{ID: "sess_over"}) {
		t.Fatal("subscription over the cap accepted")
	}
	if !h.SubscribeTask(s, "task_0") {
		t.Fatal("repeating an existing subscription refused")
	}
	h.Deliver(events.Message{Event: events.KindProgress, Task: "task_over", Progr: &events.Progress{TaskID: "task_over"}})
	if got := frames(s); len(got) != 0 {
		t.Fatalf("refused subscription delivered %v", got)
	}
	h.Unsubscribe(s)
	if !h.SubscribeTask(events.NewSub(), "task_over") {
		t.Fatal("a fresh subscriber is refused")
	}
}

func TestListenerResendsStateAfterReconnect(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := pgtest.NewDatabase(t)
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	h := events.NewHub()
	sub := events.NewSub()
	h.SubscribeTask(sub, "task_7")
	l := events.NewListener(url, h, slog.New(slog.NewTextHandler(io.Discard, nil)))
	resent := events.Encode(events.KindProgress, map[string]any{"task_id": "task_7", "progress": 42})
	l.OnReconnect = func(context.Context) {
		for _, id := range h.TaskIDs() {
			h.SendTaskState(id, false, 0, resent)
		}
	}
	lctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); _ = l.Run(lctx) }()
	t.Cleanup(func() { cancel(); <-done; pool.Close() })
	<-l.Ready()
	if got := frames(sub); len(got) != 0 {
		t.Fatalf("state sent on the first LISTEN: %v", got)
	}
	// Cut the listener's connection as a database restart would.
	var killed int
	if err := pool.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE datname = current_database() AND query LIKE 'LISTEN%'`).Scan(&killed); err != nil || killed != 1 {
		t.Fatalf("terminated %d listener connections: %v", killed, err)
	}
	select {
	case f := <-sub.C:
		if string(f) != string(resent) {
			t.Fatalf("after reconnect got %s, want the resent state", f)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("no state resent after the listener reconnected")
	}
}

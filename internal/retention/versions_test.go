package retention_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/backtestd/backtestd/internal/auth"
	"github.com/backtestd/backtestd/internal/engine"
	"github.com/backtestd/backtestd/internal/marketdata"
	"github.com/backtestd/backtestd/internal/results/resultstest"
	"github.com/backtestd/backtestd/internal/retention"
)

// TestPruneVersions: VV has four versions, each changing one bar. An old run read version
// 1, an old pinned run version 2; version 3 nothing; version 4 is the latest. The dry run
// counts versions 1 (its only run goes) and 3; the prune removes their bars and keeps
// versions 2 and 4 exactly, and a removed version is a 400 to read.
func TestPruneVersions(t *testing.T) {
	t.Parallel()
	b := resultstest.Setup(t)
	if err := marketdata.EnsureBuiltin(b.Ctx, b.Store, false); err != nil {
		t.Fatal(err)
	}
	data := marketdata.NewService(b.Store, nil)
	bars := engine.RandomWalk(100, 9)
	versions := [][]engine.Bar{slices.Clone(bars)}
	for v, at := range []int{10, 20, 30} {
		next := slices.Clone(versions[v])
		next[at].Volume += 1000
		versions = append(versions, next)
	}
	for i, vb := range versions {
		if res, err := data.Import(b.Ctx, "builtin", "VV", "", "1d", time.UTC, vb); err != nil || res.Version != i+1 {
			t.Fatalf("import %d: %+v %v", i+1, res, err)
		}
	}
	first, last := bars[0].Time, bars[len(bars)-1].Time
	for _, r := range []struct {
		id      string
		version int
	}{{"task_old", 1}, {"task_pinned", 2}} {
		b.Task(t, r.id, "completed", "VV", first, last, 10000, "")
		b.Exec(t, `INSERT INTO run_provenance (task_id, attempt, provenance) VALUES ($1, 1,
			jsonb_build_object('settings', jsonb_build_object('data_source', 'builtin'),
			                   'data', jsonb_build_array(jsonb_build_object('symbol', 'VV', 'version', $2::int))))`, r.id, r.version)
	}
	b.Exec(t, `UPDATE tasks SET created_at = now() - interval '200 days'`)
	svc := retention.New(b.Store, nil)
	if _, err := svc.PinTask(b.Ctx, auth.Local(), "task_pinned", true); err != nil {
		t.Fatal(err)
	}
	before := time.Now().Add(-180 * 24 * time.Hour)

	dry, err := svc.Prune(b.Ctx, retention.Options{Before: before, DryRun: true})
	if err != nil || dry.Tasks != 1 || dry.Versions != 2 {
		t.Fatalf("dry run: %+v %v, want 1 run and 2 versions", dry, err)
	}
	history := count(t, b, `SELECT count(*) FROM bar_history WHERE symbol = 'VV'`)
	rep, err := svc.Prune(b.Ctx, retention.Options{Before: before})
	if err != nil || rep.Tasks != 1 || rep.Versions != 2 {
		t.Fatalf("prune: %+v %v, want 1 run and 2 versions", rep, err)
	}
	// The replaced bar only version 1 held is gone; the ones version 2 holds stay.
	if after := count(t, b, `SELECT count(*) FROM bar_history WHERE symbol = 'VV'`); history != 3 || after != 2 {
		t.Errorf("replaced bars: %d before, %d after; want 3 and 2", history, after)
	}
	for _, v := range []int{2, 4} {
		got, _, err := data.BarsAt(b.Ctx, "builtin", "VV", first, last, "1d", v)
		if err != nil || !slices.Equal(got, versions[v-1]) {
			t.Errorf("version %d after the prune: %d bars, %v", v, len(got), err)
		}
	}
	for _, v := range []int{1, 3} {
		if _, _, err := data.BarsAt(b.Ctx, "builtin", "VV", first, last, "1d", v); err == nil || !strings.Contains(err.Error(), "removed by retention") {
			t.Errorf("version %d after the prune: %v, want a 400 saying it was removed", v, err)
		}
	}
	list, err := data.Versions(b.Ctx, "builtin", "VV")
	if err != nil || len(list) != 4 || list[0].PrunedAt != nil || list[1].PrunedAt == nil || list[2].PrunedAt != nil || list[3].PrunedAt == nil {
		t.Errorf("versions after the prune: %+v %v", list, err)
	}
	// Nothing more to remove: the latest and the pinned run's version stay.
	if again, err := svc.Prune(b.Ctx, retention.Options{Before: before}); err != nil || again.Versions != 0 {
		t.Errorf("second prune: %+v %v", again, err)
	}
}

// TestPruneKeepsStudyVersions: a study made with as_of keeps the bar version it runs on
// while it is kept; once a prune deletes the study, its version can go.
func TestPruneKeepsStudyVersions(t *testing.T) {
	t.Parallel()
	b := resultstest.Setup(t)
	if err := marketdata.EnsureBuiltin(b.Ctx, b.Store, false); err != nil {
		t.Fatal(err)
	}
	data := marketdata.NewService(b.Store, nil)
	bars := engine.RandomWalk(60, 4)
	for v := 1; v <= 3; v++ {
		bars = slices.Clone(bars)
		bars[10*v].Volume += 100
		if res, err := data.Import(b.Ctx, "builtin", "VS", "", "1d", time.UTC, bars); err != nil || res.Version != v {
			t.Fatalf("import %d: %+v %v", v, res, err)
		}
	}
	b.Exec(t, `INSERT INTO strategies (id, name, current_version) VALUES ('str_1', 'SmaCross', 1)`)
	b.Exec(t, `INSERT INTO strategy_versions (strategy_id, version, name, code, class_name, origin, content_hash)
		VALUES ('str_1', 1, 'SmaCross', 'x', 'SmaCross', 'api', 'h')`)
	for _, s := range []struct {
		id, age string
		version int
	}{{"study_young", "1 day", 1}, {"study_old", "300 days", 2}} {
		b.Exec(t, `INSERT INTO studies (id, strategy_id, strategy_version, data_source, symbols, timeframe, timezone, start_date, end_date,
			initial_cash, commission, space, method, objective, direction, blocks, status, total, created_at)
			VALUES ($1, 'str_1', 1, 'builtin', ARRAY['VS'], '1d', 'UTC', '2020-01-01', '2021-01-01', 10000, 0, '{"fast":[5]}',
			        'grid', 'sharpe_ratio', 'max', 1, 'completed', 1, now() - $2::interval)`, s.id, s.age)
		b.Exec(t, `INSERT INTO study_data_versions (study_id, symbol, version) VALUES ($1, 'VS', $2)`, s.id, s.version)
	}
	svc := retention.New(b.Store, nil)
	before := time.Now().Add(-180 * 24 * time.Hour)
	dry, err := svc.Prune(b.Ctx, retention.Options{Before: before, DryRun: true})
	if err != nil || dry.Studies != 1 || dry.Versions != 1 {
		t.Fatalf("dry run: %+v %v, want 1 study and 1 version (the old study's)", dry, err)
	}
	if rep, err := svc.Prune(b.Ctx, retention.Options{Before: before}); err != nil || rep.Studies != 1 || rep.Versions != 1 {
		t.Fatalf("prune: %+v %v, want 1 study and 1 version", rep, err)
	}
	list, err := data.Versions(b.Ctx, "builtin", "VS")
	if err != nil || len(list) != 3 || list[0].PrunedAt != nil || list[1].PrunedAt == nil || list[2].PrunedAt != nil {
		t.Errorf("versions after the prune (newest first): %+v %v; want version 2 pruned, 1 kept by the young study", list, err)
	}
}

package marketdata_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/backtestd/backtestd/db"
	"github.com/backtestd/backtestd/internal/engine"
	"github.com/backtestd/backtestd/internal/marketdata"
	"github.com/backtestd/backtestd/internal/provenance"
	"github.com/backtestd/backtestd/internal/results/resultstest"
)

// TestMigrationProvenanceVersions runs migration 00092's Up on runs recorded without a
// version: the run whose fingerprint (made by provenance.FingerprintOf, over part of the
// bars) matches version 1 gets version 1, the ones that do not match (another sha256, an
// aggregated timeframe) get none.
func TestMigrationProvenanceVersions(t *testing.T) {
	t.Parallel()
	b := resultstest.Setup(t)
	if err := marketdata.EnsureBuiltin(b.Ctx, b.Store, false); err != nil {
		t.Fatal(err)
	}
	bars := engine.RandomWalk(1000, 21)
	bars[10].Volume = 0 // a zero and large values in the records
	bars[11].Open, bars[11].High = 1e300, 1e300
	if _, err := marketdata.NewService(b.Store, nil).Import(b.Ctx, "builtin", "MIG", "", "1d", time.UTC, bars); err != nil {
		t.Fatal(err)
	}
	read := bars[5:700]
	feed := func(tf, sum string) provenance.Feed {
		f := provenance.FeedOf("MIG", tf, "UTC", read, provenance.Fingerprint{SHA256: sum})
		return f
	}
	runs := map[string]provenance.Feed{
		"task_match":  feed("1d", provenance.FingerprintOf(read).SHA256),
		"task_other":  feed("1d", provenance.FingerprintOf(bars[6:700]).SHA256),
		"task_weekly": feed("1w", provenance.FingerprintOf(read).SHA256),
	}
	for id, f := range runs {
		b.Task(t, id, "completed", "MIG", bars[0].Time, bars[len(bars)-1].Time, 10000, "")
		doc, _ := json.Marshal(provenance.Provenance{Data: []provenance.Feed{f}, Settings: provenance.Settings{DataSource: "builtin"}})
		b.Exec(t, `INSERT INTO run_provenance (task_id, attempt, provenance) VALUES ($1, 1, $2)`, id, doc)
	}
	src, err := db.Migrations.ReadFile("migrations/00092_provenance_versions.sql")
	if err != nil {
		t.Fatal(err)
	}
	up := string(src)
	up = up[strings.Index(up, "-- +goose Up"):strings.Index(up, "-- +goose Down")]
	tx, err := b.Store.Pool.Begin(b.Ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(b.Ctx, up); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(b.Ctx); err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]int{"task_match": 1, "task_other": 0, "task_weekly": 0} {
		var doc []byte
		if err := b.Store.Pool.QueryRow(b.Ctx, `SELECT provenance FROM run_provenance WHERE task_id = $1`, id).Scan(&doc); err != nil {
			t.Fatal(err)
		}
		var p provenance.Provenance
		if err := json.Unmarshal(doc, &p); err != nil || len(p.Data) != 1 || p.Data[0].Version != want || p.Data[0].SHA256 != runs[id].SHA256 {
			t.Errorf("%s: %s, want version %d", id, doc, want)
		}
	}
}

package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/backtestd/backtestd/internal/pgtest"
)

// TestPruneCommand runs `backtestd prune` as an operator would: bad flags are refused, a dry
// run counts, a prune with --export deletes the old run and writes it to the file first.
func TestPruneCommand(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := pgtest.NewDatabase(t)
	conn, err := pgx.Connect(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for _, sql := range []string{
		`INSERT INTO strategies (id, name, current_version) VALUES ('str_1', 'S', 1)`,
		`INSERT INTO strategy_versions (strategy_id, version, name, code, class_name, origin, content_hash) VALUES ('str_1', 1, 'S', 'x', 'S', 'api', 'h')`,
		`INSERT INTO tasks (id, strategy_id, strategy_version, status, data_source, symbol, symbols, benchmark, start_date, end_date,
			initial_cash, commission, session_id, created_at)
		 VALUES ('task_1', 'str_1', 1, 'failed', 'builtin', 'X', '{X}', 'X', '2020-01-01', '2021-01-01', 1000, 0, 's', now() - interval '400 days'),
		        ('task_2', 'str_1', 1, 'failed', 'builtin', 'X', '{X}', 'X', '2020-01-01', '2021-01-01', 1000, 0, 's', now())`,
	} {
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Fatal(err)
		}
	}
	export := filepath.Join(t.TempDir(), "old.jsonl")
	for _, tc := range []struct {
		args  []string
		want  string
		fails bool
	}{
		{[]string{"prune"}, "--older-than is required", true},
		{[]string{"prune", "--older-than", "soon"}, "invalid age", true},
		{[]string{"prune", "--older-than", "1y"}, "invalid age", true},
		{[]string{"prune", "--older-than", "180d", "extra"}, "unexpected argument", true},
		{[]string{"prune", "--older-than", "1ns"}, "Refusing to prune runs and studies younger than one day: the age 1ns", true},
		{[]string{"prune", "--older-than", "1e-9d"}, "Refusing to prune runs and studies younger than one day: the age 86.4µs", true},
		{[]string{"prune", "--older-than", "23h", "--dry-run"}, "--force on the command line", true},
		{[]string{"prune", "--older-than", "1ns", "--force", "--dry-run"}, "would delete 2 runs and 0 studies", false},
		{[]string{"prune", "--older-than", "180d", "--dry-run"}, "would delete 1 runs and 0 studies", false},
		{[]string{"prune", "--older-than", "180d", "--export", export}, "deleted 1 runs and 0 studies", false},
		{[]string{"prune", "--older-than", "180d"}, "deleted 0 runs", false},
	} {
		var out, errOut bytes.Buffer
		err := run(ctx, append(tc.args, "--database-url", db), func(string) string { return "" }, strings.NewReader(""), &out, &errOut)
		got := out.String() + errOut.String()
		if err != nil {
			got += err.Error()
		}
		if (err != nil) != tc.fails || !strings.Contains(got, tc.want) {
			t.Errorf("%v: %q (err %v), want %q", tc.args, got, err, tc.want)
		}
	}
	raw, err := os.ReadFile(export)
	if err != nil || strings.Count(string(raw), "\n") != 1 || !strings.Contains(string(raw), `"id": "task_1"`) {
		t.Errorf("export file: %q %v", raw, err)
	}
	var left []string
	rows, _ := conn.Query(ctx, `SELECT id FROM tasks ORDER BY id`)
	left, err = pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil || strings.Join(left, ",") != "task_2" {
		t.Errorf("tasks left: %v %v", left, err)
	}
}

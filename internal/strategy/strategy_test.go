package strategy_test

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"testing"

	"github.com/backtestd/backtestd/internal/apperr"
	"github.com/backtestd/backtestd/internal/auth"
	"github.com/backtestd/backtestd/internal/pgtest"
	"github.com/backtestd/backtestd/internal/runner/runnertest"
	"github.com/backtestd/backtestd/internal/store"
	"github.com/backtestd/backtestd/internal/strategy"
)

func TestMain(m *testing.M) { runnertest.Main(m) }

func code(n int) string {
	return fmt.Sprintf("class S extends Strategy {\n  static params = { n: %d, f: 0.5, on: true };\n  next() {}\n}\n", n)
}

func setup(t *testing.T) (*strategy.Service, *store.Store) {
	t.Helper()
	st, err := store.Open(context.Background(), pgtest.NewDatabase(t), 8)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	return strategy.NewService(st, runnertest.Pool(t), nil), st
}

func TestConcurrentReplacesGetDistinctVersions(t *testing.T) {
	t.Parallel()
	svc, _ := setup(t)
	ctx := context.Background()
	s, err := svc.Create(ctx, strategy.Upload{Name: "s", Code: code(0)})
	if err != nil {
		t.Fatal(err)
	}
	const n = 8
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := 1; i <= n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := svc.Replace(ctx, auth.Local(), s.ID, strategy.Upload{Name: "s", Code: code(i)})
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	versions, err := svc.Versions(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	var got []int
	for _, v := range versions {
		got = append(got, v.Version)
	}
	sort.Ints(got)
	if len(got) != n+1 || got[0] != 1 || got[n] != n+1 {
		t.Fatalf("versions %v", got)
	}
	head, err := svc.Get(ctx, s.ID)
	if err != nil || head.Version != n+1 {
		t.Fatalf("head version %v, %v", head, err)
	}
}

func TestConcurrentFileSyncCreatesOneStrategy(t *testing.T) {
	t.Parallel()
	svc, _ := setup(t)
	ctx := context.Background()
	var wg sync.WaitGroup
	ids := make(chan string, 4)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, _, err := svc.SyncFile(ctx, "/strategies/s.js", code(1))
			if err != nil {
				t.Error(err)
				return
			}
			ids <- s.ID
		}()
	}
	wg.Wait()
	close(ids)
	seen := map[string]bool{}
	for id := range ids {
		seen[id] = true
	}
	list, err := svc.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) != 1 || len(list) != 1 || list[0].Version != 1 {
		t.Fatalf("ids %v, %d strategies, list %+v", seen, len(list), list)
	}
}

func TestSaveConfig(t *testing.T) {
	t.Parallel()
	svc, _ := setup(t)
	ctx := context.Background()
	s, err := svc.Create(ctx, strategy.Upload{Name: "s", Code: code(3)})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		in         map[string]any
		wantErr    string
		wantValues string
	}{
		{"coerces", map[string]any{"n": "7", "on": "YES", "f": 2}, "", `{"n":7,"f":2,"on":true}`},
		{"empty resets to defaults", map[string]any{}, "", `{"n":3,"f":0.5,"on":true}`},
		{"unknown", map[string]any{"zz": 1}, "Unknown parameter: zz", ""},
		{"wrong type", map[string]any{"n": []any{1}}, "Parameter 'n': expected int, got list", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := svc.SaveConfig(ctx, auth.Local(), s.ID, tt.in)
			if tt.wantErr != "" {
				e, ok := apperr.As(err)
				if !ok || e.Kind != apperr.KindInvalid || e.Detail != tt.wantErr {
					t.Fatalf("err %v, want 400 %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			raw, _ := got.Effective().MarshalJSON()
			if string(raw) != tt.wantValues {
				t.Fatalf("effective %s, want %s", raw, tt.wantValues)
			}
		})
	}
	if _, err := svc.SaveConfig(ctx, auth.Local(), "str_404", nil); !isNotFound(err) {
		t.Fatalf("unknown id: %v", err)
	}
}

func isNotFound(err error) bool {
	e, ok := apperr.As(err)
	return ok && e.Kind == apperr.KindNotFound
}

func TestNonFiniteDefaultsBecomeStrings(t *testing.T) {
	t.Parallel()
	svc, _ := setup(t)
	s, err := svc.Create(context.Background(), strategy.Upload{Name: "s", Code: "class S extends Strategy { static params = { a: NaN, b: Infinity, c: [1, -Infinity] }; }"})
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := s.Defaults().MarshalJSON()
	if string(raw) != `{"a":"NaN","b":"Infinity","c":[1,"-Infinity"]}` {
		t.Fatalf("defaults %s", raw)
	}
}

func TestDeletedStrategyKeepsVersions(t *testing.T) {
	t.Parallel()
	svc, _ := setup(t)
	ctx := context.Background()
	s, err := svc.Create(ctx, strategy.Upload{Name: "s", Code: code(1)})
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Delete(ctx, auth.Local(), s.ID); err != nil {
		t.Fatal(err)
	}
	if err := svc.Delete(ctx, auth.Local(), s.ID); !isNotFound(err) {
		t.Fatalf("second delete: %v", err)
	}
	if _, err := svc.Get(ctx, s.ID); !isNotFound(err) {
		t.Fatalf("get after delete: %v", err)
	}
	v, err := svc.VersionOf(ctx, s.ID, 1)
	if err != nil || v.Code != code(1) {
		t.Fatalf("version of a deleted strategy: %+v %v", v, err)
	}
	if _, err := svc.VersionOf(ctx, s.ID, 2); !isNotFound(err) || errors.Is(err, store.ErrNotFound) {
		t.Fatalf("missing version: %v", err)
	}
}

func TestSavingUnchangedCodeMakesNoVersion(t *testing.T) {
	t.Parallel()
	svc, _ := setup(t)
	ctx := context.Background()
	s, err := svc.Create(ctx, strategy.Upload{Name: "s", Code: code(1)})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		up      strategy.Upload
		version int
	}{
		{strategy.Upload{Name: "s", Code: code(1)}, 1},                         // the same: no version
		{strategy.Upload{Name: "renamed", Code: code(1)}, 2},                   // a new name is a change
		{strategy.Upload{Name: "renamed", Code: code(2)}, 3},                   // new code
		{strategy.Upload{Name: "renamed", Code: code(2)}, 3},                   // saved twice
		{strategy.Upload{Name: "renamed", Code: code(2), Description: "d"}, 4}, // a description
	} {
		got, err := svc.Replace(ctx, auth.Local(), s.ID, tt.up)
		if err != nil {
			t.Fatal(err)
		}
		if got.Version != tt.version {
			t.Errorf("after saving %+v: version %d, want %d", tt.up.Name, got.Version, tt.version)
		}
	}
	versions, err := svc.Versions(ctx, s.ID)
	if err != nil || len(versions) != 4 {
		t.Fatalf("%d versions (%v), want 4", len(versions), err)
	}
}

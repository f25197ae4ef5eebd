package httpapi

import (
	"context"
	"testing"

	"github.com/backtestd/backtestd/internal/auth"
	"github.com/backtestd/backtestd/internal/runner/runnertest"
	"github.com/backtestd/backtestd/internal/store"
	"github.com/backtestd/backtestd/internal/strategy"
)

func TestMain(m *testing.M) { runnertest.Main(m) }

// StrategiesForTest is the strategy service over st, loading code in runner processes.
// Exported for the package's external tests.
func StrategiesForTest(t testing.TB, st *store.Store) *strategy.Service {
	return strategy.NewService(st, runnertest.Pool(t), nil)
}

// AccountsForTest is an accounts service over st with one admin, root, and an API token of
// theirs. Exported for the package's external tests.
func AccountsForTest(t testing.TB, st *store.Store) (*auth.Service, string) {
	t.Helper()
	a := auth.NewService(st, 0)
	ctx := context.Background()
	if _, err := a.AddUser(ctx, "root", auth.RoleAdmin, "tiger-lily-9041"); err != nil {
		t.Fatal(err)
	}
	secret, _, err := a.CreateToken(ctx, auth.Identity{}, auth.NewToken{User: "root", Name: "tests"})
	if err != nil {
		t.Fatal(err)
	}
	return a, secret
}

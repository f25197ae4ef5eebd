package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/backtestd/backtestd/internal/pgtest"
)

// TestAccountCommands drives `backtestd user` and `backtestd token` as an admin would,
// the password on stdin.
func TestAccountCommands(t *testing.T) {
	t.Parallel()
	db := pgtest.NewDatabase(t)
	noEnv := func(string) string { return "" }
	cmd := func(stdin string, args ...string) (string, error) {
		t.Helper()
		var out, errOut bytes.Buffer
		err := run(context.Background(), append(args, "--database-url", db), noEnv, strings.NewReader(stdin), &out, &errOut)
		return out.String() + errOut.String(), err
	}
	steps := []struct {
		stdin   string
		args    []string
		want    string // in the output, or in the error when fails is set
		fails   bool
		comment string
	}{
		{"tiger-lily-9041\n", []string{"user", "add", "--name", "alice", "--role", "admin"}, "added alice (admin)", false, "add with the password on stdin"},
		{"", []string{"user", "add", "--name", "bob", "--role", "researcher"}, "no password", true, "no password"},
		{"blue-heron-2718\n", []string{"user", "add", "--name", "bob", "--role", "boss"}, `Unknown role "boss"`, true, "bad role"},
		{"short\n", []string{"user", "add", "--name", "bob", "--role", "researcher"}, "Password too short", true, "short password"},
		{"Bobby-Tables-1\n", []string{"user", "add", "--name", "bob", "--role", "researcher"}, "must not contain the user name", true, "the name in the password"},
		{"1234567890\n", []string{"user", "add", "--name", "bob", "--role", "researcher"}, "most common", true, "a common password"},
		{"blue-heron-2718\n", []string{"user", "add", "--name", "bob", "--role", "researcher"}, "added bob (researcher)", false, ""},
		{"quiet-maple-3141\n", []string{"user", "add", "--name", "bob", "--role", "viewer"}, "already exists", true, "duplicate"},
		{"", []string{"user", "set-role", "--name", "bob", "--role", "viewer"}, "bob: viewer, active", false, ""},
		{"qwertyuiop\n", []string{"user", "set-password", "--name", "bob"}, "most common", true, "set a common password"},
		{"sandy-dune-5772\n", []string{"user", "set-password", "--name", "bob"}, "bob: viewer, active", false, ""},
		{"", []string{"user", "disable", "--name", "alice"}, "last active admin", true, "the last admin"},
		{"", []string{"user", "disable", "--name", "bob"}, "bob: viewer, disabled", false, ""},
		{"", []string{"user", "list"}, "viewer  disabled", false, ""},
		{"", []string{"token", "create", "--user", "bob"}, "is disabled", true, "token of a disabled user"},
		{"", []string{"token", "create", "--user", "alice", "--name", "ci", "--read-only", "--expires", "90d"}, "btd_", false, ""},
		{"", []string{"token", "create", "--user", "alice", "--expires", "soon"}, "Invalid lifetime", true, ""},
		{"", []string{"token", "list"}, "read-only", false, ""},
		{"", []string{"token", "create", "--user", "alice", "--name", "prometheus", "--metrics"}, "btd_", false, ""},
		{"", []string{"token", "list", "--user", "alice"}, "metrics", false, ""},
		{"", []string{"token", "revoke", "tok_1"}, "revoked tok_1 (alice)", false, ""},
		{"", []string{"token", "revoke", "tok_9"}, "Token tok_9 not found", true, ""},
		{"", []string{"user", "frobnicate", "--name", "x"}, "unknown subcommand", true, ""},
	}
	for _, s := range steps {
		out, err := cmd(s.stdin, s.args...)
		text := out
		if err != nil {
			text += err.Error()
		}
		if (err != nil) != s.fails || !strings.Contains(text, s.want) {
			t.Errorf("%s (%s): err %v, output %q; want fails=%v with %q", strings.Join(s.args, " "), s.comment, err, out, s.fails, s.want)
		}
	}
}

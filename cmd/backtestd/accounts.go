package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"golang.org/x/term"

	"github.com/backtestd/backtestd/internal/auth"
	"github.com/backtestd/backtestd/internal/config"
	"github.com/backtestd/backtestd/internal/store"
	"github.com/backtestd/backtestd/service"
)

const userUsage = `usage:
  backtestd user add --name NAME --role admin|researcher|viewer   (password from the prompt or stdin)
  backtestd user list
  backtestd user set-role --name NAME --role ROLE
  backtestd user set-password --name NAME                         (password from the prompt or stdin)
  backtestd user disable --name NAME                              (ends their sessions; their tokens stop working)
  backtestd user enable --name NAME
`

// dbFlags are the flags of the commands that work on the database directly.
type dbFlags struct{ url, dataDir *string }

func addDBFlags(fs *flag.FlagSet, getenv func(string) string) dbFlags {
	return dbFlags{
		url:     fs.String("database-url", getenv("DATABASE_URL"), "PostgreSQL URL; empty uses the private cluster in the data dir"),
		dataDir: fs.String("data-dir", "", "folder of the private PostgreSQL cluster (default: BACKTESTD_DATA_DIR or .data)"),
	}
}

func (d dbFlags) config(name string, getenv func(string) string) (config.Config, error) {
	cfg, _, err := config.Load(name, nil, getenv)
	if err != nil {
		return cfg, err
	}
	cfg.DatabaseURL = *d.url
	if *d.dataDir != "" {
		cfg.DataDir = *d.dataDir
	}
	return cfg, nil
}

func (d dbFlags) accounts(ctx context.Context, name string, getenv func(string) string, stderr io.Writer) (*auth.Service, func(), error) {
	cfg, err := d.config(name, getenv)
	if err != nil {
		return nil, nil, err
	}
	return service.Accounts(ctx, cfg, newLogger(stderr, cfg.LogLevel))
}

// cliAudit records a change made from the command line (no actor: whoever runs the
// command has the database's keys).
func cliAudit(ctx context.Context, a *auth.Service, action, target string) error {
	return a.Record(ctx, auth.Entry{Action: action, Target: target, Status: 200, RemoteAddr: "cli"})
}

// userCmd is `backtestd user …`.
func userCmd(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, userUsage)
		return errors.New("user: no subcommand given")
	}
	sub := args[0]
	fs := flag.NewFlagSet("user "+sub, flag.ContinueOnError)
	fs.SetOutput(stderr)
	db := addDBFlags(fs, getenv)
	name := fs.String("name", "", "the user's name")
	role := fs.String("role", "", "admin, researcher or viewer")
	fs.Usage = func() { fmt.Fprint(stderr, userUsage); fs.PrintDefaults() }
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if sub != "list" && *name == "" {
		fs.Usage()
		return fmt.Errorf("user %s: --name is required", sub)
	}
	var change auth.UserChange
	switch sub {
	case "add", "set-role":
		r, err := auth.ParseRole(*role)
		if err != nil {
			return fmt.Errorf("user %s: --role: %w", sub, publicError(err))
		}
		change.Role = &r
	case "set-password":
	case "disable", "enable":
		off := sub == "disable"
		change.Disabled = &off
	case "list":
	default:
		fmt.Fprint(stderr, userUsage)
		return fmt.Errorf("user: unknown subcommand %q", sub)
	}
	var password string
	if sub == "add" || sub == "set-password" {
		p, err := readPassword(stdin, stderr)
		if err != nil {
			return err
		}
		password, change.Password = p, &p
	}
	a, closeDB, err := db.accounts(ctx, "user", getenv, stderr)
	if err != nil {
		return err
	}
	defer closeDB()
	switch sub {
	case "list":
		users, err := a.Users(ctx)
		if err != nil {
			return err
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "NAME\tROLE\tSTATUS\tCREATED")
		for _, u := range users {
			status := "active"
			if u.Disabled {
				status = "disabled"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", u.Name, u.Role, status, u.CreatedAt.Format(time.DateTime))
		}
		return tw.Flush()
	case "add":
		u, err := a.AddUser(ctx, *name, *change.Role, password)
		if err != nil {
			return publicError(err)
		}
		fmt.Fprintf(stdout, "added %s (%s)\n", u.Name, u.Role)
		return cliAudit(ctx, a, "user.add", u.Name)
	}
	u, err := a.UpdateUser(ctx, *name, change)
	if err != nil {
		return publicError(err)
	}
	status := "active"
	if u.Disabled {
		status = "disabled"
	}
	fmt.Fprintf(stdout, "%s: %s, %s\n", u.Name, u.Role, status)
	return cliAudit(ctx, a, "user."+sub, u.Name)
}

// readPassword reads a password: from the terminal without echo, asked twice, or else the
// first line of stdin (for scripts: echo "$PW" | backtestd user add …).
func readPassword(stdin io.Reader, stderr io.Writer) (string, error) {
	if f, ok := stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		read := func(prompt string) (string, error) {
			fmt.Fprint(stderr, prompt)
			b, err := term.ReadPassword(int(f.Fd()))
			fmt.Fprintln(stderr)
			return string(b), err
		}
		p, err := read("Password: ")
		if err != nil {
			return "", err
		}
		again, err := read("Again: ")
		if err != nil {
			return "", err
		}
		if p != again {
			return "", errors.New("the passwords differ")
		}
		return p, nil
	}
	line, err := bufio.NewReader(stdin).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("read password: %w", err)
	}
	line = strings.TrimRight(line, "\r\n")
	if line == "" {
		return "", errors.New("no password: type it at the prompt or give it as the first line of stdin")
	}
	return line, nil
}

const tokenUsage = `usage:
  backtestd token create --user NAME [--name ci] [--read-only | --metrics] [--expires 90d]   (prints the token once)
  backtestd token list [--user NAME]
  backtestd token revoke ID
`

// tokenCmd is `backtestd token …`.
func tokenCmd(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, tokenUsage)
		return errors.New("token: no subcommand given")
	}
	sub := args[0]
	fs := flag.NewFlagSet("token "+sub, flag.ContinueOnError)
	fs.SetOutput(stderr)
	db := addDBFlags(fs, getenv)
	user := fs.String("user", "", "the user the token acts for, with their role")
	name := fs.String("name", "", "what the token is for, e.g. ci")
	readOnly := fs.Bool("read-only", false, "the token may only read")
	metrics := fs.Bool("metrics", false, "the token may only read /metrics (for a Prometheus server)")
	expires := fs.String("expires", "", "lifetime: days such as 90d or a duration such as 12h (default: no expiry)")
	fs.Usage = func() { fmt.Fprint(stderr, tokenUsage); fs.PrintDefaults() }
	pos, err := parseWithArgs(fs, args[1:])
	if err != nil {
		return err
	}
	ttl, err := auth.ParseLifetime(*expires)
	if err != nil {
		return publicError(err)
	}
	switch {
	case sub == "create" && *user == "":
		fs.Usage()
		return errors.New("token create: --user is required")
	case sub == "revoke" && len(pos) != 1:
		fs.Usage()
		return errors.New("token revoke: give the token's id (see token list)")
	case sub != "create" && sub != "list" && sub != "revoke":
		fmt.Fprint(stderr, tokenUsage)
		return fmt.Errorf("token: unknown subcommand %q", sub)
	}
	a, closeDB, err := db.accounts(ctx, "token", getenv, stderr)
	if err != nil {
		return err
	}
	defer closeDB()
	switch sub {
	case "create":
		secret, t, err := a.CreateToken(ctx, auth.Identity{}, auth.NewToken{User: *user, Name: *name, ReadOnly: *readOnly, Metrics: *metrics, TTL: ttl})
		if err != nil {
			return publicError(err)
		}
		fmt.Fprintf(stderr, "created %s for %s; it is shown only now:\n", t.ID, t.User)
		fmt.Fprintln(stdout, secret)
		return cliAudit(ctx, a, "token.create", t.ID)
	case "revoke":
		t, err := a.RevokeToken(ctx, pos[0])
		if err != nil {
			return publicError(err)
		}
		fmt.Fprintf(stdout, "revoked %s (%s)\n", t.ID, t.User)
		return cliAudit(ctx, a, "token.revoke", t.ID)
	}
	tokens, err := a.Tokens(ctx, *user)
	if err != nil {
		return err
	}
	when := func(t *time.Time) string {
		if t == nil {
			return "-"
		}
		return t.Local().Format(time.DateTime)
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tUSER\tNAME\tACCESS\tCREATED\tEXPIRES\tLAST USED\tREVOKED")
	for _, t := range tokens {
		access := "read-write"
		switch {
		case t.Metrics:
			access = "metrics"
		case t.ReadOnly:
			access = "read-only"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", t.ID, t.User, t.Name, access, when(&t.CreatedAt), when(t.ExpiresAt), when(t.LastUsedAt), when(t.RevokedAt))
	}
	return tw.Flush()
}

// parseWithArgs parses flags that may come before or after the positional arguments
// (`token revoke tok_3 --database-url …`), which flag.Parse alone stops at.
func parseWithArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// biRoleCmd is `backtestd bi-role create NAME`: a PostgreSQL login role that can read
// only the bi_* views, with limits on its sessions (run again to update its password and
// limits, grant views added since and apply what a newer version takes away).
func biRoleCmd(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	const usage = "usage: backtestd bi-role create NAME   (password from the prompt or stdin)\n"
	if len(args) == 0 || args[0] != "create" {
		fmt.Fprint(stderr, usage)
		return errors.New("bi-role: want the subcommand create")
	}
	fs := flag.NewFlagSet("bi-role create", flag.ContinueOnError)
	fs.SetOutput(stderr)
	db := addDBFlags(fs, getenv)
	def := store.DefaultBIRoleOptions
	o := def
	fs.IntVar(&o.ConnectionLimit, "connection-limit", def.ConnectionLimit, "most sessions the role may hold at once")
	fs.DurationVar(&o.StatementTimeout, "statement-timeout", def.StatementTimeout, "the role's statement_timeout (a default its sessions may change)")
	fs.DurationVar(&o.IdleInTransactionTimeout, "idle-in-transaction-timeout", def.IdleInTransactionTimeout, "the role's idle_in_transaction_session_timeout (a default its sessions may change)")
	fs.Usage = func() { fmt.Fprint(stderr, usage); fs.PrintDefaults() }
	pos, err := parseWithArgs(fs, args[1:])
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		fs.Usage()
		return errors.New("bi-role create: give the role's name")
	}
	password, err := readPassword(stdin, stderr)
	if err != nil {
		return err
	}
	cfg, err := db.config("bi-role", getenv)
	if err != nil {
		return err
	}
	role, err := service.CreateBIRole(ctx, cfg, newLogger(stderr, cfg.LogLevel), pos[0], password, o)
	if err != nil {
		return publicError(err)
	}
	fmt.Fprintf(stdout, "role %s can read %s\n", pos[0], strings.Join(role.Views, ", "))
	fmt.Fprintf(stdout, "at most %d connections; statement_timeout %s, idle_in_transaction_session_timeout %s (defaults the role may change for its own sessions)\n",
		o.ConnectionLimit, o.StatementTimeout, o.IdleInTransactionTimeout)
	for _, w := range role.Warnings {
		fmt.Fprintln(stderr, "warning: "+w)
	}
	return nil
}

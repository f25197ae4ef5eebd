// Package strategy holds the business rules for strategies: loading and checking code,
// creating and replacing strategies with an immutable version per change, soft deletion,
// version history and the saved parameter configuration. The HTTP handlers and the
// strategy-directory watcher both go through a Service, so the rules are the same for
// code uploaded over the API and code loaded from files.
package strategy

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	"github.com/backtestd/backtestd/internal/apperr"
	"github.com/backtestd/backtestd/internal/auth"
	"github.com/backtestd/backtestd/internal/jsrt"
	"github.com/backtestd/backtestd/internal/store"
)

// MaxCodeBytes is the largest strategy source accepted (1 MiB).
const MaxCodeBytes = 1 << 20

// MaxNameLength is the longest strategy name accepted, in characters.
const MaxNameLength = 200

// MaxDescriptionLength is the longest description accepted, in characters.
const MaxDescriptionLength = 10000

// OriginAPI is the origin of code uploaded over the API; code loaded from a strategy
// directory has its absolute file path as origin.
const OriginAPI = "api"

// Strategy is a live strategy with its current version.
type Strategy struct {
	ID          string
	Name        string
	Description string
	Code        string
	ClassName   string
	Origin      string
	ContentHash string
	Version     int
	Params      []jsrt.Param   // declared parameters, in declaration order
	Values      map[string]any // saved configuration: name → coerced value (may be empty)
	CreatedAt   time.Time
	UpdatedAt   time.Time
	// CreatedBy is the user who created the strategy, its owner: only they and admins may
	// replace or delete it. Nil without accounts or for a strategy file.
	CreatedBy *string
}

// Info returns the loader's view of the strategy, for validating parameters.
func (s *Strategy) Info() *jsrt.StrategyInfo {
	return &jsrt.StrategyInfo{ClassName: s.ClassName, Description: s.Description, Params: s.Params}
}

// Defaults is the API's params object: name → default, in declaration order.
func (s *Strategy) Defaults() Object { return defaults(s.Params) }

// Effective is the configuration a backtest uses when it gives no overrides: the saved
// value of each parameter, else its default, in declaration order.
func (s *Strategy) Effective() Object {
	out := make(Object, 0, len(s.Params))
	for _, p := range s.Params {
		v, ok := s.Values[p.Name]
		if !ok {
			v = p.Default
		}
		out = append(out, Field{Name: p.Name, Value: v})
	}
	return out
}

// Version is one immutable version of a strategy. Code is empty in version lists.
type Version struct {
	StrategyID  string
	Version     int
	Name        string
	Description string
	Code        string
	ClassName   string
	Params      []jsrt.Param
	Origin      string
	ContentHash string
	CreatedAt   time.Time
	CreatedBy   *string // the user who saved it; nil without accounts or for a file
}

// Upload is the body of a create or replace.
type Upload struct {
	Name        string
	Description string
	Code        string
	By          *string // the user saving it (see Strategy.CreatedBy); nil for nobody
}

// CodeError is strategy code that cannot be loaded: a 400 whose detail is
// "Invalid strategy code: <loader message>", with the 1-based line and column of the
// problem when the loader knows them (0 otherwise).
type CodeError struct {
	Detail string
	Line   int
	Column int
}

func (e *CodeError) Error() string { return e.Detail }

// Unwrap makes a CodeError an apperr 400 for writers that know nothing of it.
func (e *CodeError) Unwrap() error {
	return &apperr.Error{Kind: apperr.KindInvalid, Detail: e.Detail}
}

// Inspector loads strategy code and reports its class and parameters; errors are
// *jsrt.LoadError for code that cannot be loaded. Uploaded code is untrusted: the service's
// inspector runs it in a runner process (internal/runner).
type Inspector interface {
	Inspect(ctx context.Context, code string) (*jsrt.StrategyInfo, error)
}

// Service applies the strategy rules on top of the store.
type Service struct {
	store *store.Store
	insp  Inspector
	log   *slog.Logger
}

// NewService returns a Service on st that loads code with insp.
func NewService(st *store.Store, insp Inspector, log *slog.Logger) *Service {
	if log == nil {
		log = slog.Default()
	}
	return &Service{store: st, insp: insp, log: log}
}

// NotFound is the error for an unknown (or deleted) strategy id.
func NotFound(id string) error { return apperr.NotFound("Strategy not found: %s", id) }

// CheckUpload validates an upload's fields (not its code): name and code are required,
// the name is at most MaxNameLength characters, the description at most
// MaxDescriptionLength and the code at most MaxCodeBytes.
func CheckUpload(up Upload) error {
	if strings.TrimSpace(up.Name) == "" {
		return apperr.Unprocessable("Field 'name' is required and must not be empty")
	}
	if utf8.RuneCountInString(up.Name) > MaxNameLength {
		return apperr.Unprocessable("Field 'name' is too long: at most %d characters", MaxNameLength)
	}
	if utf8.RuneCountInString(up.Description) > MaxDescriptionLength {
		return apperr.Unprocessable("Field 'description' is too long: at most %d characters", MaxDescriptionLength)
	}
	if len(up.Code) > MaxCodeBytes {
		return &apperr.Error{Kind: apperr.KindTooLarge, Detail: fmt.Sprintf("Strategy code too large: %d bytes, the limit is %d bytes (1 MiB)", len(up.Code), MaxCodeBytes)}
	}
	if strings.TrimSpace(up.Code) == "" {
		return apperr.Unprocessable("Field 'code' is required and must not be empty")
	}
	return nil
}

// Load inspects code and returns what the loader found; errors are *CodeError, or
// wrap ctx.Err() when ctx ends first.
func (s *Service) Load(ctx context.Context, code string) (*jsrt.StrategyInfo, error) {
	return load(ctx, s.insp, code)
}

func load(ctx context.Context, insp Inspector, code string) (*jsrt.StrategyInfo, error) {
	if len(code) > MaxCodeBytes {
		return nil, &apperr.Error{Kind: apperr.KindTooLarge, Detail: fmt.Sprintf("Strategy code too large: %d bytes, the limit is %d bytes (1 MiB)", len(code), MaxCodeBytes)}
	}
	info, err := insp.Inspect(ctx, code)
	if err != nil {
		var le *jsrt.LoadError
		if errors.As(err, &le) {
			return nil, &CodeError{Detail: "Invalid strategy code: " + apperr.Quote(le.Message), Line: le.Line, Column: le.Column}
		}
		return nil, err
	}
	for i := range info.Params {
		info.Params[i].Default = finite(info.Params[i].Default)
	}
	return info, nil
}

// finite replaces NaN and ±Infinity, which JSON cannot carry, with their JavaScript
// string form (any other value becomes its string form).
func finite(v any) any {
	switch x := v.(type) {
	case float64:
		switch {
		case math.IsNaN(x):
			return "NaN"
		case math.IsInf(x, 1):
			return "Infinity"
		case math.IsInf(x, -1):
			return "-Infinity"
		}
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = finite(e)
		}
		return out
	}
	return v
}

// ContentHash is the hex sha256 of code.
func ContentHash(code string) string {
	h := sha256.Sum256([]byte(code))
	return hex.EncodeToString(h[:])
}

// Create checks and loads up and stores a new strategy with version 1, origin "api".
func (s *Service) Create(ctx context.Context, up Upload) (*Strategy, error) {
	if err := CheckUpload(up); err != nil {
		return nil, err
	}
	info, err := s.Load(ctx, up.Code)
	if err != nil {
		return nil, err
	}
	var out *Strategy
	err = s.store.WithTx(ctx, func(tx pgx.Tx) error {
		st, err := s.insert(ctx, tx, strings.TrimSpace(up.Name), describe(up.Description, info), up.Code, OriginAPI, info, up.By)
		out = st
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// insert stores a new strategy row and its first version in tx.
func (s *Service) insert(ctx context.Context, tx pgx.Tx, name, description, code, origin string, info *jsrt.StrategyInfo, by *string) (*Strategy, error) {
	id, err := s.store.NextStrategyID(ctx, tx)
	if err != nil {
		return nil, fmt.Errorf("next strategy id: %w", err)
	}
	if _, err := s.store.InsertStrategy(ctx, tx, store.InsertStrategyParams{ID: id, Name: name, Description: description, Origin: origin, CreatedBy: by}); err != nil {
		return nil, fmt.Errorf("insert strategy %s: %w", id, err)
	}
	if err := s.appendVersion(ctx, tx, id, 1, name, description, code, origin, info, by); err != nil {
		return nil, err
	}
	return s.get(ctx, tx, id)
}

func (s *Service) appendVersion(ctx context.Context, tx pgx.Tx, id string, version int, name, description, code, origin string, info *jsrt.StrategyInfo, by *string) error {
	params, err := json.Marshal(info.Params)
	if err != nil {
		return fmt.Errorf("encode params: %w", err)
	}
	_, err = s.store.InsertStrategyVersion(ctx, tx, store.InsertStrategyVersionParams{
		StrategyID:  id,
		Version:     int32(version),
		Name:        name,
		Description: description,
		Code:        code,
		ClassName:   info.ClassName,
		Params:      params,
		Origin:      origin,
		ContentHash: ContentHash(code),
		CreatedBy:   by,
	})
	if err != nil {
		return fmt.Errorf("insert version %d of %s: %w", version, id, err)
	}
	return nil
}

// Replace checks and loads up and makes it the strategy's new current version. The id,
// created_at and origin stay; saved parameter values that no longer fit are dropped.
// Only its owner or an admin may replace it (auth.MayModify, decided on the locked row; the
// HTTP layer asks MayChange before it reads the body).
func (s *Service) Replace(ctx context.Context, caller auth.Identity, id string, up Upload) (*Strategy, error) {
	if err := CheckUpload(up); err != nil {
		return nil, err
	}
	// Refuse unknown ids before spending time on the code.
	if _, err := s.Get(ctx, id); err != nil {
		return nil, err
	}
	info, err := s.Load(ctx, up.Code)
	if err != nil {
		return nil, err
	}
	var out *Strategy
	err = s.store.WithTx(ctx, func(tx pgx.Tx) error {
		st, err := s.replace(ctx, tx, &caller, id, strings.TrimSpace(up.Name), describe(up.Description, info), up.Code, OriginAPI, info, up.By)
		out = st
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// replace appends a version to the live strategy id in tx and moves its head to it, for
// caller (nil: the service itself, for a strategy file).
func (s *Service) replace(ctx context.Context, tx pgx.Tx, caller *auth.Identity, id, name, description, code, origin string, info *jsrt.StrategyInfo, by *string) (*Strategy, error) {
	head, err := s.lockForChange(ctx, tx, caller, id)
	if err != nil {
		return nil, err
	}
	// Saving what is already there (the page's Save on unchanged code, a client retrying)
	// makes no version: a version is a change.
	if cur, err := s.get(ctx, tx, id); err != nil {
		return nil, err
	} else if cur.ContentHash == ContentHash(code) && cur.Name == name && cur.Description == description {
		return cur, nil
	}
	next := int(head.CurrentVersion) + 1
	if err := s.appendVersion(ctx, tx, id, next, name, description, code, origin, info, by); err != nil {
		return nil, err
	}
	values, err := decodeValues(head.ParamValues)
	if err != nil {
		return nil, fmt.Errorf("strategy %s: %w", id, err)
	}
	kept, err := json.Marshal(keepFitting(info, values))
	if err != nil {
		return nil, err
	}
	if _, err := s.store.UpdateStrategyHead(ctx, tx, store.UpdateStrategyHeadParams{
		ID: id, Name: name, Description: description, CurrentVersion: int32(next), ParamValues: kept,
	}); err != nil {
		return nil, fmt.Errorf("update strategy %s: %w", id, err)
	}
	return s.get(ctx, tx, id)
}

// MayChange tells a caller who may not change strategy id early, before a request body is
// read (a 403 before a 422); the change itself decides again on the locked row. An unknown
// id passes: the change answers its 404.
func (s *Service) MayChange(ctx context.Context, caller auth.Identity, id string) error {
	cur, err := s.Get(ctx, id)
	if e, ok := apperr.As(err); ok && e.Kind == apperr.KindNotFound {
		return nil
	}
	if err != nil {
		return err
	}
	return auth.MayModify(caller, "strategy "+id, auth.OwnerOf(cur.CreatedBy))
}

// lockForChange locks the live strategy id in tx for a change by caller (nil: the service
// itself): a 404 for an unknown or deleted id, a 403 when caller may not change it
// (auth.MayModify, decided on the locked row).
func (s *Service) lockForChange(ctx context.Context, tx pgx.Tx, caller *auth.Identity, id string) (store.Strategy, error) {
	head, err := s.store.LockStrategy(ctx, tx, id)
	if errors.Is(err, store.ErrNotFound) {
		return head, NotFound(id)
	}
	if err != nil {
		return head, fmt.Errorf("lock strategy %s: %w", id, err)
	}
	if caller != nil {
		return head, auth.MayModify(*caller, "strategy "+id, auth.OwnerOf(head.CreatedBy))
	}
	return head, nil
}

// keepFitting returns the saved values that still name a parameter and fit its type.
func keepFitting(info *jsrt.StrategyInfo, values map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range values {
		if c, err := jsrt.ValidateParams(info, map[string]any{k: v}); err == nil {
			out[k] = c[k]
		}
	}
	return out
}

// describe is the upload's description, else the first line of the class's doc comment.
func describe(given string, info *jsrt.StrategyInfo) string {
	if d := strings.TrimSpace(given); d != "" {
		return given
	}
	return info.Description
}

// Get returns the live strategy id; unknown and deleted ids give a 404 apperr.
func (s *Service) Get(ctx context.Context, id string) (*Strategy, error) {
	return s.get(ctx, s.store.Pool, id)
}

func (s *Service) get(ctx context.Context, db store.DBTX, id string) (*Strategy, error) {
	row, err := s.store.GetLiveStrategy(ctx, db, id)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return nil, NotFound(id)
		}
		return nil, fmt.Errorf("get strategy %s: %w", id, err)
	}
	return fromRow(row.Strategy, row.Code, row.ClassName, row.ContentHash, row.Params)
}

// List returns the live strategies, oldest first.
func (s *Service) List(ctx context.Context) ([]*Strategy, error) {
	rows, err := s.store.ListLiveStrategies(ctx, s.store.Pool)
	if err != nil {
		return nil, fmt.Errorf("list strategies: %w", err)
	}
	out := make([]*Strategy, 0, len(rows))
	for _, r := range rows {
		st, err := fromRow(r.Strategy, r.Code, r.ClassName, r.ContentHash, r.Params)
		if err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	return out, nil
}

// Delete hides the strategy from the strategy routes; its versions stay for the tasks
// and results that refer to them. Unknown and already deleted ids give a 404 apperr; only
// its owner or an admin may delete it.
func (s *Service) Delete(ctx context.Context, caller auth.Identity, id string) error {
	return s.store.WithTx(ctx, func(tx pgx.Tx) error {
		if _, err := s.lockForChange(ctx, tx, &caller, id); err != nil {
			return err
		}
		if _, err := s.store.SoftDeleteStrategy(ctx, tx, id); err != nil {
			return fmt.Errorf("delete strategy %s: %w", id, err)
		}
		return nil
	})
}

// Versions lists the versions of strategy id, newest first, without their code: all of
// a live strategy's, and of a deleted one those a task or study still refers to, so the
// code behind a result stays readable. None is a 404 apperr, as for the strategy.
func (s *Service) Versions(ctx context.Context, id string) ([]*Version, error) {
	rows, err := s.store.ListStrategyVersions(ctx, s.store.Pool, id)
	if err != nil {
		return nil, fmt.Errorf("list versions of %s: %w", id, err)
	}
	if len(rows) == 0 {
		return nil, NotFound(id)
	}
	out := make([]*Version, 0, len(rows))
	for _, r := range rows {
		params, err := decodeParams(r.Params)
		if err != nil {
			return nil, fmt.Errorf("version %d of %s: %w", r.Version, id, err)
		}
		out = append(out, &Version{
			StrategyID: r.StrategyID, Version: int(r.Version), Name: r.Name, Description: r.Description,
			ClassName: r.ClassName, Params: params, Origin: r.Origin, ContentHash: r.ContentHash, CreatedAt: r.CreatedAt, CreatedBy: r.CreatedBy,
		})
	}
	return out, nil
}

// Version returns version n of strategy id with its code, when Versions lists it; else a
// 404 apperr (for the strategy when it has no readable version, else for the version).
func (s *Service) Version(ctx context.Context, id string, n int) (*Version, error) {
	if n >= 1 && n <= 1<<31-1 {
		r, err := s.store.GetReadableStrategyVersion(ctx, s.store.Pool, store.GetReadableStrategyVersionParams{StrategyID: id, Version: int32(n)})
		if err == nil {
			return versionOf(r)
		}
		if !errors.Is(err, store.ErrNotFound) {
			return nil, fmt.Errorf("get version %d of %s: %w", n, id, err)
		}
	}
	if _, err := s.Versions(ctx, id); err != nil {
		return nil, err // the strategy itself is not there to read
	}
	return nil, apperr.NotFound("Strategy version not found: %s version %d", id, n)
}

// VersionOf returns version n of strategy id even when the strategy is deleted (tasks
// and results refer to versions). A missing version gives a 404 apperr.
func (s *Service) VersionOf(ctx context.Context, id string, n int) (*Version, error) {
	if n < 1 || n > 1<<31-1 {
		return nil, apperr.NotFound("Strategy version not found: %s version %d", id, n)
	}
	r, err := s.store.GetStrategyVersion(ctx, s.store.Pool, store.GetStrategyVersionParams{StrategyID: id, Version: int32(n)})
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return nil, apperr.NotFound("Strategy version not found: %s version %d", id, n)
		}
		return nil, fmt.Errorf("get version %d of %s: %w", n, id, err)
	}
	return versionOf(r)
}

func versionOf(r store.StrategyVersion) (*Version, error) {
	params, err := decodeParams(r.Params)
	if err != nil {
		return nil, fmt.Errorf("version %d of %s: %w", r.Version, r.StrategyID, err)
	}
	return &Version{
		StrategyID: r.StrategyID, Version: int(r.Version), Name: r.Name, Description: r.Description, Code: r.Code,
		ClassName: r.ClassName, Params: params, Origin: r.Origin, ContentHash: r.ContentHash, CreatedAt: r.CreatedAt, CreatedBy: r.CreatedBy,
	}, nil
}

// SaveConfig validates values with the API's parameter rules (400 "Unknown parameter:
// <name>" or "Parameter '<name>': expected <type>, got <type>") and stores the coerced
// values as the strategy's saved configuration, replacing the previous one. It takes
// effect at once: the next read of the parameters and the next backtest without
// overrides see it.
func (s *Service) SaveConfig(ctx context.Context, caller auth.Identity, id string, values map[string]any) (*Strategy, error) {
	var out *Strategy
	err := s.store.WithTx(ctx, func(tx pgx.Tx) error {
		if _, err := s.lockForChange(ctx, tx, &caller, id); err != nil {
			return err
		}
		st, err := s.get(ctx, tx, id)
		if err != nil {
			return err
		}
		coerced, err := jsrt.ValidateParams(st.Info(), values)
		if err != nil {
			return paramError(err)
		}
		raw, err := json.Marshal(coerced)
		if err != nil {
			return fmt.Errorf("encode configuration: %w", err)
		}
		if _, err := s.store.SetStrategyParamValues(ctx, tx, store.SetStrategyParamValuesParams{ID: id, ParamValues: raw}); err != nil {
			return fmt.Errorf("save configuration of %s: %w", id, err)
		}
		out, err = s.get(ctx, tx, id)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func fromRow(h store.Strategy, code, className, hash string, rawParams []byte) (*Strategy, error) {
	params, err := decodeParams(rawParams)
	if err != nil {
		return nil, fmt.Errorf("strategy %s: %w", h.ID, err)
	}
	values, err := decodeValues(h.ParamValues)
	if err != nil {
		return nil, fmt.Errorf("strategy %s: %w", h.ID, err)
	}
	return &Strategy{
		ID: h.ID, Name: h.Name, Description: h.Description, Code: code, ClassName: className,
		Origin: h.Origin, ContentHash: hash, Version: int(h.CurrentVersion), Params: params, Values: values,
		CreatedAt: h.CreatedAt, UpdatedAt: h.UpdatedAt, CreatedBy: h.CreatedBy,
	}, nil
}

// decodeParams reads a stored parameter list, keeping numbers exact (json.Number).
func decodeParams(raw []byte) ([]jsrt.Param, error) {
	out := []jsrt.Param{}
	if len(raw) == 0 {
		return out, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&out); err != nil {
		return nil, fmt.Errorf("decode params: %w", err)
	}
	return out, nil
}

func decodeValues(raw []byte) (map[string]any, error) {
	out := map[string]any{}
	if len(raw) == 0 {
		return out, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&out); err != nil {
		return nil, fmt.Errorf("decode parameter values: %w", err)
	}
	if out == nil {
		out = map[string]any{}
	}
	return out, nil
}

// Field is one entry of an Object.
type Field struct {
	Name  string
	Value any
}

// Object is a JSON object whose keys keep their order when marshalled.
type Object []Field

// MarshalJSON writes the fields in order.
func (o Object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := json.Marshal(f.Name)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		v, err := marshalValue(f.Value)
		if err != nil {
			return nil, fmt.Errorf("param %s: %w", f.Name, err)
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func marshalValue(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

func defaults(params []jsrt.Param) Object {
	out := make(Object, 0, len(params))
	for _, p := range params {
		out = append(out, Field{Name: p.Name, Value: p.Default})
	}
	return out
}

// ParamDefaults is the API's params object of a parameter list: name → default, in
// declaration order.
func ParamDefaults(params []jsrt.Param) Object { return defaults(params) }

package strategy

import (
	"context"
	"io/fs"
	"log/slog"
	"path"
	"sort"
	"strings"
	"sync"

	"github.com/backtestd/backtestd/examples"
	"github.com/backtestd/backtestd/internal/jsrt"
)

// Template is an example strategy offered as a starting point.
type Template struct {
	Name        string       // the file's base name, e.g. "sma_cross"
	File        string       // e.g. "sma_cross.js"
	ClassName   string       // e.g. "SmaCross"
	Description string       // first line of the class's doc comment
	Params      []jsrt.Param // declared parameters
	Code        string
}

var (
	templatesOnce sync.Once
	templates     []Template
)

// Templates returns the example strategies shipped with the service, sorted by name.
// They are loaded once (each within the loader's own time limit); an example that does
// not load is logged and left out.
func Templates(log *slog.Logger) []Template {
	templatesOnce.Do(func() { templates = loadTemplates(context.Background(), examples.FS, log) })
	return templates
}

// shipped inspects the service's own example strategies in this process: they are part
// of the binary, not user code.
type shipped struct{}

func (shipped) Inspect(ctx context.Context, code string) (*jsrt.StrategyInfo, error) {
	return jsrt.Inspect(ctx, code)
}

func loadTemplates(ctx context.Context, fsys fs.FS, log *slog.Logger) []Template {
	if log == nil {
		log = slog.Default()
	}
	names, err := fs.Glob(fsys, "*.js")
	if err != nil {
		log.Error("list strategy templates", "err", err)
		return []Template{}
	}
	sort.Strings(names)
	out := make([]Template, 0, len(names))
	for _, n := range names {
		b, err := fs.ReadFile(fsys, n)
		if err != nil {
			log.Error("read strategy template", "file", n, "err", err)
			continue
		}
		info, err := load(ctx, shipped{}, string(b))
		if err != nil {
			log.Error("strategy template does not load", "file", n, "err", err)
			continue
		}
		out = append(out, Template{
			Name:        strings.TrimSuffix(n, path.Ext(n)),
			File:        n,
			ClassName:   info.ClassName,
			Description: info.Description,
			Params:      info.Params,
			Code:        string(b),
		})
	}
	return out
}

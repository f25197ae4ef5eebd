package marketdata

import (
	"fmt"
	"strings"
	"sync"
	"time"
	_ "time/tzdata" // zones resolve on a machine without a zoneinfo database

	"github.com/backtestd/backtestd/internal/apperr"
)

// DefaultZone is the time zone of data imported without one.
const DefaultZone = "UTC"

// LoadZone resolves the IANA time zone name a request gives (America/New_York, UTC, ...):
// an apperr 400 for a name that is not one.
func LoadZone(name string) (*time.Location, error) {
	name = strings.TrimSpace(name)
	// LoadLocation also takes "" and "Local" (the machine's zone), which would make a
	// symbol's times depend on the host.
	if name == "" || name == "Local" || len(name) > 64 {
		return nil, apperr.Invalid("Unknown time zone '%s' (use an IANA name such as America/New_York or UTC)", name)
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, apperr.Invalid("Unknown time zone '%s' (use an IANA name such as America/New_York or UTC)", name)
	}
	return loc, nil
}

// Zones keeps the time zones it has loaded (loading one parses its rules). The zero value
// is ready to use and safe for concurrent use.
type Zones struct{ m sync.Map }

func (z *Zones) load(name string) (*time.Location, error) {
	if v, ok := z.m.Load(name); ok {
		return v.(*time.Location), nil
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, fmt.Errorf("load time zone %q: %w", name, err)
	}
	z.m.Store(name, loc)
	return loc, nil
}

// calendar is the zone whose days bars of tf are counted in: loc for intraday bars, which
// are instants, and UTC for dates.
func calendar(tf string, loc *time.Location) *time.Location {
	if Intraday(tf) {
		return loc
	}
	return time.UTC
}

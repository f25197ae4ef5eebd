// Package examples holds the example strategies, embedded so the service can offer them
// as templates (GET /api/strategies/templates).
package examples

import "embed"

// FS holds every example strategy (*.js) at its root.
//
//go:embed *.js
var FS embed.FS

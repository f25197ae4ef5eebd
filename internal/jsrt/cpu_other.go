//go:build !unix

package jsrt

import "time"

var processStart = time.Now()

// processCPU stands in for the CPU time where it cannot be read: the time since the
// process started, so load limits are wall-time limits there.
func processCPU() time.Duration { return time.Since(processStart) }

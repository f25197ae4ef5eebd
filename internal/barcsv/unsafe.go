package barcsv

import "unsafe"

// unsafeString views b as a string without copying; the result must not
// outlive b's next reuse.
func unsafeString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

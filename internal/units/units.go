// Package units formats quantities for people: bytes, durations, counts,
// money and fractions, the same way on every surface (the workbench, the
// text report, failure messages).
package units

import "fmt"

// Bytes formats n in binary units with two decimals: "2.00 GiB",
// "212.40 MiB", "3.50 KiB", "512 bytes".
func Bytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.2f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.2f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

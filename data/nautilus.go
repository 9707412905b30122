package data

import (
	"math/big"
	"math/bits"
	"strconv"
	"strings"
)

// NautilusTrader's ParquetDataCatalog keeps bars in
// CATALOG/data/bar/BAR_TYPE/START_END.parquet, BAR_TYPE without its "/"
// (AUDUSD.SIM-1-MINUTE-BID-EXTERNAL). A bar file has the columns open, high,
// low, close and volume as fixed-point integers stored as fixed-size
// binary (little-endian two's complement: 16 bytes with the value × 10^16
// in nautilus_trader's default high-precision build, 8 bytes × 10^9 in its
// standard build; volume unsigned), ts_event and ts_init as unsigned
// nanoseconds since the epoch, and, in the file's key-value metadata,
// bar_type, instrument_id, price_precision and size_precision. stratbench
// reads ts_event as the bar's time and instrument_id as its symbol, and
// converts each fixed-point value to the float64 nearest to it: the number
// the price written with its precision's decimals reads as.

// ntBars is what a Nautilus bar file's metadata says.
type ntBars struct {
	barType, instrument string
	pricePrecision      int // decimals of the prices, -1 when not said
	sizePrecision       int // decimals of the volume, -1 when not said
}

// nautilusKey reports whether a key of a Parquet file's key-value
// metadata is one nautilusMeta reads (the footer keeps only those).
func nautilusKey(key string) bool {
	switch key {
	case "bar_type", "instrument_id", "price_precision", "size_precision":
		return true
	}
	return false
}

// nautilusMeta returns the bar metadata of a Parquet file's key-value
// metadata, nil when it is no Nautilus bar file's.
func nautilusMeta(kv []keyValue) *ntBars {
	nt := &ntBars{pricePrecision: -1, sizePrecision: -1}
	prec := func(v string) int {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < 0 || n > 16 {
			return -1
		}
		return n
	}
	for _, e := range kv {
		switch e.Key {
		case "bar_type":
			nt.barType = e.Value
		case "instrument_id":
			nt.instrument = e.Value
		case "price_precision":
			nt.pricePrecision = prec(e.Value)
		case "size_precision":
			nt.sizePrecision = prec(e.Value)
		}
	}
	if nt.barType == "" || nt.instrument == "" {
		return nil
	}
	return nt
}

// ntScale is the scale of a Nautilus fixed-point value of width bytes: the
// value is the integer × 10^-scale. It returns -1 for a width Nautilus does
// not write.
func ntScale(width int) int {
	switch width {
	case 16:
		return 16 // high precision: i128/u128, FIXED_PRECISION 16
	case 8:
		return 9 // standard precision: i64/u64, FIXED_PRECISION 9
	}
	return -1
}

// ntMax are the largest values Nautilus represents, by width: PRICE_MAX
// and QUANTITY_MAX of its builds. Beyond them lie its sentinels (PRICE_UNDEF
// is the largest integer of the width), which are no prices.
func ntMax(width int, volume bool) float64 {
	switch {
	case width == 16 && volume:
		return 34028236692093
	case width == 16:
		return 17014118346046
	case volume:
		return 18446744073
	}
	return 9223372036
}

// fixedLE converts a little-endian two's complement (or, unsigned, plain)
// integer of 8 or 16 bytes, scaled by 10^-scale, to the nearest float64.
// precision, when it is 0 to scale, is the number of decimals the values
// have: an integer that is a multiple of 10^(scale-precision) is divided
// by it first, which leaves an integer a float64 holds exactly in the
// common case, and one correctly rounded division.
func fixedLE(b []byte, scale, precision int, unsigned bool) float64 {
	var lo, hi uint64
	for i := 0; i < 8 && i < len(b); i++ {
		lo |= uint64(b[i]) << (8 * i)
	}
	for i := 8; i < 16 && i < len(b); i++ {
		hi |= uint64(b[i]) << (8 * (i - 8))
	}
	neg := false
	if len(b) <= 8 {
		if !unsigned && lo>>63 != 0 {
			neg, lo = true, -lo
		}
	} else if !unsigned && hi>>63 != 0 {
		// Negate the 128-bit value.
		neg = true
		lo, hi = ^lo, ^hi
		var c uint64
		lo, c = bits.Add64(lo, 1, 0)
		hi += c
	}
	if precision >= 0 && precision < scale {
		d := uint64(1)
		for range scale - precision {
			d *= 10
		}
		qh, r := hi/d, hi%d
		ql, r := bits.Div64(r, lo, d)
		if r == 0 {
			lo, hi, scale = ql, qh, precision
		}
	}
	var f float64
	if hi == 0 && lo < 1<<53 && scale < len(exactPow10) {
		// Both operands exact: one correctly rounded division.
		f = float64(lo) / exactPow10[scale]
	} else {
		n := new(big.Int).SetUint64(hi)
		n.Lsh(n, 64).Or(n, new(big.Int).SetUint64(lo))
		f, _ = strconv.ParseFloat(n.String()+"e-"+strconv.Itoa(scale), 64)
	}
	if neg {
		return -f
	}
	return f
}

package data

import (
	"math"
	"math/big"
	"strconv"
)

// take converts k values of the cursor into rows [n, n+k) of b.
func (c *colCursor) take(b *block, n, k int) error {
	at := c.at
	var err error
	switch c.col {
	case colTimestamp:
		err = c.takeTime(b.Time[n:n+k], at)
	case colSymbol:
		err = c.takeSymbol(b.Symbol[n:n+k], at)
	case colOpen:
		err = c.takeNumber(b.Open[n:n+k], at)
	case colHigh:
		err = c.takeNumber(b.High[n:n+k], at)
	case colLow:
		err = c.takeNumber(b.Low[n:n+k], at)
	case colClose:
		err = c.takeNumber(b.Close[n:n+k], at)
	case colVolume:
		err = c.takeNumber(b.Volume[n:n+k], at)
	}
	c.at += k
	c.row += int64(k)
	return err
}

type integer interface {
	~int32 | ~int64 | ~uint32 | ~uint64
}

type number interface {
	integer | ~float32 | ~float64
}

// gather sets dst[i] to value at+i of a page: vals[at+i], or
// vals[idx[at+i]] through a dictionary.
func gather[T, U number](dst []U, vals []T, idx []int32, at int) {
	if idx == nil {
		for i, x := range vals[at : at+len(dst)] {
			dst[i] = U(x)
		}
		return
	}
	for i, j := range idx[at : at+len(dst)] {
		dst[i] = U(vals[j])
	}
}

// valueIndex is the index into the page's (or dictionary's) values of
// value at+i.
func (v *pageValues) valueIndex(at, i int) int {
	if v.idx != nil {
		return int(v.idx[at+i])
	}
	return at + i
}

func (c *colCursor) takeTime(dst []int64, at int) error {
	v := &c.v
	switch {
	case v.i64 != nil:
		gather(dst, v.i64, v.idx, at)
	case v.i32 != nil:
		gather(dst, v.i32, v.idx, at)
	case v.i96 != nil:
		for i := range dst {
			t, ok := int96Time(v.i96[v.valueIndex(at, i)])
			if !ok {
				return c.fail(c.row+int64(i), errTimestampRange.Error(), nil)
			}
			dst[i] = t
		}
		return nil
	}
	conv := c.spec.conv
	if conv == convTimeNanos {
		if c.spec.unsigned {
			for i, x := range dst {
				if x < 0 { // beyond int64's nanoseconds (year 2262)
					return c.fail(c.row+int64(i), errTimestampRange.Error()+": "+strconv.FormatUint(uint64(x), 10), nil)
				}
			}
		}
		return nil
	}
	for i, x := range dst {
		t, err := convertTime(conv, x)
		if err != nil {
			return c.fail(c.row+int64(i), err.Error()+": "+strconv.FormatInt(x, 10), nil)
		}
		dst[i] = t
	}
	return nil
}

// int96Time converts an INT96 timestamp: nanoseconds of the day, then the
// Julian day number.
func int96Time(x int96) (int64, bool) {
	nanos := int64(uint64(x[0]) | uint64(x[1])<<32)
	day := int64(int32(x[2])) - 2_440_588 // the Julian day of 1970-01-01
	const dayNanos = 86_400_000_000_000
	if nanos < 0 || nanos >= dayNanos || day > math.MaxInt64/dayNanos-1 || day < math.MinInt64/dayNanos+1 {
		return 0, false
	}
	return day*dayNanos + nanos, true
}

func (c *colCursor) takeSymbol(dst []int32, at int) error {
	v := &c.v
	value := func(j int) []byte { return v.bytes[v.offs[j]:v.offs[j+1]] }
	if v.idx == nil {
		for i := range dst {
			s, msg := c.syms.intern(value(at + i))
			if msg != "" {
				return c.fail(c.row+int64(i), msg, nil)
			}
			dst[i] = s
		}
		return nil
	}
	if c.dictSym == nil {
		c.dictSym = make([]int32, v.count)
		for i := range c.dictSym {
			c.dictSym[i] = -1
		}
	}
	for i := range dst {
		j := v.idx[at+i]
		s := c.dictSym[j]
		if s < 0 {
			var msg string
			if s, msg = c.syms.intern(value(int(j))); msg != "" {
				return c.fail(c.row+int64(i), msg, nil)
			}
			c.dictSym[j] = s
		}
		dst[i] = s
	}
	return nil
}

// takeNumber converts prices or volumes; they are checked later, with the
// rest of their bar.
func (c *colCursor) takeNumber(dst []float64, at int) error {
	v := &c.v
	if c.spec.conv == convFixedLE {
		width, volume := v.size, c.col == colVolume
		limit := ntMax(width, volume)
		for i := range dst {
			j := v.valueIndex(at, i)
			f := fixedLE(v.bytes[j*width:(j+1)*width], c.spec.scale, c.spec.precision, c.spec.unsigned)
			if f > limit || f < -limit {
				what := "price"
				if volume {
					what = "quantity"
				}
				return c.fail(c.row+int64(i), "beyond the largest Nautilus "+what+" ("+fmtFloat(limit)+"): an undefined value", nil)
			}
			dst[i] = f
		}
		return nil
	}
	if c.spec.conv == convDecimal {
		scale := c.spec.scale
		for i := range dst {
			j := v.valueIndex(at, i)
			switch {
			case v.i32 != nil:
				dst[i] = decimalValue(int64(v.i32[j]), scale)
			case v.i64 != nil:
				dst[i] = decimalValue(v.i64[j], scale)
			case v.offs != nil:
				dst[i] = decimalBytes(v.bytes[v.offs[j]:v.offs[j+1]], scale)
			default:
				dst[i] = decimalBytes(v.bytes[j*v.size:(j+1)*v.size], scale)
			}
		}
		return nil
	}
	switch {
	case v.f64 != nil:
		if v.idx == nil {
			copy(dst, v.f64[at:])
		} else {
			gather(dst, v.f64, v.idx, at)
		}
	case v.f32 != nil:
		gather(dst, v.f32, v.idx, at)
	case v.i64 != nil && c.spec.unsigned:
		for i := range dst {
			dst[i] = float64(uint64(v.i64[v.valueIndex(at, i)]))
		}
	case v.i64 != nil:
		gather(dst, v.i64, v.idx, at)
	case v.i32 != nil && c.spec.unsigned:
		for i := range dst {
			dst[i] = float64(uint32(v.i32[v.valueIndex(at, i)]))
		}
	case v.i32 != nil:
		gather(dst, v.i32, v.idx, at)
	}
	return nil
}

// exactPow10 holds the powers of ten that float64 represents exactly.
var exactPow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
	1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// decimalValue is unscaled × 10^-scale, correctly rounded: the float64 the
// same decimal written as text reads as.
func decimalValue(unscaled int64, scale int) float64 {
	if scale == 0 {
		return float64(unscaled) // a conversion rounds correctly
	}
	if unscaled > -1<<53 && unscaled < 1<<53 && scale < len(exactPow10) {
		// Both operands exact: one correctly rounded division.
		return float64(unscaled) / exactPow10[scale]
	}
	f, _ := strconv.ParseFloat(strconv.FormatInt(unscaled, 10)+"e-"+strconv.Itoa(scale), 64)
	return f
}

// decimalBytes converts a big-endian two's complement unscaled decimal.
func decimalBytes(b []byte, scale int) float64 {
	if len(b) == 0 {
		return 0
	}
	if len(b) <= 8 {
		var u uint64
		for _, x := range b {
			u = u<<8 | uint64(x)
		}
		if shift := 64 - 8*len(b); shift > 0 {
			u = uint64(int64(u<<shift) >> shift) // sign-extend
		}
		return decimalValue(int64(u), scale)
	}
	n := new(big.Int).SetBytes(b)
	if b[0]&0x80 != 0 {
		n.Sub(n, new(big.Int).Lsh(big.NewInt(1), uint(8*len(b))))
	}
	f, _ := strconv.ParseFloat(n.String()+"e-"+strconv.Itoa(scale), 64)
	return f
}

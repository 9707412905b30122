package data

import (
	"crypto/sha256"
	"encoding/binary"
	"math"
	"sort"
	"time"
)

// SampleSource is the source name of the bundled sample data set.
const SampleSource = "bundled:synthetic"

// Shape of the bundled sample.
const (
	sampleSeed    = 20260105
	sampleMinutes = 7 * 24 * 60
	sampleSteps   = 4   // random steps inside each minute, for high and low
	sampleRegime  = 240 // minutes between changes of each symbol's drift
)

var sampleStart = time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)

// Sample returns the bundled sample data set, restricted to the window:
// synthetic 1-minute bars of two made-up symbols, SYNA and SYNB, over the
// 7 days from 2026-01-05T00:00:00Z (20,160 bars), interleaved in time. It
// is generated from a fixed seed with a splitmix64 generator and only
// correctly rounded arithmetic, so it is the same on every platform and Go
// version. It is not market data. Its only error is a window without bars.
func Sample(w Window) (*Set, error) {
	symbols, bars := sampleBars()
	return fromBars(SampleSource, symbols, bars, columnsDigest(symbols, bars), w)
}

// fromBars returns a resident set of bars held in memory, in replay order
// (time, then symbol), symbols sorted by name; digest identifies them.
func fromBars(source string, symbols []string, b Bars, digest [sha256.Size]byte, w Window) (*Set, error) {
	s := &Set{openedAt: time.Now(), window: w, win: w.bounds(), symbols: symbols, resident: true, memDigest: &digest}
	s.info.Source = source
	s.symIndex = make(map[string]int32, len(symbols))
	for i, name := range symbols {
		s.symIndex[name] = int32(i)
	}
	lo := sort.Search(b.Len(), func(i int) bool { return b.Time[i] >= s.win.from })
	hi := sort.Search(b.Len(), func(i int) bool { return b.Time[i] > s.win.to })
	if hi <= lo {
		msg := "no bars in the window " + windowText(s.win)
		if b.Len() > 0 {
			msg += ": the data covers " + formatTime(b.Time[0]) + " to " + formatTime(b.Time[b.Len()-1])
		}
		return nil, &Error{File: source, Msg: msg}
	}
	s.bars = b.Slice(lo, hi)
	s.info.Events = int64(hi - lo)
	s.info.From, s.info.To = time.Unix(0, b.Time[lo]).UTC(), time.Unix(0, b.Time[hi-1]).UTC()
	s.info.Symbols = symbols
	s.info.Resident = true
	return s, nil
}

// sampleBars generates the sample's bars.
func sampleBars() ([]string, Bars) {
	rng := splitmix64(sampleSeed)
	type walk struct {
		price, drift float64
	}
	symbols := []string{"SYNA", "SYNB"}
	walks := []walk{{price: 100}, {price: 40}}
	vol := []float64{0.0004, 0.0006} // per step
	n := sampleMinutes * len(symbols)
	cols := makeBars(n)
	start := sampleStart.UnixNano()
	for m := 0; m < sampleMinutes; m++ {
		t := start + int64(m)*int64(time.Minute)
		for s := range symbols {
			w := &walks[s]
			if m%sampleRegime == 0 {
				// A new trend: up to ±0.003% per step.
				w.drift = float64(rng.uniform()-0.5) * 0.00006
			}
			open := cents(w.price)
			high, low := open, open
			for k := 0; k < sampleSteps; k++ {
				step := float64(vol[s] * rng.normal())
				w.price = float64(w.price * (1 + step + w.drift))
				p := cents(w.price)
				high, low = max(high, p), min(low, p)
			}
			cls := cents(w.price)
			volume := float64(100 + rng.next()%900)
			cols.Time = append(cols.Time, t)
			cols.Symbol = append(cols.Symbol, int32(s))
			cols.Open = append(cols.Open, open)
			cols.High = append(cols.High, high)
			cols.Low = append(cols.Low, low)
			cols.Close = append(cols.Close, cls)
			cols.Volume = append(cols.Volume, volume)
		}
	}
	return symbols, cols
}

// cents rounds a price to a whole cent, never below one cent.
func cents(p float64) float64 {
	return max(math.Round(p*100)/100, 0.01)
}

// columnsDigest hashes a symbol table and columns in a fixed binary layout.
func columnsDigest(symbols []string, c Bars) [sha256.Size]byte {
	h := sha256.New()
	buf := make([]byte, 0, 4096)
	for _, s := range symbols {
		buf = binary.LittleEndian.AppendUint32(buf, uint32(len(s)))
		buf = append(buf, s...)
	}
	for i := range c.Time {
		if len(buf) > 4000 {
			h.Write(buf)
			buf = buf[:0]
		}
		buf = binary.LittleEndian.AppendUint64(buf, uint64(c.Time[i]))
		buf = binary.LittleEndian.AppendUint32(buf, uint32(c.Symbol[i]))
		for _, f := range [...]float64{c.Open[i], c.High[i], c.Low[i], c.Close[i], c.Volume[i]} {
			buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(f))
		}
	}
	h.Write(buf)
	var d [sha256.Size]byte
	h.Sum(d[:0])
	return d
}

// splitmix64 is Steele, Lea and Flood's SplitMix64 generator: a fixed
// algorithm, so the sample cannot change with the Go version.
type splitmix64 uint64

func (s *splitmix64) next() uint64 {
	*s += 0x9e3779b97f4a7c15
	z := uint64(*s)
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// uniform returns a number in [0, 1) with 53 random bits.
func (s *splitmix64) uniform() float64 {
	return float64(s.next()>>11) * 0x1p-53
}

// normal returns an approximately standard normal number: the Irwin–Hall
// sum of four uniforms, centred and scaled to unit variance. Unlike
// Box–Muller it needs no transcendental functions, whose last bits may
// differ between platforms.
func (s *splitmix64) normal() float64 {
	sum := s.uniform() + s.uniform() + s.uniform() + s.uniform()
	return float64((sum - 2) * math.Sqrt(3))
}

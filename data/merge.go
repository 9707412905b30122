package data

import (
	"io"
	"math"
	"strconv"
)

// block is a stretch of one run's bars in replay order, symbols as indexes
// into the set's table, with where in its file each bar is.
type block struct {
	Bars
	// The bar's line (line formats) or 1-based row (Parquet); empty in the
	// decoded bars of a set of one file, where no bar can collide with
	// another file's and nothing needs them, unless the set sorts its rows
	// (Convert): a symbol's rows then meet in the merge, which names both.
	pos []int64
	// The bar's file, an index into the set's files, in blocks whose bars
	// come from several (spilled ones); empty when they are all the run's.
	src []int32
}

func makeBlock(n int) block { return block{Bars: makeBars(n), pos: make([]int64, 0, n)} }

func (b *block) reset() {
	b.Bars = b.Bars.truncate(0)
	b.pos = b.pos[:0]
	b.src = b.src[:0]
}

func (b *block) appendRow(t int64, sym int32, v *[numColumns]float64, pos int64) {
	b.appendBar(t, sym, v)
	b.pos = append(b.pos, pos)
}

// appendBar appends a bar without its position.
func (b *block) appendBar(t int64, sym int32, v *[numColumns]float64) {
	b.Time = append(b.Time, t)
	b.Symbol = append(b.Symbol, sym)
	b.Open = append(b.Open, v[colOpen])
	b.High = append(b.High, v[colHigh])
	b.Low = append(b.Low, v[colLow])
	b.Close = append(b.Close, v[colClose])
	b.Volume = append(b.Volume, v[colVolume])
}

// A run yields the bars of one stretch of a file in which time never goes
// back: the bars of a time-ordered file, or one symbol's block of a file
// laid out symbol after symbol. Its blocks are in replay order (time, then
// symbol): a block ends only where the time changes, and bars with the same
// time are sorted by symbol within it.
type run interface {
	// next returns the run's next block, valid until the following call,
	// or io.EOF after the last.
	next() (*block, error)
	// file is the run's file, for messages.
	file() *source
	close()
}

// sortTies sorts the bars of each timestamp of b by symbol. Files often
// list the symbols of one timestamp in an order of their own; the replay
// order is by symbol table index.
func sortTies(b *block) {
	n := b.Len()
	for i := 1; i < n; i++ {
		if b.Time[i] != b.Time[i-1] || b.Symbol[i] > b.Symbol[i-1] {
			continue
		}
		// Out of order at i: insertion-sort its timestamp's bars.
		g0 := i - 1
		for g0 > 0 && b.Time[g0-1] == b.Time[i] {
			g0--
		}
		g1 := i + 1
		for g1 < n && b.Time[g1] == b.Time[i] {
			g1++
		}
		for j := g0 + 1; j < g1; j++ {
			for k := j; k > g0 && b.Symbol[k] < b.Symbol[k-1]; k-- {
				b.swap(k, k-1)
			}
		}
		i = g1 - 1
	}
}

func (b *block) swap(i, j int) {
	b.Time[i], b.Time[j] = b.Time[j], b.Time[i]
	b.Symbol[i], b.Symbol[j] = b.Symbol[j], b.Symbol[i]
	b.Open[i], b.Open[j] = b.Open[j], b.Open[i]
	b.High[i], b.High[j] = b.High[j], b.High[i]
	b.Low[i], b.Low[j] = b.Low[j], b.Low[i]
	b.Close[i], b.Close[j] = b.Close[j], b.Close[i]
	b.Volume[i], b.Volume[j] = b.Volume[j], b.Volume[i]
	if len(b.pos) > 0 {
		b.pos[i], b.pos[j] = b.pos[j], b.pos[i]
	}
	if len(b.src) > 0 {
		b.src[i], b.src[j] = b.src[j], b.src[i]
	}
}

// memRun is a run held in memory: rows [lo, hi) of a decoded file.
type memRun struct {
	src  *source
	b    block
	done bool
}

func (r *memRun) next() (*block, error) {
	if r.done || r.b.Len() == 0 {
		return nil, io.EOF
	}
	r.done = true
	return &r.b, nil
}

func (r *memRun) file() *source { return r.src }
func (r *memRun) close()        {}

// cursor is a run and its position in its current block.
type cursor struct {
	r run
	b *block
	i int
}

// merger merges runs into one stream in replay order: by time, bars with
// the same time by symbol table index. It checks that each symbol's bars
// are in strictly increasing time across runs (within a run the files'
// scans checked it, but two files may hold the same symbol).
type merger struct {
	pending  []run // runs not started yet
	heap     []*cursor
	lastTime []int64   // by symbol: time of its latest bar, math.MinInt64 before it
	lastPos  []int64   // by symbol: where that bar is in its file
	lastSrc  []*source // by symbol: its file
}

// newMerger merges runs over a table of nsym symbols. The runs are read
// from the first fill on.
func newMerger(runs []run, nsym int) *merger {
	m := &merger{
		pending:  runs,
		lastTime: make([]int64, nsym),
		lastPos:  make([]int64, nsym),
		lastSrc:  make([]*source, nsym),
	}
	for i := range m.lastTime {
		m.lastTime[i] = math.MinInt64
	}
	return m
}

// start reads each run's first block.
func (m *merger) start() error {
	for i, r := range m.pending {
		c := &cursor{r: r}
		ok, err := c.advance()
		if err != nil {
			for _, r := range m.pending[i:] {
				r.close()
			}
			m.pending = nil
			return err
		}
		if !ok {
			r.close()
			continue
		}
		m.heap = append(m.heap, c)
		m.up(len(m.heap) - 1)
	}
	m.pending = nil
	return nil
}

// advance moves c to its run's next block when the current one is used up,
// and reports whether c has a bar.
func (c *cursor) advance() (bool, error) {
	for c.b == nil || c.i >= c.b.Len() {
		b, err := c.r.next()
		if err == io.EOF {
			c.b = nil
			return false, nil
		}
		if err != nil {
			return false, err
		}
		c.b, c.i = b, 0
	}
	return true, nil
}

func less(a, b *cursor) bool {
	ta, tb := a.b.Time[a.i], b.b.Time[b.i]
	return ta < tb || ta == tb && a.b.Symbol[a.i] < b.b.Symbol[b.i]
}

func (m *merger) up(i int) {
	h := m.heap
	for i > 0 {
		p := (i - 1) / 2
		if !less(h[i], h[p]) {
			return
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
}

func (m *merger) down(i int) {
	h := m.heap
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		c := l
		if r := l + 1; r < len(h) && less(h[r], h[l]) {
			c = r
		}
		if !less(h[c], h[i]) {
			return
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
}

// fill appends up to want bars to dst in replay order and returns it; it
// returns fewer only when the runs are exhausted, or with an error.
func (m *merger) fill(dst Bars, want int) (Bars, error) {
	err := m.take(want, func(c *cursor, end int) {
		dst = appendBars(dst, c.b.Bars, c.i, end)
	})
	return dst, err
}

// fillBlock is fill into a block: it appends up to want bars to dst in
// replay order, each with its row or line and its file.
func (m *merger) fillBlock(dst *block, want int) error {
	return m.take(want, func(c *cursor, end int) {
		b := c.b
		dst.Bars = appendBars(dst.Bars, b.Bars, c.i, end)
		if len(b.pos) > 0 {
			dst.pos = append(dst.pos, b.pos[c.i:end]...)
		} else {
			for range end - c.i {
				dst.pos = append(dst.pos, 0)
			}
		}
		if len(b.src) > 0 {
			dst.src = append(dst.src, b.src[c.i:end]...)
		} else {
			idx := c.r.file().idx
			for range end - c.i {
				dst.src = append(dst.src, idx)
			}
		}
	})
}

// take hands up to want bars, in replay order, to add: stretch after
// stretch of one run's block, bars [c.i, end) of c's, checked. It stops
// early only when the runs are exhausted, or with an error.
func (m *merger) take(want int, add func(c *cursor, end int)) error {
	if m.pending != nil {
		if err := m.start(); err != nil {
			return err
		}
	}
	for want > 0 && len(m.heap) > 0 {
		top := m.heap[0]
		b := top.b
		// Take the top run's bars up to the next run's first bar (or its
		// block's end): with a single run, or runs that hold different
		// stretches of time, whole blocks at once.
		end := min(b.Len(), top.i+want)
		if len(m.heap) > 1 {
			next := m.heap[1]
			if len(m.heap) > 2 && less(m.heap[2], next) {
				next = m.heap[2]
			}
			nt, ns := next.b.Time[next.i], next.b.Symbol[next.i]
			j := top.i + 1
			for j < end && (b.Time[j] < nt || b.Time[j] == nt && b.Symbol[j] < ns) {
				j++
			}
			end = j
		}
		if err := m.check(top, end); err != nil {
			return err
		}
		add(top, end)
		want -= end - top.i
		top.i = end
		ok, err := top.advance()
		if err != nil {
			return err
		}
		if !ok {
			top.r.close()
			last := len(m.heap) - 1
			m.heap[0] = m.heap[last]
			m.heap[last] = nil
			m.heap = m.heap[:last]
		}
		m.down(0)
	}
	return nil
}

// check checks that bars [c.i, end) of c's block come after their symbols'
// previous bars, and records them as the latest.
func (m *merger) check(c *cursor, end int) error {
	b := c.b
	src := c.r.file()
	for i := c.i; i < end; i++ {
		s, t := b.Symbol[i], b.Time[i]
		var pos int64
		if len(b.pos) > 0 {
			pos = b.pos[i]
		}
		if len(b.src) > 0 {
			src = src.set.srcs[b.src[i]]
		}
		if t <= m.lastTime[s] {
			return m.orderError(src, pos, s, t)
		}
		m.lastTime[s] = t
		m.lastPos[s] = pos
		m.lastSrc[s] = src
	}
	return nil
}

// orderError is the error of a bar of symbol s at time t, at pos in src,
// that does not come after the symbol's previous bar.
func (m *merger) orderError(src *source, pos int64, s int32, t int64) error {
	prev, prevSrc := m.lastTime[s], m.lastSrc[s]
	where := prevSrc.where(m.lastPos[s])
	if prevSrc != src {
		where = prevSrc.path + " " + where
	}
	return src.errorAt(pos, "timestamp", orderMsg(src.symbolName(s), t, prev, where))
}

// orderMsg is the message of a bar of symbol sym at time t that is not
// after the symbol's bar at prev, found at where.
func orderMsg(sym string, t, prev int64, where string) string {
	what := " is before "
	if t == prev {
		what = " duplicates "
	}
	return sym + " " + formatTime(t) + what + where + " (" + formatTime(prev) +
		"); each symbol's rows must be in strictly increasing time order"
}

func (m *merger) close() {
	for _, r := range m.pending {
		r.close()
	}
	m.pending = nil
	for _, c := range m.heap {
		c.r.close()
	}
	m.heap = nil
}

// itoa64 formats n in decimal.
func itoa64(n int64) string { return strconv.FormatInt(n, 10) }

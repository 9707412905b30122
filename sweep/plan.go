package sweep

import (
	"container/heap"
	"context"
	"fmt"
	"iter"
	"slices"
	"strconv"
	"sync"

	"github.com/expr-lang/expr/vm"
)

// Plan is what a sweep runs: the grid's combinations in index order, less
// those the constraint drops, sampled down to --random N. It holds only
// the sampled indices (none without --random): combinations are made as
// they are iterated. A Plan is safe for concurrent use.
type Plan struct {
	spec     *Spec
	n        int64
	selected []int64 // with --random: the sampled indices, ascending

	mu sync.Mutex // guards ev
	ev *evaluator // Has's, made at its first call that needs one
}

// checkEvery is how many combinations Plan looks at between two looks at
// its context.
const checkEvery = 1 << 12

// CheckPlan refuses p, a plan of s, when it keeps no combination: a
// *UsageError about the constraint, which kept none (nothing else can).
func (s *Spec) CheckPlan(p *Plan) error {
	if p.Len() > 0 {
		return nil
	}
	return s.usage(FieldConstraint, s.constraint, "keeps none of the "+strconv.FormatInt(s.Size(), 10)+" combinations")
}

// Plan looks at every combination once, before any run: it counts those
// the constraint keeps and, with --random N, samples N of them. A
// constraint that fails on a combination (a division by zero, say) is a
// *UsageError naming the combination; with --random, the constraint runs
// only on combinations whose key could still put them in the sample.
// Plan returns ctx's error when ctx ends first.
//
// Sampling is deterministic on every machine: combination i gets the key
// SplitMix64(S + (i+1)·0x9E3779B97F4A7C15), the (i+1)-th output of the
// SplitMix64 generator seeded with the seed S (as a 64-bit two's
// complement, arithmetic modulo 2^64), and the N kept combinations with
// the smallest keys (ties to the lower index) are run, in index order.
// So the sample depends only on the grid, the constraint, N and S, and
// the sample of N is part of the sample of any larger N.
func (s *Spec) Plan(ctx context.Context) (*Plan, error) {
	p := &Plan{spec: s}
	ev := s.newEvaluator()
	if s.random == nil || *s.random >= s.size {
		// Every kept combination runs: nothing to hold.
		if s.program == nil {
			p.n = s.size
			return p, nil
		}
		for i := range s.size {
			if i%checkEvery == 0 {
				if err := ctx.Err(); err != nil {
					return nil, err
				}
			}
			keep, err := ev.keep(i)
			if err != nil {
				return nil, err
			}
			if keep {
				p.n++
			}
		}
		return p, nil
	}
	limit := int(*s.random) // below s.size
	h := make(sampleHeap, 0, min(limit, 1<<16))
	for i := range s.size {
		if i%checkEvery == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		c := sampled{sampleKey(uint64(s.seed), i), i}
		if len(h) == limit && !c.less(h[0]) {
			continue // it would not be in the sample whether kept or not
		}
		keep, err := ev.keep(i)
		if err != nil {
			return nil, err
		}
		if !keep {
			continue
		}
		if len(h) < limit {
			heap.Push(&h, c)
		} else {
			h[0] = c
			heap.Fix(&h, 0)
		}
	}
	p.selected = make([]int64, len(h))
	for i, c := range h {
		p.selected[i] = c.index
	}
	slices.Sort(p.selected)
	p.n = int64(len(p.selected))
	return p, nil
}

// Len returns the number of combinations the plan runs (per fold in a
// walk-forward).
func (p *Plan) Len() int64 { return p.n }

// Has reports whether the plan runs combination i (per fold in a
// walk-forward): whether the sample holds it (--random), else whether the
// constraint keeps it. It costs a binary search or one run of the
// constraint, whatever the grid's size.
func (p *Plan) Has(i int64) bool {
	switch {
	case i < 0 || i >= p.spec.size:
		return false
	case p.selected != nil:
		_, ok := slices.BinarySearch(p.selected, i)
		return ok
	case p.spec.program == nil:
		return true
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ev == nil {
		p.ev = p.spec.newEvaluator()
	}
	// Plan ran the constraint on every combination without an error.
	keep, err := p.ev.keep(i)
	return err == nil && keep
}

// Runs returns the number of runs of the whole sweep with folds
// walk-forward folds (0 for a plain sweep): every combination per fold,
// plus one test run per fold.
func (p *Plan) Runs(folds int) int64 {
	if folds == 0 {
		return p.n
	}
	return int64(folds) * (p.n + 1)
}

// All yields the plan's combinations in index order, and ends early when
// ctx ends: between two combinations a constraint may drop millions, and a
// sweep drawing its next run must see a stop in the meantime.
func (p *Plan) All(ctx context.Context) iter.Seq[Combination] {
	return func(yield func(Combination) bool) {
		if p.selected != nil {
			for _, i := range p.selected {
				if ctx.Err() != nil || !yield(p.spec.At(i)) {
					return
				}
			}
			return
		}
		ev := p.spec.newEvaluator()
		for i := range p.spec.size {
			if i%checkEvery == 0 && ctx.Err() != nil {
				return
			}
			// Plan ran the constraint on every combination without an
			// error, and it gives the same answer every time.
			if keep, err := ev.keep(i); err != nil || !keep {
				continue
			}
			if !yield(p.spec.At(i)) {
				return
			}
		}
	}
}

// evaluator runs the constraint over combinations, reusing its variables
// and machine. It is not safe for concurrent use.
type evaluator struct {
	spec    *Spec
	env     map[string]any
	machine vm.VM
}

func (s *Spec) newEvaluator() *evaluator {
	if s.program == nil {
		return &evaluator{spec: s}
	}
	return &evaluator{spec: s, env: s.constraintEnv(false)}
}

// keep reports whether the constraint keeps combination i.
func (e *evaluator) keep(i int64) (bool, error) {
	s := e.spec
	if s.program == nil {
		return true, nil
	}
	rest := i
	for a := len(s.grid) - 1; a >= 0; a-- {
		ax := s.grid[a]
		n := int64(len(ax.Values))
		e.env[ax.Name] = ax.Values[rest%n]
		rest /= n
	}
	out, err := e.machine.Run(s.program, e.env)
	if err != nil {
		return false, s.usage(FieldConstraint, s.constraint, fmt.Sprintf("combination %d (%s): %s", i, s.At(i).Params, exprReason(err)))
	}
	keep, ok := out.(bool)
	if !ok {
		return false, s.usage(FieldConstraint, s.constraint, fmt.Sprintf("combination %d (%s): gives %v, not true or false", i, s.At(i).Params, out))
	}
	return keep, nil
}

// sampleKey is the (i+1)-th output of SplitMix64 seeded with seed.
func sampleKey(seed uint64, i int64) uint64 {
	z := seed + (uint64(i)+1)*0x9E3779B97F4A7C15
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return z ^ (z >> 31)
}

// sampled is a kept combination's key and index.
type sampled struct {
	key   uint64
	index int64
}

func (a sampled) less(b sampled) bool {
	return a.key < b.key || a.key == b.key && a.index < b.index
}

// sampleHeap is a max-heap of the smallest keys seen: its root is the
// largest, the first to go when a smaller key comes.
type sampleHeap []sampled

func (h sampleHeap) Len() int           { return len(h) }
func (h sampleHeap) Less(i, j int) bool { return h[j].less(h[i]) }
func (h sampleHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *sampleHeap) Push(x any)        { *h = append(*h, x.(sampled)) }
func (h *sampleHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// Planned returns whether plan, a plan of spec, runs the combination with
// the given swept params (per fold in a walk-forward), for the sweep
// view's heatmap to tell a cell the constraint or the sample left out
// from one still to come.
func Planned(spec *Spec, plan *Plan) func(Params) bool {
	if plan.Len() == spec.Size() {
		return func(Params) bool { return true }
	}
	// Each axis's values by position, made once: the heatmap asks for
	// every cell of its plane on every frame.
	grid := spec.Grid()
	at := make([]map[any]int, len(grid))
	for a, ax := range grid {
		at[a] = make(map[any]int, len(ax.Values))
		for k, v := range ax.Values {
			at[a][v] = k
		}
	}
	return func(p Params) bool {
		// The index as the grid numbers it (the last param fastest).
		var i int64
		for a, ax := range grid {
			v, ok := p.Get(ax.Name)
			if !ok {
				return false
			}
			k, ok := at[a][v]
			if !ok {
				return false
			}
			i = i*int64(len(ax.Values)) + int64(k)
		}
		return plan.Has(i)
	}
}

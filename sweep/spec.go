package sweep

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"stratbench/contract"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/file"
	"github.com/expr-lang/expr/vm"
)

// Flags are the sweep flags as given on the command line. The zero value
// (apart from the run's own flags, which a sweep passes on untouched) is a
// sweep of one combination ranked by sharpe.
type Flags struct {
	// Grid holds the --grid arguments in order: NAME=V1,V2,... or
	// NAME=LO:HI:STEP. The last varies fastest.
	Grid []string

	// Params holds the --param arguments (k=v), fixed for every run.
	Params []string

	// Constraint is --constraint, an expr-lang expression over the params
	// that keeps a combination when it is true; empty for none.
	Constraint string

	// Random is --random N: run N combinations sampled from those the
	// constraint keeps. nil runs them all.
	Random *int64

	// Seed is --seed, the sampling's seed (default 0).
	Seed int64

	// Metric is --metric, the objective; empty for DefaultMetric.
	Metric string

	// Minimize is --minimize: lower metric values rank first.
	Minimize bool

	// WalkForward is --walk-forward train=DUR,test=DUR[,step=DUR][,anchored];
	// empty for a plain sweep.
	WalkForward string
}

// Spec is a checked sweep: its grid, fixed params, compiled constraint,
// sampling and objective. It numbers the combinations in grid order (the
// last --grid varies fastest); the number, a combination's index, depends
// only on the grid, so it is stable across resumes. A Spec is immutable
// and safe for concurrent use.
type Spec struct {
	grid        Grid
	fixed       Params
	declared    map[string]any
	constraint  string
	program     *vm.Program // nil without a constraint
	random      *int64
	seed        int64
	objective   Objective
	walkForward *WalkForward
	// wfArg is the walk-forward as given: --walk-forward's text, or a
	// restored spec's (the document's, in String's form).
	wfArg string
	size  int64 // the number of combinations in the grid
	// restored is set for a spec read back from a sweep document
	// (RestoreSpec): its refusals are Saved, named as the document's
	// fields, not as flags the user did not give.
	restored bool
}

// usage is a refusal of s: of a restored spec, Saved (named as the
// document's field), since the user gave no flag.
func (s *Spec) usage(field Field, arg, reason string) *UsageError {
	return &UsageError{Field: field, Saved: s.restored, Arg: arg, Reason: reason}
}

// saved makes a refusal of a helper that knows nothing of s (the metric's
// check, the walk-forward's parse) Saved when s is restored.
func (s *Spec) saved(err error) error {
	var ue *UsageError
	if s.restored && errors.As(err, &ue) {
		return &UsageError{Field: ue.Field, Saved: true, Arg: ue.Arg, Reason: ue.Reason}
	}
	return err
}

// ParseSpec checks the sweep flags against the strategy's MANIFEST
// defaults (declared: an int64, float64, bool or string per param; empty
// when the MANIFEST declares none, and then any name is taken and typed by
// its look, as --param does). Every refusal is a *UsageError, in the
// order: --param, --grid, --constraint, --random, --metric,
// --walk-forward. Walk-forward folds, which need the data, come from the
// spec's WalkForward().Folds.
func ParseSpec(f Flags, declared map[string]any) (*Spec, error) {
	s := &Spec{declared: maps.Clone(declared), seed: f.Seed, objective: Objective{Metric: f.Metric, Minimize: f.Minimize}}
	if s.objective.Metric == "" {
		s.objective.Metric = DefaultMetric
	}
	fixedArgs := map[string]string{}
	for _, arg := range f.Params {
		p, err := parseParamArg(arg, declared)
		if err != nil {
			return nil, err
		}
		fixedArgs[p.Name] = arg
		if i := slices.IndexFunc(s.fixed, func(q Param) bool { return q.Name == p.Name }); i >= 0 {
			s.fixed[i] = p // the last --param of a name wins, as for one run
		} else {
			s.fixed = append(s.fixed, p)
		}
	}
	for _, arg := range f.Grid {
		ax, err := parseAxis(arg, declared)
		if err != nil {
			return nil, err
		}
		if slices.ContainsFunc(s.grid, func(a Axis) bool { return a.Name == ax.Name }) {
			return nil, usage(FieldGrid, arg, fmt.Sprintf("%s is already swept by an earlier axis", ax.Name))
		}
		if p, both := fixedArgs[ax.Name]; both {
			return nil, usage(FieldGrid, arg, fmt.Sprintf("%s is also fixed, as %s: a param is either swept or fixed", ax.Name, p))
		}
		s.grid = append(s.grid, ax)
	}
	if err := s.finish(f.Constraint, f.Random, f.WalkForward); err != nil {
		return nil, err
	}
	return s, nil
}

// RestoreSpec rebuilds the Spec of a sweep document, for --resume, and
// checks it again against the strategy's MANIFEST defaults (which may have
// changed with the environment even where the file did not). Its
// refusals, and those of its plan and folds, name the document's fields
// (spec.metric, spec.grid, …) where a spec of flags names the flags: the
// values come from the document (edited, perhaps), not from the command
// line.
func RestoreSpec(doc SpecDoc, declared map[string]any) (*Spec, error) {
	s := &Spec{declared: maps.Clone(declared), seed: doc.Seed, objective: Objective{Metric: doc.Metric, Minimize: doc.Minimize},
		restored: true}
	for _, p := range doc.Params {
		if err := checkRestored(FieldParams, p.Name, []any{p.Value}, declared); err != nil {
			return nil, err
		}
		if _, twice := s.fixed.Get(p.Name); twice {
			return nil, s.usage(FieldParams, p.Name, "given twice in the sweep's spec")
		}
		s.fixed = append(s.fixed, p)
	}
	for _, ax := range doc.Grid {
		if err := checkRestored(FieldGrid, ax.Name, ax.Values, declared); err != nil {
			return nil, err
		}
		if _, both := s.fixed.Get(ax.Name); both || slices.ContainsFunc(s.grid, func(a Axis) bool { return a.Name == ax.Name }) {
			return nil, s.usage(FieldGrid, ax.Name, "swept twice, or also fixed, in the sweep's spec")
		}
		s.grid = append(s.grid, Axis{Name: ax.Name, Values: slices.Clone(ax.Values)})
	}
	constraint := ""
	if doc.Constraint != nil {
		constraint = *doc.Constraint
	}
	wf := ""
	if doc.WalkForward != nil {
		wf = doc.WalkForward.String()
	}
	if err := s.finish(constraint, doc.Random, wf); err != nil {
		return nil, err
	}
	return s, nil
}

// finish checks the size of the grid, compiles the constraint and checks
// the sampling, the metric and the walk-forward.
func (s *Spec) finish(constraint string, random *int64, walkForward string) error {
	s.size = 1
	for _, ax := range s.grid {
		n := int64(len(ax.Values))
		if s.size > MaxCombinations/n {
			return s.usage(FieldGrid, ax.Name+"=…", fmt.Sprintf("the grid has more than %d combinations", int64(MaxCombinations)))
		}
		s.size *= n
	}
	if constraint != "" {
		if err := s.compile(constraint); err != nil {
			return err
		}
	}
	if random != nil {
		if *random < 1 {
			return s.usage(FieldRandom, fmt.Sprint(*random), "want the number of combinations to run, 1 or more")
		}
		n := *random
		s.random = &n
	}
	if err := checkMetric(s.objective.Metric); err != nil {
		return s.saved(err)
	}
	if walkForward != "" {
		wf, err := ParseWalkForward(walkForward)
		if err != nil {
			return s.saved(err)
		}
		s.walkForward, s.wfArg = &wf, walkForward
	}
	return nil
}

// savedUsage is a refusal of a value read back from a sweep document.
func savedUsage(field Field, arg, reason string) *UsageError {
	return &UsageError{Field: field, Saved: true, Arg: arg, Reason: reason}
}

// checkRestored checks the values of a param read back from a sweep
// document against the MANIFEST: the type of its default, or, when the
// MANIFEST declares none, the type --param gives the value's text.
func checkRestored(field Field, name string, values []any, declared map[string]any) error {
	def, isDeclared := declared[name]
	if !isDeclared && len(declared) > 0 {
		return savedUsage(field, name, undeclaredReason(name, declared)+"; the sweep's spec has it")
	}
	if len(values) == 0 {
		return savedUsage(field, name, "no values in the sweep's spec")
	}
	for _, v := range values {
		want := typeName(def)
		if !isDeclared {
			want = typeName(contract.GuessParam(formatArg(v)))
		}
		if got := typeName(v); got != want {
			return savedUsage(field, name, fmt.Sprintf("the sweep's spec has the %s value %s where the param takes %s", got, formatArg(v), withArticle(want)))
		}
	}
	if _, j, dup := firstRepeat(values); dup {
		return savedUsage(field, name, fmt.Sprintf("the sweep's spec has the value %s twice", formatArg(values[j])))
	}
	return nil
}

// parseParamArg types one --param k=v like a run does.
func parseParamArg(arg string, declared map[string]any) (Param, error) {
	key, text, ok := strings.Cut(arg, "=")
	if !ok || key == "" {
		return Param{}, usage(FieldParams, arg, "want key=value")
	}
	if !utf8.ValidString(arg) {
		return Param{}, usage(FieldParams, arg, "not valid UTF-8")
	}
	def, isDeclared := declared[key]
	if !isDeclared {
		if len(declared) > 0 {
			return Param{}, usage(FieldParams, arg, undeclaredReason(key, declared))
		}
		return Param{key, contract.GuessParam(text)}, nil
	}
	v, err := contract.ParseParam(def, text)
	if err != nil {
		return Param{}, usage(FieldParams, arg, fmt.Sprintf("%v (the default is %v)", err, formatArg(def)))
	}
	return Param{key, v}, nil
}

// constraintEnv returns the variables a constraint sees, every param the
// run gets: the MANIFEST defaults, the fixed params and the swept ones
// (set per combination). For compiling, a swept param whose values have
// more than one type (only when typed by look) is of unknown type.
func (s *Spec) constraintEnv(forCompile bool) map[string]any {
	env := make(map[string]any, len(s.declared)+len(s.fixed)+len(s.grid))
	for k, v := range s.declared {
		env[k] = v
	}
	for _, p := range s.fixed {
		env[p.Name] = p.Value
	}
	for _, ax := range s.grid {
		env[ax.Name] = ax.Values[0]
		if forCompile && slices.ContainsFunc(ax.Values, func(v any) bool { return typeName(v) != typeName(ax.Values[0]) }) {
			env[ax.Name] = nil
		}
	}
	return env
}

// compile compiles the constraint once. Its variables are the params; it
// must give a bool; now() is not available, so that a combination is kept
// or not the same way on every run of the sweep.
func (s *Spec) compile(constraint string) error {
	env := s.constraintEnv(true)
	program, err := expr.Compile(constraint, expr.Env(env), expr.AsBool(), expr.DisableBuiltin("now"))
	if err != nil {
		reason := exprReason(err)
		var ferr *file.Error
		if errors.As(err, &ferr) && strings.HasPrefix(ferr.Message, "unknown name ") {
			names := make([]string, 0, len(env))
			for k := range env {
				names = append(names, k)
			}
			slices.Sort(names)
			reason += " (params: " + strings.Join(names, ", ") + ")"
		}
		return s.usage(FieldConstraint, constraint, reason)
	}
	s.constraint, s.program = constraint, program
	return nil
}

// exprReason is an expr-lang error in one line: its message and, when it
// has one, the column (from 1) where it is.
func exprReason(err error) string {
	var ferr *file.Error
	if errors.As(err, &ferr) {
		if ferr.Snippet != "" {
			return fmt.Sprintf("%s at column %d", ferr.Message, ferr.Column+1)
		}
		return ferr.Message
	}
	return err.Error()
}

// Grid returns the swept params in grid order. The caller must not
// modify it.
func (s *Spec) Grid() Grid { return s.grid }

// Fixed returns the --param values, fixed for every run.
func (s *Spec) Fixed() Params { return s.fixed }

// Size returns the number of combinations of the grid, before the
// constraint and sampling: the indices are 0 to Size()−1.
func (s *Spec) Size() int64 { return s.size }

// Objective returns what the sweep ranks by.
func (s *Spec) Objective() Objective { return s.objective }

// WalkForward returns the walk-forward, or nil for a plain sweep.
func (s *Spec) WalkForward() *WalkForward { return s.walkForward }

// Folds tiles the data into the walk-forward's folds, as
// WalkForward.Folds does, its refusals echoing the walk-forward as the
// user gave it (test=1d,train=8d, not train=1w1d,test=1d,step=1d). It
// returns nil for a plain sweep.
func (s *Spec) Folds(bars Bars, from, to time.Time) ([]Fold, error) {
	if s.walkForward == nil {
		return nil, nil
	}
	return s.walkForward.folds(bars, from, to, s.wfLabel())
}

// WindowCheck returns the check that folds, the spec's, hold bars
// (NewWindowCheck), its refusal echoing the walk-forward as the user gave
// it.
func (s *Spec) WindowCheck(folds []Fold) *WindowCheck { return newWindowCheck(s.wfLabel(), folds) }

// wfLabel is how the spec's walk-forward refusals name it.
func (s *Spec) wfLabel() wfLabel { return wfLabel{s.restored, s.wfArg} }

// Combination is one set of swept values.
type Combination struct {
	// Index is the combination's number in grid order.
	Index int64
	// Params are the swept values, in grid order.
	Params Params
}

// At returns the combination with index i (0 ≤ i < Size()): the last
// param of the grid varies fastest.
func (s *Spec) At(i int64) Combination {
	if i < 0 || i >= s.size {
		panic(fmt.Sprintf("sweep: combination %d of a grid of %d", i, s.size))
	}
	c := Combination{Index: i, Params: make(Params, len(s.grid))}
	for a := len(s.grid) - 1; a >= 0; a-- {
		ax := s.grid[a]
		n := int64(len(ax.Values))
		c.Params[a] = Param{ax.Name, ax.Values[i%n]}
		i /= n
	}
	return c
}

// Args returns the --param arguments of c's run: the fixed params, then
// c's, each written so that the run types it back to exactly the same
// value (and so gets the fingerprint of the same run with --param).
func (s *Spec) Args(c Combination) []string {
	args := make([]string, 0, len(s.fixed)+len(c.Params))
	for _, p := range s.fixed {
		args = append(args, p.Name+"="+formatArg(p.Value))
	}
	for _, p := range c.Params {
		args = append(args, p.Name+"="+formatArg(p.Value))
	}
	return args
}

// MaxJobs bounds a sweep's concurrent runs (--jobs, and spec.jobs of a
// resumed sweep's document). Each run in flight is a Python tree of up to
// 2 GiB and 32 processes, and costs stratbench a job's goroutines, pipes
// and sampler; no machine or cluster runs more than some thousands of them
// at once, and a number taken as given made a million slots cost 800 MiB
// and 1,700 threads before any run started.
const MaxJobs = 4096

// CheckJobs refuses a number of concurrent runs below 0 or over MaxJobs (0
// is the default: the machine's CPUs, or the cluster's): a *UsageError
// about FieldJobs, which the caller names as the flag or, for a resumed
// sweep's document, as spec.jobs.
func CheckJobs(jobs int) error {
	if jobs < 0 || jobs > MaxJobs {
		return usage(FieldJobs, strconv.Itoa(jobs), fmt.Sprintf("want the number of concurrent runs, 1 to %d (0 or none: one per CPU)", MaxJobs))
	}
	return nil
}

// LocalSlotsPerCPU bounds the runs a local pool runs at once by the
// machine: 64 a CPU. Each run in flight is a Python tree (15 MiB and more)
// and costs stratbench itself about 0.3 MiB (measured: 92 MiB at 256 runs
// at once), so that 4,096 local runs at once would take stratbench past a
// GiB; a run that waits on I/O may share a core with many, not with
// thousands. (A Ray cluster's slots are the cluster's: MaxJobs only.)
const LocalSlotsPerCPU = 64

// Slots is how many runs a local pool of jobs slots runs at once on a
// machine of cpus CPUs when left runs remain: never more than left (a slot
// without a run to take costs a run's worth of setup for nothing), nor
// than LocalSlotsPerCPU a CPU, and at least 1.
func Slots(jobs int, left int64, cpus int) int {
	return int(max(1, min(int64(jobs), left, int64(LocalSlotsPerCPU)*int64(max(cpus, 1)))))
}

// SpecDoc is the "spec" of the sweep document: what a resumed sweep runs
// again.
type SpecDoc struct {
	// Grid is the swept params with every value, in grid order.
	Grid Grid `json:"grid"`
	// Params are the fixed --param values.
	Params Params `json:"params"`
	// Constraint is nil (null) without --constraint.
	Constraint *string `json:"constraint"`
	// Random is --random N, nil (null) without it; Seed is --seed.
	Random *int64 `json:"random"`
	Seed   int64  `json:"seed"`
	// Metric and Minimize are the objective.
	Metric   string `json:"metric"`
	Minimize bool   `json:"minimize"`
	// Jobs is the number of concurrent runs (the executor's).
	Jobs int `json:"jobs"`
	// WalkForward is nil (null) for a plain sweep.
	WalkForward *WalkForward `json:"walk_forward"`
}

// Doc returns the spec as the sweep document records it. Jobs, the
// executor's concern, is left for the caller to set.
func (s *Spec) Doc() SpecDoc {
	d := SpecDoc{Grid: s.grid, Params: s.fixed, Random: s.random, Seed: s.seed,
		Metric: s.objective.Metric, Minimize: s.objective.Minimize, WalkForward: s.walkForward}
	if d.Grid == nil {
		d.Grid = Grid{}
	}
	if d.Params == nil {
		d.Params = Params{}
	}
	if s.program != nil {
		c := s.constraint
		d.Constraint = &c
	}
	return d
}

// withArticle puts "a" or "an" before a type name.
func withArticle(name string) string {
	if name == "int" {
		return "an int"
	}
	return "a " + name
}

package sweep

import (
	"context"
	"testing"
	"time"

	"stratbench/internal/atomicfile"
)

// A million combinations: counting those a constraint keeps, sampling,
// and walking the plan.
func BenchmarkPlanMillionWithConstraint(b *testing.B) {
	s, err := ParseSpec(Flags{Grid: []string{"fast=1:1000:1", "slow=1:1000:1"}, Constraint: "fast < slow && slow - fast >= 10"}, manifest)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		p, err := s.Plan(context.Background())
		if err != nil || p.Len() != 490545 {
			b.Fatalf("%v, %d kept", err, p.Len())
		}
	}
}

func BenchmarkPlanMillionRandom(b *testing.B) {
	s, err := ParseSpec(Flags{Grid: []string{"fast=1:1000:1", "slow=1:1000:1"}, Constraint: "fast < slow", Random: ptr(int64(1000))}, manifest)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if p, err := s.Plan(context.Background()); err != nil || p.Len() != 1000 {
			b.Fatal(err)
		}
	}
}

func BenchmarkAllMillion(b *testing.B) {
	s, err := ParseSpec(Flags{Grid: []string{"fast=1:1000:1", "slow=1:1000:1"}}, manifest)
	if err != nil {
		b.Fatal(err)
	}
	p, err := s.Plan(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		for range p.All(context.Background()) {
			n++
		}
		if n != 1_000_000 {
			b.Fatal(n)
		}
	}
}

// One results line appended and synced: the cost a run pays to be
// crash-safe.
func BenchmarkAppend(b *testing.B) {
	store, err := OpenStore(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	doc := &Document{StartedAt: time.Now()}
	res, err := store.Create(doc)
	if err != nil {
		b.Fatal(err)
	}
	defer res.Close()
	b.ReportAllocs()
	i := int64(0)
	for b.Loop() {
		if err := res.Append(passed(i, 1)); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// Reading back 10,000 results, as a resume does.
func BenchmarkReadResults(b *testing.B) {
	store, err := OpenStore(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	doc := &Document{StartedAt: time.Now()}
	res, err := store.Create(doc)
	if err != nil {
		b.Fatal(err)
	}
	lines := make([]byte, 0, 3<<20)
	for i := range int64(10_000) {
		lines = append(append(lines, line(passed(i, float64(i)))...), '\n')
	}
	res.Close()
	path := store.Dir(doc.SweepID) + "/" + ResultsFile
	if err := atomicfile.WriteFile(path, lines, 0o644, atomicfile.Durable); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if rb, err := ReadResults(path); err != nil || len(rb.Results) != 10_000 {
			b.Fatal(err)
		}
	}
}

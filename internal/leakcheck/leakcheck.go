// Package leakcheck finds goroutines that outlive a package's tests, the
// way net/http's tests do: after the tests, every goroutine still running
// code of the package under test (other than TestMain) is a leak, once the
// goroutines that are merely ending have had a few seconds to do so.
package leakcheck

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"time"
)

// grace is how long goroutines that are ending get before they count as
// leaked (a variable for this package's own test).
var grace = 5 * time.Second

// Main runs the tests of m and then fails the binary when goroutines
// running code of the packages named by prefixes (import paths such as
// "stratbench/engine") are left. Call it from TestMain instead of m.Run.
func Main(m interface{ Run() int }, prefixes ...string) int {
	code := m.Run()
	if code != 0 {
		return code
	}
	if leaked := Leaked(prefixes...); leaked != "" {
		fmt.Fprintf(os.Stderr, "goroutines outlived the tests:\n%s\n", leaked)
		return 1
	}
	return 0
}

// Leaked returns the stacks of the goroutines running code of the packages
// named by prefixes, after waiting up to a few seconds for them to end; ""
// when there are none.
func Leaked(prefixes ...string) string {
	var leaked []string
	for deadline := time.Now().Add(grace); ; time.Sleep(10 * time.Millisecond) {
		leaked = leaked[:0]
		for _, g := range goroutines() {
			if runs(g, prefixes) {
				leaked = append(leaked, g)
			}
		}
		if len(leaked) == 0 || time.Now().After(deadline) {
			return strings.Join(leaked, "\n\n")
		}
	}
}

// runs reports whether the stack g has a frame of one of the packages.
func runs(g string, prefixes []string) bool {
	for _, p := range prefixes {
		// A frame reads "stratbench/engine.(*worker).request(...)" or
		// "stratbench/engine.Start.func1()": the package path, then a dot.
		if strings.Contains(g, p+".") {
			return true
		}
	}
	return false
}

// goroutines returns the stack of every goroutine but the caller's (which,
// called from TestMain, is the one that ran the tests).
func goroutines() []string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	all := strings.Split(string(buf), "\n\n")
	return all[1:] // the first is this goroutine
}

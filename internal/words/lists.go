package words

import (
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
)

// StrategyNames are the names a list of jobs gives their strategies: each
// path's file name, or, where the listed paths share a file name and are
// different files, as many of their last folders as tell them apart
// ("a/strategy.py", "b/strategy.py" of ~/research/a and ~/research/b).
func StrategyNames(paths []string) []string {
	out := make([]string, len(paths))
	byBase := map[string][]int{}
	for i, p := range paths {
		out[i] = filepath.Base(p)
		byBase[out[i]] = append(byBase[out[i]], i)
	}
	for _, idx := range byBase {
		distinct := map[string]bool{}
		for _, i := range idx {
			distinct[filepath.Clean(paths[i])] = true
		}
		if len(distinct) < 2 {
			continue
		}
		// Add folders, from the nearest, until the distinct paths have
		// distinct names (or have no folder left to add).
		for depth := 1; ; depth++ {
			names := map[string]string{} // name -> the path it stands for
			clash, grew := false, false
			for _, i := range idx {
				name, more := lastParts(paths[i], depth+1)
				grew = grew || more
				if p, ok := names[name]; ok && p != filepath.Clean(paths[i]) {
					clash = true
				}
				names[name] = filepath.Clean(paths[i])
				out[i] = name
			}
			if !clash || !grew {
				break
			}
		}
	}
	return out
}

// lastParts is the last n elements of path, joined by "/"; more reports
// whether path had more than n-1 elements, so that adding one more changed
// something.
func lastParts(path string, n int) (name string, more bool) {
	parts := strings.Split(filepath.ToSlash(filepath.Clean(path)), "/")
	if len(parts) > 0 && parts[0] == "" {
		parts = parts[1:] // an absolute path's root
	}
	more = len(parts) >= n
	if len(parts) > n {
		parts = parts[len(parts)-n:]
	}
	return strings.Join(parts, "/"), more
}

// ParamOrder is the order a list of jobs shows their params in: the names
// whose values differ between the jobs first (what tells the runs apart),
// then those every job has the same; each group by name. A param that
// some jobs with params lack differs; jobs without params do not count.
func ParamOrder(params []map[string]any) []string {
	seen := map[string]bool{}
	var with []map[string]any
	for _, p := range params {
		if len(p) > 0 {
			with = append(with, p)
		}
		for k := range p {
			seen[k] = true
		}
	}
	params = with
	var differ, same []string
	for _, k := range slices.Sorted(maps.Keys(seen)) {
		if paramDiffers(params, k) {
			differ = append(differ, k)
		} else {
			same = append(same, k)
		}
	}
	return append(differ, same...)
}

// paramDiffers reports whether param k has two values in params (absent
// is a value of its own).
func paramDiffers(params []map[string]any, k string) bool {
	first, firstOK := "", false
	for i, p := range params {
		v, ok := p[k]
		text := ParamValue(v)
		if !ok {
			text = "\x00absent"
		}
		if i == 0 {
			first, firstOK = text, true
			continue
		}
		if firstOK && text != first {
			return true
		}
	}
	return false
}

// ParamValue writes a param's value as a job list and the reports show it:
// 10, 0.45, true, fast.
func ParamValue(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case nil:
		return "—"
	case float64, float32, int, int64, bool:
		return fmt.Sprint(v)
	}
	if b, err := json.Marshal(v); err == nil {
		return string(b)
	}
	return fmt.Sprint(v)
}

// Params writes params as "k=v k=v": the names of order first, in that
// order, then any others of p by name.
func Params(p map[string]any, order []string) string {
	parts := make([]string, 0, len(p))
	done := make(map[string]bool, len(order))
	for _, k := range order {
		if v, ok := p[k]; ok && !done[k] {
			parts = append(parts, k+"="+ParamValue(v))
			done[k] = true
		}
	}
	for _, k := range slices.Sorted(maps.Keys(p)) {
		if !done[k] {
			parts = append(parts, k+"="+ParamValue(p[k]))
		}
	}
	return strings.Join(parts, " ")
}

package engine

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// resolveParams applies --param k=v arguments to the manifest's defaults.
// Values are typed like the default; when the manifest declares no params,
// any k=v is accepted and typed by its look (int, float, true/false, text).
func resolveParams(defaults map[string]any, args []string) (map[string]any, error) {
	out := make(map[string]any, len(defaults))
	for k, v := range defaults {
		out[k] = v
	}
	for _, arg := range args {
		key, text, ok := strings.Cut(arg, "=")
		if !ok || key == "" {
			return nil, fmt.Errorf("--param %q: want key=value", arg)
		}
		def, declared := defaults[key]
		if !declared {
			if len(defaults) > 0 {
				return nil, fmt.Errorf("--param %s: the strategy's MANIFEST declares no param %q (declared: %s)", arg, key, strings.Join(sortedKeys(defaults), ", "))
			}
			out[key] = guessParam(text)
			continue
		}
		v, err := parseLike(def, text)
		if err != nil {
			return nil, fmt.Errorf("--param %s: %v (the default is %v)", arg, err, def)
		}
		out[key] = v
	}
	return out, nil
}

// boolWords says what a bool param's value may be, when it is none of
// the words parseLike takes (a sweep's --grid says the same: the sweep
// package's parseLike).
const boolWords = "not a bool: want true, false, yes, no, on, off, 1 or 0, in any case"

func parseLike(def any, text string) (any, error) {
	switch def.(type) {
	case int64:
		v, err := strconv.ParseInt(text, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("not an int")
		}
		return v, nil
	case float64:
		v, err := strconv.ParseFloat(text, 64)
		if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
			return nil, fmt.Errorf("not a finite number")
		}
		return v, nil
	case bool:
		switch strings.ToLower(text) {
		case "true", "1", "yes", "on":
			return true, nil
		case "false", "0", "no", "off":
			return false, nil
		}
		return nil, errors.New(boolWords)
	}
	return text, nil
}

func guessParam(text string) any {
	if v, err := strconv.ParseInt(text, 10, 64); err == nil {
		return v
	}
	if v, err := strconv.ParseFloat(text, 64); err == nil && !math.IsInf(v, 0) && !math.IsNaN(v) {
		return v
	}
	switch text {
	case "true":
		return true
	case "false":
		return false
	}
	return text
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

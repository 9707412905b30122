package engine

import (
	"fmt"
	"sort"
	"strings"

	"stratbench/contract"
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
			out[key] = contract.GuessParam(text)
			continue
		}
		v, err := contract.ParseParam(def, text)
		if err != nil {
			return nil, fmt.Errorf("--param %s: %v (the default is %v)", arg, err, def)
		}
		out[key] = v
	}
	return out, nil
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

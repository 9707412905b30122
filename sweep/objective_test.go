package sweep

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"stratbench/contract"
)

func TestMetricKeysAreTheReportsNumbers(t *testing.T) {
	// --metric takes exactly the numeric members of the report's metrics.
	var numeric []string
	typ := reflect.TypeFor[contract.Metrics]()
	for i := range typ.NumField() {
		f := typ.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch f.Type.Kind() {
		case reflect.Float64, reflect.Int, reflect.Int64:
			numeric = append(numeric, name)
		}
	}
	slices.Sort(numeric)
	if got := MetricKeys(); !slices.Equal(got, numeric) {
		t.Fatalf("metric keys\n%v\nthe simulator's numeric metrics\n%v", got, numeric)
	}
	// The metrics every report has are among them.
	for _, k := range []string{"start_equity", "final_equity", "total_return", "sharpe", "max_drawdown", "fills", "trades", "win_rate", "fees"} {
		if !slices.Contains(numeric, k) {
			t.Fatalf("%s is not a metric", k)
		}
	}
}

package contract

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestMetricListCoversMetrics keeps the one list of metrics equal to the
// fields of Metrics: every JSON key once, the core keys first.
func TestMetricListCoversMetrics(t *testing.T) {
	var fields []string
	typ := reflect.TypeFor[Metrics]()
	for i := range typ.NumField() {
		fields = append(fields, strings.Split(typ.Field(i).Tag.Get("json"), ",")[0])
	}
	var listed []string
	var m Metrics
	for _, mt := range m.List() {
		listed = append(listed, mt.Key)
	}
	if a, b := slices.Sorted(slices.Values(fields)), slices.Sorted(slices.Values(listed)); !slices.Equal(a, b) {
		t.Fatalf("metric list %v\nfields      %v", b, a)
	}
	core := CoreMetricKeys()
	if want := []string{"start_equity", "final_equity", "total_return", "sharpe", "max_drawdown", "fills", "trades", "win_rate", "fees"}; !slices.Equal(core, want) {
		t.Fatalf("core keys %v, want %v", core, want)
	}
	if !slices.Equal(listed[:len(core)], core) || !slices.IsSorted(listed[len(core):]) {
		t.Fatalf("order %v: the core keys first, then the rest by key", listed)
	}
}

func TestMetricText(t *testing.T) {
	m := Metrics{StartEquity: 100000, FinalEquity: 121178, TotalReturn: 0.211782, Sharpe: 1.5, Trades: 3, Fees: 2,
		BarIntervalS: 60, Positions: map[string]float64{"SYNB": -2.5, "SYNA": 10}}
	got := map[string]string{}
	for _, mt := range m.List() {
		got[mt.Key] = mt.Text()
	}
	for k, want := range map[string]string{
		"start_equity": "100,000.00", "final_equity": "121,178.00", "total_return": "21.18 %", "sharpe": "1.50",
		"trades": "3", "fees": "2.00", "bar_interval_s": "1m 00s", "positions": "SYNA 10 · SYNB -2.5",
		"max_drawdown_duration_s": "0s",
	} {
		if got[k] != want {
			t.Errorf("%s: %q, want %q", k, got[k], want)
		}
	}
	if (&Metrics{}).PositionsText() != "none" {
		t.Error("no positions is not \"none\"")
	}
}

// TestMetricsJSONKeepsTheReportsOrder pins the JSON of the metrics, field
// for field, as the report has always carried them.
func TestMetricsJSONKeepsTheReportsOrder(t *testing.T) {
	b, err := json.Marshal(Metrics{Positions: map[string]float64{}})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"start_equity":0,"final_equity":0,"final_cash":0,"positions":{},"total_return":0,"cagr":0,"volatility":0,` +
		`"sharpe":0,"sortino":0,"calmar":0,"max_drawdown":0,"max_drawdown_duration_s":0,"fills":0,"rejections":0,` +
		`"cancels":0,"open_orders":0,"trades":0,"win_rate":0,"profit_factor":0,"expectancy":0,"fees":0,"exposure":0,` +
		`"buy_and_hold_return":0,"warmup_bars":0,"events":0,"bar_interval_s":0,"periods_per_year":0,"span_s":0}`
	if string(b) != want {
		t.Fatalf("metrics JSON\n%s\nwant\n%s", b, want)
	}
}

// TestAnnualSpan: the span annualised figures come from, short under 90
// days; unknown in older reports (no span_s).
func TestAnnualSpan(t *testing.T) {
	for _, tc := range []struct {
		spanS     float64
		short, ok bool
	}{{604740, true, true}, {90 * 86400, false, true}, {89 * 86400, true, true}, {0, false, false}} {
		m := Metrics{SpanS: tc.spanS}
		if _, short, ok := m.AnnualSpan(); short != tc.short || ok != tc.ok {
			t.Errorf("span %gs: short %v ok %v, want %v %v", tc.spanS, short, ok, tc.short, tc.ok)
		}
	}
	if got, want := AnnualisedKeys(), []string{"sharpe", "cagr", "calmar", "sortino", "volatility"}; !slices.Equal(got, want) {
		t.Errorf("AnnualisedKeys = %v, want %v", got, want)
	}
}

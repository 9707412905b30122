package backtest

import (
	"testing"
	"time"
)

func TestTimeTextMatchesRFC3339Nano(t *testing.T) {
	var tt timeText
	for _, ns := range []int64{0, 1, 59_999_999_999, 86_399_999_999_999, 86_400_000_000_000, 1704067200_000000000,
		1704067260_500000000, 1704067261_000000123, -1, -86_400_000_000_001, 4102444800_000000000} {
		got := string(tt.append(nil, ns))
		want := time.Unix(0, ns).UTC().Format(time.RFC3339Nano)
		if got != want {
			t.Errorf("%d: %s, want %s", ns, got, want)
		}
	}
}

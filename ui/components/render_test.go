package components

import (
	"testing"

	"github.com/charmbracelet/colorprofile"
)

func TestSanitize(t *testing.T) {
	for in, want := range map[string]string{
		"plain":                   "plain",
		"\x1b[31mred\x1b[0m":      "red",
		"a\tb":                    "a    b",
		"bell\a and\rcr":          "bell andcr",
		"\x1b]0;title\x07visible": "visible",
		"ünï ✓":                   "ünï ✓",
		"c1\u009bcontrol":         "c1control",
	} {
		if got := Sanitize(in); got != want {
			t.Errorf("Sanitize(%q) = %q, want %q", in, got, want)
		}
	}
}

func FuzzSanitize(f *testing.F) {
	for _, s := range []string{"plain", "\x1b[31mred", "\x1b]8;;http://x\x07link", "\t\r\n", "\u009b2J"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := Sanitize(s)
		for _, r := range out {
			if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
				t.Fatalf("Sanitize(%q) kept control %U", s, r)
			}
		}
	})
}

func TestGaugeAndSparkline(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{Gauge(75, 90, 100, 20), "███████████████▒▒▒░░"},
		{Gauge(0, 0, 0, 4), "░░░░"},
		{Gauge(1, 1, 1000, 4), "█░░░"},
		{Sparkline([]float64{1, 10, 100}, 8), "▁▅█"},
		{Sparkline([]float64{5, 5, 0}, 2), "▄▁"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

func TestPickTheme(t *testing.T) {
	for _, tc := range []struct {
		name    string
		noColor bool
		want    string
		auto    bool
	}{
		{"", false, "dark", true},
		{"auto", false, "dark", true},
		{"light", false, "light", false},
		{"light", true, "plain", false},
		{"", true, "plain", false},
	} {
		th, auto, err := PickTheme(tc.name, tc.noColor, colorprofile.TrueColor)
		if err != nil || th.Name != tc.want || auto != tc.auto {
			t.Errorf("PickTheme(%q, %v) = %s, %v, %v", tc.name, tc.noColor, th.Name, auto, err)
		}
	}
	if _, _, err := PickTheme("solarized", false, colorprofile.TrueColor); err == nil {
		t.Error("an unknown theme was accepted")
	}
}

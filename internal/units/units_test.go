package units

import (
	"math"
	"testing"
	"time"
)

func TestBytes(t *testing.T) {
	for n, want := range map[int64]string{
		0: "0 bytes", 512: "512 bytes", 1023: "1023 bytes", 1024: "1.00 KiB", 8 << 20: "8.00 MiB",
		2 << 30: "2.00 GiB", 2<<30 + 1<<29: "2.50 GiB", 1650 << 20: "1.61 GiB",
	} {
		if got := Bytes(n); got != want {
			t.Errorf("Bytes(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestFormatters(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{Millis(0.4), "400µs"},
		{Millis(0.0042), "4µs"},
		{Millis(2.345), "2.35ms"},
		{Millis(41), "41ms"},
		{Millis(1234), "1.23s"},
		{Duration(0), "0s"},
		{Duration(245 * time.Second), "4m 05s"},
		{Duration(3*time.Hour + 4*time.Minute + 10*time.Second), "3h 04m"},
		{Duration(51 * time.Hour), "2d 03h"},
		{Duration(-2 * time.Millisecond), "-2.00ms"},
		{Clock(72 * time.Second), "1:12"},
		{Clock(3723 * time.Second), "1:02:03"},
		{Count(-1234567), "-1,234,567"},
		{Count(999), "999"},
		{Count(int64(20160)), "20,160"},
		{Count(0), "0"},
		{Money(-1234.565), "-1,234.57"},
		{Money(0.004), "0.00"},
		{Money(-0.004), "0.00"},
		{Money(121178.0), "121,178.00"},
		{Money(math.Inf(1)), "+Inf"},
		{Percent(0.211782), "21.18 %"},
		{Percent(-0.01), "-1.00 %"},
		{Percent(264.45), "26,445.00 %"},
		{Number(1.2345), "1.23"},
		{Number(525960), "525,960.00"},
		{Number(3e15), "3e+15"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

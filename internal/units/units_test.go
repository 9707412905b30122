package units

import "testing"

func TestBytes(t *testing.T) {
	for n, want := range map[int64]string{
		0: "0 bytes", 1023: "1023 bytes", 1024: "1.00 KiB", 8 << 20: "8.00 MiB",
		2 << 30: "2.00 GiB", 2<<30 + 1<<29: "2.50 GiB",
	} {
		if got := Bytes(n); got != want {
			t.Errorf("Bytes(%d) = %q, want %q", n, got, want)
		}
	}
}

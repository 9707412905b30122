package present

import "testing"

// TestResumeCommand: the command that resumes a sweep repeats how it ran:
// headless (a script pasting it must not open the view), its output, on
// Ray.
func TestResumeCommand(t *testing.T) {
	for _, tc := range []struct {
		as   *RanAs
		want string
	}{
		{nil, "stratbench sweep --resume ID"},
		{&RanAs{Output: "text"}, "stratbench sweep --resume ID"},
		{&RanAs{Output: "text", CI: true}, "stratbench sweep --resume ID --ci"},
		{&RanAs{Output: "jsonl", CI: true}, "stratbench sweep --resume ID --ci --output jsonl"},
		{&RanAs{Output: "json", CI: true, Ray: true, RayAddress: "http://head:8265", Jobs: 16},
			"stratbench sweep --resume ID --ci --output json --executor ray --ray-address http://head:8265 --jobs 16"},
		{&RanAs{Output: "text", Ray: true, RayAddress: "http://a b", Jobs: 2, CI: true},
			"stratbench sweep --resume ID --ci --executor ray --ray-address 'http://a b' --jobs 2"},
	} {
		if got := ResumeCommand("ID", tc.as); got != tc.want {
			t.Errorf("ResumeCommand(%+v) = %q, want %q", tc.as, got, tc.want)
		}
	}
}

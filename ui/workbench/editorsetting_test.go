package workbench

import "testing"

func TestEditorSetting(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"EDITOR": "vim"}, "vim"},
		{map[string]string{"EDITOR": "vim", "VISUAL": "code --wait"}, "code --wait"},
		{map[string]string{"EDITOR": "vim", "VISUAL": "code", "STRATBENCH_EDITOR": "ed --line {line} {file}"}, "ed --line {line} {file}"},
		{map[string]string{"VISUAL": "  "}, ""},
	} {
		if got := EditorSetting(func(k string) string { return tc.env[k] }); got != tc.want {
			t.Errorf("%v: %q, want %q", tc.env, got, tc.want)
		}
	}
}

package taskenv

import (
	"strings"
	"testing"
)

// FuzzReplace: any input is handled without panic, text without "${"
// passes through unchanged, and a resolved reference never leaves "${"
// of its own behind.
func FuzzReplace(f *testing.F) {
	for _, s := range []string{"", "${", "}", "${}", "${NOMAD_TASK_NAME}", "a${b${c}}d", "${ attr.kernel.name }", "$${x}"} {
		f.Add(s)
	}
	// No value of this env holds "${", so Replace cannot add any.
	in := fixture()
	in.Task.Env = map[string]string{"A": "x", "B": "${NOMAD_TASK_NAME}"}
	env := Build(in)
	f.Fuzz(func(t *testing.T, s string) {
		got := env.Replace(s)
		if !strings.Contains(s, "${") && got != s {
			t.Fatalf("Replace(%q) = %q", s, got)
		}
		if strings.Count(got, "${") > strings.Count(s, "${") {
			t.Fatalf("Replace(%q) = %q added references", s, got)
		}
	})
}

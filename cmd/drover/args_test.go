package main

import (
	"slices"
	"testing"
)

func TestNormalizeArgs(t *testing.T) {
	cases := []struct{ in, want []string }{
		{[]string{"job", "run", "-detach", "app.hcl"}, []string{"job", "run", "--detach", "app.hcl"}},
		{[]string{"job", "inspect", "-var=version=2", "-"}, []string{"job", "inspect", "--var=version=2", "-"}},
		{[]string{"alloc", "logs", "-f", "abc"}, []string{"alloc", "logs", "-f", "abc"}},
		{[]string{"--detach", "-5", "--", "-x"}, []string{"--detach", "-5", "--", "-x"}},
	}
	for _, c := range cases {
		if got := normalizeArgs(c.in); !slices.Equal(got, c.want) {
			t.Errorf("normalizeArgs(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

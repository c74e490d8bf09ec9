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
		// A one-letter flag with its value is a shorthand, as pflag reads it.
		{[]string{"alloc", "logs", "-n=5", "-tail", "abc"}, []string{"alloc", "logs", "-n=5", "--tail", "abc"}},
		// alloc exec: flags up to the allocation, the command as given.
		{[]string{"alloc", "exec", "-task", "web", "-it", "ab12", "ls", "-la", "-job"},
			[]string{"alloc", "exec", "--task", "web", "-i", "-t", "ab12", "ls", "-la", "-job"}},
		{[]string{"alloc", "exec", "-i=false", "-address", "http://x:4646", "ab12", "sh", "-c", "echo -n"},
			[]string{"alloc", "exec", "--i=false", "--address", "http://x:4646", "ab12", "sh", "-c", "echo -n"}},
		{[]string{"alloc", "exec", "-t", "--", "ab12", "-x"}, []string{"alloc", "exec", "-t", "--", "ab12", "-x"}},
		{[]string{"alloc", "exec", "-namespace", "dev", "-job", "web", "-group", "g", "sh"},
			[]string{"alloc", "exec", "--namespace", "dev", "--job", "web", "--group", "g", "sh"}},
	}
	for _, c := range cases {
		if got := normalizeArgs(c.in); !slices.Equal(got, c.want) {
			t.Errorf("normalizeArgs(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

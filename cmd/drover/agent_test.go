package main

import (
	"strings"
	"testing"
)

func TestAgentRefusesIncompleteConfiguration(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"agent"}, "-server"},
		{[]string{"agent", "-server"}, "-data-dir"},
		{[]string{"agent", "-dev", "-log-level", "loud"}, "log-level"},
		{[]string{"agent", "-server", "-data-dir", t.TempDir(), "-bootstrap-expect", "-1"}, "bootstrap-expect"},
	}
	for _, c := range cases {
		code, _, errOut := runCLI(t, "", c.args...)
		if code == 0 || !strings.Contains(errOut, c.want) {
			t.Fatalf("%v: code %d, stderr %q (want it to mention %q)", c.args, code, errOut, c.want)
		}
	}
}

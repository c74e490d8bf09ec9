package config

import "testing"

// ports.serf: a server's second port for the join exchange.
func TestSerfPort(t *testing.T) {
	c := Default().Merge(mustParse(t, validServer+"ports {\n  serf = 4648\n}\n"))
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if got := c.SerfAddr(); got != "127.0.0.1:4648" && got != "0.0.0.0:4648" {
		t.Errorf("serf address %q", got)
	}
	if Default().SerfAddr() != "" {
		t.Error("a serf address without ports.serf")
	}
	for _, tc := range []struct{ src, msg string }{
		{"ports {\n  serf = 70000\n}\n", "ports.serf must be a port from 1 to 65535 (got 70000)"},
		{"ports {\n  serf = 4646\n}\n", "ports.serf and ports.http are both 4646"},
		{"ports {\n  serf = 4647\n}\n", "ports.serf and ports.raft are both 4647 on the same address"},
	} {
		_, err := checkSrc(t, validServer+tc.src)
		if err == nil {
			t.Errorf("%q: no error", tc.src)
			continue
		}
		wantDiag(t, diagsOf(t, err), tc.msg, 8)
	}
}

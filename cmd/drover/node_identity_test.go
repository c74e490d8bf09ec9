package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestNodeIntroCreate: node intro create against an in-process API, its
// output as Nomad's, and its refusals.
func TestNodeIntroCreate(t *testing.T) {
	_, addr, _ := newCLIServer(t)
	a := "-address=" + addr
	out := wantCLI(t, 0, []string{"Successfully generated client introduction token:\n\neyJ"}, "node", "intro", "create", a, "-node-name", "web-1", "-ttl", "10m")
	if strings.Count(out, ".") < 2 {
		t.Fatalf("not a JWT: %q", out)
	}
	wantCLI(t, 0, []string{`"JWT": "eyJ`}, "node", "intro", "create", a, "-json")
	wantCLI(t, 1, []string{"Error parsing TTL"}, "node", "intro", "create", a, "-ttl", "soon")
	wantCLI(t, 1, []string{"Error generating introduction token", "NodePool"}, "node", "intro", "create", a, "-node-pool", "all")
	wantCLI(t, 1, []string{"This command takes no arguments"}, "node", "intro", "create", a, "extra")
	wantCLI(t, 1, []string{"This command takes one argument: <node_id>"}, "node", "identity", "get", a)
}

func TestPrintClaims(t *testing.T) {
	var b bytes.Buffer
	cmd := &cobra.Command{}
	cmd.SetOut(&b)
	err := printClaims(cmd, map[string]any{
		"nomad_node_id": "n1", "sub": "node:global:default:n1:default", "iat": float64(1767323045),
		"aud": []any{"nomadproject.io"}, "nomad_node_pool": "default",
	})
	if err != nil {
		t.Fatal(err)
	}
	want := "Claim Key       Claim Value\n" +
		"aud             nomadproject.io\n" +
		"iat             2026-01-02T03:04:05Z\n" +
		"sub             node:global:default:n1:default\n" +
		"nomad_node_id   n1\n" +
		"nomad_node_pool default\n"
	if b.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", b.String(), want)
	}
}

package config

import (
	"os"
	"testing"
)

// BenchmarkParse parses one cluster server file; the agent parses a few
// files once at start, so this is a sanity figure, not a hot path.
func BenchmarkParse(b *testing.B) {
	src, err := os.ReadFile("../examples/cluster/server1.hcl")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := Parse("server1.hcl", src); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLoadMergeCheck is the agent's whole start-up path for a
// configuration: defaults, one file, flags, validation.
func BenchmarkLoadMergeCheck(b *testing.B) {
	flags := &Config{}
	if err := flags.Set("server.bootstrap_expect", "-bootstrap-expect", "3"); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		c, _, err := Load(Default(), "../examples/cluster/server1.hcl")
		if err != nil {
			b.Fatal(err)
		}
		if err := c.Merge(flags).Validate(); err != nil {
			b.Fatal(err)
		}
	}
}

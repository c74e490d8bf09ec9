package taskenv

import (
	"fmt"
	"testing"
)

// BenchmarkBuild builds the environment of a task without an env block on
// a node with a fingerprint's worth of attributes: what a client does for
// every task it starts.
func BenchmarkBuild(b *testing.B) {
	in := fixture()
	in.Task.Env = nil
	for i := range 60 {
		in.Node.Attributes[fmt.Sprintf("attr.%d", i)] = "value"
	}
	b.ReportAllocs()
	for b.Loop() {
		if e := Build(in); len(e.vars) == 0 {
			b.Fatal("empty environment")
		}
	}
}

// BenchmarkBuildNoHostEnv is BenchmarkBuild on a client without host
// variables (the simulated fleet's), for a task with a one-variable env
// block, with the map its driver config takes.
func BenchmarkBuildNoHostEnv(b *testing.B) {
	in := fixture()
	in.HostEnv = nil
	in.Task.Env = map[string]string{"VERSION": "1"}
	b.ReportAllocs()
	for b.Loop() {
		if e := Build(in); len(e.Vars()) == 0 {
			b.Fatal("empty environment")
		}
	}
}

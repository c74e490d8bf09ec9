package jobspec

import (
	"encoding/json"
	"os"
	"testing"
)

func BenchmarkParseHCL(b *testing.B) {
	src, err := os.ReadFile("testdata/runtime-refs.hcl")
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		if _, _, err := Parse("runtime-refs.hcl", src, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseAPIJob(b *testing.B) {
	src, _ := os.ReadFile("testdata/runtime-refs.hcl")
	job, _, err := Parse("runtime-refs.hcl", src, Options{})
	if err != nil {
		b.Fatal(err)
	}
	data, _ := json.Marshal(job)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, _, err := ParseAPIJob(data); err != nil {
			b.Fatal(err)
		}
	}
}

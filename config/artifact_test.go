package config

import (
	"strings"
	"testing"
	"time"
)

// The client's artifact block: parsed, defaulted and checked.
func TestClientArtifact(t *testing.T) {
	src := "client {\n  enabled = true\n  artifact {\n    http_read_timeout = \"5m\"\n    http_max_size = \"1GB\"\n    decompression_file_count_limit = 10\n    decompression_size_limit = \"2MiB\"\n  }\n}\n"
	c, _, err := Parse("a.hcl", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	c = Default().Merge(c)
	a := c.Client.Artifact
	if a.HTTPReadTimeout != 5*time.Minute || a.HTTPMaxSize != "1GB" || a.DecompressionFileCountLimit != 10 || a.DecompressionSizeLimit != "2MiB" {
		t.Fatalf("artifact block %+v", a)
	}
	if d := Default().Client.Artifact; d.HTTPReadTimeout != 30*time.Minute || d.HTTPMaxSize != "100GB" || d.DecompressionFileCountLimit != 4096 {
		t.Fatalf("defaults %+v", d)
	}
	bad, _, err := Parse("b.hcl", []byte("client {\n  enabled = true\n  artifact {\n    http_max_size = \"lots\"\n  }\n}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := Default().Merge(bad).Validate(); err == nil || !strings.Contains(err.Error(), `client.artifact.http_max_size: invalid size "lots"`) || !strings.Contains(err.Error(), "b.hcl:4") {
		t.Fatalf("bad size: %v", err)
	}
	for s, want := range map[string]int64{"100GB": 100e9, "512MiB": 512 << 20, "1024": 1024, "0": 0, "1.5 KB": 1500} {
		if n, err := ParseSize(s); err != nil || n != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", s, n, err, want)
		}
	}
}

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

// host_volume blocks: every one by its name, and a later file's block of
// a name replaces an earlier one's.
func TestClientHostVolumes(t *testing.T) {
	a, _, err := Parse("a.hcl", []byte("client {\n  host_volume \"data\" {\n    path = \"/srv/data\"\n  }\n  host_volume \"certs\" {\n    path      = \"/etc/ssl/certs\"\n    read_only = true\n  }\n}\n"))
	if err != nil {
		t.Fatal(err)
	}
	b, _, err := Parse("b.json", []byte(`{"client": {"host_volume": {"data": {"path": "/mnt/data"}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	c := Default().Merge(a).Merge(b)
	hv := c.Client.HostVolumes
	if len(hv) != 2 || hv["data"].Path != "/mnt/data" || hv["data"].ReadOnly || hv["certs"].Path != "/etc/ssl/certs" || !hv["certs"].ReadOnly {
		t.Fatalf("host volumes %+v", hv)
	}
	if a.Client.HostVolumes["data"].Path != "/srv/data" {
		t.Fatalf("Merge changed its input: %+v", a.Client.HostVolumes)
	}
}

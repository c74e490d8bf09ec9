package config

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse feeds arbitrary files to Parse, and what parses to Merge and
// Check: none may panic, an error is always an *Errors, and every
// diagnostic names its file.
func FuzzParse(f *testing.F) {
	seeds, _ := filepath.Glob("../examples/cluster/*.hcl")
	for _, s := range seeds {
		if b, err := os.ReadFile(s); err == nil {
			f.Add(string(b), false)
		}
	}
	f.Add(validServer, false)
	f.Add("ports {\n  http = 1e40\n}\nclient {\n  meta { a = 1 }\n}\n", false)
	f.Add(`{"server": [{"enabled": true}, {"enabled": false}], "client": {"meta": {"a": [1]}}}`, true)
	f.Add(`{"ports": 5, "name": {"a": 1}}`, true)
	f.Add("plugin \"raw_exec\" {\n  config {\n    enabled = true\n  }\n}\nplugin \"x\" \"y\" {}\nplugin {}\n", false)
	f.Add("tls {\n  http = true\n  rpc = true\n  ca_file = \"/nonexistent\"\n  cert_file = \"\"\n}\n", false)
	f.Add(`{"plugin": [{"raw_exec": [{"config": [{"enabled": true}]}]}, {"docker": {}}], "tls": {"http": true}}`, true)
	f.Add(`{"plugin": {"raw_exec": 5}, "tls": [{"rpc": true}, {"rpc": false}]}`, true)
	f.Fuzz(func(t *testing.T, src string, asJSON bool) {
		name := "fuzz.hcl"
		if asJSON {
			name = "fuzz.json"
		}
		c, _, err := Parse(name, []byte(src))
		if err != nil {
			var es *Errors
			if !errors.As(err, &es) || len(es.Diagnostics) == 0 {
				t.Fatalf("error %v is not a non-empty *Errors", err)
			}
			for _, d := range es.Diagnostics {
				if d.File != name {
					t.Fatalf("diagnostic %q names file %q", d, d.File)
				}
			}
			return
		}
		m := Default().Merge(c)
		_, _ = m.Check()
		_ = DevConfig().Merge(m).Validate()
		_, _, _, _ = m.HTTPAddr(), m.RaftAddr(), m.AdvertiseHTTP(), m.AdvertiseRaft()
	})
}

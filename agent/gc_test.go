package agent

import (
	"testing"

	"github.com/droverhq/drover/config"
)

func TestServerGCPercent(t *testing.T) {
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == "GOGC" {
				return v
			}
			return ""
		}
	}
	for _, c := range []struct {
		name string
		cfg  Config
		gogc string
		want int
	}{
		{"server, default", Config{Server: true}, "", config.DefaultServerGCPercent},
		{"dev, default", Config{Dev: true}, "", config.DefaultServerGCPercent},
		{"server, gc_percent", Config{Server: true, GCPercent: 150}, "", 150},
		{"server, GOGC set", Config{Server: true, GCPercent: 150}, "100", 0},
		{"server, GOGC off", Config{Server: true}, "off", 0},
		{"client only", Config{Client: true, GCPercent: 300}, "", 0},
	} {
		if got := ServerGCPercent(c.cfg, env(c.gogc)); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
}

package config

import (
	"strings"
	"testing"
	"time"
)

func TestClientIntroductionBlock(t *testing.T) {
	c, _, err := Parse("v.hcl", []byte(`data_dir = "/tmp/d"
server {
  enabled = true
  client_introduction {
    enforcement          = "strict"
    default_identity_ttl = "10m"
    max_identity_ttl     = "1h"
  }
}
client {
  intro_token = "eyJhbGciOi.x.y"
}
`))
	if err != nil {
		t.Fatal(err)
	}
	got := Default().Merge(c)
	if _, err := got.Check(); err != nil {
		t.Fatal(err)
	}
	ci := got.Server.ClientIntroduction
	if ci.Enforcement != "strict" || ci.DefaultIdentityTTL != 10*time.Minute || ci.MaxIdentityTTL != time.Hour || got.Client.IntroToken != "eyJhbGciOi.x.y" {
		t.Fatalf("parsed %+v, %q", ci, got.Client.IntroToken)
	}
	if r := (ClientIntroduction{}).Resolved(); r.Enforcement != "warn" || r.DefaultIdentityTTL != 5*time.Minute || r.MaxIdentityTTL != 30*time.Minute {
		t.Fatalf("defaults = %+v", r)
	}
	for src, msg := range map[string]string{
		`enforcement = "loud"`: `server.client_introduction.enforcement must be "none", "warn" or "strict" (got "loud")`,
		`default_identity_ttl = "2h"` + "\n" + `max_identity_ttl = "1h"`: `max_identity_ttl (1h0m0s) must be greater than or equal to default_identity_ttl (2h0m0s)`,
		`max_identity_ttl = "-1m"`:                                       `max_identity_ttl must be greater than 0`,
	} {
		_, err := checkSrc(t, "data_dir = \"/tmp/d\"\nserver {\n  enabled = true\n  client_introduction {\n"+src+"\n  }\n}\n")
		if err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%s: err = %v, want %q", src, err, msg)
		}
	}
}

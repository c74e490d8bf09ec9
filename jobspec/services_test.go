package jobspec

import (
	"slices"
	"strings"
	"testing"
)

// canary_tags, address_mode and on_update reach the job; a check without
// on_update takes its service's.
func TestServiceDiscoveryFields(t *testing.T) {
	src := `job "j" {
  group "g" {
    network {
      port "http" {}
    }
    service {
      name         = "api"
      provider     = "nomad"
      port         = "http"
      tags         = ["live"]
      canary_tags  = ["canary"]
      address_mode = "host"
      on_update    = "ignore_warnings"
      check {
        type     = "tcp"
        interval = "5s"
        timeout  = "1s"
      }
      check {
        type      = "http"
        path      = "/ready"
        interval  = "5s"
        timeout   = "1s"
        on_update = "ignore"
      }
    }
    task "t" {
      driver = "mock"
    }
  }
}
`
	job, _, err := Parse("j.hcl", []byte(src), Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := job.TaskGroups[0].Services[0]
	if !slices.Equal(s.CanaryTags, []string{"canary"}) || s.AddressMode != "host" || s.OnUpdate != "ignore_warnings" {
		t.Fatalf("service = %+v", s)
	}
	if s.Checks[0].OnUpdate != "ignore_warnings" || s.Checks[1].OnUpdate != "ignore" {
		t.Fatalf("checks' on_update = %q, %q; want ignore_warnings (the service's), ignore", s.Checks[0].OnUpdate, s.Checks[1].OnUpdate)
	}
	for _, c := range []struct{ from, to, want string }{
		{`address_mode = "host"`, `address_mode = "alloc"`, `"alloc" needs an address of the allocation's own, which a group has in "bridge" mode (the group's network mode is host)`},
		{`address_mode = "host"`, `address_mode = "driver"`, `"driver" is not supported by drover`},
		{`on_update    = "ignore_warnings"`, `on_update = "later"`, `must be require_healthy, ignore_warnings or ignore`},
	} {
		_, _, err := Parse("j.hcl", []byte(strings.Replace(src, c.from, c.to, 1)), Options{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.to, err, c.want)
		}
	}
}

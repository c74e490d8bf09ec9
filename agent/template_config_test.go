package agent

import (
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/client/template"
	"github.com/droverhq/drover/config"
)

// TestClientTemplateBlock: the client's template block reaches the
// template renderer's settings; unset fields keep Nomad's defaults; bad
// values and Consul's settings are reported where they are written.
func TestClientTemplateBlock(t *testing.T) {
	c, warns, err := config.Parse("agent.hcl", []byte(`data_dir = "/tmp/x"
client {
  enabled = true
  servers = ["127.0.0.1:4646"]
  template {
    function_denylist    = []
    disable_file_sandbox = true
    max_stale            = "10s"
    wait {
      min = "0s"
      max = "0s"
    }
    wait_bounds {
      max = "1m"
    }
    nomad_retry {
      attempts    = 3
      backoff     = "100ms"
    }
    render_timeout = "30s"
    consul_retry {
      attempts = 1
    }
  }
}
`))
	if err != nil {
		t.Fatal(err)
	}
	if len(warns) != 1 || !strings.Contains(warns[0].String(), "agent.hcl:21:5") || !strings.Contains(warns[0].String(), "consul_retry") {
		t.Errorf("warnings %v", warns)
	}
	merged := config.Default().Merge(c)
	if _, err := merged.Check(); err != nil {
		t.Fatal(err)
	}
	s := FromConfig(merged).Templates
	if s.FunctionDenylist == nil || len(s.FunctionDenylist) != 0 || !s.DisableSandbox || s.MaxStale != 10*time.Second ||
		s.NomadRetry != (template.Retry{Attempts: 3, Backoff: 100 * time.Millisecond}) || s.RenderTimeout != 30*time.Second {
		t.Errorf("settings %+v", s)
	}
	if s.Wait == nil || *s.Wait.Min != 0 || *s.Wait.Max != 0 || s.WaitBounds == nil || s.WaitBounds.Min != nil || *s.WaitBounds.Max != time.Minute {
		t.Errorf("wait %+v bounds %+v", s.Wait, s.WaitBounds)
	}

	def := FromConfig(config.Default()).Templates
	if def.FunctionDenylist != nil || def.Wait == nil || *def.Wait.Min != template.DefaultWaitMin || def.WaitBounds != nil {
		t.Errorf("defaults %+v", def)
	}

	bad, _, err := config.Parse("agent.hcl", []byte("data_dir = \"/tmp/x\"\nclient {\n  enabled = true\n  servers = [\"127.0.0.1:4646\"]\n  template {\n    wait {\n      min = \"10s\"\n      max = \"1s\"\n    }\n    render_timeout = \"-1s\"\n  }\n}\n"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = config.Default().Merge(bad).Check()
	if err == nil || !strings.Contains(err.Error(), "client.template.wait.max must not be less than client.template.wait.min") ||
		!strings.Contains(err.Error(), "client.template.render_timeout must not be negative") {
		t.Fatalf("check: %v", err)
	}
}

package config

import (
	"strings"
	"testing"
)

// Nomad's ui block: enabled turns the web UI off; its other blocks are
// accepted with a located warning.
func TestUIBlock(t *testing.T) {
	if !Default().UI.Enabled || !DevConfig().UI.Enabled {
		t.Fatal("the UI is on by default, as Nomad's")
	}
	c, warns, err := Parse("agent.hcl", []byte(`
ui {
  enabled = false
  label {
    text = "prod"
  }
}
`))
	if err != nil {
		t.Fatal(err)
	}
	if Default().Merge(c).UI.Enabled {
		t.Fatal("ui.enabled = false left the UI on")
	}
	var w []string
	for _, d := range warns {
		w = append(w, d.String())
	}
	if all := strings.Join(w, "\n"); !strings.Contains(all, "agent.hcl:4:3") || !strings.Contains(all, "ui.label") {
		t.Errorf("warnings %q: want ui.label located at agent.hcl:4:3", all)
	}
	if _, _, err := Parse("a.hcl", []byte("ui {\n  enabled = \"no\"\n}")); err == nil || !strings.Contains(err.Error(), "a.hcl:2:") {
		t.Errorf("ui.enabled = \"no\": %v, want a located error", err)
	}
}

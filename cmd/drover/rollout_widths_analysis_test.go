package main

import (
	"strings"
	"testing"

	"github.com/droverhq/drover/structs"
)

// The rollout plan shows an Analysis column when some batch is gated by
// an analysis, and none otherwise.
func TestPrintRolloutPlanAnalysis(t *testing.T) {
	plan := []structs.RolloutBatch{
		{Group: "web", Batch: 1, Allocs: []string{"j.web[0]"}, Analysis: []string{"errors", "latency"}},
		{Group: "web", Batch: 2, Allocs: []string{"j.web[1]"}},
	}
	var b strings.Builder
	printRolloutPlan(&b, "j", plan)
	out := b.String()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 4 || !strings.HasSuffix(strings.TrimSpace(lines[1]), "Analysis") ||
		!strings.HasSuffix(strings.TrimSpace(lines[2]), "errors, latency") || !strings.HasSuffix(strings.TrimSpace(lines[3]), "-") {
		t.Errorf("got\n%s", out)
	}
	plan[0].Analysis = nil
	b.Reset()
	printRolloutPlan(&b, "j", plan)
	if strings.Contains(b.String(), "Analysis") {
		t.Errorf("an Analysis column without analyses:\n%s", b.String())
	}
}

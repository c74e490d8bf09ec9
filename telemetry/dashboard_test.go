package telemetry

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"
)

// The example Grafana dashboard queries only figures drover publishes:
// every nomad_* name in its expressions is a catalog entry's Prometheus
// name, or one with a summary's _sum or _count.
func TestGrafanaDashboardReadsPublishedMetrics(t *testing.T) {
	b, err := os.ReadFile("../examples/grafana/drover.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string
			Targets []struct{ Expr string }
		}
	}
	if err := json.Unmarshal(b, &dash); err != nil {
		t.Fatal(err)
	}
	known := map[string]bool{}
	for _, m := range Catalog {
		n := strings.ReplaceAll(m.Name, ".", "_")
		known[n] = true
		if m.Kind == Timer || m.Kind == Sample {
			known[n+"_sum"], known[n+"_count"] = true, true
		}
	}
	name := regexp.MustCompile(`nomad_[A-Za-z0-9_]+`)
	exprs := 0
	for _, p := range dash.Panels {
		for _, tg := range p.Targets {
			exprs++
			for _, n := range name.FindAllString(tg.Expr, -1) {
				if !known[n] {
					t.Errorf("panel %q queries %s, which drover does not publish", p.Title, n)
				}
			}
		}
	}
	if exprs < 10 {
		t.Fatalf("only %d queries", exprs)
	}
}

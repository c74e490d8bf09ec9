package structs

import (
	"encoding/json"
	"testing"

	"github.com/droverhq/drover/internal/wire"
)

// A placement's score kept compact (ScoreNode, NodeScore) reads and shows
// as the entry of Scores it stands for, and survives the log's encoding.
func TestAllocationMetricCompactScore(t *testing.T) {
	full := &AllocationMetric{NodesEvaluated: 3, Scores: map[string]float64{"n1" + NormalizedScoreSuffix: 0.75}}
	want, err := json.Marshal(full)
	if err != nil {
		t.Fatal(err)
	}
	c := *full
	c.CompactScore("n2") // not its node: kept as it is
	if c.ScoreNode != "" || len(c.Scores) != 1 {
		t.Fatalf("compacted for another node: %+v", c)
	}
	c.CompactScore("n1")
	if c.ScoreNode != "n1" || c.NodeScore != 0.75 || c.Scores != nil || len(full.Scores) != 1 {
		t.Fatalf("compacted %+v, original %+v", c, full)
	}
	for _, m := range []*AllocationMetric{full, &c} {
		if s, ok := m.PlacementScore("n1"); !ok || s != 0.75 {
			t.Errorf("%+v: score %v %v, want 0.75", m, s, ok)
		}
		if _, ok := m.PlacementScore("n2"); ok {
			t.Errorf("%+v: a score for another node", m)
		}
	}
	got, err := json.Marshal(&c)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Fatalf("JSON %s, want %s", got, want)
	}
	// Within an alloc, by value or by pointer, as the API writes it.
	a := Allocation{ID: "a", Metrics: &c}
	b, _ := json.Marshal(a)
	var back struct{ Metrics map[string]any }
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if sc, _ := back.Metrics["Scores"].(map[string]any); sc["n1"+NormalizedScoreSuffix] != 0.75 || back.Metrics["ScoreNode"] != nil {
		t.Fatalf("alloc JSON %s", b)
	}

	enc, err := wire.Encode(&c)
	if err != nil {
		t.Fatal(err)
	}
	var dec AllocationMetric
	if err := wire.Decode(enc, &dec); err != nil {
		t.Fatal(err)
	}
	if dec.ScoreNode != "n1" || dec.NodeScore != 0.75 {
		t.Fatalf("decoded %+v", dec)
	}
}

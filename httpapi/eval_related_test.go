package httpapi

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/structs"
)

// GET /v1/evaluation/{id}?related=true answers the evaluations linked to
// it, one from another (NextEval, PreviousEval, BlockedEval), as Nomad's;
// without related, none.
func TestEvalInfoRelated(t *testing.T) {
	b, srv := newTestAPI(t)
	evals := []*structs.Evaluation{
		{ID: "e1", Namespace: "default", JobID: "web", Status: structs.EvalStatusComplete, NextEval: "e2"},
		{ID: "e2", Namespace: "default", JobID: "web", Status: structs.EvalStatusComplete, PreviousEval: "e1", BlockedEval: "e3"},
		{ID: "e3", Namespace: "default", JobID: "web", Status: structs.EvalStatusBlocked, PreviousEval: "e2"},
		{ID: "e4", Namespace: "default", JobID: "web", Status: structs.EvalStatusComplete},
	}
	if _, _, err := b.Apply(context.Background(), fsm.EvalUpdateRequestType, &structs.EvalUpdateRequest{Evals: evals}); err != nil {
		t.Fatal(err)
	}
	code, body, _ := do(t, "GET", srv.URL+"/v1/evaluation/e1?related=true", "")
	var got struct {
		ID           string
		RelatedEvals []struct{ ID string }
	}
	if err := json.Unmarshal([]byte(body), &got); code != 200 || err != nil || got.ID != "e1" || len(got.RelatedEvals) != 2 ||
		got.RelatedEvals[0].ID == "e4" || got.RelatedEvals[1].ID == "e4" {
		t.Fatalf("related: %d %s", code, body)
	}
	code, body, _ = do(t, "GET", srv.URL+"/v1/evaluation/e4", "")
	var plain map[string]any
	if err := json.Unmarshal([]byte(body), &plain); code != 200 || err != nil || plain["RelatedEvals"] != nil {
		t.Fatalf("plain: %d %s", code, body)
	}
}

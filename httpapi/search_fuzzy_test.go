package httpapi

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/state/statetest"
	"github.com/droverhq/drover/structs"
)

func TestFuzzySearch(t *testing.T) {
	b, srv := newMemAPI(t)
	seedWeb(t, b)
	stored, _ := b.State().Snapshot().JobByID("default", "web")
	j := stored.Copy()
	j.TaskGroups[0].Tasks[0].Driver = structs.DriverRawExec
	j.TaskGroups[0].Tasks[0].Config = map[string]any{"command": "/bin/webserver"}
	mustApply(t, b, fsm.JobRegisterRequestType, &structs.JobRegisterRequest{Job: j, SubmitTime: statetest.T0.UnixNano()})
	u := srv.URL + "/v1/search/fuzzy"
	code, body, _ := do(t, "POST", u, `{"Text":"WEB","Context":"all"}`)
	var out FuzzySearchResponse
	if err := json.Unmarshal([]byte(body), &out); err != nil || code != 200 {
		t.Fatalf("search: %d %s", code, body)
	}
	g := j.TaskGroups[0]
	if m := out.Matches["jobs"]; len(m) != 1 || m[0].ID != j.Name || fmt.Sprint(m[0].Scope) != "[default web]" {
		t.Errorf("jobs: %+v", m)
	}
	if m := out.Matches["commands"]; len(m) != 1 || m[0].ID != "/bin/webserver" || fmt.Sprint(m[0].Scope) != fmt.Sprint([]string{"default", "web", g.Name, g.Tasks[0].Name}) {
		t.Errorf("commands: %+v", m)
	}
	if m := out.Matches["allocs"]; len(m) != 2 || m[0].Scope[0] != "default" {
		t.Errorf("allocs: %+v", m)
	}
	if _, ok := out.Truncations["nodes"]; !ok || out.Truncations["jobs"] {
		t.Errorf("truncations: %v", out.Truncations)
	}
	code, body, _ = do(t, "POST", u, `{"Text":"web","Context":"commands"}`)
	out = FuzzySearchResponse{}
	if err := json.Unmarshal([]byte(body), &out); err != nil || code != 200 || len(out.Matches) != 1 || len(out.Matches["commands"]) != 1 {
		t.Errorf("one context: %d %s", code, body)
	}
	for in, want := range map[string]string{
		`{"Text":"w"}`:                    "fuzzy search query must be at least 2 characters, got 1",
		`{"Text":"web","Context":"nope"}`: `invalid context "nope"`,
	} {
		if code, body, _ := do(t, "POST", u, in); code != 400 || !strings.Contains(body, want) {
			t.Errorf("%s: %d %s", in, code, body)
		}
	}
}

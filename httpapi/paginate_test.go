package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"testing"

	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/structs"
)

// The evaluations' and variables' lists page as Nomad's: ?per_page=N
// answers N items and the next page's token in X-Nomad-NextToken, which
// ?next_token= starts the next page at; the last page has no token.
func TestListsPage(t *testing.T) {
	b, srv := newTestAPI(t)
	var evals []*structs.Evaluation
	for i := range 5 {
		evals = append(evals, &structs.Evaluation{ID: fmt.Sprintf("e%d", i), Namespace: "default", JobID: "web", Status: structs.EvalStatusComplete})
	}
	if _, _, err := b.Apply(context.Background(), fsm.EvalUpdateRequestType, &structs.EvalUpdateRequest{Evals: evals}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"a", "b", "c"} {
		if code, body, _ := do(t, "PUT", srv.URL+"/v1/var/"+p, `{"Items":{"k":"v"}}`); code != 200 {
			t.Fatalf("var %s: %d %s", p, code, body)
		}
	}
	pages := func(path string, per int) [][]string {
		t.Helper()
		var out [][]string
		token := ""
		for range 10 {
			code, body, h := do(t, "GET", fmt.Sprintf("%s%s?per_page=%d&next_token=%s", srv.URL, path, per, url.QueryEscape(token)), "")
			var items []struct{ ID, Path string }
			if code != 200 || json.Unmarshal([]byte(body), &items) != nil {
				t.Fatalf("%s: %d %s", path, code, body)
			}
			var page []string
			for _, it := range items {
				page = append(page, it.ID+it.Path)
			}
			out = append(out, page)
			if token = h.Get(NextTokenHeader); token == "" {
				return out
			}
		}
		t.Fatalf("%s: no last page", path)
		return nil
	}
	if got := fmt.Sprint(pages("/v1/evaluations", 2)); got != "[[e0 e1] [e2 e3] [e4]]" {
		t.Errorf("evaluations: %s", got)
	}
	if got := fmt.Sprint(pages("/v1/vars", 1)); got != "[[a] [b] [c]]" {
		t.Errorf("variables: %s", got)
	}
	if got := fmt.Sprint(pages("/v1/evaluations", 0)); got != "[[e0 e1 e2 e3 e4]]" {
		t.Errorf("evaluations without per_page: %s", got)
	}
	if code, _, _ := do(t, "GET", srv.URL+"/v1/evaluations?per_page=x", ""); code != 400 {
		t.Errorf("per_page=x: %d", code)
	}
}

package httpapi

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestValidateJobAnswersProblemsNotErrors(t *testing.T) {
	_, srv := newTestAPI(t)

	code, body, _ := do(t, "PUT", srv.URL+"/v1/validate/job", webJob)
	var ok JobValidateResponse
	if code != 200 || json.Unmarshal([]byte(body), &ok) != nil || ok.Error != "" || len(ok.ValidationErrors) != 0 {
		t.Fatalf("valid job: %d %s", code, body)
	}

	invalid := strings.Replace(webJob, `"Count":1`, `"Count":-1`, 1)
	if invalid == webJob {
		t.Fatal("fixture has no Count to break")
	}
	code, body, _ = do(t, "PUT", srv.URL+"/v1/validate/job", invalid)
	var bad JobValidateResponse
	if code != 200 || json.Unmarshal([]byte(body), &bad) != nil || len(bad.ValidationErrors) == 0 ||
		!strings.Contains(bad.Error, "Count") {
		t.Fatalf("invalid job: %d %s", code, body)
	}

	for _, b := range []string{`{"Job":`, `{"Jobb": {}}`, `{}`} {
		if code, body, _ := do(t, "PUT", srv.URL+"/v1/validate/job", b); code != 400 || body == "" {
			t.Fatalf("body %s: %d %s", b, code, body)
		}
	}

	code, body, _ = do(t, "GET", srv.URL+"/v1/regions", "")
	if code != 200 || strings.TrimSpace(body) != `["global"]` {
		t.Fatalf("regions: %d %s", code, body)
	}
}

func TestSearchRefusesUnknownContexts(t *testing.T) {
	_, srv := newTestAPI(t)
	code, body, _ := do(t, "PUT", srv.URL+"/v1/search", `{"Prefix": "a", "Context": "volumes"}`)
	if code != 400 || !strings.Contains(body, `invalid context "volumes"`) {
		t.Fatalf("unknown context: %d %s", code, body)
	}
	code, body, _ = do(t, "PUT", srv.URL+"/v1/search", `{"Prefix": "zz", "Context": "all"}`)
	var resp SearchResponse
	if code != 200 || json.Unmarshal([]byte(body), &resp) != nil || len(resp.Matches) != 5 || len(resp.Matches["jobs"]) != 0 {
		t.Fatalf("search: %d %s", code, body)
	}
}

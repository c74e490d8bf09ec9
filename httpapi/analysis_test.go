package httpapi

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// A job whose analysis names no address is refused (400) by servers
// without analysis { prometheus_address }, at registration, in a plan and
// in validation, with a message naming both; with the address it passes.
func TestAnalysisWithoutAddress(t *testing.T) {
	job := `{"Job": {"ID": "web", "Name": "web", "Type": "service", "TaskGroups": [{"Name": "g", "Count": 1,
  "Update": {"Analyses": [{"Name": "errors", "Query": "up", "Success": "result == 1"}]},
  "Tasks": [{"Name": "t", "Driver": "mock"}]}]}}`
	post := func(url, path string) (int, string) {
		resp, err := http.Post(url+path, "application/json", strings.NewReader(job))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	without := httptest.NewServer(New(NewMemBackend(), nil).Handler())
	defer without.Close()
	for _, path := range []string{"/v1/jobs", "/v1/job/web", "/v1/job/web/plan"} {
		code, body := post(without.URL, path)
		if code != http.StatusBadRequest || !strings.Contains(body, `analysis "errors" of group "g" names no address`) ||
			!strings.Contains(body, "analysis.prometheus_address") || !strings.Contains(body, "Job.TaskGroups[0].Update.Analyses[0].Address") {
			t.Errorf("%s: %d %s", path, code, body)
		}
	}
	code, body := post(without.URL, "/v1/validate/job")
	if code != http.StatusOK || !strings.Contains(body, "analysis.prometheus_address") {
		t.Errorf("validate: %d %s", code, body)
	}

	with := httptest.NewServer(New(NewMemBackend(), nil, WithPrometheusAddress("http://127.0.0.1:9090")).Handler())
	defer with.Close()
	for _, path := range []string{"/v1/jobs", "/v1/job/web/plan"} {
		if code, body := post(with.URL, path); code != http.StatusOK {
			t.Errorf("with an address, %s: %d %s", path, code, body)
		}
	}
}

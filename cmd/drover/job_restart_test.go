package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/droverhq/drover/structs"
)

// restartServer fakes the endpoints job restart uses: the restart answers
// deployment d1, whose reads walk through states (one per read, the last
// repeated); pause and fail requests are recorded.
type restartServer struct {
	mu     sync.Mutex
	states []*structs.Deployment
	reads  int
	verbs  []string
	body   map[string]any
}

func (s *restartServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case r.URL.Path == "/v1/jobs":
		_ = json.NewEncoder(w).Encode([]map[string]any{{"ID": "web", "Name": "web", "Type": "service"}})
	case r.URL.Path == "/v1/job/web/restart":
		s.body = map[string]any{}
		_ = json.NewDecoder(r.Body).Decode(&s.body)
		_ = json.NewEncoder(w).Encode(map[string]any{"DeploymentID": "d1", "EvalID": "e1", "Index": 3})
	case r.URL.Path == "/v1/deployment/d1":
		d := s.states[min(s.reads, len(s.states)-1)]
		s.reads++
		w.Header().Set("X-Nomad-Index", fmt.Sprint(d.ModifyIndex))
		_ = json.NewEncoder(w).Encode(d)
	case strings.HasPrefix(r.URL.Path, "/v1/deployment/pause/"), strings.HasPrefix(r.URL.Path, "/v1/deployment/fail/"):
		var body map[string]any
		_ = json.NewDecoder(r.Body).Decode(&body)
		verb := strings.Split(r.URL.Path, "/")[3]
		if verb == "pause" && body["Pause"] == false {
			verb = "resume"
		}
		s.verbs = append(s.verbs, verb)
		_ = json.NewEncoder(w).Encode(map[string]any{"Index": 9})
	default:
		http.Error(w, "unexpected "+r.URL.Path, http.StatusNotFound)
	}
}

func restartDep(index uint64, status, desc string) *structs.Deployment {
	return &structs.Deployment{ID: "d1", JobID: "web", Status: status, StatusDescription: desc, ModifyIndex: index,
		Restart: &structs.RestartSpec{Groups: []string{"web"}}}
}

// -batch-wait ask asks after each batch: yes resumes the restart, no
// leaves it paused (exit 1); -on-error ask: no fails it; an operator's
// pause is waited out without a question.
func TestJobRestartAsks(t *testing.T) {
	checkpoint := "Deployment paused at checkpoint 2 of group web (2/6 healthy)"
	for _, c := range []struct {
		name, stdin string
		args        []string
		states      []*structs.Deployment
		code        int
		verbs       string
		out         string
	}{
		{"batch yes", "y\n", []string{"-batch-wait", "ask"}, []*structs.Deployment{
			restartDep(5, structs.DeploymentStatusPaused, checkpoint),
			restartDep(6, structs.DeploymentStatusRunning, structs.RestartDescription(false)),
			restartDep(7, structs.DeploymentStatusSuccessful, structs.DeploymentStatusDescriptionSuccessful),
		}, 0, "resume", "Restart the next batch? [y/N]"},
		{"batch no", "n\n", []string{"-batch-wait", "ask"}, []*structs.Deployment{
			restartDep(5, structs.DeploymentStatusPaused, checkpoint),
		}, 1, "", "left paused"},
		{"error no", "\n", []string{"-on-error", "ask"}, []*structs.Deployment{
			restartDep(5, structs.DeploymentStatusPaused, structs.DeploymentStatusDescriptionPausedAllocations),
			restartDep(6, structs.DeploymentStatusFailed, structs.DeploymentStatusDescriptionFailedByUser),
		}, 1, "fail", "An allocation failed to restart"},
		{"job checkpoint", "", nil, []*structs.Deployment{
			restartDep(5, structs.DeploymentStatusPaused, checkpoint),
			restartDep(6, structs.DeploymentStatusRunning, structs.RestartDescription(false)),
			restartDep(7, structs.DeploymentStatusSuccessful, structs.DeploymentStatusDescriptionSuccessful),
		}, 0, "", "successful"},
		{"operator pause", "", nil, []*structs.Deployment{
			restartDep(5, structs.DeploymentStatusPaused, structs.DeploymentStatusDescriptionPaused),
			restartDep(6, structs.DeploymentStatusRunning, structs.RestartDescription(false)),
			restartDep(7, structs.DeploymentStatusSuccessful, structs.DeploymentStatusDescriptionSuccessful),
		}, 0, "", "successful"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := &restartServer{states: c.states}
			srv := httptest.NewServer(s)
			defer srv.Close()
			args := append(append([]string{"job", "restart", "-address", srv.URL}, c.args...), "web")
			code, out, errOut := runCLI(t, c.stdin, args...)
			if code != c.code || !strings.Contains(out+errOut, c.out) {
				t.Fatalf("exit %d (want %d), output lacks %q?\n%s%s", code, c.code, c.out, out, errOut)
			}
			if got := strings.Join(s.verbs, ","); got != c.verbs {
				t.Fatalf("verbs %q, want %q", got, c.verbs)
			}
		})
	}
}

// -yes turns -batch-wait ask into no pause at all; the flags reach the
// request as given.
func TestJobRestartRequest(t *testing.T) {
	s := &restartServer{states: []*structs.Deployment{restartDep(7, structs.DeploymentStatusSuccessful, "")}}
	srv := httptest.NewServer(s)
	defer srv.Close()
	code, out, errOut := runCLI(t, "", "job", "restart", "-address", srv.URL, "-yes", "-batch-wait", "ask", "-batch-size", "25%",
		"-group", "web", "-task", "app", "-on-error", "fail", "web")
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	b := s.body
	if b["BatchWait"] != nil || b["BatchSize"] != "25%" || b["OnError"] != "fail" || fmt.Sprint(b["Groups"]) != "[web]" || fmt.Sprint(b["Tasks"]) != "[app]" {
		t.Fatalf("request %v", b)
	}
	code, _, errOut = runCLI(t, "", "job", "restart", "-address", srv.URL, "-on-error", "maybe", "web")
	if code != 1 || !strings.Contains(errOut, "-on-error") {
		t.Fatalf("a bad -on-error: exit %d %s", code, errOut)
	}
}

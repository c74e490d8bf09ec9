package structs

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

func TestPlanResultsIsNoOp(t *testing.T) {
	var nilReq *ApplyPlanResultsRequest
	cases := []struct {
		name string
		req  *ApplyPlanResultsRequest
		want bool
	}{
		{"nil", nilReq, true},
		{"only eval and time", &ApplyPlanResultsRequest{EvalID: "e", UpdatedAt: 5, Job: &Job{ID: "j"}}, true},
		{"placement", &ApplyPlanResultsRequest{AllocsPlaced: []*Allocation{{ID: "a"}}}, false},
		{"in-place", &ApplyPlanResultsRequest{AllocsUpdated: []*Allocation{{ID: "a"}}}, false},
		{"stop", &ApplyPlanResultsRequest{AllocsStopped: []*AllocStopUpdate{{AllocID: "a"}}}, false},
		{"deployment", &ApplyPlanResultsRequest{Deployment: &Deployment{ID: "d"}}, false},
		{"deployment update", &ApplyPlanResultsRequest{DeploymentUpdates: []*DeploymentStatusUpdate{{DeploymentID: "d"}}}, false},
		{"follow-up", &ApplyPlanResultsRequest{FollowupEvals: []*Evaluation{{ID: "e"}}}, false},
	}
	for _, c := range cases {
		if got := c.req.IsNoOp(); got != c.want {
			t.Errorf("%s: IsNoOp = %v, want %v", c.name, got, c.want)
		}
	}
}

// TestRequestsJSONRoundTrip: requests may also travel as JSON (between
// servers, in tools); every field must survive, times to the nanosecond.
func TestRequestsJSONRoundTrip(t *testing.T) {
	healthy := true
	at := time.Date(2026, 3, 4, 5, 6, 7, 89, time.UTC)
	reqs := []any{
		&NodeRegisterRequest{Node: &Node{ID: "n", Status: NodeStatusReady, StatusUpdatedAt: 9}},
		&NodeUpdateStatusRequest{NodeID: "n", Status: NodeStatusDown, UpdatedAt: 10, Evals: []*Evaluation{{ID: "e"}}},
		&JobRegisterRequest{Job: &Job{ID: "j", Version: 2}, Eval: &Evaluation{ID: "e"}, Deployment: &Deployment{ID: "d"}, SubmitTime: 11},
		&JobDeregisterRequest{Namespace: "default", JobID: "j", Purge: true, Eval: &Evaluation{ID: "e"}, SubmitTime: 12},
		&EvalUpdateRequest{Evals: []*Evaluation{{ID: "e", Status: EvalStatusBlocked, WaitUntil: at}}},
		&ApplyPlanResultsRequest{EvalID: "e", AllocsPlaced: []*Allocation{{ID: "a", DeploymentStatus: &AllocDeploymentStatus{Canary: true}}},
			AllocsStopped:     []*AllocStopUpdate{{AllocID: "b", DesiredDescription: AllocNotNeeded, ClientStatus: AllocClientStatusLost}},
			DeploymentUpdates: []*DeploymentStatusUpdate{{DeploymentID: "d", Status: DeploymentStatusCancelled}}, UpdatedAt: 13},
		&AllocClientUpdateRequest{Allocs: []*Allocation{{ID: "a", DeploymentStatus: &AllocDeploymentStatus{Healthy: &healthy, Timestamp: at}}}, UpdatedAt: 14},
		&DeploymentStatusUpdateRequest{DeploymentUpdate: &DeploymentStatusUpdate{DeploymentID: "d", Status: DeploymentStatusPaused}, Job: &Job{ID: "j"}, UpdatedAt: 15},
		&DeploymentPromoteRequest{DeploymentID: "d", Groups: []string{"web"}, PromotedAt: at},
		&DeploymentAllocHealthRequest{DeploymentID: "d", HealthyAllocationIDs: []string{"a"}, UnhealthyAllocationIDs: []string{"b"}, Timestamp: at},
		&JobStabilityRequest{Namespace: "default", JobID: "j", JobVersion: 3, Stable: true},
		&NodeDeregisterRequest{NodeIDs: []string{"n"}},
		&EvalReapRequest{Evals: []string{"e"}, Allocs: []string{"a"}},
		&JobRegisterRequest{Job: &Job{ID: "j"}, EnforceIndex: true, JobModifyIndex: 7},
	}
	for _, req := range reqs {
		b, err := json.Marshal(req)
		if err != nil {
			t.Fatalf("%T: %v", req, err)
		}
		out := reflect.New(reflect.TypeOf(req).Elem()).Interface()
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%T: %v", req, err)
		}
		if !reflect.DeepEqual(req, out) {
			t.Errorf("%T changed in a JSON round trip:\n%s", req, b)
		}
	}
}

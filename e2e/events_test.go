package e2e

import (
	"context"
	"testing"
	"time"

	nomad "github.com/hashicorp/nomad/api"
)

// The official Go client's event stream against a drover server running
// its real scheduler, deployment watcher and a client: a job's rollout
// shows up as Nomad's events, with payloads the client decodes.
func TestEventStreamNomadGoClient(t *testing.T) {
	nc := startInProcessCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	topics := map[nomad.Topic][]string{
		nomad.TopicJob: {"web"}, nomad.TopicEvaluation: {"web"}, nomad.TopicAllocation: {"web"}, nomad.TopicDeployment: {"web"},
	}
	ch, err := nc.EventStream().Stream(ctx, topics, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := nc.Jobs().Register(nomadJob(2, 0, "1h", false), nil); err != nil {
		t.Fatal(err)
	}

	// What the rollout must show, each with a payload that decodes.
	want := map[string]bool{
		"Job/JobRegistered": false, "Evaluation/JobRegistered": false, "Allocation/PlanResult": false,
		"Evaluation/PlanResult": false, "Allocation/AllocationUpdated": false,
		"Deployment/DeploymentStatusUpdate": false,
	}
	missing := func() []string {
		var out []string
		for k, seen := range want {
			if !seen {
				out = append(out, k)
			}
		}
		return out
	}
	var lastIndex, healthyIndex uint64
	var successful *nomad.Deployment
	for len(missing()) > 0 {
		var batch *nomad.Events
		select {
		case batch = <-ch:
		case <-ctx.Done():
			t.Fatalf("events not seen: %v", missing())
		}
		if batch == nil || batch.Err != nil {
			t.Fatalf("stream ended: %+v", batch)
		}
		if batch.Index <= lastIndex {
			t.Fatalf("frame index %d after %d", batch.Index, lastIndex)
		}
		lastIndex = batch.Index
		for _, e := range batch.Events {
			if e.Index != batch.Index {
				t.Fatalf("event index %d in frame %d", e.Index, batch.Index)
			}
			want[string(e.Topic)+"/"+e.Type] = true
			switch e.Topic {
			case nomad.TopicJob:
				j, err := e.Job()
				if err != nil || j == nil || *j.ID != "web" || len(j.TaskGroups) != 1 {
					t.Fatalf("job payload %+v: %v", j, err)
				}
			case nomad.TopicEvaluation:
				ev, err := e.Evaluation()
				if err != nil || ev == nil || ev.JobID != "web" || ev.ID != e.Key {
					t.Fatalf("evaluation payload %+v: %v", ev, err)
				}
			case nomad.TopicAllocation:
				a, err := e.Allocation()
				if err != nil || a == nil || a.JobID != "web" || a.ID != e.Key || a.TaskGroup != "web" {
					t.Fatalf("allocation payload %+v: %v", a, err)
				}
				if a.DeploymentStatus != nil && a.DeploymentStatus.Healthy != nil && *a.DeploymentStatus.Healthy {
					healthyIndex = e.Index
				}
			case nomad.TopicDeployment:
				d, err := e.Deployment()
				if err != nil || d == nil || d.JobID != "web" || d.TaskGroups["web"] == nil {
					t.Fatalf("deployment payload %+v: %v", d, err)
				}
				if e.Type == "DeploymentStatusUpdate" && d.Status == nomad.DeploymentStatusSuccessful {
					successful = d
				}
			}
		}
	}
	if successful == nil {
		// The status update seen may have been another (running); wait
		// for the success itself.
		for successful == nil {
			select {
			case batch := <-ch:
				if batch == nil || batch.Err != nil {
					t.Fatalf("stream ended: %+v", batch)
				}
				for _, e := range batch.Events {
					if d, _ := e.Deployment(); e.Type == "DeploymentStatusUpdate" && d != nil && d.Status == nomad.DeploymentStatusSuccessful {
						successful = d
					}
					// A status update before the success (a wait reason
					// written) can end the first loop before the health
					// reports: they are seen here.
					if a, _ := e.Allocation(); e.Topic == nomad.TopicAllocation && a != nil &&
						a.DeploymentStatus != nil && a.DeploymentStatus.Healthy != nil && *a.DeploymentStatus.Healthy {
						healthyIndex = e.Index
					}
				}
			case <-ctx.Done():
				t.Fatal("no successful deployment event")
			}
		}
	}
	if s := successful.TaskGroups["web"]; s.HealthyAllocs != 2 || s.DesiredTotal != 2 {
		t.Fatalf("successful deployment state %+v", s)
	}
	if healthyIndex == 0 {
		t.Fatal("no allocation event carried a healthy deployment status")
	}

	// A subscriber resuming after the healthy report starts there.
	ch2, err := nc.EventStream().Stream(ctx, map[nomad.Topic][]string{nomad.TopicDeployment: {"*"}}, healthyIndex+1, nil)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case b := <-ch2:
		if b == nil || b.Err != nil || b.Index <= healthyIndex {
			t.Fatalf("resumed stream: %+v", b)
		}
	case <-ctx.Done():
		t.Fatal("resumed stream sent nothing")
	}
}

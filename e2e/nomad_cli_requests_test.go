package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	nomad "github.com/hashicorp/nomad/api"
	"github.com/hashicorp/nomad/api/contexts"
)

// TestNomadCLIRequestsOnADevAgent makes, through the official Go client
// against a dev agent running real raw_exec processes, the requests that
// the nomad CLI makes for job plan|run|status|history|revert|stop,
// deployment list|status|pause|resume|promote|fail, alloc status|logs,
// node status and eval status, and checks that what the CLI reads is
// there and right: not only that it decodes.
func TestNomadCLIRequestsOnADevAgent(t *testing.T) {
	agent := startDevAgent(t)
	nc, err := nomad.NewClient(&nomad.Config{Address: "http://" + agent.httpAddr})
	if err != nil {
		t.Fatal(err)
	}
	deadline := 90 * time.Second

	// job validate, and the regions the CLI offers.
	if v, _, err := nc.Jobs().Validate(rawJob("1", 0), nil); err != nil || len(v.ValidationErrors) != 0 || v.Error != "" ||
		!v.DriverConfigValidated {
		t.Fatalf("validate a valid job: %v %+v", err, v)
	}
	bad := rawJob("1", 0)
	bad.TaskGroups[0].Count = ptr(-1)
	if v, _, err := nc.Jobs().Validate(bad, nil); err != nil || len(v.ValidationErrors) == 0 || !strings.Contains(v.Error, "Count") {
		t.Fatalf("validate an invalid job: %v %+v", err, v)
	}
	if regions, err := nc.Regions().List(); err != nil || len(regions) != 1 || regions[0] != "global" {
		t.Fatalf("regions: %v %v", err, regions)
	}

	// job plan of a new job: everything Added, two allocs to create.
	plan, _, err := nc.Jobs().Plan(rawJob("1", 0), true, nil)
	if err != nil {
		t.Fatal(err)
	}
	if plan.Diff == nil || plan.Diff.Type != "Added" || plan.Diff.ID != "web" || len(plan.Diff.TaskGroups) != 1 ||
		plan.Annotations == nil || plan.Annotations.DesiredTGUpdates["web"] == nil ||
		plan.Annotations.DesiredTGUpdates["web"].Place != 2 {
		t.Fatalf("plan of a new job: %+v", plan)
	}

	// job run: the registration's evaluation and what it placed.
	reg, _, err := nc.Jobs().Register(rawJob("1", 0), nil)
	if err != nil || reg.EvalID == "" {
		t.Fatalf("register: %v %+v", err, reg)
	}
	eval := waitEval(t, nc, reg.EvalID, deadline)
	if eval.JobID != "web" || eval.Type != "service" || eval.TriggeredBy != "job-register" || eval.Priority != 50 ||
		eval.Namespace != "default" || eval.CreateTime == 0 || eval.ModifyTime == 0 {
		t.Fatalf("evaluation: %+v", eval)
	}
	placed, _, err := nc.Evaluations().Allocations(reg.EvalID, nil)
	if err != nil || len(placed) != 2 {
		t.Fatalf("evaluation's allocations: %v %d", err, len(placed))
	}
	d0 := waitDeployment(t, nc, "v0 successful", func(d *nomad.Deployment) bool { return d.Status == "successful" })
	if d0.JobVersion != 0 || d0.StatusDescription != "Deployment completed successfully" || d0.IsMultiregion ||
		d0.TaskGroups["web"] == nil || d0.TaskGroups["web"].DesiredTotal != 2 || d0.TaskGroups["web"].HealthyAllocs != 2 ||
		d0.TaskGroups["web"].PlacedAllocs != 2 {
		t.Fatalf("deployment v0: %+v %+v", d0, d0.TaskGroups["web"])
	}

	// job status: the job, its summary, allocations, evaluations.
	job, _, err := nc.Jobs().Info("web", nil)
	if err != nil || *job.NodePool != "default" || *job.Namespace != "default" || *job.Status != "running" ||
		*job.Stop || *job.SubmitTime == 0 || *job.Type != "service" || *job.Priority != 50 || *job.Region != "global" {
		t.Fatalf("job: %v %+v", err, job)
	}
	// Fields Nomad's server always writes, empty under drover.
	if job.ParentID == nil || job.DispatchIdempotencyToken == nil || job.ConsulNamespace == nil ||
		job.VaultNamespace == nil || job.NomadTokenID == nil || *job.ParentID != "" {
		t.Fatalf("job lacks fields Nomad always fills: %+v", job)
	}
	summary, _, err := nc.Jobs().Summary("web", nil)
	if err != nil || summary.JobID != "web" || summary.Namespace != "default" || summary.Summary["web"].Running != 2 ||
		summary.Children == nil {
		t.Fatalf("summary: %v %+v", err, summary)
	}
	stubs, _, err := nc.Jobs().Allocations("web", true, nil)
	if err != nil || len(stubs) != 2 {
		t.Fatalf("job allocations: %v %d", err, len(stubs))
	}
	for _, s := range stubs {
		if s.NodeName != "dev" || s.NodeID == "" || s.ClientStatus != "running" || s.DesiredStatus != "run" ||
			s.CreateTime == 0 || s.ModifyTime == 0 || s.TaskStates["app"] == nil || s.TaskStates["app"].State != "running" ||
			s.DeploymentStatus == nil || s.DeploymentStatus.Healthy == nil || !*s.DeploymentStatus.Healthy {
			t.Fatalf("alloc stub %+v", s)
		}
	}
	if evals, _, err := nc.Jobs().Evaluations("web", nil); err != nil || len(evals) == 0 {
		t.Fatalf("job evaluations: %v %d", err, len(evals))
	}

	// nomad status PREFIX: the prefix search.
	found, _, err := nc.Search().PrefixSearch(stubs[0].ID[:6], contexts.All, nil)
	if err != nil || len(found.Matches[contexts.Allocs]) != 1 || found.Matches[contexts.Allocs][0] != stubs[0].ID ||
		found.Truncations[contexts.Allocs] {
		t.Fatalf("prefix search: %v %+v", err, found)
	}
	if found, _, err := nc.Search().PrefixSearch("we", contexts.Jobs, nil); err != nil || len(found.Matches[contexts.Jobs]) != 1 {
		t.Fatalf("job prefix search: %v %+v", err, found)
	}

	// alloc status and alloc logs of one alloc.
	alloc, _, err := nc.Allocations().Info(stubs[0].ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	st := alloc.TaskStates["app"]
	if alloc.Job == nil || *alloc.Job.Version != 0 || alloc.Job.ParentID == nil || st == nil || st.StartedAt.IsZero() || len(st.Events) < 2 {
		t.Fatalf("alloc: %+v", alloc)
	}
	for _, e := range st.Events {
		if e.Type == "" || e.Time == 0 || e.DisplayMessage == "" {
			t.Fatalf("task event without type, time or message: %+v", e)
		}
	}
	if got := readLogs(t, nc, alloc); !strings.Contains(got, "hello version 1") {
		t.Fatalf("alloc logs: %q", got)
	}

	// node status and eval status.
	nodes, _, err := nc.Nodes().List(nil)
	if err != nil || len(nodes) != 1 || nodes[0].Name != "dev" || nodes[0].Status != "ready" ||
		nodes[0].SchedulingEligibility != "eligible" || nodes[0].Drivers["raw_exec"] == nil || !nodes[0].Drivers["raw_exec"].Healthy {
		t.Fatalf("nodes: %v %+v", err, nodes)
	}
	node, _, err := nc.Nodes().Info(nodes[0].ID, nil)
	if err != nil || node.HTTPAddr != agent.httpAddr || node.Attributes["driver.raw_exec"] != "1" || node.NodeResources == nil {
		t.Fatalf("node: %v %+v", err, node)
	}

	// A new version with a canary: plan shows the field, pause and resume,
	// promote.
	plan, _, err = nc.Jobs().Plan(rawJob("2", 1), true, nil)
	if err != nil {
		t.Fatal(err)
	}
	if f := taskField(plan.Diff, "Env[VERSION]"); f == nil || f.Type != "Edited" || f.Old != "1" || f.New != "2" {
		t.Fatalf("plan's env diff: %+v", f)
	}
	if task := plan.Diff.TaskGroups[0].Tasks[0]; len(task.Annotations) != 1 || task.Annotations[0] != "forces create/destroy update" {
		t.Fatalf("plan's task annotations: %+v", task)
	}
	if _, _, err := nc.Jobs().Register(rawJob("2", 1), nil); err != nil {
		t.Fatal(err)
	}
	d1 := waitDeployment(t, nc, "v1 canary healthy", func(d *nomad.Deployment) bool {
		g := d.TaskGroups["web"]
		return d.JobVersion == 1 && g != nil && g.HealthyAllocs == 1 && len(g.PlacedCanaries) == 1
	})
	if g := d1.TaskGroups["web"]; g.DesiredCanaries != 1 || g.Promoted || d1.StatusDescription != "Deployment is running but requires manual promotion" {
		t.Fatalf("canary deployment: %q %+v", d1.StatusDescription, g)
	}
	if _, _, err := nc.Deployments().Pause(d1.ID, true, nil); err != nil {
		t.Fatal(err)
	}
	if d, _, err := nc.Deployments().Info(d1.ID, nil); err != nil || d.Status != "paused" || d.StatusDescription != "Deployment is paused" {
		t.Fatalf("paused: %v %+v", err, d)
	}
	if _, _, err := nc.Deployments().Pause(d1.ID, false, nil); err != nil {
		t.Fatal(err)
	}
	if _, _, err := nc.Deployments().PromoteAll(d1.ID, nil); err != nil {
		t.Fatal(err)
	}
	waitDeployment(t, nc, "v1 successful", func(d *nomad.Deployment) bool { return d.JobVersion == 1 && d.Status == "successful" })
	if deps, _, err := nc.Deployments().List(nil); err != nil || len(deps) != 2 {
		t.Fatalf("deployment list: %v %d", err, len(deps))
	}

	// job history -p: the versions and the diff between them.
	versions, diffs, _, err := nc.Jobs().Versions("web", true, nil)
	if err != nil || len(versions) != 2 || len(diffs) != 1 || *versions[0].Version != 1 || !*versions[0].Stable {
		t.Fatalf("versions: %v %d versions %d diffs", err, len(versions), len(diffs))
	}
	if f := taskField(diffs[0], "Env[VERSION]"); f == nil || f.Old != "1" || f.New != "2" {
		t.Fatalf("history diff: %+v", diffs[0])
	}

	// job revert to version 0, then a failed deployment.
	rev, _, err := nc.Jobs().Revert("web", 0, nil, nil, "", "")
	if err != nil || rev.EvalID == "" {
		t.Fatalf("revert: %v %+v", err, rev)
	}
	waitDeployment(t, nc, "v2 (revert) successful", func(d *nomad.Deployment) bool { return d.JobVersion == 2 && d.Status == "successful" })
	if _, _, err := nc.Jobs().Register(rawJob("3", 1), nil); err != nil {
		t.Fatal(err)
	}
	d3 := waitDeployment(t, nc, "v3 running", func(d *nomad.Deployment) bool { return d.JobVersion == 3 })
	if _, _, err := nc.Deployments().Fail(d3.ID, nil); err != nil {
		t.Fatal(err)
	}
	if d, _, err := nc.Deployments().Info(d3.ID, nil); err != nil || d.Status != "failed" || d.StatusDescription != "Deployment marked as failed" {
		t.Fatalf("failed deployment: %v %+v", err, d)
	}

	// job stop: the deregistration's evaluation, then a dead job.
	evalID, _, err := nc.Jobs().Deregister("web", false, nil)
	if err != nil || evalID == "" {
		t.Fatalf("deregister: %v %q", err, evalID)
	}
	if e := waitEval(t, nc, evalID, deadline); e.TriggeredBy != "job-deregister" {
		t.Fatalf("deregister evaluation: %+v", e)
	}
	eventually(t, deadline, "job dead", func() error {
		j, _, err := nc.Jobs().Info("web", nil)
		if err != nil {
			return err
		}
		if !*j.Stop || *j.Status != "dead" {
			return fmt.Errorf("job stop=%v status=%s", *j.Stop, *j.Status)
		}
		return nil
	})
}

// rawJob is a service job of two raw_exec tasks that print their version
// and sleep, rolled one at a time with canary canaries.
func rawJob(version string, canary int) *nomad.Job {
	job := nomad.NewServiceJob("web", "web", "global", 50)
	job.Datacenters = []string{"dc1"}
	job.Update = &nomad.UpdateStrategy{
		MaxParallel: ptr(1), Canary: ptr(canary), HealthCheck: ptr("task_states"),
		MinHealthyTime: ptr(100 * time.Millisecond), HealthyDeadline: ptr(time.Minute), ProgressDeadline: ptr(2 * time.Minute),
	}
	task := nomad.NewTask("app", "raw_exec").
		SetConfig("command", "/bin/sh").
		SetConfig("args", []string{"-c", "echo hello version $VERSION; exec sleep 600"})
	task.Env = map[string]string{"VERSION": version}
	task.Resources = &nomad.Resources{CPU: ptr(50), MemoryMB: ptr(32)}
	job.AddTaskGroup(nomad.NewTaskGroup("web", 2).AddTask(task))
	return job
}

// waitEval waits for an evaluation to complete.
func waitEval(t *testing.T, nc *nomad.Client, id string, limit time.Duration) *nomad.Evaluation {
	t.Helper()
	var eval *nomad.Evaluation
	eventually(t, limit, "evaluation "+id+" complete", func() error {
		e, _, err := nc.Evaluations().Info(id, nil)
		if err != nil {
			return err
		}
		eval = e
		if e.Status != "complete" {
			return fmt.Errorf("status %s", e.Status)
		}
		return nil
	})
	return eval
}

// readLogs reads a task's stdout as `nomad alloc logs` does, through the
// node's own address.
func readLogs(t *testing.T, nc *nomad.Client, alloc *nomad.Allocation) string {
	t.Helper()
	cancel := make(chan struct{})
	defer close(cancel)
	frames, errs := nc.AllocFS().Logs(alloc, false, "app", "stdout", "start", 0, cancel, nil)
	var b strings.Builder
	timeout := time.After(30 * time.Second)
	for {
		select {
		case f, ok := <-frames:
			if !ok {
				return b.String()
			}
			b.Write(f.Data)
		case err := <-errs:
			if err != nil {
				t.Fatalf("alloc logs: %v", err)
			}
		case <-timeout:
			t.Fatalf("alloc logs did not end; read %q", b.String())
		}
	}
}

// taskField finds a field of the first task of the first group in a diff.
func taskField(d *nomad.JobDiff, name string) *nomad.FieldDiff {
	if d == nil || len(d.TaskGroups) == 0 || len(d.TaskGroups[0].Tasks) == 0 {
		return nil
	}
	for _, f := range d.TaskGroups[0].Tasks[0].Fields {
		if f.Name == name {
			return f
		}
	}
	return nil
}

package main

import (
	"strings"
	"testing"

	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/structs"
)

func TestJobRunDetachPrintsEvalID(t *testing.T) {
	c := newCLICluster(t)
	code, out, errOut := runBounded(t, "", "job", "run", "-detach", "-address", c.addr, writeJobFile(t, "web", 1, "/bin/sleep"))
	if code != 0 || !strings.Contains(out, "Evaluation ID: ") {
		t.Fatalf("code %d\n%s\n%s", code, out, errOut)
	}
	id := strings.TrimSpace(out[strings.Index(out, "Evaluation ID: ")+len("Evaluation ID: "):])
	if e, _ := c.b.State().Snapshot().EvalByID(id); e == nil || e.JobID != "web" {
		t.Fatalf("eval %q not stored", id)
	}
}

func TestJobRunFollowsDeploymentToSuccess(t *testing.T) {
	c := newCLICluster(t)
	go func() {
		e := c.waitPendingEval("web", structs.EvalTriggerJobRegister)
		if e == nil {
			return
		}
		allocs, d := c.place(e, 2, true)
		c.health(allocs[:1], true)
		c.health(allocs[1:], true)
		c.setDeployment(d, structs.DeploymentStatusSuccessful, structs.DeploymentStatusDescriptionSuccessful)
	}()
	code, out, errOut := runBounded(t, "", "job", "run", "-address", c.addr, writeJobFile(t, "web", 2, "/bin/sleep"))
	t.Log(out)
	if code != 0 {
		t.Fatalf("code %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{
		`==> 2026-01-02T03:05:35Z: Monitoring evaluation "`,
		`Evaluation triggered by job "web"`,
		`created: node "` + c.node.ID[:8] + `", group "web"`,
		`finished with status "complete"`,
		`Monitoring deployment "`,
		"Task Group  Auto Revert  Promoted  Desired  Canaries  Placed  Healthy  Unhealthy  Progress Deadline",
		"Description = Deployment completed successfully",
		`✓ Deployment "`,
	} {
		if !strings.Contains(out, want) {
			t.Fatalf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "\x1b[") {
		t.Fatalf("cursor moves written to a non-terminal:\n%q", out)
	}
	// The final table shows both allocs healthy.
	last := out[strings.LastIndex(out, "Task Group  Auto Revert"):]
	if f := strings.Fields(strings.Split(last, "\n")[1]); len(f) < 8 || f[0] != "web" || f[3] != "2" || f[5] != "2" || f[6] != "2" {
		t.Fatalf("final group row %q", f)
	}
}

func TestJobRunPlacementFailureExits2(t *testing.T) {
	c := newCLICluster(t)
	go func() {
		e := c.waitPendingEval("big", structs.EvalTriggerJobRegister)
		if e == nil {
			return
		}
		done := e.Copy()
		done.Status = structs.EvalStatusComplete
		done.QueuedAllocations = map[string]int{"web": 3}
		done.BlockedEval = "b10cked0-0000-0000-0000-000000000000"
		done.FailedTGAllocs = map[string]*structs.AllocationMetric{"web": {
			NodesEvaluated: 2, NodesExhausted: 1, NodesAvailable: map[string]int{"dc1": 2},
			DimensionExhausted: map[string]int{"memory": 1},
			ConstraintFiltered: map[string]int{"${attr.kernel.name} = windows": 1},
			CoalescedFailures:  2,
		}}
		c.apply(fsm.EvalUpdateRequestType, &structs.EvalUpdateRequest{Evals: []*structs.Evaluation{done}})
	}()
	code, out, _ := runBounded(t, "", "job", "run", "-address", c.addr, writeJobFile(t, "big", 3, "/bin/sleep"))
	t.Log(out)
	if code != 2 {
		t.Fatalf("code %d, want 2:\n%s", code, out)
	}
	for _, want := range []string{
		`finished with status "complete" but failed to place all allocations:`,
		`Task Group "web" (failed to place 3 allocations):`,
		`* Constraint "${attr.kernel.name} = windows": 1 nodes excluded by filter`,
		`* Resources exhausted on 1 nodes`,
		`* Dimension "memory" exhausted on 1 nodes`,
		`Evaluation "b10cked0" waiting for additional capacity to place remainder`,
	} {
		if !strings.Contains(out, want) {
			t.Fatalf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestJobRunFailedDeploymentFollowsRollbackAndExits1(t *testing.T) {
	c := newCLICluster(t)
	go func() {
		e := c.waitPendingEval("web", structs.EvalTriggerJobRegister)
		if e == nil {
			return
		}
		allocs, d := c.place(e, 1, true)
		c.health(allocs, false)
		// Fail and revert in one write, as the watcher does.
		prev := c.job("web").Copy()
		prev.TaskGroups[0].Tasks[0].Config = map[string]any{"command": "/bin/true"}
		revertEval := e.Copy()
		revertEval.ID = "5eed0000-0000-0000-0000-000000000001"
		revertEval.Status = structs.EvalStatusPending
		revertEval.TriggeredBy = structs.EvalTriggerRollingUpdate
		c.apply(fsm.DeploymentStatusUpdateRequestType, &structs.DeploymentStatusUpdateRequest{
			DeploymentUpdate: &structs.DeploymentStatusUpdate{DeploymentID: d.ID, Status: structs.DeploymentStatusFailed,
				StatusDescription: structs.DeploymentStatusDescriptionRollback(structs.DeploymentStatusDescriptionFailedAllocations, 0)},
			Job: prev, Eval: revertEval, UpdatedAt: 1})
		allocs2, d2 := c.place(revertEval, 1, true)
		c.health(allocs2, true)
		c.setDeployment(d2, structs.DeploymentStatusSuccessful, structs.DeploymentStatusDescriptionSuccessful)
	}()
	code, out, errOut := runBounded(t, "", "job", "run", "-address", c.addr, writeJobFile(t, "web", 1, "/bin/false"))
	t.Log(out)
	if code != 1 {
		t.Fatalf("code %d, want 1:\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{
		"rolling back to job version 0",
		`! Deployment "`,
		"Monitoring the rollback",
		`✓ Deployment "`,
	} {
		if !strings.Contains(out, want) {
			t.Fatalf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Index(out, "Monitoring the rollback") > strings.Index(out, "✓ Deployment") {
		t.Fatalf("the rollback's success came before it was followed:\n%s", out)
	}
}

func TestJobRunCheckIndex(t *testing.T) {
	c := newCLICluster(t)
	path := writeJobFile(t, "web", 1, "/bin/sleep")
	code, out, errOut := runBounded(t, "", "job", "run", "-detach", "-check-index", "3", "-address", c.addr, path)
	if code != 1 || !strings.Contains(errOut, "does not exist") {
		t.Fatalf("check index 3 on a new job: code %d\n%s\n%s", code, out, errOut)
	}
	code, out, errOut = runBounded(t, "", "job", "run", "-detach", "-check-index", "0", "-address", c.addr, path)
	if code != 0 {
		t.Fatalf("check index 0 on a new job: code %d\n%s\n%s", code, out, errOut)
	}
	idx := c.job("web").JobModifyIndex
	code, _, errOut = runBounded(t, "", "job", "run", "-detach", "-check-index", "0", "-address", c.addr, path)
	if code != 1 || !strings.Contains(errOut, "conflicting job modify index") {
		t.Fatalf("check index 0 on an existing job: code %d\n%s", code, errOut)
	}
	if code, _, errOut := runBounded(t, "", "job", "run", "-detach", "-check-index", itoa(idx), "-address", c.addr, path); code != 0 {
		t.Fatalf("current check index: code %d\n%s", code, errOut)
	}
}

func TestJobRunRejectsBadFile(t *testing.T) {
	c := newCLICluster(t)
	code, _, errOut := runBounded(t, "job \"x\" {", "job", "run", "-address", c.addr, "-")
	if code != 1 || !strings.Contains(errOut, "Error parsing job file") {
		t.Fatalf("code %d\n%s", code, errOut)
	}
}

func TestDeploymentTableRedrawsInPlaceOnATerminal(t *testing.T) {
	var b strings.Builder
	tbl := &deploymentTable{out: &b, tty: true}
	d := &structs.Deployment{ID: "0123456789", JobID: "web", Status: "running", StatusDescription: "Deployment is running",
		TaskGroups: map[string]*structs.DeploymentState{"web": {DesiredTotal: 2, PlacedAllocs: 1}}}
	tbl.draw("t1", d)
	first := b.String()
	if strings.Contains(first, "\x1b[") {
		t.Fatalf("first draw moved the cursor: %q", first)
	}
	tbl.draw("t2", d) // unchanged: nothing drawn
	if b.String() != first {
		t.Fatalf("an unchanged deployment was redrawn")
	}
	d2 := d.Copy()
	d2.TaskGroups["web"].HealthyAllocs = 1
	tbl.draw("t3", d2)
	rest := strings.TrimPrefix(b.String(), first)
	up := "\x1b[" + itoa(uint64(strings.Count(first, "\n"))) + "A\x1b[J"
	if !strings.HasPrefix(rest, up) || !strings.Contains(rest, "t3") {
		t.Fatalf("redraw %q does not start with %q", rest, up)
	}
}

func itoa(n uint64) string {
	var b []byte
	for {
		b = append([]byte{byte('0' + n%10)}, b...)
		n /= 10
		if n == 0 {
			return string(b)
		}
	}
}

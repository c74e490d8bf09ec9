package e2e

import (
	"testing"

	nomad "github.com/hashicorp/nomad/api"
)

// TestNomadCLIReadsFillWhatTheCLIDereferences reads, through the official
// Go client against a running job on a real client agent, what the nomad
// CLI's job status|history|stop, alloc status, node status and eval status
// dereference without a nil check, and checks it is there and right.
func TestNomadCLIReadsFillWhatTheCLIDereferences(t *testing.T) {
	nc := startInProcessCluster(t)
	if _, _, err := nc.Jobs().Register(nomadJob(2, 0, "1h", false), nil); err != nil {
		t.Fatal(err)
	}
	waitDeployment(t, nc, "v0 successful", func(d *nomad.Deployment) bool {
		return d.Status == nomad.DeploymentStatusSuccessful
	})

	// job status|history|stop resolve the job by prefix: the first stub's
	// JobSummary.Namespace.
	stubs, _, err := nc.Jobs().PrefixList("we")
	if err != nil || len(stubs) != 1 || stubs[0].JobSummary == nil {
		t.Fatalf("jobs by prefix: %v %+v", err, stubs)
	}
	if s := stubs[0].JobSummary; s.Namespace != "default" || s.JobID != "web" || s.Children == nil ||
		s.Summary["web"] != (nomad.TaskGroupSummary{Running: 2}) {
		t.Fatalf("job summary %+v", s)
	}
	job, _, err := nc.Jobs().Info("web", nil)
	if err != nil || job.ID == nil || job.Name == nil || job.SubmitTime == nil || job.Type == nil ||
		job.Priority == nil || job.Namespace == nil || job.Status == nil || job.Version == nil || job.Stable == nil {
		t.Fatalf("job: %v %+v", err, job)
	}

	// node status <id>: the node's resources less the reserved, and the
	// legacy Resources of each running alloc.
	nodes, _, err := nc.Nodes().List(nil)
	if err != nil || len(nodes) != 1 {
		t.Fatalf("nodes: %v %+v", err, nodes)
	}
	node, _, err := nc.Nodes().Info(nodes[0].ID, nil)
	if err != nil || node.NodeResources == nil || node.ReservedResources == nil || node.NodeResources.Cpu.CpuShares != 8000 {
		t.Fatalf("node: %v %+v", err, node)
	}
	allocs, _, err := nc.Nodes().Allocations(node.ID, nil)
	if err != nil || len(allocs) != 2 {
		t.Fatalf("node allocations: %v %d", err, len(allocs))
	}
	for _, a := range allocs {
		r := a.Resources
		if a.ClientStatus != "running" || r == nil || r.CPU == nil || r.MemoryMB == nil || r.DiskMB == nil ||
			*r.CPU != 100 || *r.MemoryMB != 64 || *r.DiskMB != 300 {
			t.Fatalf("node allocation %s: %s %+v", a.ID, a.ClientStatus, r)
		}
	}

	// alloc status: the job's version, the task's resources and events,
	// the placement metrics.
	a, _, err := nc.Allocations().Info(allocs[0].ID, nil)
	if err != nil || a.Job == nil || a.Job.Version == nil || *a.Job.Version != 0 || a.Metrics == nil ||
		a.Resources == nil || a.Resources.DiskMB == nil {
		t.Fatalf("allocation: %v %+v", err, a)
	}
	tr := a.TaskResources["app"]
	if tr == nil || tr.CPU == nil || tr.MemoryMB == nil || *tr.CPU != 100 || *tr.MemoryMB != 64 {
		t.Fatalf("task resources %+v", a.TaskResources)
	}
	if st := a.TaskStates["app"]; st == nil || st.State != "running" || len(st.Events) == 0 {
		t.Fatalf("task state %+v", a.TaskStates)
	}

	// eval status: the evaluation that placed an alloc, and the stubs of
	// what it placed (the client may register after the job's first
	// evaluation, so it is not necessarily that one).
	eval, _, err := nc.Evaluations().Info(a.EvalID, nil)
	if err != nil || eval.JobID != "web" || eval.Status != "complete" {
		t.Fatalf("evaluation: %v %+v", err, eval)
	}
	placed, _, err := nc.Evaluations().Allocations(eval.ID, nil)
	if err != nil || len(placed) == 0 || placed[0].JobID != "web" || placed[0].EvalID != eval.ID {
		t.Fatalf("eval allocations: %v %+v", err, placed)
	}
}

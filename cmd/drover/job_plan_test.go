package main

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/structs"
)

// cliNode is a ready node with raw_exec.
func cliNode() *structs.Node {
	return &structs.Node{
		ID: "n1", Name: "n1", Datacenter: "dc1", NodePool: structs.DefaultNodePool,
		Attributes: map[string]string{"kernel.name": "linux", "unique.network.ip-address": "127.0.0.1"},
		NodeResources: &structs.NodeResources{
			Cpu:    structs.NodeCpuResources{CpuShares: 8000},
			Memory: structs.NodeMemoryResources{MemoryMB: 8192},
			Disk:   structs.NodeDiskResources{DiskMB: 100000},
		},
		Drivers:               map[string]*structs.DriverInfo{"raw_exec": {Detected: true, Healthy: true}},
		SchedulingEligibility: structs.NodeSchedulingEligible,
		Status:                structs.NodeStatusReady,
	}
}

func TestJobPlanCommand(t *testing.T) {
	b, addr, path := newCLIServer(t)

	// No nodes: the new job would place one alloc, which finds no node.
	wantCLI(t, 1, []string{`+ Job: "web"`, `+ Task Group: "web" (1 create)`, "Scheduler dry-run:",
		"- WARNING: Failed to place all allocations.", `Task Group "web" (failed to place 1 allocation)`,
		"Job Modify Index: 0", "drover job run -check-index 0 " + path}, "job", "plan", "-address", addr, path)
	b.must(t, fsm.NodeRegisterRequestType, &structs.NodeRegisterRequest{Node: cliNode()})
	wantCLI(t, 1, []string{"- All tasks successfully allocated."}, "job", "plan", "-address", addr, path)

	// Registered and running: nothing changes, exit 0.
	job := b.registerWeb(t)
	b.must(t, fsm.ApplyPlanResultsRequestType, &structs.ApplyPlanResultsRequest{
		EvalID: "e", Job: job, AllocsPlaced: []*structs.Allocation{{
			ID: "a0", Namespace: structs.DefaultNamespace, Name: structs.AllocName("web", "web", 0), NodeID: "n1",
			JobID: "web", TaskGroup: "web", DesiredStatus: structs.AllocDesiredStatusRun,
			ClientStatus: structs.AllocClientStatusRunning,
		}},
		UpdatedAt: 1,
	})
	wantCLI(t, 0, []string{`  Job: "web"`, `Task Group: "web" (1 ignore)`, "Job Modify Index: " + strconv.FormatUint(job.JobModifyIndex, 10),
		"drover job run -check-index " + strconv.FormatUint(job.JobModifyIndex, 10)}, "job", "plan", "-address", addr, path)

	// A changed task: one canary beside the old alloc.
	changed := strings.Replace(cliJobHCL, `"3600"`, `"7200"`, 1)
	if err := os.WriteFile(path, []byte(changed), 0o600); err != nil {
		t.Fatal(err)
	}
	out := wantCLI(t, 1, []string{`+/- Job: "web"`, `+/- Task Group: "web" (1 canary, 1 ignore)`,
		`  +/- Task: "app" (forces create/destroy update)`, "    +/- Config {", `      +/- args[0]: "3600" => "7200"`},
		"job", "plan", "-address", addr, path)
	if strings.Contains(out, "command:") {
		t.Fatalf("plan without -verbose shows unchanged config fields:\n%s", out)
	}
	wantCLI(t, 1, []string{`      +/- args[0]: "3600" => "7200"`, `          command: "`},
		"job", "plan", "-verbose", "-address", addr, path)
	wantCLI(t, 1, []string{`"DesiredTGUpdates"`}, "job", "plan", "-json-output", "-address", addr, path)

	// Errors exit 255.
	if err := os.WriteFile(path, []byte("job {"), 0o600); err != nil {
		t.Fatal(err)
	}
	wantCLI(t, 255, []string{"Error parsing job file"}, "job", "plan", "-address", addr, path)
	if err := os.WriteFile(path, []byte(cliJobHCL), 0o600); err != nil {
		t.Fatal(err)
	}
	wantCLI(t, 255, []string{"Error during plan"}, "job", "plan", "-address", "http://127.0.0.1:1", path)
	if a, _ := b.State().Snapshot().AllocsByJob(structs.DefaultNamespace, "web"); len(a) != 1 {
		t.Fatalf("plan changed allocations: %d", len(a))
	}
}

func TestJobHistoryAndRevertCommands(t *testing.T) {
	b, addr, _ := newCLIServer(t)
	job := b.registerWeb(t)
	v1 := job.Copy()
	v1.TaskGroups[0].Count = 3
	v1.TaskGroups[0].Tasks[0].Config = map[string]any{"command": "/bin/sleep", "args": []any{"60"}}
	if _, err := b.leader.RegisterJob(context.Background(), v1); err != nil {
		t.Fatal(err)
	}
	if _, err := b.SetJobStability(context.Background(), "", "web", 0, true); err != nil {
		t.Fatal(err)
	}
	out := wantCLI(t, 0, []string{"Version     = 1", "Stable      = false", "Version     = 0", "Stable      = true", "Submit Date = "},
		"job", "history", "-address", addr, "web")
	if strings.Index(out, "Version     = 1") > strings.Index(out, "Version     = 0") {
		t.Fatalf("history not newest first:\n%s", out)
	}
	out = wantCLI(t, 0, []string{"Version     = 0"}, "job", "history", "-version", "0", "-address", addr, "web")
	if strings.Contains(out, "Version     = 1") {
		t.Fatalf("-version 0 shows version 1:\n%s", out)
	}
	wantCLI(t, 0, []string{"Diff from version 0:", `+/- Task Group: "web"`, `  +/- Count: "1" => "3" (forces create)`,
		`  +/- Task: "app" (forces create/destroy update)`, `      +/- args[0]: "3600" => "60"`},
		"job", "history", "-p", "-address", addr, "web")
	// -diff-version: every version against the one named.
	out = wantCLI(t, 0, []string{"Diff from version 1:", `+/- Count: "3" => "1" (forces destroy)`},
		"job", "history", "-diff-version", "1", "-version", "0", "-address", addr, "web")
	if strings.Contains(out, "Diff from version 0:") {
		t.Fatalf("-diff-version 1 diffed against another version:\n%s", out)
	}
	wantCLI(t, 1, []string{"diff_version 9: the job has no such version"}, "job", "history", "-diff-version", "9", "-address", addr, "web")
	wantCLI(t, 1, []string{`Job "web" has no version 9`}, "job", "history", "-version", "9", "-address", addr, "web")

	// job inspect of the registered job, and of one version.
	wantCLI(t, 0, []string{`"ID": "web"`, `"Version": 1`}, "job", "inspect", "-address", addr, "web")
	wantCLI(t, 0, []string{`"Version": 0`}, "job", "inspect", "-version", "0", "-address", addr, "we")
	wantCLI(t, 0, []string{"web@1"}, "job", "inspect", "-t", "{{.Job.ID}}@{{.Job.Version}}", "-address", addr, "web")
	wantCLI(t, 1, []string{`Job "web" has no version 9`}, "job", "inspect", "-version", "9", "-address", addr, "web")
	wantCLI(t, 1, []string{"Error reading job file"}, "job", "inspect", "-address", addr, "missing.hcl")
	wantCLI(t, 0, []string{`"Version": 1`}, "job", "history", "-json", "-address", addr, "web")

	wantCLI(t, 1, []string{"Error reverting job", "can't revert to current version 1"}, "job", "revert", "-address", addr, "web", "1")
	wantCLI(t, 1, []string{"must be a number"}, "job", "revert", "-address", addr, "web", "one")
	wantCLI(t, 1, []string{"job version not found"}, "job", "revert", "-address", addr, "web", "7")
	// Without -detach, revert follows the rollout live (e2e tests show it).
	wantCLI(t, 0, []string{"Evaluation ID: "}, "job", "revert", "-detach", "-address", addr, "web", "0")
	cur, _ := b.State().Snapshot().JobByID(structs.DefaultNamespace, "web")
	if cur.Version != 2 || cur.TaskGroups[0].Count != 1 {
		t.Fatalf("after revert: v%d count %d", cur.Version, cur.TaskGroups[0].Count)
	}
	out = wantCLI(t, 0, []string{"Evaluation ID: "}, "job", "revert", "-detach", "-address", addr, "web", "1")
	if strings.Contains(out, "reverted") {
		t.Fatalf("-detach printed more than the evaluation:\n%s", out)
	}
}

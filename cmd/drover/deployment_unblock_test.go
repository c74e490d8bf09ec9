package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/structs"
)

// UnblockDeployment serves deployment unblock (httpapi.DeploymentUnblockBackend).
func (b *cliBackend) UnblockDeployment(ctx context.Context, id string) (*structs.DeploymentUpdateResponse, error) {
	return b.leader.UnblockDeployment(ctx, id)
}

// TestDeploymentUnblockCommand: deployment status of a multi-region
// deployment prints the Multiregion Deployment table (this region's row,
// and a region that cannot be read as "(error)"); deployment unblock makes
// the blocked deployment successful, and refuses it once finished.
func TestDeploymentUnblockCommand(t *testing.T) {
	b, addr, _ := newCLIServer(t)
	job := b.registerWeb(t)
	job = job.Copy()
	job.Region = structs.DefaultRegion
	job.Multiregion = &structs.Multiregion{
		Strategy: &structs.MultiregionStrategy{MaxParallel: 1},
		Regions:  []*structs.MultiregionRegion{{Name: structs.DefaultRegion, Count: 1}, {Name: "west", Count: 1}},
	}
	b.must(t, fsm.JobRegisterRequestType, &structs.JobRegisterRequest{Job: job})
	stored, _ := b.State().Snapshot().JobByID(structs.DefaultNamespace, "web")
	b.must(t, fsm.ApplyPlanResultsRequestType, &structs.ApplyPlanResultsRequest{
		EvalID: "e-mr", Job: stored,
		Deployment: &structs.Deployment{
			ID: depA, Namespace: structs.DefaultNamespace, JobID: "web", JobVersion: stored.Version,
			JobCreateIndex: stored.CreateIndex, Status: structs.DeploymentStatusBlocked, IsMultiregion: true,
			StatusDescription: structs.DeploymentStatusDescriptionBlocked,
			TaskGroups:        map[string]*structs.DeploymentState{"web": {DesiredTotal: 1}},
		},
		UpdatedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).UnixNano(),
	})

	out := wantCLI(t, 0, []string{"Status      = blocked", "Deployment is complete but waiting for peer region",
		"Multiregion Deployment", "Region", "west (error)"}, "deployment", "status", "-address", addr, "0b23")
	if !regionRow(out, structs.DefaultRegion, "blocked") {
		t.Fatalf("no row of this region's blocked deployment:\n%s", out)
	}
	if strings.Index(out, "Multiregion Deployment") > strings.Index(out, "Deployed") {
		t.Fatalf("the Multiregion Deployment table comes after Deployed:\n%s", out)
	}
	wantCLI(t, 0, []string{"blocked"}, "deployment", "list", "-address", addr)
	wantCLI(t, 1, []string{"Error pausing deployment", "deployment waits for its region's turn: it is blocked"},
		"deployment", "pause", "-address", addr, "0b23")

	wantCLI(t, 0, []string{`Deployment "` + depA + `" unblocked`, "Status      = successful"},
		"deployment", "unblock", "-address", addr, "0b23")
	if j, _ := b.State().Snapshot().JobByID(structs.DefaultNamespace, "web"); !j.Stable {
		t.Fatal("job version not stable after unblock")
	}
	wantCLI(t, 1, []string{"Error unblocking deployment", "can't unblock terminal deployment"},
		"deployment", "unblock", "-address", addr, depA)
}

// regionRow reports whether out has a row of the Multiregion Deployment
// table for region with status.
func regionRow(out, region, status string) bool {
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) == 3 && f[0] == region && f[2] == status {
			return true
		}
	}
	return false
}

package deployment

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/structs"
)

func healthyAlloc(id, group string, canary bool, healthy *bool) *structs.Allocation {
	return &structs.Allocation{
		ID: id, TaskGroup: group, DeploymentID: "d1",
		DesiredStatus: structs.AllocDesiredStatusRun, ClientStatus: structs.AllocClientStatusRunning,
		DeploymentStatus: &structs.AllocDeploymentStatus{Canary: canary, Healthy: healthy},
	}
}

func boolp(b bool) *bool { return &b }

// canaryDeployment has group web with 2 canaries (c1 healthy, c2 unknown)
// and group api with 1 healthy canary c3.
func canaryDeployment(status string) (*structs.Deployment, []*structs.Allocation) {
	d := &structs.Deployment{
		ID: "d1", JobID: "web", Status: status,
		StatusDescription: structs.DeploymentStatusDescriptionRunningNeedsPromotion,
		TaskGroups: map[string]*structs.DeploymentState{
			"web": {DesiredTotal: 3, DesiredCanaries: 2, PlacedCanaries: []string{"c1", "c2"}, ProgressDeadline: 10 * time.Minute, AutoRevert: true},
			"api": {DesiredTotal: 1, DesiredCanaries: 1, PlacedCanaries: []string{"c3"}, ProgressDeadline: 10 * time.Minute},
			"db":  {DesiredTotal: 1},
		},
	}
	allocs := []*structs.Allocation{
		healthyAlloc("c1", "web", true, boolp(true)),
		healthyAlloc("c2", "web", true, nil),
		healthyAlloc("c3", "api", true, boolp(true)),
		healthyAlloc("o1", "db", false, boolp(false)),
	}
	return d, allocs
}

func TestPromote(t *testing.T) {
	now := t0.Add(time.Hour)
	tests := []struct {
		name    string
		status  string
		groups  []string
		heal    bool // make c2 healthy first
		wantErr error
		wantMsg string
		want    []string // groups promoted
	}{
		{name: "failed", status: structs.DeploymentStatusFailed, wantErr: ErrPromoteTerminal, wantMsg: "can't promote terminal deployment"},
		{name: "successful", status: structs.DeploymentStatusSuccessful, wantErr: ErrPromoteTerminal},
		{name: "cancelled", status: structs.DeploymentStatusCancelled, wantErr: ErrPromoteTerminal},
		{name: "paused", status: structs.DeploymentStatusPaused, wantErr: ErrPromotePaused},
		{name: "all, one group lagging", status: structs.DeploymentStatusRunning, wantErr: ErrCanariesUnhealthy, wantMsg: `task group "web" has 1/2 healthy allocations`},
		{name: "named lagging group", status: structs.DeploymentStatusRunning, groups: []string{"web"}, wantErr: ErrCanariesUnhealthy, wantMsg: "1/2 healthy"},
		{name: "unknown group", status: structs.DeploymentStatusRunning, groups: []string{"nope"}, wantErr: ErrUnknownGroup, wantMsg: `"nope"`},
		{name: "group without canaries", status: structs.DeploymentStatusRunning, groups: []string{"db"}, wantErr: ErrNoCanaries},
		{name: "named healthy group", status: structs.DeploymentStatusRunning, groups: []string{"api"}, want: []string{"api"}},
		{name: "all healthy", status: structs.DeploymentStatusRunning, heal: true, want: []string{"api", "web"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, allocs := canaryDeployment(tt.status)
			if tt.heal {
				allocs[1].DeploymentStatus.Healthy = boolp(true)
			}
			before := d.Copy()
			got, err := Promote(d, tt.groups, allocs, now)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("error = %v, want %v", err, tt.wantErr)
				}
				if !strings.Contains(err.Error(), tt.wantMsg) {
					t.Fatalf("error %q does not contain %q", err, tt.wantMsg)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			for name, s := range got.TaskGroups {
				promoted := false
				for _, w := range tt.want {
					promoted = promoted || w == name
				}
				if promoted != s.Promoted {
					t.Errorf("group %s promoted = %v, want %v", name, s.Promoted, promoted)
				}
				if promoted && !s.RequireProgressBy.Equal(now.Add(10*time.Minute)) {
					t.Errorf("group %s require_progress_by = %v, want promote time + deadline", name, s.RequireProgressBy)
				}
			}
			if before.TaskGroups["api"].Promoted != d.TaskGroups["api"].Promoted {
				t.Error("Promote modified its input")
			}
		})
	}
	if _, err := Promote(nil, nil, nil, now); !errors.Is(err, ErrNoDeployment) {
		t.Errorf("nil deployment: %v", err)
	}
	plain := &structs.Deployment{Status: structs.DeploymentStatusRunning, TaskGroups: map[string]*structs.DeploymentState{"web": {DesiredTotal: 1}}}
	if _, err := Promote(plain, nil, nil, now); !errors.Is(err, ErrNoCanaries) {
		t.Errorf("no canaries: %v", err)
	}
}

func TestPromoteDescription(t *testing.T) {
	d, allocs := canaryDeployment(structs.DeploymentStatusRunning)
	got, err := Promote(d, []string{"api"}, allocs, t0)
	if err != nil {
		t.Fatal(err)
	}
	if got.StatusDescription != structs.DeploymentStatusDescriptionRunningNeedsPromotion {
		t.Errorf("web still needs promotion, got %q", got.StatusDescription)
	}
	allocs[1].DeploymentStatus.Healthy = boolp(true)
	got, err = Promote(got, nil, allocs, t0)
	if err != nil {
		t.Fatal(err)
	}
	if got.StatusDescription != structs.DeploymentStatusDescriptionRunning {
		t.Errorf("description = %q", got.StatusDescription)
	}
}

func TestPause(t *testing.T) {
	now := t0.Add(time.Hour)
	for _, status := range []string{structs.DeploymentStatusFailed, structs.DeploymentStatusSuccessful, structs.DeploymentStatusCancelled} {
		d, _ := canaryDeployment(status)
		if _, err := Pause(d, true, now); !errors.Is(err, ErrPauseTerminal) || err.Error() != "can't pause terminal deployment" {
			t.Errorf("%s: pause: %v", status, err)
		}
		if _, err := Pause(d, false, now); !errors.Is(err, ErrResumeTerminal) || err.Error() != "can't resume terminal deployment" {
			t.Errorf("%s: resume: %v", status, err)
		}
	}
	if _, err := Pause(nil, true, now); !errors.Is(err, ErrNoDeployment) {
		t.Errorf("nil: %v", err)
	}

	d, _ := canaryDeployment(structs.DeploymentStatusRunning)
	p, err := Pause(d, true, now)
	if err != nil || p.Status != structs.DeploymentStatusPaused || p.StatusDescription != structs.DeploymentStatusDescriptionPaused {
		t.Fatalf("pause: %+v, %v", p, err)
	}
	if d.Status != structs.DeploymentStatusRunning {
		t.Fatal("Pause modified its input")
	}
	later := now.Add(time.Hour)
	r, err := Pause(p, false, later)
	if err != nil || r.Status != structs.DeploymentStatusRunning {
		t.Fatalf("resume: %+v, %v", r, err)
	}
	if r.StatusDescription != structs.DeploymentStatusDescriptionRunningNeedsPromotion {
		t.Errorf("resume description = %q", r.StatusDescription)
	}
	if got := r.TaskGroups["web"].RequireProgressBy; !got.Equal(later.Add(10 * time.Minute)) {
		t.Errorf("resume restarts the deadline: got %v", got)
	}
	if got := r.TaskGroups["db"].RequireProgressBy; !got.IsZero() {
		t.Errorf("group without deadline got one: %v", got)
	}
}

func TestFail(t *testing.T) {
	now := t0.Add(time.Hour)
	job := &structs.Job{ID: "web", Version: 4, Meta: map[string]string{"v": "4"}}
	stable := &structs.Job{ID: "web", Version: 2, Stable: true, Meta: map[string]string{"v": "2"}}
	same := &structs.Job{ID: "web", Version: 3, Stable: true, Meta: map[string]string{"v": "4"}}
	tests := []struct {
		name       string
		status     string
		autoRevert bool
		stable     *structs.Job
		wantErr    error
		wantDesc   string
		wantRevert bool
	}{
		{name: "terminal", status: structs.DeploymentStatusFailed, wantErr: ErrFailTerminal},
		{name: "successful", status: structs.DeploymentStatusSuccessful, wantErr: ErrFailTerminal},
		{name: "no auto revert", status: structs.DeploymentStatusRunning, stable: stable, wantDesc: "Deployment marked as failed"},
		{name: "revert", status: structs.DeploymentStatusPaused, autoRevert: true, stable: stable, wantDesc: "Deployment marked as failed - rolling back to job version 2", wantRevert: true},
		{name: "no stable", status: structs.DeploymentStatusRunning, autoRevert: true, wantDesc: "Deployment marked as failed - no stable job version to auto revert to"},
		{name: "same spec", status: structs.DeploymentStatusRunning, autoRevert: true, stable: same, wantDesc: "Deployment marked as failed - not rolling back to stable job version 3 as current job has same specification"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := &structs.Deployment{ID: "d1", Status: tt.status, JobVersion: 4,
				TaskGroups: map[string]*structs.DeploymentState{"web": {AutoRevert: tt.autoRevert}}}
			got, revert, err := Fail(d, job, tt.stable, now)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) || err.Error() != "can't fail terminal deployment" {
					t.Fatalf("error = %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Status != structs.DeploymentStatusFailed || got.StatusDescription != tt.wantDesc {
				t.Errorf("got %s %q, want failed %q", got.Status, got.StatusDescription, tt.wantDesc)
			}
			if (revert != nil) != tt.wantRevert {
				t.Fatalf("revert = %v, want %v", revert, tt.wantRevert)
			}
			if revert != nil && revert.Version != 2 {
				t.Errorf("revert version %d", revert.Version)
			}
			if got.ModifyTime != now.UnixNano() {
				t.Errorf("ModifyTime not stamped")
			}
		})
	}
	if _, _, err := Fail(nil, nil, nil, now); !errors.Is(err, ErrNoDeployment) {
		t.Errorf("nil: %v", err)
	}
}

func TestSetAllocHealth(t *testing.T) {
	now := t0.Add(time.Hour)
	tests := []struct {
		name       string
		status     string
		healthy    []string
		unhealthy  []string
		wantErrs   []error
		wantMsg    string
		wantHealth map[string]bool
	}{
		{name: "terminal", status: structs.DeploymentStatusCancelled, healthy: []string{"c1"}, wantErrs: []error{ErrHealthTerminal}, wantMsg: "can't set health of allocations for a terminal deployment"},
		{name: "empty", status: structs.DeploymentStatusRunning, wantErrs: []error{ErrNoAllocs}},
		{name: "unknown", status: structs.DeploymentStatusRunning, healthy: []string{"zz"}, wantErrs: []error{ErrUnknownAlloc}, wantMsg: `"zz"`},
		{name: "conflict and unknown", status: structs.DeploymentStatusRunning, healthy: []string{"c2"}, unhealthy: []string{"c2", "yy"}, wantErrs: []error{ErrHealthConflict, ErrUnknownAlloc}},
		{name: "set", status: structs.DeploymentStatusPaused, healthy: []string{"c2"}, unhealthy: []string{"c1"}, wantHealth: map[string]bool{"c1": false, "c2": true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, allocs := canaryDeployment(tt.status)
			got, err := SetAllocHealth(d, tt.healthy, tt.unhealthy, allocs, now)
			if len(tt.wantErrs) > 0 {
				for _, want := range tt.wantErrs {
					if !errors.Is(err, want) {
						t.Errorf("error %v is not %v", err, want)
					}
				}
				if err != nil && !strings.Contains(err.Error(), tt.wantMsg) {
					t.Errorf("error %q does not contain %q", err, tt.wantMsg)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.wantHealth) {
				t.Fatalf("got %d allocs", len(got))
			}
			for _, a := range got {
				if a.IsHealthy() != tt.wantHealth[a.ID] || a.DeploymentStatus.Healthy == nil {
					t.Errorf("%s healthy = %v", a.ID, a.IsHealthy())
				}
				if !a.DeploymentStatus.Timestamp.Equal(now) || !a.IsCanary() {
					t.Errorf("%s: timestamp or canary flag lost: %+v", a.ID, a.DeploymentStatus)
				}
			}
			if !allocs[0].IsHealthy() {
				t.Error("SetAllocHealth modified its input")
			}
		})
	}
	if _, err := SetAllocHealth(nil, nil, nil, nil, now); !errors.Is(err, ErrNoDeployment) {
		t.Errorf("nil: %v", err)
	}
}

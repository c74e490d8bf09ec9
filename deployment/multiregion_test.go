package deployment

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/structs"
)

// mrBlock returns a multiregion block of the named regions.
func mrBlock(maxParallel int, onFailure string, regions ...string) *structs.Multiregion {
	m := &structs.Multiregion{Strategy: &structs.MultiregionStrategy{MaxParallel: maxParallel, OnFailure: onFailure}}
	for _, r := range regions {
		m.Regions = append(m.Regions, &structs.MultiregionRegion{Name: r, Count: 1})
	}
	return m
}

func mrDep(status string) *structs.Deployment {
	return &structs.Deployment{ID: "d-" + status, JobID: "web", JobVersion: 3, Status: status, IsMultiregion: true,
		StatusDescription: map[string]string{
			structs.DeploymentStatusPending: structs.DeploymentStatusDescriptionPendingForPeer,
			structs.DeploymentStatusBlocked: structs.DeploymentStatusDescriptionBlocked,
			structs.DeploymentStatusRunning: structs.DeploymentStatusDescriptionRunning,
		}[status],
		TaskGroups: map[string]*structs.DeploymentState{"web": {DesiredTotal: 1}}}
}

// peers reads "east=running west=unreachable@30s north=newer:cancelled
// south=none" into the peers of an observation at mrNow.
func peers(spec string) map[string]Peer {
	out := map[string]Peer{}
	for _, f := range strings.Fields(spec) {
		name, st, _ := strings.Cut(f, "=")
		p := Peer{Region: name}
		switch {
		case strings.HasPrefix(st, "unreachable"):
			p.Unreachable = true
			if _, ago, ok := strings.Cut(st, "@"); ok {
				d, _ := time.ParseDuration(ago)
				p.Since = mrNow.Add(-d)
			}
		case st == "none":
		default:
			if rest, ok := strings.CutPrefix(st, "newer:"); ok {
				p.Newer = true
				st = rest
			}
			p.Deployment = mrDep(st)
		}
		out[name] = p
	}
	return out
}

var mrNow = time.Date(2026, 12, 7, 12, 1, 37, 0, time.UTC)

func TestDecideRegion(t *testing.T) {
	const (
		all   = structs.MultiregionOnFailureFailAll
		local = structs.MultiregionOnFailureFailLocal
		unset = ""
	)
	three := []string{"east", "west", "north"}
	cases := []struct {
		name      string
		parallel  int
		onFailure string
		regions   []string
		region    string
		status    string
		desc      string // this region's description, when not Nomad's
		peers     string
		want      string
	}{
		// Order and max_parallel.
		{"first region is never pending past its start", 1, all, three, "east", "running", "", "west=pending north=pending", "none"},
		{"second waits while the first runs", 1, all, three, "west", "pending", "", "east=running north=pending", "none"},
		{"second starts once the first is blocked", 1, all, three, "west", "pending", "", "east=blocked north=pending", "start running \"Deployment is running\""},
		{"second starts once the first succeeded", 1, all, three, "west", "pending", "", "east=successful north=pending", "start running \"Deployment is running\""},
		{"third waits for the second", 1, all, three, "north", "pending", "", "east=blocked west=running", "none"},
		{"third starts after both", 1, all, three, "north", "pending", "", "east=blocked west=blocked", "start running \"Deployment is running\""},
		{"max_parallel 2: third starts when one of two is done", 2, all, three, "north", "pending", "", "east=blocked west=running", "start running \"Deployment is running\""},
		{"max_parallel 2: third waits while two run", 2, all, three, "north", "pending", "", "east=running west=running", "none"},
		{"max_parallel 0: a pending region starts", 0, all, three, "north", "pending", "", "east=running west=running", "start running \"Deployment is running\""},
		{"an earlier region without a deployment yet is waited for", 1, all, three, "west", "pending", "", "east=none north=none", "none"},
		{"a later region does not hold an earlier one", 1, all, three, "east", "pending", "", "west=none north=none", "start running \"Deployment is running\""},
		{"running: nothing to do", 1, all, three, "west", "running", "", "east=blocked north=pending", "none"},
		{"paused: nothing to do", 1, all, three, "west", "paused", "", "east=blocked north=pending", "none"},

		// Blocked → successful.
		{"blocked waits for a running region", 1, all, three, "east", "blocked", "", "west=running north=pending", "none"},
		{"all blocked: successful", 1, all, three, "east", "blocked", "", "west=blocked north=blocked", "succeed successful \"Deployment completed successfully\""},
		{"others blocked or successful: successful", 1, all, three, "west", "blocked", "", "east=successful north=blocked", "succeed successful \"Deployment completed successfully\""},
		{"fail_local: a failed region keeps the others blocked", 1, local, three, "east", "blocked", "", "west=failed north=blocked", "none"},
		{"unset: a later failed region keeps earlier ones blocked", 1, unset, three, "east", "blocked", "", "west=failed north=failed", "none"},

		// Failure.
		{"fail_all: pending fails, nothing to revert", 1, all, three, "west", "pending", "", "east=failed north=pending", "fail failed peer=east \"Failed because of an error in peer region\""},
		{"fail_all: running fails and reverts", 2, all, three, "west", "running", "", "east=failed north=pending", "fail failed revert peer=east \"Failed because of an error in peer region\""},
		{"fail_all: a later region's failure fails an earlier blocked one", 1, all, three, "east", "blocked", "", "west=failed north=pending", "fail failed revert peer=west \"Failed because of an error in peer region\""},
		{"fail_all: a failure seen with a newer version there still counts", 1, all, three, "west", "pending", "", "east=newer:failed north=pending", "fail failed peer=east \"Failed because of an error in peer region\""},
		{"fail_local: the next region starts", 1, local, three, "west", "pending", "", "east=failed north=pending", "start running \"Deployment is running\""},
		{"fail_local: a running region goes on", 2, local, three, "west", "running", "", "east=failed north=pending", "none"},
		{"unset: a region after the failed one fails", 1, unset, three, "north", "pending", "", "east=blocked west=failed", "fail failed peer=west \"Failed because of an error in peer region\""},
		{"unset: a running region after the failed one fails and reverts", 3, unset, three, "north", "running", "", "east=running west=failed", "fail failed revert peer=west \"Failed because of an error in peer region\""},
		{"unset: a region before the failed one goes on", 3, unset, three, "east", "running", "", "west=failed north=running", "none"},
		{"unset: a failed by peer region spreads down the order", 1, unset, three, "north", "pending", "", "east=blocked west=failed", "fail failed peer=west \"Failed because of an error in peer region\""},

		// Unreachable regions and newer versions.
		{"pending names an unreachable earlier region", 1, all, three, "west", "pending", "", "east=unreachable@30s north=pending",
			"wait peer=east \"waiting for region \\\"east\\\" (unreachable since 12:01:07)\""},
		{"the time already written is kept", 1, all, three, "west", "pending", `waiting for region "east" (unreachable since 11:58:00)`, "east=unreachable@5s north=pending", "none"},
		{"reachable again: back to Nomad's description", 1, all, three, "west", "pending", `waiting for region "east" (unreachable since 11:58:00)`, "east=running north=pending",
			"wait peer=east \"Deployment is pending, waiting for peer region\""},
		{"blocked names an unreachable region", 1, all, three, "east", "blocked", "", "west=blocked north=unreachable@1m",
			"wait peer=north \"waiting for region \\\"north\\\" (unreachable since 12:00:37)\""},
		{"an unreachable region is named before a slow one", 1, all, three, "east", "blocked", "", "west=running north=unreachable@1m",
			"wait peer=north \"waiting for region \\\"north\\\" (unreachable since 12:00:37)\""},
		{"fail_all: an unreachable region fails nothing", 1, all, three, "west", "running", "", "east=unreachable@1m north=pending", "none"},
		{"an earlier region on a newer version is named", 1, all, three, "west", "pending", "", "east=newer:cancelled north=pending",
			"wait peer=east \"waiting for region \\\"east\\\": it holds a newer version of the job\""},
		{"a region missing from the peers counts as unreachable", 1, all, three, "west", "pending", "", "north=pending",
			"wait peer=east \"waiting for region \\\"east\\\" (unreachable since 12:01:37)\""},

		// Outside the rollout.
		{"terminal: none", 1, all, three, "west", "failed", "", "east=failed", "none"},
		{"a region the block does not name: none", 1, all, three, "south", "pending", "", "east=failed", "none"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := mrDep(tc.status)
			if tc.desc != "" {
				d.StatusDescription = tc.desc
			}
			obs := RegionObservation{Region: tc.region, Multiregion: mrBlock(tc.parallel, tc.onFailure, tc.regions...),
				Deployment: d, Peers: peers(tc.peers), Now: mrNow}
			if got := DecideRegion(obs).String(); got != tc.want {
				t.Errorf("DecideRegion:\n got  %s\n want %s", got, tc.want)
			}
		})
	}
}

func TestDecideRegionSingleRegionDeployment(t *testing.T) {
	d := mrDep(structs.DeploymentStatusPending)
	d.IsMultiregion = false
	obs := RegionObservation{Region: "west", Multiregion: mrBlock(1, "", "east", "west"), Deployment: d,
		Peers: peers("east=blocked"), Now: mrNow}
	if got := DecideRegion(obs); got.Kind != RegionStepNone {
		t.Fatalf("got %s, want none", got)
	}
}

// TestDecideRegionRollsInOrder plays a whole rollout: each region decides
// on what the others hold, the steps are applied, and a running region
// turns blocked when its deployment is done. At no time do more than
// max_parallel regions run, and the regions start in the order written.
func TestDecideRegionRollsInOrder(t *testing.T) {
	names := []string{"a", "b", "c", "d", "e"}
	for _, parallel := range []int{0, 1, 2, 3} {
		m := mrBlock(parallel, structs.MultiregionOnFailureFailAll, names...)
		status := map[string]string{}
		for i, n := range names {
			status[n] = structs.DeploymentStatusPending
			if parallel == 0 || i < parallel {
				status[n] = structs.DeploymentStatusRunning
			}
		}
		var started []string
		for round := 0; round < 50; round++ {
			running := 0
			for _, n := range names {
				if status[n] == structs.DeploymentStatusRunning {
					running++
				}
			}
			if parallel > 0 && running > parallel {
				t.Fatalf("max_parallel %d: %d regions run at once: %v", parallel, running, status)
			}
			// The first running region finishes its local deployment.
			for _, n := range names {
				if status[n] == structs.DeploymentStatusRunning {
					status[n] = structs.DeploymentStatusBlocked
					break
				}
			}
			next := map[string]string{}
			for _, n := range names {
				ps := map[string]Peer{}
				for _, o := range names {
					if o != n {
						ps[o] = Peer{Region: o, Deployment: mrDep(status[o])}
					}
				}
				d := mrDep(status[n])
				step := DecideRegion(RegionObservation{Region: n, Multiregion: m, Deployment: d, Peers: ps, Now: mrNow})
				next[n] = status[n]
				if step.Status != "" {
					next[n] = step.Status
				}
				if step.Kind == RegionStepStart {
					started = append(started, n)
				}
			}
			status = next
		}
		for _, n := range names {
			if status[n] != structs.DeploymentStatusSuccessful {
				t.Fatalf("max_parallel %d: region %s ends %s", parallel, n, status[n])
			}
		}
		first := parallel
		if parallel == 0 {
			first = len(names)
		}
		if got, want := strings.Join(started, ","), strings.Join(names[first:], ","); got != want {
			t.Fatalf("max_parallel %d: started %s, want %s", parallel, got, want)
		}
	}
}

func TestUnblock(t *testing.T) {
	now := mrNow
	out, err := Unblock(mrDep(structs.DeploymentStatusBlocked), now)
	if err != nil || out.Status != structs.DeploymentStatusSuccessful || out.StatusDescription != structs.DeploymentStatusDescriptionSuccessful {
		t.Fatalf("Unblock = %+v, %v", out, err)
	}
	for status, want := range map[string]error{
		structs.DeploymentStatusRunning:    ErrUnblockRunning,
		structs.DeploymentStatusPending:    ErrUnblockRunning,
		structs.DeploymentStatusSuccessful: ErrUnblockTerminal,
		structs.DeploymentStatusFailed:     ErrUnblockTerminal,
	} {
		if _, err := Unblock(mrDep(status), now); !errors.Is(err, want) {
			t.Errorf("Unblock of a %s deployment: %v, want %v", status, err, want)
		}
	}
	single := mrDep(structs.DeploymentStatusBlocked)
	single.IsMultiregion = false
	if _, err := Unblock(single, now); !errors.Is(err, ErrUnblockNotMultiregion) {
		t.Errorf("Unblock of a single-region deployment: %v", err)
	}
	if _, err := Unblock(nil, now); !errors.Is(err, ErrNoDeployment) {
		t.Errorf("Unblock(nil): %v", err)
	}
}

// TestDecideMultiregion: Decide leaves pending and blocked deployments to
// the regions' rollout (but cancels them for a newer version), and turns
// a done multi-region deployment blocked rather than successful.
func TestDecideMultiregion(t *testing.T) {
	job := &structs.Job{ID: "web", Version: 3, Type: structs.JobTypeService,
		TaskGroups: []*structs.TaskGroup{{Name: "web", Count: 1, Update: structs.DefaultUpdateStrategy()}}}
	for _, status := range []string{structs.DeploymentStatusPending, structs.DeploymentStatusBlocked} {
		d := mrDep(status)
		d.TaskGroups["web"].LiveHealthyAllocs = 1
		dec := Decide(Observation{Deployment: d, Job: job, LatestJob: job, FromFigures: true, Now: mrNow})
		if dec.Changed() {
			t.Errorf("%s: Decide = %s, want nothing", status, dec)
		}
		newer := job.Copy()
		newer.Version = 4
		dec = Decide(Observation{Deployment: d, Job: job, LatestJob: newer, FromFigures: true, Now: mrNow})
		if dec.Status != structs.DeploymentStatusCancelled {
			t.Errorf("%s with a newer version: Decide = %s, want cancelled", status, dec)
		}
	}
	d := mrDep(structs.DeploymentStatusRunning)
	d.TaskGroups["web"].LiveHealthyAllocs = 1
	dec := Decide(Observation{Deployment: d, Job: job, LatestJob: job, FromFigures: true, Now: mrNow})
	if dec.Status != structs.DeploymentStatusBlocked || dec.StatusDescription != structs.DeploymentStatusDescriptionBlocked || dec.Stable {
		t.Errorf("done multi-region deployment: Decide = %s, want blocked and not stable", dec)
	}
	d.IsMultiregion = false
	if dec := Decide(Observation{Deployment: d, Job: job, LatestJob: job, FromFigures: true, Now: mrNow}); dec.Status != structs.DeploymentStatusSuccessful || !dec.Stable {
		t.Errorf("done single-region deployment: Decide = %s, want successful and stable", dec)
	}
}

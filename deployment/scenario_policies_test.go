package deployment

// The scenario commands of the rollout policies: the update block's
// fields, zones and group order (the rest of the language is in
// decide_test.go).

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"github.com/droverhq/drover/structs"
)

// setGroupOrder sets the job-level update block's group_order and
// pause_between_groups: "group-order order=db,api pause=5m".
func (sc *scenario) setGroupOrder(t *testing.T, td *datadriven.TestData) error {
	u := &structs.UpdateStrategy{}
	var order string
	td.ScanArgs(t, "order", &order)
	u.GroupOrder = strings.Split(order, ",")
	if td.HasArg("pause") {
		var v string
		td.ScanArgs(t, "pause", &v)
		d, err := time.ParseDuration(v)
		if err != nil {
			return err
		}
		u.PauseBetweenGroups = d
	}
	sc.obs.Job.Update = u
	return nil
}

// updateArgs reads the part C fields of a group's update block:
// max-failed, max-unhealthy (N or N%), on-failure, checkpoints (a comma
// list) and checkpoint-delay.
func updateArgs(t *testing.T, td *datadriven.TestData) (*structs.UpdateStrategy, error) {
	u := &structs.UpdateStrategy{MaxParallel: 1, MinHealthyTime: structs.DefaultMinHealthyTime}
	td.MaybeScanArgs(t, "max-parallel", &u.MaxParallel)
	if td.HasArg("first-batch") {
		var v string
		td.ScanArgs(t, "first-batch", &v)
		a, err := structs.ParseAmount(v)
		if err != nil {
			return nil, err
		}
		u.FirstBatch = &a
	}
	if td.HasArg("stagger") {
		var v string
		td.ScanArgs(t, "stagger", &v)
		d, err := time.ParseDuration(v)
		if err != nil {
			return nil, err
		}
		u.Stagger, u.StaggerSet = d, true
	}
	for _, f := range []struct {
		key string
		dst **structs.Amount
	}{{"max-failed", &u.MaxFailed}, {"max-unhealthy", &u.MaxUnhealthy}} {
		if !td.HasArg(f.key) {
			continue
		}
		var v string
		td.ScanArgs(t, f.key, &v)
		a, err := structs.ParseAmount(v)
		if err != nil {
			return nil, err
		}
		*f.dst = &a
	}
	td.MaybeScanArgs(t, "on-failure", &u.OnFailure)
	if err := zoneArgs(t, td, u); err != nil {
		return nil, err
	}
	if td.HasArg("checkpoints") {
		var v string
		td.ScanArgs(t, "checkpoints", &v)
		for _, c := range strings.Split(v, ",") {
			a, err := structs.ParseAmount(c)
			if err != nil {
				return nil, err
			}
			u.Checkpoints = append(u.Checkpoints, a)
		}
	}
	if td.HasArg("checkpoint-delay") {
		var v string
		td.ScanArgs(t, "checkpoint-delay", &v)
		d, err := time.ParseDuration(v)
		if err != nil {
			return nil, err
		}
		u.CheckpointDelay = d
	}
	return u, nil
}

// zoneArgs reads a group's zones block: zones=zone_by_zone|concurrent,
// budget (N or N%), zone-pause (a duration) and threshold (N or N%).
func zoneArgs(t *testing.T, td *datadriven.TestData, u *structs.UpdateStrategy) error {
	if !td.HasArg("zones") {
		return nil
	}
	z := &structs.ZoneStrategy{Attribute: "${meta.zone}"}
	td.ScanArgs(t, "zones", &z.Mode)
	for _, f := range []struct {
		key string
		dst **structs.Amount
	}{{"budget", &z.DisruptionBudget}, {"threshold", &z.SuccessThreshold}} {
		if !td.HasArg(f.key) {
			continue
		}
		var v string
		td.ScanArgs(t, f.key, &v)
		a, err := structs.ParseAmount(v)
		if err != nil {
			return err
		}
		*f.dst = &a
	}
	if td.HasArg("zone-pause") {
		var v string
		td.ScanArgs(t, "zone-pause", &v)
		d, err := time.ParseDuration(v)
		if err != nil {
			return err
		}
		z.PauseBetweenZones = d
	}
	u.Zones = z
	return nil
}

// zoneName reads a zone name argument; "-" is the zone "" (nodes without
// the attribute).
func zoneName(t *testing.T, td *datadriven.TestData, key string) string {
	var v string
	td.MaybeScanArgs(t, key, &v)
	if v == "-" {
		return ""
	}
	return v
}

// addZone appends a zone to a group's deployment state, as the scheduler
// writes it: "zone group=web name=a size=3 state=rolling", with failed=N
// for failures counted before the scenario and done-at=OFFSET.
func (sc *scenario) addZone(t *testing.T, td *datadriven.TestData) error {
	var group string
	td.ScanArgs(t, "group", &group)
	s := sc.obs.Deployment.TaskGroups[group]
	if s == nil {
		return fmt.Errorf("no group %q", group)
	}
	z := &structs.ZoneState{Name: zoneName(t, td, "name"), State: structs.ZoneStateWaiting}
	td.ScanArgs(t, "size", &z.Size)
	td.MaybeScanArgs(t, "state", &z.State)
	td.MaybeScanArgs(t, "failed", &z.Failed)
	if td.HasArg("done-at") {
		at, err := offsetArg(t, td, "done-at")
		if err != nil {
			return err
		}
		z.DoneAt = at
	}
	s.Zones = append(s.Zones, z)
	return nil
}

// countZones sets the zones' Healthy and InFlight from the allocs, as the
// store keeps them.
func countZones(d *structs.Deployment, allocs []*structs.Allocation) {
	for _, s := range d.TaskGroups {
		for _, z := range s.Zones {
			z.Healthy, z.InFlight = 0, 0
		}
	}
	for _, a := range allocs {
		s := d.TaskGroups[a.TaskGroup]
		if s == nil || a.TerminalStatus() {
			continue
		}
		z := s.Zone(a.Zone)
		switch {
		case z == nil:
		case a.IsHealthy():
			z.Healthy++
		case !a.IsUnhealthy():
			z.InFlight++
		}
	}
}

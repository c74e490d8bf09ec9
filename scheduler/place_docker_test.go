package scheduler

import (
	"testing"

	"github.com/droverhq/drover/structs"
)

// TestPlaceOnlyWhereDockerAnswers: a docker job goes only to nodes whose
// docker driver is detected and healthy (a client whose daemon does not
// answer fingerprints it undetected).
func TestPlaceOnlyWhereDockerAnswers(t *testing.T) {
	ns := nodes(3, func(i int, n *structs.Node) {
		switch i {
		case 0:
			n.Drivers[structs.DriverDocker] = &structs.DriverInfo{Detected: false, Healthy: false,
				HealthDescription: "Failed to connect to docker daemon"}
		case 1:
			n.Drivers[structs.DriverDocker] = &structs.DriverInfo{Detected: true, Healthy: false}
		case 2:
			n.Drivers[structs.DriverDocker] = &structs.DriverInfo{Detected: true, Healthy: true}
		}
	})
	j, plan := placeJob(3, func(j *structs.Job) {
		j.TaskGroups[0].Tasks[0].Driver = structs.DriverDocker
		j.TaskGroups[0].Tasks[0].Config = map[string]any{"image": "web:1"}
	})
	res := NewPlacer(ns, nil, 1).Place(j, plan, baseTime)
	if len(res.Allocs) != 3 {
		t.Fatalf("placed %d, want 3 (failed: %+v)", len(res.Allocs), res.Failed)
	}
	for _, a := range res.Allocs {
		if a.NodeID != "n2" {
			t.Fatalf("alloc %s on %s, whose docker driver is not usable", a.Name, a.NodeID)
		}
	}

	// With no usable docker anywhere nothing is placed, and the metric
	// says why.
	delete(ns[2].Drivers, structs.DriverDocker)
	_, plan = placeJob(1, func(jj *structs.Job) { *jj = *j })
	j.TaskGroups[0].Count = 1
	res = NewPlacer(ns, nil, 1).Place(j, plan, baseTime)
	m := res.Failed["web"]
	if len(res.Allocs) != 0 || m == nil || m.NodesFiltered != 3 || m.ConstraintFiltered["missing drivers"] != 3 {
		t.Fatalf("placed %d, metric %+v", len(res.Allocs), m)
	}
	t.Logf("metric: %+v", m)
}

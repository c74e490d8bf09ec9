package scheduler

import (
	"sort"
	"strings"
	"testing"

	"github.com/droverhq/drover/structs"
)

// Host volumes in placement: a group goes only to nodes that offer each
// of its host volumes (read-only ones only to read-only requests); a
// per_alloc volume is the source with "[index]" of each allocation; a
// group no node can serve fails with Nomad's "missing compatible host
// volumes".
func TestPlaceHostVolumes(t *testing.T) {
	hv := func(name string, ro bool) *structs.ClientHostVolumeConfig {
		return &structs.ClientHostVolumeConfig{Name: name, Path: "/srv/" + name, ReadOnly: ro}
	}
	for _, c := range []struct {
		name  string
		count int
		vol   structs.VolumeRequest
		node  map[string][]*structs.ClientHostVolumeConfig // node ID → its volumes
		want  string                                       // alloc index@node, sorted; "" when none is placed
		// filtered is how many nodes the failed metric filters for the
		// missing volume, when placement fails.
		filtered int
	}{
		{name: "only where the volume is", count: 2, vol: structs.VolumeRequest{Type: "host", Source: "data"},
			node: map[string][]*structs.ClientHostVolumeConfig{"n1": {hv("data", false)}},
			want: "0@n1,1@n1"},
		{name: "no node has it", count: 1, vol: structs.VolumeRequest{Type: "host", Source: "data"},
			node: map[string][]*structs.ClientHostVolumeConfig{"n1": {hv("other", false)}}, filtered: 3},
		{name: "read-only volume, writable request", count: 1, vol: structs.VolumeRequest{Type: "host", Source: "data"},
			node: map[string][]*structs.ClientHostVolumeConfig{"n0": {hv("data", true)}}, filtered: 3},
		{name: "read-only volume, read-only request", count: 1, vol: structs.VolumeRequest{Type: "host", Source: "data", ReadOnly: true},
			node: map[string][]*structs.ClientHostVolumeConfig{"n0": {hv("data", true)}}, want: "0@n0"},
		{name: "per_alloc", count: 2, vol: structs.VolumeRequest{Type: "host", Source: "data", PerAlloc: true},
			node: map[string][]*structs.ClientHostVolumeConfig{"n0": {hv("data[1]", false)}, "n2": {hv("data[0]", false)}},
			want: "0@n2,1@n0"},
		{name: "per_alloc, one index missing", count: 2, vol: structs.VolumeRequest{Type: "host", Source: "data", PerAlloc: true},
			node: map[string][]*structs.ClientHostVolumeConfig{"n0": {hv("data[0]", false)}},
			want: "0@n0", filtered: 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			ns := nodes(3, func(i int, n *structs.Node) {
				for _, v := range c.node[n.ID] {
					if n.HostVolumes == nil {
						n.HostVolumes = map[string]*structs.ClientHostVolumeConfig{}
					}
					n.HostVolumes[v.Name] = v
				}
			})
			j, plan := placeJob(c.count, func(j *structs.Job) {
				v := c.vol
				v.Name = "v"
				j.TaskGroups[0].Volumes = map[string]*structs.VolumeRequest{"v": &v}
			})
			res := NewPlacer(ns, nil, 1).Place(j, plan, baseTime)
			var got []string
			for _, a := range res.Allocs {
				got = append(got, strings.TrimPrefix(a.Name[strings.LastIndex(a.Name, "["):], "[")[:1]+"@"+a.NodeID)
			}
			sort.Strings(got)
			if strings.Join(got, ",") != c.want {
				t.Fatalf("placed %v, want %s (failed: %+v)", got, c.want, res.Failed["web"])
			}
			m := res.Failed["web"]
			if c.filtered == 0 {
				if m != nil {
					t.Fatalf("unexpected failure %+v", m)
				}
				return
			}
			if m == nil || m.ConstraintFiltered[ReasonMissingHostVolumes] != c.filtered {
				t.Fatalf("failed metric %+v, want %d nodes filtered for %q", m, c.filtered, ReasonMissingHostVolumes)
			}
		})
	}
}

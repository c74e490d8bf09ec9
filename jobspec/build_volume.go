package jobspec

import (
	"fmt"
	"sort"

	"github.com/droverhq/drover/structs"
)

// volumes builds a group's volume blocks: host volumes, each with a
// source; CSI volumes are refused, naming the field.
func (b *builder) volumes(path string, vs map[string]*specVolume) map[string]*structs.VolumeRequest {
	if len(vs) == 0 {
		return nil
	}
	names := make([]string, 0, len(vs))
	for n := range vs {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make(map[string]*structs.VolumeRequest, len(vs))
	for _, n := range names {
		v, p := vs[n], path+".Volumes."+n
		if v == nil {
			b.err(p, "must not be null")
			continue
		}
		r := &structs.VolumeRequest{Name: n, Type: v.Type, Source: v.Source, ReadOnly: v.ReadOnly, PerAlloc: v.PerAlloc}
		if v.Name != "" && v.Name != n {
			b.err(p+".Name", "must equal the volume's key %q (got %q)", n, v.Name)
		}
		switch r.Type {
		case structs.VolumeTypeHost:
		case structs.VolumeTypeCSI:
			b.err(p+".Type", `volume.type = "csi" is not supported by drover (no CSI volumes; use a host volume)`)
		case "":
			b.err(p, `volume %q needs a type ("host")`, n)
		default:
			b.err(p+".Type", `volume.type must be "host" (got %q)`, r.Type)
		}
		if r.Source == "" {
			b.err(p, "volume %q needs a source (the client's host_volume name)", n)
		}
		out[n] = r
	}
	return out
}

// volumeMounts builds a task's volume_mount blocks, each naming a volume
// of its group and a destination.
func (b *builder) volumeMounts(path string, tg *structs.TaskGroup, ms []*specVolumeMount) []*structs.VolumeMount {
	var out []*structs.VolumeMount
	for i, m := range ms {
		p := fmt.Sprintf("%s.VolumeMounts[%d]", path, i)
		vm := &structs.VolumeMount{Volume: orStr(m.Volume, ""), Destination: orStr(m.Destination, "")}
		lay(&vm.ReadOnly, m.ReadOnly)
		switch _, ok := tg.Volumes[vm.Volume]; {
		case vm.Volume == "":
			b.err(p, "volume_mount.volume is required")
		case !ok:
			b.err(p+".Volume", "names no volume of group %q (got %q)", tg.Name, vm.Volume)
		}
		if vm.Destination == "" {
			b.err(p, "volume_mount.destination is required")
		}
		out = append(out, vm)
	}
	return out
}

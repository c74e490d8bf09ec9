package allocrunner

import (
	"fmt"

	"github.com/droverhq/drover/drivers"
	"github.com/droverhq/drover/structs"
)

// taskMounts resolves a task's volume_mount blocks to the node's host
// volumes: the group's volume names the host volume (with "[index]" when
// per_alloc), and the mount is read-only when the mount, the volume or
// the host volume says so. A host volume the node lacks is an error: the
// scheduler placed the allocation on a node that offered it.
func taskMounts(tg *structs.TaskGroup, index int, t *structs.Task, n *structs.Node) ([]drivers.MountConfig, error) {
	var out []drivers.MountConfig
	for _, m := range t.VolumeMounts {
		v := tg.Volumes[m.Volume]
		if v == nil {
			return nil, fmt.Errorf("%w: task %s mounts volume %q, which its group lacks", ErrInvalidConfig, t.Name, m.Volume)
		}
		if v.Type != structs.VolumeTypeHost {
			return nil, fmt.Errorf("%w: task %s: volume %q has type %q", ErrInvalidConfig, t.Name, m.Volume, v.Type)
		}
		src := v.SourceFor(index)
		var hv *structs.ClientHostVolumeConfig
		if n != nil {
			hv = n.HostVolumes[src]
		}
		if hv == nil {
			return nil, fmt.Errorf("%w: task %s: this node has no host volume %q", ErrInvalidConfig, t.Name, src)
		}
		out = append(out, drivers.MountConfig{TaskPath: m.Destination, HostPath: hv.Path, Readonly: m.ReadOnly || v.ReadOnly || hv.ReadOnly})
	}
	return out, nil
}

package structs

import "strconv"

// Volume types. Only host volumes are supported; Nomad's "csi" is
// refused by the jobspec.
const (
	VolumeTypeHost = "host"
	VolumeTypeCSI  = "csi"
)

// ClientHostVolumeConfig is a host volume a client offers, from its
// agent's host_volume blocks: Nomad's Node.HostVolumes entry.
type ClientHostVolumeConfig struct {
	Name     string
	Path     string
	ReadOnly bool
}

// VolumeRequest is a group's volume block, as Nomad's (host volumes).
type VolumeRequest struct {
	Name     string
	Type     string
	Source   string
	ReadOnly bool
	// PerAlloc appends "[N]" (the allocation's index) to Source.
	PerAlloc bool `json:",omitempty"`
}

// SourceFor returns the host volume an allocation of the given index
// asks for: Source, with "[index]" when PerAlloc, as Nomad.
func (v *VolumeRequest) SourceFor(index int) string {
	if v.PerAlloc {
		return v.Source + "[" + strconv.Itoa(index) + "]"
	}
	return v.Source
}

// VolumeMount is a task's volume_mount block.
type VolumeMount struct {
	Volume      string
	Destination string
	ReadOnly    bool
}

func copyVolumes(m map[string]*VolumeRequest) map[string]*VolumeRequest {
	if m == nil {
		return nil
	}
	c := make(map[string]*VolumeRequest, len(m))
	for k, v := range m {
		vv := *v
		c[k] = &vv
	}
	return c
}

func copyVolumeMounts(ms []*VolumeMount) []*VolumeMount {
	if ms == nil {
		return nil
	}
	c := make([]*VolumeMount, len(ms))
	for i, m := range ms {
		mm := *m
		c[i] = &mm
	}
	return c
}

func copyHostVolumes(m map[string]*ClientHostVolumeConfig) map[string]*ClientHostVolumeConfig {
	if m == nil {
		return nil
	}
	c := make(map[string]*ClientHostVolumeConfig, len(m))
	for k, v := range m {
		vv := *v
		c[k] = &vv
	}
	return c
}

package allocrunner

import (
	"errors"
	"reflect"
	"testing"

	"github.com/droverhq/drover/drivers"
	"github.com/droverhq/drover/structs"
)

// A task's volume_mount blocks become the node's host paths; per_alloc
// picks the allocation's own volume; read-only from any of the three
// sides wins; a host volume the node lacks is an error.
func TestTaskMounts(t *testing.T) {
	tg := &structs.TaskGroup{Name: "g", Volumes: map[string]*structs.VolumeRequest{
		"data":  {Name: "data", Type: "host", Source: "data", PerAlloc: true},
		"certs": {Name: "certs", Type: "host", Source: "certs", ReadOnly: true},
		"logs":  {Name: "logs", Type: "host", Source: "logs"},
	}}
	n := &structs.Node{HostVolumes: map[string]*structs.ClientHostVolumeConfig{
		"data[1]": {Name: "data[1]", Path: "/srv/data1"},
		"certs":   {Name: "certs", Path: "/etc/ssl/certs"},
		"logs":    {Name: "logs", Path: "/var/log/app", ReadOnly: true},
	}}
	task := &structs.Task{Name: "t", VolumeMounts: []*structs.VolumeMount{
		{Volume: "data", Destination: "/data"}, {Volume: "certs", Destination: "/certs"}, {Volume: "logs", Destination: "/logs"},
	}}
	got, err := taskMounts(tg, 1, task, n)
	if err != nil {
		t.Fatal(err)
	}
	want := []drivers.MountConfig{
		{TaskPath: "/data", HostPath: "/srv/data1"},
		{TaskPath: "/certs", HostPath: "/etc/ssl/certs", Readonly: true},
		{TaskPath: "/logs", HostPath: "/var/log/app", Readonly: true},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("mounts %+v, want %+v", got, want)
	}
	if _, err := taskMounts(tg, 0, task, n); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("index 0 has no data[0] on the node: %v", err)
	}
}

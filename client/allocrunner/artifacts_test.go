package allocrunner

import (
	"testing"

	"github.com/droverhq/drover/client/taskenv"
	"github.com/droverhq/drover/structs"
)

// An artifact's source, destination, options and headers take
// ${NOMAD_*}, ${meta.*} and ${attr.*} as Nomad's client fills them in;
// the job's artifact is not modified.
func TestInterpolateArtifacts(t *testing.T) {
	job := &structs.Job{ID: "j", Name: "j", Namespace: "default", Type: structs.JobTypeService}
	task := &structs.Task{Name: "web", Driver: "raw_exec", Meta: map[string]string{"version": "1.4"}}
	a := &structs.Allocation{ID: "a1", Name: "j.g[0]", JobID: "j", Job: job, TaskGroup: "g"}
	n := &structs.Node{ID: "n1", Name: "node1", Datacenter: "dc1",
		Attributes: map[string]string{"kernel.name": "linux", "cpu.arch": "amd64"}, Meta: map[string]string{"mirror": "10.0.0.5"}}
	env := taskenv.Build(taskenv.Input{Alloc: a, Task: task, Node: n, TaskDir: "/tmp/t/local"})
	art := &structs.TaskArtifact{
		GetterSource:  "http://${meta.mirror}/app-${NOMAD_META_version}-${attr.kernel.name}-${attr.cpu.arch}.tgz",
		RelativeDest:  "local/${NOMAD_TASK_NAME}",
		GetterOptions: map[string]string{"checksum": "file:http://${meta.mirror}/SUMS"},
		GetterHeaders: map[string]string{"X-Alloc": "${NOMAD_ALLOC_ID}"},
	}
	got := interpolateArtifacts([]*structs.TaskArtifact{art}, env)[0]
	if got.GetterSource != "http://10.0.0.5/app-1.4-linux-amd64.tgz" || got.RelativeDest != "local/web" ||
		got.GetterOptions["checksum"] != "file:http://10.0.0.5/SUMS" || got.GetterHeaders["X-Alloc"] != "a1" {
		t.Fatalf("interpolated %+v", got)
	}
	if art.RelativeDest != "local/${NOMAD_TASK_NAME}" || art.GetterOptions["checksum"] != "file:http://${meta.mirror}/SUMS" {
		t.Fatalf("the job's artifact changed: %+v", art)
	}
}

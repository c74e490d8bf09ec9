// Package statetest builds realistic domain objects for tests and
// benchmarks of the state store and the FSM. IDs are derived from a name
// so that fixtures are deterministic.
package statetest

import (
	"crypto/sha256"
	"fmt"
	"time"

	"github.com/droverhq/drover/structs"
)

// ID returns a UUID-shaped ID derived from name.
func ID(name string) string {
	b := sha256.Sum256([]byte(name))
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// T0 is the fixtures' epoch.
var T0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// Node returns a ready node.
func Node(name string) *structs.Node {
	return &structs.Node{
		ID: ID("node/" + name), Name: name, Datacenter: "dc1", NodePool: "default",
		HTTPAddr:   "127.0.0.1:4646",
		Attributes: map[string]string{"kernel.name": "linux", "unique.network.ip-address": "127.0.0.1", "nomad.version": "1.9.0"},
		Meta:       map[string]string{"zone": "a"},
		NodeResources: &structs.NodeResources{
			Cpu:    structs.NodeCpuResources{CpuShares: 8000, TotalCpuCores: 4},
			Memory: structs.NodeMemoryResources{MemoryMB: 16384},
			Disk:   structs.NodeDiskResources{DiskMB: 100000},
		},
		Drivers: map[string]*structs.DriverInfo{
			"raw_exec": {Detected: true, Healthy: true, HealthDescription: "Healthy", UpdateTime: T0},
		},
		SchedulingEligibility: structs.NodeSchedulingEligible,
		Status:                structs.NodeStatusReady,
		StatusUpdatedAt:       T0.UnixNano(),
	}
}

// Job returns a service job with one group "web" of count allocs and two
// tasks, with the default update block and progress deadline.
func Job(id string, count int) *structs.Job {
	upd := structs.DefaultUpdateStrategy()
	task := func(name string) *structs.Task {
		return &structs.Task{
			Name: name, Driver: structs.DriverRawExec,
			Config: map[string]any{"command": "/bin/sleep", "args": []any{"3600"}},
			Env:    map[string]string{"GREETING": "hello", "PORT": "${NOMAD_PORT_http}"},
			Services: []*structs.Service{{
				Name: name + "-svc", PortLabel: "http", Provider: structs.ServiceProviderNomad,
				Tags: []string{"v1", "web"},
				Checks: []*structs.ServiceCheck{{
					Name: "alive", Type: structs.CheckTypeHTTP, Path: "/health",
					Interval: 10 * time.Second, Timeout: 2 * time.Second,
				}},
			}},
			Resources:   &structs.Resources{CPU: 100, MemoryMB: 300},
			Meta:        map[string]string{"owner": "team-a"},
			KillTimeout: 5 * time.Second,
		}
	}
	return &structs.Job{
		Region: "global", Namespace: structs.DefaultNamespace, ID: id, Name: id,
		Type: structs.JobTypeService, Priority: 50, Datacenters: []string{"dc1"},
		NodePool:    "default",
		Constraints: []*structs.Constraint{{LTarget: "${attr.kernel.name}", RTarget: "linux", Operand: "="}},
		TaskGroups: []*structs.TaskGroup{{
			Name: "web", Count: count,
			Tasks:            []*structs.Task{task("server"), task("sidecar")},
			RestartPolicy:    structs.DefaultRestartPolicy(structs.JobTypeService),
			ReschedulePolicy: structs.DefaultReschedulePolicy(structs.JobTypeService),
			EphemeralDisk:    &structs.EphemeralDisk{SizeMB: 300},
			Update:           upd.Copy(),
			Meta:             map[string]string{"tier": "front"},
		}},
		Update: upd,
		Meta:   map[string]string{"team": "a"},
	}
}

// Eval returns a pending job-register eval for job.
func Eval(name string, job *structs.Job) *structs.Evaluation {
	return &structs.Evaluation{
		ID: ID("eval/" + name), Namespace: job.Namespace, Priority: job.Priority,
		Type: job.Type, TriggeredBy: structs.EvalTriggerJobRegister, JobID: job.ID,
		Status: structs.EvalStatusPending, CreateTime: T0.UnixNano(), ModifyTime: T0.UnixNano(),
	}
}

// Alloc returns the index-th alloc of job's first group on node, in
// deployment depID (may be empty), with the job embedded.
func Alloc(job *structs.Job, node *structs.Node, evalID, depID string, index int) *structs.Allocation {
	tg := job.TaskGroups[0]
	a := &structs.Allocation{
		ID:        ID(fmt.Sprintf("alloc/%s/%d/%d/%s", job.ID, job.Version, index, depID)),
		Namespace: job.Namespace, EvalID: evalID,
		Name:   structs.AllocName(job.ID, tg.Name, index),
		NodeID: node.ID, NodeName: node.Name, JobID: job.ID, Job: job, TaskGroup: tg.Name,
		AllocatedResources: &structs.AllocatedResources{
			Tasks: map[string]*structs.AllocatedTaskResources{
				"server":  {Cpu: structs.AllocatedCpuResources{CpuShares: 100}, Memory: structs.AllocatedMemoryResources{MemoryMB: 300}},
				"sidecar": {Cpu: structs.AllocatedCpuResources{CpuShares: 100}, Memory: structs.AllocatedMemoryResources{MemoryMB: 300}},
			},
			Shared: structs.AllocatedSharedResources{DiskMB: 300},
		},
		DesiredStatus: structs.AllocDesiredStatusRun,
		ClientStatus:  structs.AllocClientStatusPending,
		DeploymentID:  depID,
		Metrics:       &structs.AllocationMetric{NodesEvaluated: 3, NodesAvailable: map[string]int{"dc1": 3}},
		CreateTime:    T0.UnixNano(),
	}
	if depID != "" {
		a.DeploymentStatus = &structs.AllocDeploymentStatus{}
	}
	return a
}

// Deployment returns a running deployment for job's current version with
// one group "web" (desired total = count, canaries as given).
func Deployment(job *structs.Job, canaries int) *structs.Deployment {
	tg := job.TaskGroups[0]
	return &structs.Deployment{
		ID:        ID(fmt.Sprintf("deployment/%s/%d", job.ID, job.Version)),
		Namespace: job.Namespace, JobID: job.ID, JobVersion: job.Version,
		TaskGroups: map[string]*structs.DeploymentState{
			tg.Name: {
				ProgressDeadline: tg.Update.ProgressDeadline,
				DesiredTotal:     tg.Count, DesiredCanaries: canaries,
			},
		},
		Status:            structs.DeploymentStatusRunning,
		StatusDescription: structs.DeploymentStatusDescriptionRunning,
		CreateTime:        T0.UnixNano(),
	}
}

// Bool returns a pointer to b.
func Bool(b bool) *bool { return &b }

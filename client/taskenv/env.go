// Package taskenv builds a task's environment from its allocation, task
// and node, and fills runtime references (${NOMAD_PORT_http},
// ${attr.kernel.name}, …) into env values, driver config and check paths.
package taskenv

import (
	"maps"
	"net"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/droverhq/drover/structs"
)

// Variable names, as Nomad's. Each also has a DROVER_ alias.
const (
	AllocID        = "NOMAD_ALLOC_ID"
	AllocIndex     = "NOMAD_ALLOC_INDEX"
	AllocName      = "NOMAD_ALLOC_NAME"
	AllocDir       = "NOMAD_ALLOC_DIR"
	TaskDir        = "NOMAD_TASK_DIR"
	SecretsDir     = "NOMAD_SECRETS_DIR"
	JobID          = "NOMAD_JOB_ID"
	JobName        = "NOMAD_JOB_NAME"
	GroupName      = "NOMAD_GROUP_NAME"
	TaskName       = "NOMAD_TASK_NAME"
	Datacenter     = "NOMAD_DC"
	Region         = "NOMAD_REGION"
	Namespace      = "NOMAD_NAMESPACE"
	CPULimit       = "NOMAD_CPU_LIMIT"
	MemoryLimit    = "NOMAD_MEMORY_LIMIT"
	MemoryMaxLimit = "NOMAD_MEMORY_MAX_LIMIT"
	MetaPrefix     = "NOMAD_META_"
	PortPrefix     = "NOMAD_PORT_"
	HostPortPrefix = "NOMAD_HOST_PORT_"
	IPPrefix       = "NOMAD_IP_"
	AddrPrefix     = "NOMAD_ADDR_"
	// The host's side of a port, and (in a bridge allocation) the
	// allocation's side in its namespace, as Nomad's.
	HostIPPrefix         = "NOMAD_HOST_IP_"
	HostAddrPrefix       = "NOMAD_HOST_ADDR_"
	AllocPortPrefix      = "NOMAD_ALLOC_PORT_"
	AllocIPPrefix        = "NOMAD_ALLOC_IP_"
	AllocAddrPrefix      = "NOMAD_ALLOC_ADDR_"
	AllocInterfacePrefix = "NOMAD_ALLOC_INTERFACE_"
)

const (
	nomadPrefix  = "NOMAD_"
	droverPrefix = "DROVER_"
)

// Input is what a task's environment is built from. Any pointer may be
// nil; what it would give is then left out.
type Input struct {
	Alloc *structs.Allocation
	Task  *structs.Task
	Node  *structs.Node
	// Directories as the task sees them.
	AllocDir, TaskDir, SecretsDir string
	// HostEnv is the lowest layer (for example PATH and HOME of the
	// client); the task's env block and the built-in variables win.
	HostEnv map[string]string
	// AllocNetwork is the allocation's own network namespace in bridge
	// mode (nil otherwise): its interface and address give the
	// NOMAD_ALLOC_INTERFACE_, _IP_ and _ADDR_ variables of each port.
	AllocNetwork *AllocNetwork
}

// AllocNetwork is an allocation's interface and address in its network
// namespace.
type AllocNetwork struct {
	InterfaceName string
	Address       string
}

// Env is a task's environment and the values runtime references resolve
// to. It is immutable once built.
type Env struct {
	vars map[string]string // the task's environment
	node *nodeRefTable     // node.*, attr.*, meta.* references
}

// nodeRefTable holds a node's references, built on first use: most tasks
// never interpolate one, and a node has dozens of attributes.
type nodeRefTable struct {
	once sync.Once
	n    *structs.Node
	refs map[string]string
}

func (t *nodeRefTable) get(ref string) (string, bool) {
	if t == nil {
		return "", false
	}
	t.once.Do(func() { t.refs = nodeRefs(t.n) })
	v, ok := t.refs[ref]
	return v, ok
}

// Build builds the environment. Precedence, lowest first: HostEnv, the
// task's env block (interpolated), the built-in NOMAD_* and DROVER_*
// variables, which a job cannot override.
func Build(in Input) *Env {
	builtin := builtins(in)
	if len(in.HostEnv) == 0 {
		return buildOnBuiltins(in, builtin)
	}
	e := &Env{vars: make(map[string]string, len(in.HostEnv)+len(builtin)), node: &nodeRefTable{n: in.Node}}
	maps.Copy(e.vars, in.HostEnv)
	if in.Task != nil && len(in.Task.Env) > 0 {
		// The env block may refer to host variables, built-ins and node
		// values.
		// Without host variables the built-ins are the whole lookup
		// table (only read): no copy of them.
		lookup := &Env{vars: builtin, node: e.node}
		if len(e.vars) > 0 {
			lookup.vars = maps.Clone(e.vars)
			maps.Copy(lookup.vars, builtin)
		}
		for k, v := range in.Task.Env {
			e.vars[k] = lookup.Replace(v)
		}
	}
	maps.Copy(e.vars, builtin)
	return e
}

// buildOnBuiltins is Build without host variables: the built-ins are the
// lookup table of the env block, and the environment is one map of the
// size it needs (the built-ins' is sized for the most a task can have, and
// the environment is kept as long as the task runs) with the env block's
// variables added once all are interpolated (none replaces a built-in).
func buildOnBuiltins(in Input, builtin map[string]string) *Env {
	lookup := &Env{vars: builtin, node: &nodeRefTable{n: in.Node}}
	var add []string // key, value, key, value…
	if in.Task != nil {
		for k, v := range in.Task.Env {
			if _, ok := builtin[k]; !ok {
				add = append(add, k, lookup.Replace(v))
			}
		}
	}
	e := &Env{vars: make(map[string]string, len(builtin)+len(add)/2), node: lookup.node}
	maps.Copy(e.vars, builtin)
	for i := 0; i < len(add); i += 2 {
		e.vars[add[i]] = add[i+1]
	}
	return e
}

// builtins returns the NOMAD_* variables with their DROVER_* aliases.
func builtins(in Input) map[string]string {
	// Some thirty to fifty variables and aliases (a task with a port or
	// two): sized once, not grown by doubling (nor oversized: the map is
	// copied into the task's environment).
	m := make(map[string]string, 48)
	set := func(k, v string) {
		m[k] = v
		m[droverPrefix+strings.TrimPrefix(k, nomadPrefix)] = v
	}
	for k, v := range map[string]string{AllocDir: in.AllocDir, TaskDir: in.TaskDir, SecretsDir: in.SecretsDir} {
		if v != "" {
			set(k, v)
		}
	}
	a, t := in.Alloc, in.Task
	var job *structs.Job
	var group *structs.TaskGroup
	if a != nil {
		set(AllocID, a.ID)
		set(AllocName, a.Name)
		set(AllocIndex, strconv.Itoa(max(a.Index(), 0)))
		set(GroupName, a.TaskGroup)
		set(JobID, a.JobID)
		job = a.Job
		group = job.LookupTaskGroup(a.TaskGroup)
		if a.Namespace != "" {
			set(Namespace, a.Namespace)
		}
	}
	if job != nil {
		set(JobName, job.Name)
		set(Region, job.Region)
		if job.ID != "" {
			set(JobID, job.ID)
		}
		if _, ok := m[Namespace]; !ok && job.Namespace != "" {
			set(Namespace, job.Namespace)
		}
	}
	if in.Node != nil {
		set(Datacenter, in.Node.Datacenter)
	}
	if t != nil {
		set(TaskName, t.Name)
		setLimits(set, a, t)
	}
	// Meta: job, then group, then task; the innermost wins. Each key is
	// set as written and upper-cased, as Nomad does.
	var metas []map[string]string
	if job != nil {
		metas = append(metas, job.Meta)
	}
	if group != nil {
		metas = append(metas, group.Meta)
	}
	if t != nil {
		metas = append(metas, t.Meta)
	}
	for _, meta := range metas {
		for k, v := range meta {
			set(MetaPrefix+k, v)
			set(MetaPrefix+strings.ToUpper(metaKey(k)), v)
		}
	}
	if a != nil && a.AllocatedResources != nil {
		for _, p := range a.AllocatedResources.Shared.Ports {
			setPort(set, p, in.Node)
			if n := in.AllocNetwork; n != nil {
				port := p.Value
				if p.To > 0 {
					port = p.To
				}
				set(AllocInterfacePrefix+p.Label, n.InterfaceName)
				set(AllocIPPrefix+p.Label, n.Address)
				set(AllocAddrPrefix+p.Label, net.JoinHostPort(n.Address, strconv.Itoa(port)))
			}
		}
	}
	return m
}

func setLimits(set func(k, v string), a *structs.Allocation, t *structs.Task) {
	cpu, mem, memMax := int64(0), int64(0), int64(0)
	if t.Resources != nil {
		cpu, mem, memMax = int64(t.Resources.CPU), int64(t.Resources.MemoryMB), int64(t.Resources.MemoryMaxMB)
	}
	if a != nil && a.AllocatedResources != nil {
		if r := a.AllocatedResources.Tasks[t.Name]; r != nil {
			cpu, mem, memMax = r.Cpu.CpuShares, r.Memory.MemoryMB, r.Memory.MemoryMaxMB
		}
	}
	set(CPULimit, strconv.FormatInt(cpu, 10))
	set(MemoryLimit, strconv.FormatInt(mem, 10))
	if memMax > 0 {
		set(MemoryMaxLimit, strconv.FormatInt(memMax, 10))
	}
}

// setPort sets a port's variables: NOMAD_PORT_ (and NOMAD_ALLOC_PORT_)
// is the port the task listens on (the mapped "to" port if any),
// NOMAD_HOST_PORT_ the host port, NOMAD_IP_ and NOMAD_ADDR_ (and
// NOMAD_HOST_IP_ and NOMAD_HOST_ADDR_) the host address.
func setPort(set func(k, v string), p structs.PortMapping, node *structs.Node) {
	ip := p.HostIP
	if ip == "" && node != nil {
		ip = node.Attributes["unique.network.ip-address"]
	}
	if ip == "" {
		ip = "127.0.0.1"
	}
	inside := p.Value
	if p.To > 0 {
		inside = p.To
	}
	set(PortPrefix+p.Label, strconv.Itoa(inside))
	set(AllocPortPrefix+p.Label, strconv.Itoa(inside))
	set(HostPortPrefix+p.Label, strconv.Itoa(p.Value))
	set(IPPrefix+p.Label, ip)
	set(HostIPPrefix+p.Label, ip)
	set(AddrPrefix+p.Label, net.JoinHostPort(ip, strconv.Itoa(p.Value)))
	set(HostAddrPrefix+p.Label, net.JoinHostPort(ip, strconv.Itoa(p.Value)))
}

// metaKey makes a meta key usable in a variable name.
func metaKey(k string) string {
	return strings.Map(func(r rune) rune {
		if r == '.' || r == '-' {
			return '_'
		}
		return r
	}, k)
}

func nodeRefs(n *structs.Node) map[string]string {
	m := make(map[string]string)
	if n == nil {
		return m
	}
	m["node.unique.id"] = n.ID
	m["node.unique.name"] = n.Name
	m["node.datacenter"] = n.Datacenter
	m["node.class"] = n.NodeClass
	m["node.pool"] = n.NodePool
	for k, v := range n.Attributes {
		m["attr."+k] = v
	}
	for k, v := range n.Meta {
		m["meta."+k] = v
	}
	return m
}

// Map returns a copy of the task's environment.
func (e *Env) Map() map[string]string { return maps.Clone(e.vars) }

// Vars returns the task's environment itself, not a copy: an Env never
// changes once built, and neither may its reader change the map (the
// task runner and the drivers copy it before adding to it).
func (e *Env) Vars() map[string]string { return e.vars }

// List returns the environment as sorted "K=V" strings.
func (e *Env) List() []string {
	out := make([]string, 0, len(e.vars))
	for k, v := range e.vars {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// Get returns one variable.
func (e *Env) Get(k string) (string, bool) {
	v, ok := e.vars[k]
	return v, ok
}

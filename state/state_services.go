package state

import (
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"

	"github.com/droverhq/drover/client/taskenv"
	"github.com/droverhq/drover/structs"
)

// Service registrations (service blocks with provider "nomad").
//
// The servers derive them; no client registers anything. Every write of
// an allocation (putAlloc, deleteAlloc) and every promotion marks the
// allocation, and Commit recomputes each marked allocation's
// registrations from the allocation, its node and its deployment as they
// stand in the same transaction, then writes the difference. An
// allocation has registrations exactly while
//
//	DesiredStatus is "run" and ClientStatus is "running",
//
// so they go in the entry where its client reports it running, and out in
// the entry where it stops being so: its client reports it finished or
// failed, the servers stop it (before its client kills it, as Nomad's
// client deregisters before the kill), its node goes down or disconnects
// (its allocations are then lost or unknown), or it is deleted. Nothing
// outside the transaction decides, so a registration cannot outlive what
// it describes: there is no client to miss a deregistration and no
// cleanup loop to fall behind. Apply stays deterministic: the inputs are
// all in the store, and the names are filled in with the same runtime
// variables the task sees (package client/taskenv, a pure function of the
// allocation, task and node that imports nothing but domain types).
//
// Canary tags: the allocation of a deployment placed as a canary
// registers its service's canary_tags (when it has any) until its group
// of the deployment is promoted; the promotion's entry marks the group's
// placed canaries, whose registrations then switch to the tags.
//
// A registration deleted by hand (DeleteServiceRegistrationTxn) of an
// allocation still running stays deleted until its registrations are
// recomputed: the allocation stops and runs again, moves to another job
// version, node or reservation, is promoted, or its node's address
// changes. A client's repeated reports recompute nothing.

// markServices asks Commit to recompute the allocation's registrations,
// when its group has a nomad service (old or new version) and the change
// can alter them (servicesMayChange).
func (t *WriteTxn) markServices(old, a *structs.Allocation) {
	if !servicesMayChange(old, a) {
		return
	}
	var id string
	switch {
	case a != nil && groupRegisters(a):
		id = a.ID
	case old != nil && groupRegisters(old):
		id = old.ID
	default:
		return
	}
	// An allocation that did not register before this write has no
	// registrations to read back (unless an earlier write of the
	// transaction made some).
	if old != nil && allocRegisters(old) {
		t.markServiceAlloc(id)
		return
	}
	if t.svcAllocs == nil {
		t.svcAllocs = map[string]bool{}
	}
	if _, ok := t.svcAllocs[id]; !ok {
		t.svcAllocs[id] = false
	}
}

// servicesMayChange reports whether replacing old by a (either nil: an
// insert or a deletion) can change the allocation's registrations: it
// starts or stops registering, or, registering before and after, its job
// version, reservation, node, deployment or canary flag changed. A
// client's repeated reports of a running allocation change none of them,
// so they cost no recomputation. Stored values are shared between an
// allocation's versions (alloc_share.go), so comparing pointers is
// enough; a false "changed" only costs a recomputation.
func servicesMayChange(old, a *structs.Allocation) bool {
	switch {
	case old == nil && a == nil:
		return false
	case old == nil:
		return allocRegisters(a) // placed: pending, as a rule
	case a == nil:
		return allocRegisters(old)
	}
	was, is := allocRegisters(old), allocRegisters(a)
	if was != is {
		return true
	}
	if !is {
		return false
	}
	return old.Job != a.Job || old.AllocatedResources != a.AllocatedResources || old.NodeID != a.NodeID ||
		old.Namespace != a.Namespace || old.DeploymentID != a.DeploymentID || old.IsCanary() != a.IsCanary() ||
		allocAddress(old) != allocAddress(a)
}

// allocAddress is the allocation's own address (address_mode "alloc"),
// "" until its client reports it.
func allocAddress(a *structs.Allocation) string {
	if a.NetworkStatus == nil {
		return ""
	}
	return a.NetworkStatus.Address
}

// markNodeServices marks the node's live allocations when the node's
// datacenter or address changed (a client registering again): their
// registrations carry both.
func (t *WriteTxn) markNodeServices(old, n *structs.Node) error {
	if old == nil || old.Datacenter == n.Datacenter &&
		old.Attributes["unique.network.ip-address"] == n.Attributes["unique.network.ip-address"] {
		return nil
	}
	allocs, err := t.reader().LiveAllocsByNode(n.ID)
	if err != nil {
		return err
	}
	for _, a := range allocs {
		if allocRegisters(a) && groupRegisters(a) {
			t.markServiceAlloc(a.ID)
		}
	}
	return nil
}

// markServiceAlloc marks an allocation that may have registrations.
func (t *WriteTxn) markServiceAlloc(id string) {
	if t.svcAllocs == nil {
		t.svcAllocs = map[string]bool{}
	}
	t.svcAllocs[id] = true
}

// markPromotedCanaries marks the placed canaries of the groups that c,
// about to be written, promotes: their registrations switch from
// canary_tags to tags. Every write of a deployment passes here, whichever
// request promotes it.
func (t *WriteTxn) markPromotedCanaries(c *structs.Deployment) error {
	old, err := t.reader().DeploymentByID(c.ID)
	if err != nil {
		return err
	}
	for name, g := range c.TaskGroups {
		if g == nil || !g.Promoted {
			continue
		}
		if old != nil {
			if og := old.TaskGroups[name]; og != nil && og.Promoted {
				continue
			}
		}
		for _, id := range g.PlacedCanaries {
			t.markServiceAlloc(id)
		}
	}
	return nil
}

// groupRegisters reports whether the allocation's group has a service
// with provider nomad, its own or a task's.
func groupRegisters(a *structs.Allocation) bool {
	tg := a.Job.LookupTaskGroup(a.TaskGroup)
	if tg == nil {
		return false
	}
	for _, s := range tg.Services {
		if s != nil && s.Provider == structs.ServiceProviderNomad {
			return true
		}
	}
	for _, task := range tg.Tasks {
		for _, s := range task.Services {
			if s != nil && s.Provider == structs.ServiceProviderNomad {
				return true
			}
		}
	}
	return false
}

// allocRegisters reports whether the allocation's services are registered.
func allocRegisters(a *structs.Allocation) bool {
	return a.DesiredStatus == structs.AllocDesiredStatusRun && a.ClientStatus == structs.AllocClientStatusRunning
}

// syncServices recomputes the registrations of the marked allocations, in
// ID order.
func (t *WriteTxn) syncServices() error {
	if len(t.svcAllocs) == 0 {
		return nil
	}
	ids := make([]string, 0, len(t.svcAllocs))
	for id := range t.svcAllocs {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		if err := t.syncAllocServices(id, t.svcAllocs[id]); err != nil {
			return err
		}
	}
	return nil
}

// syncAllocServices writes the difference between the allocation's
// registrations and those it should have; mayHave false skips reading
// the former (there are none).
func (t *WriteTxn) syncAllocServices(allocID string, mayHave bool) error {
	r := t.reader()
	a, err := r.AllocByID(allocID)
	if err != nil {
		return err
	}
	var want []*structs.ServiceRegistration
	if a != nil && allocRegisters(a) {
		node, err := r.NodeByID(a.NodeID)
		if err != nil {
			return err
		}
		canary, err := unpromotedCanary(r, a)
		if err != nil {
			return err
		}
		want = AllocServiceRegistrations(a, node, canary)
	}
	var have []*structs.ServiceRegistration
	if mayHave {
		if have, err = r.ServiceRegistrationsByAlloc(allocID); err != nil {
			return err
		}
	}
	wanted := make(map[string]*structs.ServiceRegistration, len(want))
	for _, w := range want {
		wanted[w.ID] = w
	}
	kept := make(map[string]bool, len(have))
	for _, h := range have {
		w := wanted[h.ID]
		if w == nil {
			if err := t.delete(TableServices, h); err != nil {
				return err
			}
			continue
		}
		kept[h.ID] = true
		if w.SameContent(h) {
			continue
		}
		w.CreateIndex, w.ModifyIndex = h.CreateIndex, t.index
		if err := t.insert(TableServices, w); err != nil {
			return err
		}
	}
	for _, w := range want {
		if kept[w.ID] {
			continue
		}
		// Another allocation's registration with this ID would be
		// replaced: IDs name their allocation, so that cannot happen.
		w.CreateIndex, w.ModifyIndex = t.index, t.index
		if err := t.insert(TableServices, w); err != nil {
			return err
		}
	}
	return nil
}

// unpromotedCanary reports whether a is a canary of a deployment whose
// group is not promoted.
func unpromotedCanary(r *Snapshot, a *structs.Allocation) (bool, error) {
	if !a.IsCanary() || a.DeploymentID == "" {
		return false, nil
	}
	d, err := r.DeploymentByID(a.DeploymentID)
	if err != nil || d == nil {
		return false, err
	}
	g := d.TaskGroups[a.TaskGroup]
	return g != nil && !g.Promoted, nil
}

// AllocServiceRegistrations returns the registrations of a running
// allocation's nomad services: the group's, then each task's in the
// group's order, the first of two with one ID kept. canary selects the
// services' canary_tags (where set) over their tags. node may be nil
// (then Datacenter is empty and a port without a host IP advertises
// 127.0.0.1). CreateIndex and ModifyIndex are left zero.
//
// Names, tags, addresses and port labels are filled in as the task's
// runtime variables give them (${NOMAD_JOB_NAME}, ${NOMAD_TASK_NAME} for a
// task's service, ${NOMAD_ALLOC_INDEX}, ${node.datacenter}, ${meta.x}…).
// The port label names one of the allocation's ports (its host address
// and host port), or is a port number (the node's address); without one,
// Port is 0. A service's address, when set, replaces the host address.
func AllocServiceRegistrations(a *structs.Allocation, node *structs.Node, canary bool) []*structs.ServiceRegistration {
	tg := a.Job.LookupTaskGroup(a.TaskGroup)
	if tg == nil {
		return nil
	}
	var out []*structs.ServiceRegistration
	seen := map[string]bool{}
	add := func(owner string, task *structs.Task, s *structs.Service) {
		if s == nil || s.Provider != structs.ServiceProviderNomad {
			return
		}
		// Most services refer to no variable: their environment, dozens
		// of strings, is built only for those that do.
		var env interface{ Replace(string) string } = literal{}
		if refersToVariables(s) {
			env = taskenv.Build(taskenv.Input{Alloc: a, Task: task, Node: node})
		}
		reg := serviceRegistration(a, node, env, owner, s, canary)
		if reg == nil || seen[reg.ID] {
			return
		}
		seen[reg.ID] = true
		out = append(out, reg)
	}
	for _, s := range tg.Services {
		add("group-"+tg.Name, nil, s)
	}
	for _, task := range tg.Tasks {
		for _, s := range task.Services {
			add(task.Name, task, s)
		}
	}
	return out
}

// literal fills in nothing: the environment of a service without "${".
type literal struct{}

func (literal) Replace(s string) string { return s }

// refersToVariables reports whether a field the registration takes from
// the service has a "${".
func refersToVariables(s *structs.Service) bool {
	has := func(v string) bool { return strings.Contains(v, "${") }
	if has(s.Name) || has(s.PortLabel) || has(s.Address) {
		return true
	}
	for _, t := range s.Tags {
		if has(t) {
			return true
		}
	}
	for _, t := range s.CanaryTags {
		if has(t) {
			return true
		}
	}
	return false
}

func serviceRegistration(a *structs.Allocation, node *structs.Node, env interface{ Replace(string) string }, owner string, s *structs.Service, canary bool) *structs.ServiceRegistration {
	name := env.Replace(s.Name)
	if name == "" {
		return nil
	}
	label := env.Replace(s.PortLabel)
	tags := s.Tags
	if canary && len(s.CanaryTags) > 0 {
		tags = s.CanaryTags
	}
	filled := tags // the job's own slice when nothing is filled in: both are immutable
	if _, ok := env.(literal); !ok && len(tags) > 0 {
		filled = make([]string, len(tags))
		for i, tag := range tags {
			filled[i] = env.Replace(tag)
		}
	}
	reg := &structs.ServiceRegistration{
		ID:          registrationIDPrefix(a.ID) + owner + "-" + name + "-" + label,
		ServiceName: name,
		Namespace:   a.Namespace,
		NodeID:      a.NodeID,
		JobID:       a.JobID,
		AllocID:     a.ID,
		Tags:        filled,
		Address:     nodeAddress(node),
	}
	if node != nil {
		reg.Datacenter = node.Datacenter
	}
	if label != "" {
		found := false
		if a.AllocatedResources != nil {
			for _, p := range a.AllocatedResources.Shared.Ports {
				if p.Label == label {
					reg.Port, found = p.Value, true
					if p.HostIP != "" {
						reg.Address = p.HostIP
					}
					break
				}
			}
		}
		if !found {
			if n, err := strconv.Atoi(label); err == nil && n > 0 && n <= 65535 {
				reg.Port = n
			}
		}
	}
	if s.Address != "" {
		if addr := env.Replace(s.Address); addr != "" {
			reg.Address = addr
		}
	}
	if s.AddressMode == structs.AddressModeAlloc {
		return allocAddressed(a, reg, label)
	}
	return reg
}

// allocAddressed advertises a registration at the allocation's own
// address, as Nomad's address_mode = "alloc": the port's "to" port (its
// host port when it has none), or the label as a port number. Until the
// client has reported the allocation's network there is none.
func allocAddressed(a *structs.Allocation, reg *structs.ServiceRegistration, label string) *structs.ServiceRegistration {
	if a.NetworkStatus == nil || a.NetworkStatus.Address == "" {
		return nil
	}
	reg.Address, reg.Port = a.NetworkStatus.Address, 0
	if label == "" {
		return reg
	}
	if a.AllocatedResources != nil {
		for _, p := range a.AllocatedResources.Shared.Ports {
			if p.Label == label {
				reg.Port = p.Value
				if p.To > 0 {
					reg.Port = p.To
				}
				return reg
			}
		}
	}
	if n, err := strconv.Atoi(label); err == nil && n > 0 && n <= 65535 {
		reg.Port = n
	}
	return reg
}

// nodeAddress is the address a port without a host IP binds on, as the
// task's NOMAD_IP_<label> gives it.
func nodeAddress(node *structs.Node) string {
	if node != nil {
		if ip := node.Attributes["unique.network.ip-address"]; net.ParseIP(ip) != nil {
			return ip
		}
	}
	return "127.0.0.1"
}

// deriveMissingServices derives the registrations of the restored
// allocations when the snapshot held none: a snapshot written before the
// store kept registrations would otherwise leave the running allocations
// unregistered until they next change. Each registration takes its
// allocation's ModifyIndex as its indexes. A snapshot that holds
// registrations is restored as it is.
func (r *Restorer) deriveMissingServices() {
	t := r.txn
	snap := t.reader()
	if regs, err := snap.ServiceRegistrations(); err != nil || len(regs) > 0 {
		return
	}
	allocs, err := snap.Allocs()
	if err != nil {
		return
	}
	var top uint64
	for _, a := range allocs {
		if !allocRegisters(a) || !groupRegisters(a) {
			continue
		}
		node, err := snap.NodeByID(a.NodeID)
		if err != nil {
			return
		}
		canary, err := unpromotedCanary(snap, a)
		if err != nil {
			return
		}
		for _, reg := range AllocServiceRegistrations(a, node, canary) {
			reg.CreateIndex, reg.ModifyIndex = a.ModifyIndex, a.ModifyIndex
			if err := t.txn.Insert(TableServices, reg); err != nil {
				return
			}
			top = max(top, a.ModifyIndex)
		}
	}
	if top > 0 {
		_ = t.txn.Insert(TableIndex, &IndexEntry{Key: TableServices, Value: top})
	}
}

// DeleteServiceRegistration deletes one registration; see
// DeleteServiceRegistrationTxn.
func (s *Store) DeleteServiceRegistration(index uint64, req *structs.ServiceRegistrationDeleteRequest) error {
	return s.update(index, func(t *WriteTxn) error { return s.DeleteServiceRegistrationTxn(t, req) })
}

// DeleteServiceRegistrationTxn deletes the registration with req.ID, which
// must be of req.ServiceName in req.Namespace (else ErrNotFound).
func (s *Store) DeleteServiceRegistrationTxn(t *WriteTxn, req *structs.ServiceRegistrationDeleteRequest) error {
	reg, err := t.reader().ServiceRegistrationByID(req.ID)
	if err != nil {
		return err
	}
	if reg == nil || reg.Namespace != req.Namespace || reg.ServiceName != req.ServiceName {
		return fmt.Errorf("state: service registration %q of %q in namespace %q: %w", req.ID, req.ServiceName, req.Namespace, ErrNotFound)
	}
	return t.delete(TableServices, reg)
}

// ServiceRegistrationByID returns the registration, or nil.
func (s *Snapshot) ServiceRegistrationByID(id string) (*structs.ServiceRegistration, error) {
	return getOne[*structs.ServiceRegistration](s, TableServices, "id", id)
}

// ServiceRegistrations returns every registration, by ID.
func (s *Snapshot) ServiceRegistrations() ([]*structs.ServiceRegistration, error) {
	return list[*structs.ServiceRegistration](s, TableServices, "id")
}

// ServiceRegistrationsByName returns the registrations of one service of a
// namespace, by ID.
func (s *Snapshot) ServiceRegistrationsByName(namespace, name string) ([]*structs.ServiceRegistration, error) {
	return list[*structs.ServiceRegistration](s, TableServices, "service", namespace, name)
}

// ServiceRegistrationsByNamespace returns a namespace's registrations, by
// service name then ID.
func (s *Snapshot) ServiceRegistrationsByNamespace(namespace string) ([]*structs.ServiceRegistration, error) {
	return list[*structs.ServiceRegistration](s, TableServices, "service_prefix", namespace, "")
}

// ServiceRegistrationsByAlloc returns an allocation's registrations, by
// ID. Their IDs start with registrationIDPrefix(allocID): the ID index
// finds them, and no index of its own costs every registration written.
func (s *Snapshot) ServiceRegistrationsByAlloc(allocID string) ([]*structs.ServiceRegistration, error) {
	regs, err := list[*structs.ServiceRegistration](s, TableServices, "id_prefix", registrationIDPrefix(allocID))
	if err != nil {
		return nil, err
	}
	kept := regs[:0]
	for _, r := range regs {
		if r.AllocID == allocID {
			kept = append(kept, r)
		}
	}
	return kept, nil
}

// registrationIDPrefix is the start of the IDs of an allocation's
// registrations.
func registrationIDPrefix(allocID string) string { return "_nomad-task-" + allocID + "-" }

// ServiceRegistrationsByNode returns the registrations of a node's
// allocations, by allocation. It reads through the node's allocations:
// no read on a hot path needs it, and an index would cost every
// registration written.
func (s *Snapshot) ServiceRegistrationsByNode(nodeID string) ([]*structs.ServiceRegistration, error) {
	allocs, err := s.AllocsByNode(nodeID)
	if err != nil {
		return nil, err
	}
	var out []*structs.ServiceRegistration
	for _, a := range allocs {
		regs, err := s.ServiceRegistrationsByAlloc(a.ID)
		if err != nil {
			return nil, err
		}
		out = append(out, regs...)
	}
	return out, nil
}

package httpapi

import (
	"fmt"
	"net/http"
	"strings"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/structs"
)

// Nomad's namespace endpoints, over the stored namespaces
// (state/state_namespaces.go):
//
//	GET    /v1/namespaces          → []*Namespace by name, ?prefix= filtered (blocking)
//	GET    /v1/namespace/{name}    → *Namespace, or 404 "Namespace not found" (blocking)
//	PUT    /v1/namespace[/{name}]  → creates or replaces the body's namespace; a path
//	                                 name must be the body's
//	DELETE /v1/namespace/{name}    → refused for default, for an absent namespace (404),
//	                                 and for one that holds a job that is not dead, an
//	                                 allocation that is not terminal or a variable
//
// With ACLs, the list and a read show the namespaces in which the token
// has any capability (Nomad's AllowNamespace); applying and deleting need
// a management token, as Nomad's.
//
// A job registered (or planned) in a namespace that does not exist, or a
// variable written in one, is refused (checkJobNamespace,
// checkNamespaceExists); a job whose task drivers or group network modes
// the namespace's capabilities do not allow is refused too, with Nomad's
// words.

func init() {
	register(
		route{"GET /v1/namespaces", readRoute, anyCaller, (*Server).namespacesList},
		route{"GET /v1/namespace/{name}", readRoute, anyCaller, (*Server).namespaceInfo},
		route{"DELETE /v1/namespace/{name}", writeRoute, management, (*Server).namespaceDelete},
	)
	for _, m := range []string{"PUT", "POST"} {
		register(
			route{m + " /v1/namespace", writeRoute, management, (*Server).namespaceApply},
			route{m + " /v1/namespace/{name}", writeRoute, management, (*Server).namespaceApply},
		)
	}
}

// Namespace is Nomad's namespace object (api.Namespace).
type Namespace = structs.Namespace

func (s *Server) namespacesList(w http.ResponseWriter, r *http.Request) (any, error) {
	o, err := parseQuery(r)
	if err != nil {
		return nil, err
	}
	allow := namespaceReadFilter(r)
	return s.blockingRead(w, r, o, func(_ memdb.WatchSet, snap *state.Snapshot) (any, uint64, error) {
		idx, err := snap.Index(state.TableNamespaces)
		if err != nil {
			return nil, 0, err
		}
		all, err := snap.NamespacesByPrefix(o.Prefix)
		if err != nil {
			return nil, 0, err
		}
		out := make([]*Namespace, 0, len(all))
		for _, n := range all {
			if allow == nil || allow(n.Name) {
				out = append(out, n)
			}
		}
		return out, idx, nil
	})
}

func (s *Server) namespaceInfo(w http.ResponseWriter, r *http.Request) (any, error) {
	o, err := parseQuery(r)
	if err != nil {
		return nil, err
	}
	name := r.PathValue("name")
	if allow := namespaceReadFilter(r); allow != nil && !allow(name) {
		return nil, Errorf(http.StatusForbidden, "Permission denied")
	}
	return s.blockingRead(w, r, o, func(_ memdb.WatchSet, snap *state.Snapshot) (any, uint64, error) {
		idx, err := snap.Index(state.TableNamespaces)
		if err != nil {
			return nil, 0, err
		}
		n, err := snap.NamespaceByName(name)
		if err != nil {
			return nil, idx, err
		}
		if n == nil {
			return nil, idx, Errorf(http.StatusNotFound, "Namespace not found")
		}
		return n, idx, nil
	})
}

// namespaceReadFilter says which namespaces the caller may see: those it
// has any capability in (nil: all).
func namespaceReadFilter(r *http.Request) func(string) bool {
	z := authzOf(r)
	if z == nil || !z.enabled || z.acl == nil || z.acl.IsManagement() {
		return nil
	}
	a := z.acl
	return a.AllowNamespace
}

func (s *Server) namespaceApply(w http.ResponseWriter, r *http.Request) (any, error) {
	var ns Namespace
	if err := decodeBody(r, &ns); err != nil {
		return nil, err
	}
	if name := r.PathValue("name"); name != "" && ns.Name != name {
		return nil, Errorf(http.StatusBadRequest, "Namespace name does not match request path")
	}
	if err := ns.Validate(); err != nil {
		return nil, Errorf(http.StatusBadRequest, "Invalid namespace %q: %s", ns.Name, strings.TrimRight(err.Error(), "\n"))
	}
	ns.CreateIndex, ns.ModifyIndex, ns.Hash = 0, 0, nil
	_, index, err := s.backend.Apply(r.Context(), fsm.NamespaceUpsertRequestType,
		&structs.NamespaceUpsertRequest{Namespaces: []*structs.Namespace{&ns}})
	if err != nil {
		return nil, err
	}
	s.setMeta(w, index)
	return nil, nil
}

func (s *Server) namespaceDelete(w http.ResponseWriter, r *http.Request) (any, error) {
	name := r.PathValue("name")
	if name == structs.DefaultNamespace {
		return nil, Errorf(http.StatusBadRequest, "can not delete default namespace")
	}
	snap := s.backend.State().Snapshot()
	if ns, err := snap.NamespaceByName(name); err != nil {
		return nil, err
	} else if ns == nil {
		return nil, Errorf(http.StatusNotFound, "namespace not found")
	}
	if err := s.namespaceHolds(snap, name); err != nil {
		return nil, err
	}
	_, index, err := s.backend.Apply(r.Context(), fsm.NamespaceDeleteRequestType,
		&structs.NamespaceDeleteRequest{Namespaces: []string{name}})
	if err != nil {
		return nil, err
	}
	s.setMeta(w, index)
	return nil, nil
}

// namespaceHolds is the 400 of deleting a namespace that still holds a
// job that is not dead, an allocation that is not terminal or a variable,
// listed in Nomad's words; nil when it holds none of them.
func (s *Server) namespaceHolds(snap *state.Snapshot, name string) error {
	region := s.regionName()
	var errs []error
	jobs, err := snap.Jobs()
	if err != nil {
		return err
	}
	for _, j := range jobs {
		if j.Namespace == name && j.Status != structs.JobStatusDead {
			errs = append(errs, fmt.Errorf("namespace %q has non-terminal jobs in regions: [%s]", name, region))
			break
		}
	}
	allocs, err := snap.Allocs()
	if err != nil {
		return err
	}
	for _, a := range allocs {
		if a.Namespace == name && !a.TerminalStatus() {
			errs = append(errs, fmt.Errorf("namespace %q has non-terminal allocations in regions: [%s]", name, region))
			break
		}
	}
	vars, err := snap.VarsByPrefix(name, "")
	if err != nil {
		return err
	}
	if len(vars) > 0 {
		errs = append(errs, fmt.Errorf("namespace %q has variables associated with it in regions: [%s]", name, region))
	}
	if err := structs.MultiError(errs); err != nil {
		return Errorf(http.StatusBadRequest, "%s", strings.TrimRight(err.Error(), "\n"))
	}
	return nil
}

// errNonexistentNamespace is Nomad's refusal of an object in a namespace
// that does not exist.
func errNonexistentNamespace(what, id, ns string) error {
	return Errorf(http.StatusBadRequest, "%s %q is in nonexistent namespace %q", what, id, ns)
}

// checkJobNamespace refuses job when its namespace does not exist or its
// capabilities do not allow the job's task drivers and network modes, as
// Nomad's job admission does.
func checkJobNamespace(snap *state.Snapshot, job *structs.Job) error {
	name := jobNamespace(job)
	ns, err := snap.NamespaceByName(name)
	if err != nil {
		return err
	}
	if ns == nil {
		return errNonexistentNamespace("job", job.ID, name)
	}
	if err := ns.CheckCapabilities(job); err != nil {
		return Errorf(http.StatusBadRequest, "%s", err)
	}
	return nil
}

// checkNamespaceExists refuses an object (what, id) written in namespace
// ns when it does not exist.
func checkNamespaceExists(snap *state.Snapshot, what, id, ns string) error {
	if ns == "" {
		ns = structs.DefaultNamespace
	}
	n, err := snap.NamespaceByName(ns)
	if err != nil {
		return err
	}
	if n == nil {
		return errNonexistentNamespace(what, id, ns)
	}
	return nil
}

// regionName is this cluster's region.
func (s *Server) regionName() string {
	if self := s.backend.Self(); self != nil && self.Config.Region != "" {
		return self.Config.Region
	}
	return structs.DefaultRegion
}

// namespacesInUse returns every stored namespace, by name (the search
// endpoints' "namespaces" context).
func namespacesInUse(snap *state.Snapshot) ([]*Namespace, error) {
	return snap.Namespaces()
}

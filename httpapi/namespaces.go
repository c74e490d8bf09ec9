package httpapi

import (
	"encoding/json"
	"io"
	"net/http"
	"sort"
	"strings"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/structs"
)

// Nomad's namespace endpoints, over drover's namespaces: a namespace is a
// name that exists when something names it (a job, a variable, a service)
// and "default" always. Drover stores nothing else about one yet (no
// description, meta, quota or capabilities), so:
//
//	GET    /v1/namespaces          → []*Namespace: default and every namespace in use, by name
//	GET    /v1/namespace/{name}    → *Namespace, or 404 "namespace not found"
//	PUT    /v1/namespace[/{name}]  → applies a namespace that sets nothing but its name (a no-op:
//	                                 it exists once named); one that sets more is a 400 saying so
//	DELETE /v1/namespace/{name}    → refused for default and for a namespace that holds jobs or
//	                                 variables (as Nomad's); otherwise a no-op
//
// With ACLs, the list and a read show the namespaces the token can read a
// job in; applying and deleting need a management token, as Nomad's.

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
type Namespace struct {
	Name                  string
	Description           string
	Quota                 string
	Meta                  map[string]string
	Capabilities          json.RawMessage `json:",omitempty"`
	NodePoolConfiguration json.RawMessage `json:",omitempty"`
	VaultConfiguration    json.RawMessage `json:",omitempty"`
	ConsulConfiguration   json.RawMessage `json:",omitempty"`
	CreateIndex           uint64
	ModifyIndex           uint64
}

// defaultNamespaceDescription is Nomad's description of "default".
const defaultNamespaceDescription = "Default shared namespace"

// namespaceTables are the tables whose objects name namespaces.
var namespaceTables = []string{state.TableJobs, state.TableVariables, state.TableServices}

// namespacesInUse returns default and every namespace an object of snap
// names, by name, each with the index of its first object.
func namespacesInUse(snap *state.Snapshot) ([]*Namespace, error) {
	byName := map[string]*Namespace{structs.DefaultNamespace: {Name: structs.DefaultNamespace, Description: defaultNamespaceDescription, CreateIndex: 1, ModifyIndex: 1}}
	add := func(ns string, idx uint64) {
		if ns == "" {
			return
		}
		n := byName[ns]
		if n == nil {
			n = &Namespace{Name: ns, CreateIndex: idx, ModifyIndex: idx}
			byName[ns] = n
		}
		if idx != 0 && idx < n.CreateIndex {
			n.CreateIndex, n.ModifyIndex = idx, idx
		}
	}
	jobs, err := snap.Jobs()
	if err != nil {
		return nil, err
	}
	for _, j := range jobs {
		add(j.Namespace, j.CreateIndex)
	}
	vars, err := snap.VarsByPrefix("*", "")
	if err != nil {
		return nil, err
	}
	for _, v := range vars {
		add(v.Namespace, v.CreateIndex)
	}
	regs, err := snap.ServiceRegistrations()
	if err != nil {
		return nil, err
	}
	for _, r := range regs {
		add(r.Namespace, r.CreateIndex)
	}
	out := make([]*Namespace, 0, len(byName))
	for _, n := range byName {
		out = append(out, n)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func (s *Server) namespacesList(w http.ResponseWriter, r *http.Request) (any, error) {
	o, err := parseQuery(r)
	if err != nil {
		return nil, err
	}
	allow := namespaceReadFilter(r)
	return s.blockingRead(w, r, o, func(_ memdb.WatchSet, snap *state.Snapshot) (any, uint64, error) {
		idx, err := snap.MaxIndex(namespaceTables...)
		if err != nil {
			return nil, 0, err
		}
		all, err := namespacesInUse(snap)
		if err != nil {
			return nil, 0, err
		}
		out := all[:0]
		for _, n := range all {
			if strings.HasPrefix(n.Name, o.Prefix) && (allow == nil || allow(n.Name)) {
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
		idx, err := snap.MaxIndex(namespaceTables...)
		if err != nil {
			return nil, 0, err
		}
		all, err := namespacesInUse(snap)
		if err != nil {
			return nil, 0, err
		}
		for _, n := range all {
			if n.Name == name {
				return n, idx, nil
			}
		}
		return nil, idx, Errorf(http.StatusNotFound, "namespace not found")
	})
}

// namespaceReadFilter says which namespaces the caller may see: those it
// can read a job in (nil: all).
func namespaceReadFilter(r *http.Request) func(string) bool {
	z := authzOf(r)
	if z == nil || !z.enabled || z.acl == nil || z.acl.IsManagement() {
		return nil
	}
	a := z.acl
	n := nsCap("read-job")
	return func(ns string) bool { return n.allowedIn(a, ns) }
}

// errNamespaceFields is the 400 of an apply that sets what drover does
// not store.
func errNamespaceFields(name string, fields []string) error {
	return Errorf(http.StatusBadRequest,
		"namespace %q sets %s: drover does not store a namespace's description, meta, quota or capabilities yet; "+
			"a namespace exists once a job, variable or service names it (apply it with its name alone)",
		name, strings.Join(fields, ", "))
}

func (s *Server) namespaceApply(_ http.ResponseWriter, r *http.Request) (any, error) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, Errorf(http.StatusBadRequest, "reading request body: %v", err)
	}
	var ns map[string]json.RawMessage
	if len(body) > 0 {
		if err := json.Unmarshal(body, &ns); err != nil {
			return nil, Errorf(http.StatusBadRequest, "decoding the namespace: %v", err)
		}
	}
	name := r.PathValue("name")
	if raw, ok := ns["Name"]; ok {
		var n string
		if err := json.Unmarshal(raw, &n); err != nil {
			return nil, Errorf(http.StatusBadRequest, "Name: %v", err)
		}
		if name != "" && n != "" && n != name {
			return nil, Errorf(http.StatusBadRequest, "the path names namespace %q and the body %q", name, n)
		}
		if n != "" {
			name = n
		}
	}
	if err := validNamespaceName(name); err != nil {
		return nil, err
	}
	var set []string
	for k, v := range ns {
		switch k {
		case "Name", "CreateIndex", "ModifyIndex", "Hash":
			continue
		}
		if t := strings.TrimSpace(string(v)); t != "" && t != "null" && t != `""` && t != "{}" && t != "[]" {
			set = append(set, k)
		}
	}
	sort.Strings(set)
	if len(set) > 0 {
		return nil, errNamespaceFields(name, set)
	}
	return nil, nil
}

// validNamespaceName checks a name as Nomad's namespace validation does.
func validNamespaceName(name string) error {
	if name == "" {
		return Errorf(http.StatusBadRequest, "invalid namespace: missing name")
	}
	if len(name) > maxNamespaceLen {
		return Errorf(http.StatusBadRequest, "invalid name %q. Must be at most %d characters", name, maxNamespaceLen)
	}
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
			return Errorf(http.StatusBadRequest, "invalid name %q. Must match regex ^[a-zA-Z0-9-]{1,%d}$", name, maxNamespaceLen)
		}
	}
	if name == "*" {
		return Errorf(http.StatusBadRequest, "invalid name %q", name)
	}
	return nil
}

func (s *Server) namespaceDelete(_ http.ResponseWriter, r *http.Request) (any, error) {
	name := r.PathValue("name")
	if name == structs.DefaultNamespace {
		return nil, Errorf(http.StatusBadRequest, "default namespace can not be deleted")
	}
	snap := s.backend.State().Snapshot()
	jobs, err := snap.Jobs()
	if err != nil {
		return nil, err
	}
	for _, j := range jobs {
		if j.Namespace == name && j.Status != structs.JobStatusDead {
			return nil, Errorf(http.StatusBadRequest, "namespace %q has non-terminal jobs in regions: [%s]", name, s.regionName())
		}
	}
	vars, err := snap.VarsByPrefix(name, "")
	if err != nil {
		return nil, err
	}
	if len(vars) > 0 {
		return nil, Errorf(http.StatusBadRequest, "namespace %q contains at least one variable. All variables in a namespace must be deleted before it can be deleted", name)
	}
	return nil, nil
}

// regionName is this cluster's region.
func (s *Server) regionName() string {
	if self := s.backend.Self(); self != nil && self.Config.Region != "" {
		return self.Config.Region
	}
	return structs.DefaultRegion
}

package httpapi

import (
	"crypto/md5"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/droverhq/drover/acl"
	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/structs"
)

// The service registration endpoints (service blocks with provider
// "nomad"; see state/state_services.go for how registrations are made),
// Nomad's paths and shapes:
//
//	GET    /v1/services              → []*structs.ServiceRegistrationListStub, one per namespace (blocking)
//	GET    /v1/service/{name}        → []*structs.ServiceRegistration (blocking); ?choose=N|key
//	DELETE /v1/service/{name}/{id}   deletes one registration; 404 if it is not one of the service's
//
// Reads need read-job in the namespace, or a task's workload identity of
// that namespace (as Nomad's: templates read services with it), and take
// ?namespace=*, listing only the namespaces the caller may read; the
// deletion needs submit-job in the namespace, as Nomad's. An unknown service reads as an empty
// list, as Nomad's.

func init() {
	register(
		route{"GET /v1/services", readRoute, serviceRead, (*Server).servicesList},
		route{"GET /v1/service/{name}", readRoute, serviceRead, (*Server).serviceInfo},
		route{"DELETE /v1/service/{name}/{id}", writeRoute, nsCap(acl.NamespaceCapabilitySubmitJob), (*Server).serviceDelete},
	)
}

// servicesIndex is the index a services read answers with: the table's,
// at least 1 so that a client's next blocking query blocks.
func servicesIndex(snap *state.Snapshot) (uint64, error) {
	idx, err := snap.Index(state.TableServices)
	return max(idx, 1), err
}

func (s *Server) servicesList(w http.ResponseWriter, r *http.Request) (any, error) {
	o, err := parseQuery(r)
	if err != nil {
		return nil, err
	}
	return s.blockingRead(w, r, o, func(_ memdb.WatchSet, snap *state.Snapshot) (any, uint64, error) {
		var regs []*structs.ServiceRegistration
		var err error
		if o.Namespace == "*" {
			regs, err = snap.ServiceRegistrations()
		} else {
			regs, err = snap.ServiceRegistrationsByNamespace(o.Namespace)
		}
		if err != nil {
			return nil, 0, err
		}
		kept := regs[:0:0]
		for _, reg := range regs {
			if o.matchNamespace(reg.Namespace) {
				kept = append(kept, reg)
			}
		}
		idx, err := servicesIndex(snap)
		return ServiceStubs(kept), idx, err
	})
}

// ServiceStubs groups registrations by namespace and service name, as
// GET /v1/services answers: namespaces and services sorted by name, each
// service's tags the sorted union of its instances' tags.
func ServiceStubs(regs []*structs.ServiceRegistration) []*structs.ServiceRegistrationListStub {
	type key struct{ ns, name string }
	tags := map[key]map[string]bool{}
	for _, reg := range regs {
		k := key{reg.Namespace, reg.ServiceName}
		if tags[k] == nil {
			tags[k] = map[string]bool{}
		}
		for _, t := range reg.Tags {
			tags[k][t] = true
		}
	}
	keys := make([]key, 0, len(tags))
	for k := range tags {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b key) int {
		if c := strings.Compare(a.ns, b.ns); c != 0 {
			return c
		}
		return strings.Compare(a.name, b.name)
	})
	out := []*structs.ServiceRegistrationListStub{}
	for _, k := range keys {
		if len(out) == 0 || out[len(out)-1].Namespace != k.ns {
			out = append(out, &structs.ServiceRegistrationListStub{Namespace: k.ns})
		}
		ts := make([]string, 0, len(tags[k]))
		for t := range tags[k] {
			ts = append(ts, t)
		}
		slices.Sort(ts)
		ns := out[len(out)-1]
		ns.Services = append(ns.Services, &structs.ServiceRegistrationStub{ServiceName: k.name, Tags: ts})
	}
	return out
}

func (s *Server) serviceInfo(w http.ResponseWriter, r *http.Request) (any, error) {
	o, err := parseQuery(r)
	if err != nil {
		return nil, err
	}
	name := r.PathValue("name")
	choose := r.URL.Query().Get("choose")
	if choose != "" {
		if _, _, err := parseChoose(choose); err != nil {
			return nil, err
		}
	}
	return s.blockingRead(w, r, o, func(_ memdb.WatchSet, snap *state.Snapshot) (any, uint64, error) {
		var regs []*structs.ServiceRegistration
		var err error
		if o.Namespace == "*" {
			regs, err = snap.ServiceRegistrations()
		} else {
			regs, err = snap.ServiceRegistrationsByName(o.Namespace, name)
		}
		if err != nil {
			return nil, 0, err
		}
		kept := []*structs.ServiceRegistration{}
		for _, reg := range regs {
			if reg.ServiceName == name && o.matchNamespace(reg.Namespace) {
				kept = append(kept, reg)
			}
		}
		if choose != "" {
			n, key, _ := parseChoose(choose)
			kept = ChooseServices(kept, n, key)
		}
		idx, err := servicesIndex(snap)
		return kept, idx, err
	})
}

// errMalformedChoose: ?choose= is not "<number>|<key>".
var errMalformedChoose = errors.New(`choose must be "<number>|<key>"`)

// parseChoose reads ?choose=N|key.
func parseChoose(v string) (int, string, error) {
	num, key, ok := strings.Cut(v, "|")
	n, err := strconv.Atoi(num)
	if !ok || err != nil || n < 0 || key == "" {
		return 0, "", Errorf(http.StatusBadRequest, "failed to choose services: invalid choose %q: %w", v, errMalformedChoose)
	}
	return n, key, nil
}

// ChooseServices picks n of the registrations by rendezvous hashing with
// key, as Nomad's ?choose=: each registration's weight is the MD5 of its
// port (8 bytes, big-endian), alloc ID, ID, namespace, address, service
// name, tags and the key, in hex; the n lowest weights win, in weight
// order. The same key picks the same instances while they last, and
// losing one moves only the callers that had picked it. Nomad's template
// function nomadService passes "N|<alloc ID>", spreading the callers over
// the instances.
func ChooseServices(regs []*structs.ServiceRegistration, n int, key string) []*structs.ServiceRegistration {
	type weighted struct {
		w   string
		reg *structs.ServiceRegistration
	}
	ws := make([]weighted, len(regs))
	for i, reg := range regs {
		ws[i] = weighted{rendezvousWeight(reg, key), reg}
	}
	slices.SortStableFunc(ws, func(a, b weighted) int { return strings.Compare(a.w, b.w) })
	n = min(n, len(ws))
	out := make([]*structs.ServiceRegistration, n)
	for i := range n {
		out[i] = ws[i].reg
	}
	return out
}

func rendezvousWeight(reg *structs.ServiceRegistration, key string) string {
	h := md5.New()
	var port [8]byte
	binary.BigEndian.PutUint64(port[:], uint64(reg.Port))
	h.Write(port[:])
	for _, s := range []string{reg.AllocID, reg.ID, reg.Namespace, reg.Address, reg.ServiceName} {
		h.Write([]byte(s))
	}
	for _, t := range reg.Tags {
		h.Write([]byte(t))
	}
	h.Write([]byte(key))
	return hex.EncodeToString(h.Sum(nil))
}

func (s *Server) serviceDelete(w http.ResponseWriter, r *http.Request) (any, error) {
	o, err := parseQuery(r)
	if err != nil {
		return nil, err
	}
	if o.Namespace == "*" {
		return nil, Errorf(http.StatusBadRequest, "a service registration is deleted in one namespace, not %q", o.Namespace)
	}
	req := &structs.ServiceRegistrationDeleteRequest{Namespace: o.Namespace, ServiceName: r.PathValue("name"), ID: r.PathValue("id")}
	reg, err := s.backend.State().Snapshot().ServiceRegistrationByID(req.ID)
	if err != nil {
		return nil, err
	}
	if reg == nil || reg.Namespace != req.Namespace || reg.ServiceName != req.ServiceName {
		return nil, Errorf(http.StatusNotFound, "service registration %q of service %q not found in namespace %q", req.ID, req.ServiceName, req.Namespace)
	}
	_, index, err := s.backend.Apply(r.Context(), fsm.ServiceRegistrationDeleteRequestType, req)
	if err != nil {
		return nil, fmt.Errorf("deleting service registration %q: %w", req.ID, err)
	}
	s.setMeta(w, index)
	return nil, nil
}

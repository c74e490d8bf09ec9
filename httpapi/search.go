package httpapi

import (
	"net/http"
	"slices"
	"sort"
	"strings"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/droverhq/drover/acl"
	"github.com/droverhq/drover/state"
)

// PUT|POST /v1/search {"Prefix": "3f2", "Context": "all"|"jobs"|"allocs"|
// "evals"|"nodes"|"deployment"} answers, as Nomad's prefix search, the IDs
// that start with the prefix, per context, at most 20 each, with
// Truncations saying where more matched:
//
//	{"Matches": {"jobs": ["web"], "allocs": [...], ...}, "Truncations": {"jobs": false, ...}}
//
// `drover status PREFIX` (and `nomad status PREFIX`) use it to find what an
// ID names. An unknown context is a 400.

func init() {
	for _, m := range []string{"PUT", "POST"} {
		register(route{m + " /v1/search", readRoute, nsCap(acl.NamespaceCapabilityListJobs), (*Server).search})
		register(route{m + " /v1/search/fuzzy", readRoute, nsCap(acl.NamespaceCapabilityListJobs), (*Server).fuzzySearch})
	}
}

// Search contexts, as Nomad's.
const (
	searchAll         = "all"
	searchJobs        = "jobs"
	searchAllocs      = "allocs"
	searchEvals       = "evals"
	searchNodes       = "nodes"
	searchDeployments = "deployment"
)

// searchLimit is how many matches a context answers, as Nomad's.
const searchLimit = 20

// SearchResponse answers /v1/search.
type SearchResponse struct {
	Matches     map[string][]string
	Truncations map[string]bool
}

func (s *Server) search(w http.ResponseWriter, r *http.Request) (any, error) {
	var req struct {
		Prefix    string
		Context   string
		Namespace string
	}
	if err := decodeBody(r, &req); err != nil {
		return nil, err
	}
	contexts := []string{searchJobs, searchAllocs, searchEvals, searchNodes, searchDeployments}
	switch req.Context {
	case searchAll, "":
	case searchJobs, searchAllocs, searchEvals, searchNodes, searchDeployments:
		contexts = []string{req.Context}
	default:
		return nil, Errorf(http.StatusBadRequest, "invalid context %q: want one of all, jobs, allocs, evals, nodes, deployment", req.Context)
	}
	o, err := parseQuery(r)
	if err != nil {
		return nil, err
	}
	// With ACLs on, the caller sees the IDs of the namespaces it may
	// list jobs in, and nodes only with node:read.
	keep := func(string) bool { return true }
	if z := authzOf(r); z.enabled && z.acl != nil {
		keep = func(ns string) bool { return z.acl.AllowNamespaceOp(ns, acl.NamespaceCapabilityListJobs) }
		if !z.acl.AllowNodeRead() {
			contexts = slices.DeleteFunc(contexts, func(c string) bool { return c == searchNodes })
		}
	}
	return s.blockingRead(w, r, o, func(_ memdb.WatchSet, snap *state.Snapshot) (any, uint64, error) {
		idx, err := snap.MaxIndex(state.TableJobs, state.TableAllocs, state.TableEvals, state.TableNodes, state.TableDeployments)
		if err != nil {
			return nil, 0, err
		}
		out := &SearchResponse{Matches: map[string][]string{}, Truncations: map[string]bool{}}
		for _, c := range contexts {
			ids, err := searchIDs(snap, c, req.Prefix, keep)
			if err != nil {
				return nil, 0, err
			}
			sort.Strings(ids)
			out.Truncations[c] = len(ids) > searchLimit
			if len(ids) > searchLimit {
				ids = ids[:searchLimit]
			}
			out.Matches[c] = ids
		}
		return out, idx, nil
	})
}

// searchIDs lists the IDs of one context that start with prefix, of the
// objects in the namespaces keep accepts.
func searchIDs(snap *state.Snapshot, context, prefix string, keep func(ns string) bool) ([]string, error) {
	ids := []string{}
	switch context {
	case searchJobs:
		jobs, err := snap.Jobs()
		if err != nil {
			return nil, err
		}
		for _, j := range jobs {
			if strings.HasPrefix(j.ID, prefix) && keep(j.Namespace) {
				ids = append(ids, j.ID)
			}
		}
	case searchAllocs:
		allocs, err := snap.AllocsByIDPrefix(prefix)
		if err != nil {
			return nil, err
		}
		for _, a := range allocs {
			if keep(a.Namespace) {
				ids = append(ids, a.ID)
			}
		}
	case searchEvals:
		evals, err := snap.EvalsByIDPrefix(prefix)
		if err != nil {
			return nil, err
		}
		for _, e := range evals {
			if keep(e.Namespace) {
				ids = append(ids, e.ID)
			}
		}
	case searchNodes:
		nodes, err := snap.NodesByIDPrefix(prefix)
		if err != nil {
			return nil, err
		}
		for _, n := range nodes {
			ids = append(ids, n.ID)
		}
	case searchDeployments:
		deps, err := snap.DeploymentsByIDPrefix(prefix)
		if err != nil {
			return nil, err
		}
		for _, d := range deps {
			if keep(d.Namespace) {
				ids = append(ids, d.ID)
			}
		}
	}
	return ids, nil
}

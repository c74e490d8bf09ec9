package httpapi

import (
	"net/http"
	"slices"
	"sort"
	"strings"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/droverhq/drover/acl"
	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/structs"
)

// PUT|POST /v1/search/fuzzy {"Text": "web", "Context": "all"|"jobs"|...}
// answers, as Nomad's fuzzy search, the names that contain Text (case
// folded), per context, each with its scope (the path to it: namespace,
// job, group, task):
//
//	{"Matches": {"tasks": [{"ID": "web", "Scope": ["default", "example", "cache"]}], ...},
//	 "Truncations": {"jobs": false, ...}, "Index": N}
//
// The contexts: jobs (a job's Name), groups, tasks, services (group and
// task services), commands (exec and raw_exec), images (docker), classes
// (java), allocs (the allocation's Name), nodes (the node's Name),
// variables (the path), namespaces, plugins (none: drover has no CSI), and
// evals and deployments, whose IDs match by prefix instead. As Nomad's
// defaults (drover has no search block): Text has at least 2 characters
// (400 otherwise); each kind of object is read up to the first 20 in the
// request's namespace ("*": all), answering at most 100 matches per
// context; a context is truncated when objects were left unread or
// matches left out. Matches are ordered by where Text starts in the name,
// then by the name's length, then by name.
//
// With ACLs on, the objects of a namespace need read-job there (variables
// their variables list capability), nodes node:read; a context the token
// cannot see is left out.

// Fuzzy search contexts beyond the prefix search's, as Nomad's.
const (
	searchGroups     = "groups"
	searchTasks      = "tasks"
	searchServices   = "services"
	searchCommands   = "commands"
	searchImages     = "images"
	searchClasses    = "classes"
	searchVariables  = "vars"
	searchNamespaces = "namespaces"
	searchPlugins    = "plugins"
)

// Nomad's search defaults: what one fuzzy search reads and answers.
const (
	fuzzyLimitQuery    = 20
	fuzzyLimitResults  = 100
	fuzzyMinTermLength = 2
)

// fuzzyJobContexts are the contexts a job's parts feed.
var fuzzyJobContexts = []string{searchJobs, searchGroups, searchTasks, searchServices, searchCommands, searchImages, searchClasses}

// fuzzyAllContexts is what "all" searches.
var fuzzyAllContexts = append(slices.Clone(fuzzyJobContexts), searchAllocs, searchNodes, searchVariables, searchNamespaces,
	searchPlugins, searchEvals, searchDeployments)

// FuzzyMatch is one match: the name found and where it is.
type FuzzyMatch struct {
	ID    string
	Scope []string `json:",omitempty"`
}

// FuzzySearchResponse answers /v1/search/fuzzy, as Nomad's.
type FuzzySearchResponse struct {
	Matches     map[string][]FuzzyMatch
	Truncations map[string]bool
	Index       uint64
}

// fuzzyMatch is a match with its score: where the text starts in the name.
type fuzzyMatch struct {
	FuzzyMatch
	score int
}

func (s *Server) fuzzySearch(w http.ResponseWriter, r *http.Request) (any, error) {
	var req struct {
		Text    string
		Context string
	}
	if err := decodeBody(r, &req); err != nil {
		return nil, err
	}
	if n := len(req.Text); n < fuzzyMinTermLength {
		return nil, Errorf(http.StatusBadRequest, "fuzzy search query must be at least %d characters, got %d", fuzzyMinTermLength, n)
	}
	var contexts []string
	switch {
	case req.Context == searchAll || req.Context == "":
		contexts = slices.Clone(fuzzyAllContexts)
	case slices.Contains(fuzzyAllContexts, req.Context):
		contexts = []string{req.Context}
	default:
		return nil, Errorf(http.StatusBadRequest, "invalid context %q: want all or one of %s", req.Context, strings.Join(fuzzyAllContexts, ", "))
	}
	o, err := parseQuery(r)
	if err != nil {
		return nil, err
	}
	z := authzOf(r)
	readNS := func(ns string) bool {
		return o.matchNamespace(ns) && (!z.enabled || z.acl.AllowNamespaceOp(ns, acl.NamespaceCapabilityReadJob))
	}
	readVar := func(v *structs.VariableEncrypted) bool {
		return o.matchNamespace(v.Namespace) && (!z.enabled || z.acl.AllowVariableOp(v.Namespace, v.Path, acl.VariablesCapabilityList))
	}
	seeNS := func(ns string) bool { return !z.enabled || z.acl.AllowNamespace(ns) }
	if z.enabled && !z.acl.AllowNodeRead() {
		contexts = slices.DeleteFunc(contexts, func(c string) bool { return c == searchNodes || c == searchPlugins })
	}
	text := strings.ToLower(req.Text)
	want := func(c string) bool { return slices.Contains(contexts, c) }
	return s.blockingRead(w, r, o, func(_ memdb.WatchSet, snap *state.Snapshot) (any, uint64, error) {
		idx, err := snap.MaxIndex(state.TableJobs, state.TableAllocs, state.TableEvals, state.TableNodes,
			state.TableDeployments, state.TableVariables, state.TableNamespaces)
		if err != nil {
			return nil, 0, err
		}
		f := &fuzzyResults{text: text, want: want, matches: map[string][]fuzzyMatch{}, truncated: map[string]bool{}}
		for _, c := range contexts {
			f.truncated[c] = false
		}
		if slices.ContainsFunc(fuzzyJobContexts, want) {
			jobs, err := snap.Jobs()
			if err != nil {
				return nil, 0, err
			}
			fuzzyEach(f, fuzzyJobContexts, keep(jobs, func(j *structs.Job) bool { return readNS(j.Namespace) }), f.job)
		}
		if want(searchAllocs) {
			allocs, err := snap.Allocs()
			if err != nil {
				return nil, 0, err
			}
			fuzzyEach(f, []string{searchAllocs}, keep(allocs, func(a *structs.Allocation) bool { return readNS(a.Namespace) }),
				func(a *structs.Allocation) { f.add(searchAllocs, a.Name, a.Namespace, a.ID) })
		}
		if want(searchNodes) {
			nodes, err := snap.Nodes()
			if err != nil {
				return nil, 0, err
			}
			fuzzyEach(f, []string{searchNodes}, nodes, func(n *structs.Node) { f.add(searchNodes, n.Name, n.ID) })
		}
		if want(searchVariables) {
			vars, err := snap.VarsByPrefix("*", "")
			if err != nil {
				return nil, 0, err
			}
			fuzzyEach(f, []string{searchVariables}, keep(vars, readVar),
				func(v *structs.VariableEncrypted) { f.add(searchVariables, v.Path, v.Namespace, v.Path) })
		}
		if want(searchNamespaces) {
			nss, err := snap.Namespaces()
			if err != nil {
				return nil, 0, err
			}
			fuzzyEach(f, []string{searchNamespaces}, keep(nss, func(n *structs.Namespace) bool { return seeNS(n.Name) }),
				func(n *structs.Namespace) { f.add(searchNamespaces, n.Name) })
		}
		for _, c := range []string{searchEvals, searchDeployments} {
			if !want(c) {
				continue
			}
			// Matched by ID prefix, as Nomad's: the first 20 whose ID
			// starts with the text.
			ids, err := searchIDs(snap, c, req.Text, readNS)
			if err != nil {
				return nil, 0, err
			}
			sort.Strings(ids)
			f.truncated[c] = len(ids) > searchLimit
			if len(ids) > searchLimit {
				ids = ids[:searchLimit]
			}
			for _, id := range ids {
				f.matches[c] = append(f.matches[c], fuzzyMatch{FuzzyMatch: FuzzyMatch{ID: id}})
			}
		}
		return f.response(idx), idx, nil
	})
}

// keep returns the items ok accepts.
func keep[T any](items []T, ok func(T) bool) []T {
	out := items[:0:0]
	for _, it := range items {
		if ok(it) {
			out = append(out, it)
		}
	}
	return out
}

// fuzzyEach reads the first fuzzyLimitQuery items with match; when items
// were left unread, the contexts they feed that matched are truncated.
func fuzzyEach[T any](f *fuzzyResults, contexts []string, items []T, match func(T)) {
	for i, it := range items {
		if i == fuzzyLimitQuery {
			for _, c := range contexts {
				if len(f.matches[c]) > 0 {
					f.truncated[c] = true
				}
			}
			return
		}
		match(it)
	}
}

// fuzzyResults gathers the matches of one search.
type fuzzyResults struct {
	text      string
	want      func(context string) bool
	matches   map[string][]fuzzyMatch
	truncated map[string]bool
}

// add records name in context when it contains the text, with its scope.
func (f *fuzzyResults) add(context, name string, scope ...string) {
	if !f.want(context) || name == "" {
		return
	}
	i := strings.Index(strings.ToLower(name), f.text)
	if i < 0 {
		return
	}
	if len(f.matches[context]) >= fuzzyLimitResults {
		f.truncated[context] = true
		return
	}
	f.matches[context] = append(f.matches[context], fuzzyMatch{FuzzyMatch: FuzzyMatch{ID: name, Scope: scope}, score: i})
}

// job matches a job's name, groups, tasks, services, and its tasks'
// commands, images and classes.
func (f *fuzzyResults) job(j *structs.Job) {
	ns, id := j.Namespace, j.ID
	name := j.Name
	if name == "" {
		name = j.ID
	}
	f.add(searchJobs, name, ns, id)
	for _, g := range j.TaskGroups {
		f.add(searchGroups, g.Name, ns, id)
		for _, svc := range g.Services {
			f.add(searchServices, svc.Name, ns, id, g.Name)
		}
		for _, t := range g.Tasks {
			f.add(searchTasks, t.Name, ns, id, g.Name)
			for _, svc := range t.Services {
				f.add(searchServices, svc.Name, ns, id, g.Name, t.Name)
			}
			param, context := "", ""
			switch t.Driver {
			case structs.DriverDocker:
				param, context = "image", searchImages
			case structs.DriverExec, structs.DriverRawExec:
				param, context = "command", searchCommands
			case structs.DriverJava:
				param, context = "class", searchClasses
			default:
				continue
			}
			if v, ok := t.Config[param].(string); ok {
				f.add(context, v, ns, id, g.Name, t.Name)
			}
		}
	}
}

// response orders each context's matches as Nomad's: by score, then by
// the name's length, then by name.
func (f *fuzzyResults) response(index uint64) *FuzzySearchResponse {
	out := &FuzzySearchResponse{Matches: map[string][]FuzzyMatch{}, Truncations: f.truncated, Index: index}
	for c, ms := range f.matches {
		sort.SliceStable(ms, func(a, b int) bool {
			A, B := ms[a], ms[b]
			if A.score != B.score {
				return A.score < B.score
			}
			if len(A.ID) != len(B.ID) {
				return len(A.ID) < len(B.ID)
			}
			return A.ID < B.ID
		})
		list := make([]FuzzyMatch, 0, len(ms))
		for _, m := range ms {
			list = append(list, m.FuzzyMatch)
		}
		out.Matches[c] = list
	}
	return out
}

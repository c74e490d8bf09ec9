package httpapi

import (
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/droverhq/drover/state"
	memdb "github.com/hashicorp/go-memdb"
)

// Blocking query bounds.
const (
	DefaultWait = 5 * time.Minute
	MaxWait     = 10 * time.Minute
)

// QueryOptions are the common read parameters.
type QueryOptions struct {
	MinIndex  uint64        // ?index=
	Wait      time.Duration // ?wait=, bounded by MaxWait
	Stale     bool          // ?stale
	Prefix    string        // ?prefix=
	Namespace string        // the resolved namespace (namespace.go): "default" when unset, "*" for all
	PerPage   int           // ?per_page=, 0 for no pages (the lists that page: paginate)
	NextToken string        // ?next_token=, where the page starts
	// allowNS, with ACLs on, says which namespaces the caller may see in
	// a list across namespaces (nil: all).
	allowNS func(string) bool
}

// parseQuery reads the query options; malformed values are a 400.
func parseQuery(r *http.Request) (QueryOptions, error) {
	q := r.URL.Query()
	o := QueryOptions{Wait: DefaultWait, Stale: q.Has("stale"), Prefix: q.Get("prefix"), Namespace: namespaceOf(r)}
	if o.Namespace == "*" {
		o.allowNS = namespaceFilter(r)
	}
	if v := q.Get("index"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return o, Errorf(http.StatusBadRequest, "invalid index %q", v)
		}
		o.MinIndex = n
	}
	if v := q.Get("per_page"); v != "" {
		n, err := strconv.ParseInt(v, 10, 32)
		if err != nil || n < 0 {
			return o, Errorf(http.StatusBadRequest, "invalid per_page %q", v)
		}
		o.PerPage = int(n)
	}
	o.NextToken = q.Get("next_token")
	if v := q.Get("wait"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			// A bare number is read as seconds.
			n, nerr := strconv.ParseUint(v, 10, 32)
			if nerr != nil {
				return o, Errorf(http.StatusBadRequest, "invalid wait %q", v)
			}
			d = time.Duration(n) * time.Second
		}
		if d <= 0 {
			return o, Errorf(http.StatusBadRequest, "invalid wait %q", v)
		}
		o.Wait = min(d, MaxWait)
	}
	return o, nil
}

// matchNamespace reports whether an object in ns is in the query's
// namespace.
func (o QueryOptions) matchNamespace(ns string) bool {
	if o.Namespace == "*" {
		return o.allowNS == nil || o.allowNS(ns)
	}
	return o.Namespace == ns
}

// matchPrefix reports whether id starts with the query's prefix.
func (o QueryOptions) matchPrefix(id string) bool { return strings.HasPrefix(id, o.Prefix) }

// blockingRead runs fn as a blocking query on the local state and sets the
// index and leader headers.
func (s *Server) blockingRead(w http.ResponseWriter, r *http.Request, o QueryOptions, fn state.QueryFunc) (any, error) {
	out, idx, err := s.backend.State().BlockingQuery(r.Context(), o.MinIndex, o.Wait, fn)
	s.setMeta(w, idx)
	return out, err
}

// setMeta sets X-Nomad-Index, X-Nomad-KnownLeader and X-Nomad-LastContact.
func (s *Server) setMeta(w http.ResponseWriter, index uint64) {
	h := w.Header()
	h.Set("X-Nomad-Index", strconv.FormatUint(index, 10))
	addr, _ := s.backend.Leader()
	h.Set("X-Nomad-KnownLeader", strconv.FormatBool(addr != ""))
	h.Set("X-Nomad-LastContact", strconv.FormatInt(s.backend.LastContact().Milliseconds(), 10))
}

// listing says how a list endpoint reads one table: all its objects, those
// whose ID starts with a prefix, each object's namespace, and the answer
// built from the objects kept.
type listing[T any] struct {
	table     string
	all       func(*state.Snapshot) ([]T, error)
	byPrefix  func(*state.Snapshot, string) ([]T, error)
	namespace func(T) string
	// key, when set, pages the list (paginate) in its order.
	key    func(T) string
	answer func([]T) any
}

// listRead serves a list endpoint as a blocking query on l.table: every
// object, or those matching ?prefix=, in the query's namespace.
func listRead[T any](s *Server, w http.ResponseWriter, r *http.Request, l listing[T]) (any, error) {
	o, err := parseQuery(r)
	if err != nil {
		return nil, err
	}
	return s.blockingRead(w, r, o, func(_ memdb.WatchSet, snap *state.Snapshot) (any, uint64, error) {
		var objs []T
		var err error
		if o.Prefix != "" {
			objs, err = l.byPrefix(snap, o.Prefix)
		} else {
			objs, err = l.all(snap)
		}
		if err != nil {
			return nil, 0, err
		}
		kept := objs[:0:0]
		for _, obj := range objs {
			if o.matchNamespace(l.namespace(obj)) {
				kept = append(kept, obj)
			}
		}
		if l.key != nil {
			kept = paginate(w, o, kept, l.key)
		}
		idx, err := snap.Index(l.table)
		return l.answer(kept), idx, err
	})
}

// NextTokenHeader carries the token of a list's next page, as Nomad's.
const NextTokenHeader = "X-Nomad-NextToken"

// paginate pages a list, as Nomad's ?per_page= and ?next_token=: items are
// put in key order, the page starts at the first whose key is not before
// the token and holds at most PerPage items; the next page's token (the
// key of the item after the page, "" for none) goes in X-Nomad-NextToken.
// Without per_page the whole list is one page.
func paginate[T any](w http.ResponseWriter, o QueryOptions, items []T, key func(T) string) []T {
	sort.SliceStable(items, func(i, j int) bool { return key(items[i]) < key(items[j]) })
	if o.NextToken != "" {
		start := sort.Search(len(items), func(i int) bool { return key(items[i]) >= o.NextToken })
		items = items[start:]
	}
	w.Header().Del(NextTokenHeader)
	if o.PerPage > 0 && len(items) > o.PerPage {
		w.Header().Set(NextTokenHeader, key(items[o.PerPage]))
		items = items[:o.PerPage]
	}
	return items
}

// queryBool reads a true/false query parameter; absent is false, anything
// unparsable a 400 naming it.
func queryBool(r *http.Request, name string) (bool, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, Errorf(http.StatusBadRequest, "invalid %s %q: want true or false", name, v)
	}
	return b, nil
}

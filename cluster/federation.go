package cluster

import (
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/droverhq/drover/structs"
)

// Federation is what one server knows of the servers of the other regions
// its region is federated with. Each region keeps its own Raft and state:
// these servers are never peers, only addresses to forward a request to
// and to replicate from. What it knows it learns from the join exchange
// (POST /v1/internal/join), first-hand — a server's own join or answer —
// or second-hand, from another server's list, which carries each entry's
// age; an entry keeps the freshest time any server heard from it directly,
// and is dropped once that is older than the TTL. So a region whose
// servers are gone drops out of every region's view within about the TTL,
// and no second-hand copy keeps a dead server alive.
//
// Time is an input: every method that needs it takes now.
type Federation struct {
	region string
	ttl    time.Duration

	mu      sync.Mutex
	servers map[string]fedEntry // by Raft ID
	// gone records, for each region whose last server was dropped, when:
	// a request for it is then answered as for a region unreachable, not
	// unknown.
	gone map[string]time.Time
}

type fedEntry struct {
	m    structs.ServerMember
	seen time.Time
}

// DefaultFederationTTL is how long a server of another region stays known
// without anyone hearing from it directly; servers exchange every few
// seconds.
const DefaultFederationTTL = 30 * time.Second

// NewFederation returns an empty view for a server of region, dropping
// servers unheard of for ttl (DefaultFederationTTL when 0).
func NewFederation(region string, ttl time.Duration) *Federation {
	if ttl <= 0 {
		ttl = DefaultFederationTTL
	}
	return &Federation{region: region, ttl: ttl, servers: map[string]fedEntry{}, gone: map[string]time.Time{}}
}

// Region is the local region.
func (f *Federation) Region() string { return f.region }

// Foreign reports whether m belongs to another region than the local one
// (a member that names no region is taken as the local region's: builds
// that announce none know no federation).
func (f *Federation) Foreign(m structs.ServerMember) bool {
	return m.Region != "" && m.Region != f.region
}

// LearnDirect records a server of another region heard from just now.
func (f *Federation) LearnDirect(m structs.ServerMember, now time.Time) {
	f.Learn([]structs.FederatedServer{{ServerMember: m}}, now)
}

// Learn records servers another server listed, each heard from Age
// before now; entries of the local region, without an ID or addresses, or
// older than the TTL are skipped.
func (f *Federation) Learn(list []structs.FederatedServer, now time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, fs := range list {
		m := fs.ServerMember
		if !f.Foreign(m) || m.ID == "" || m.HTTPAddr == "" || fs.Age < 0 || fs.Age >= f.ttl {
			continue
		}
		seen := now.Add(-fs.Age)
		old, ok := f.servers[m.ID]
		if ok && !seen.After(old.seen) {
			continue
		}
		f.servers[m.ID] = fedEntry{m: m, seen: seen}
		delete(f.gone, m.Region)
	}
}

// Expire drops the servers not heard from for the TTL and returns them.
func (f *Federation) Expire(now time.Time) []structs.ServerMember {
	f.mu.Lock()
	defer f.mu.Unlock()
	var dropped []structs.ServerMember
	for id, e := range f.servers {
		if now.Sub(e.seen) >= f.ttl {
			dropped = append(dropped, e.m)
			delete(f.servers, id)
		}
	}
	for _, m := range dropped {
		if len(f.serversOf(m.Region)) == 0 {
			f.gone[m.Region] = now
		}
	}
	sort.Slice(dropped, func(i, j int) bool { return dropped[i].ID < dropped[j].ID })
	return dropped
}

// List is every known server of the other regions with its age at now,
// by ID: what this server tells the others.
func (f *Federation) List(now time.Time) []structs.FederatedServer {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]structs.FederatedServer, 0, len(f.servers))
	for _, e := range f.servers {
		out = append(out, structs.FederatedServer{ServerMember: e.m, Age: max(now.Sub(e.seen), 0)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// Regions lists the other regions with at least one known server, sorted.
func (f *Federation) Regions() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, e := range f.servers {
		if !slices.Contains(out, e.m.Region) {
			out = append(out, e.m.Region)
		}
	}
	sort.Strings(out)
	return out
}

// Servers lists the known servers of region, freshest first.
func (f *Federation) Servers(region string) []structs.ServerMember {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.serversOf(region)
}

func (f *Federation) serversOf(region string) []structs.ServerMember {
	var es []fedEntry
	for _, e := range f.servers {
		if e.m.Region == region {
			es = append(es, e)
		}
	}
	sort.Slice(es, func(i, j int) bool {
		if !es[i].seen.Equal(es[j].seen) {
			return es[i].seen.After(es[j].seen)
		}
		return es[i].m.ID < es[j].m.ID
	})
	out := make([]structs.ServerMember, len(es))
	for i, e := range es {
		out[i] = e.m
	}
	return out
}

// Gone reports when the last known server of region was dropped, if it
// was and none has been heard of since.
func (f *Federation) Gone(region string) (time.Time, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	t, ok := f.gone[region]
	return t, ok
}

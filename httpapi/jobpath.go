package httpapi

import (
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
)

// A job's ID may contain "/": every dispatched child of a parameterized
// job is "parent/dispatch-<time>-<id>", and a periodic child
// "parent/periodic-<time>". Nomad routes /v1/job/<id>/… by the path's
// suffix, so that the ID may be written with its slashes or escaped
// (%2F). The router here matches {id} against one segment, so
// routePath rewrites a request whose ID has a slash to the escaped
// form before routing, by Nomad's rule: the path after /v1/job/ ends in
// one of the job routes' suffixes ("/allocations", "/periodic/force", …)
// and the ID is what precedes it; otherwise the whole rest is the ID.

var (
	jobSuffixesOnce sync.Once
	jobSuffixes     []string // longest first
)

// jobRouteSuffixes lists the suffixes of the registered /v1/job/{id}/…
// routes.
func jobRouteSuffixes() []string {
	jobSuffixesOnce.Do(func() {
		seen := map[string]bool{}
		for _, rt := range routes {
			_, p, _ := strings.Cut(rt.pattern, " ")
			if suf, ok := strings.CutPrefix(p, "/v1/job/{id}/"); ok && !seen[suf] {
				seen[suf] = true
				jobSuffixes = append(jobSuffixes, "/"+suf)
			}
		}
		sort.Slice(jobSuffixes, func(i, j int) bool {
			if len(jobSuffixes[i]) != len(jobSuffixes[j]) {
				return len(jobSuffixes[i]) > len(jobSuffixes[j])
			}
			return jobSuffixes[i] < jobSuffixes[j]
		})
	})
	return jobSuffixes
}

// routePath rewrites r's escaped path so that a job ID with slashes is
// one segment (see above), and sends /v1/node/pool/{name} (any method)
// to its routes (nodepools.go); any other request is left as it is.
func routePath(r *http.Request) {
	if pool, ok := strings.CutPrefix(r.URL.Path, "/v1/node/pool/"); ok && pool != "" && !strings.Contains(pool, "/") {
		r.URL.Path, r.URL.RawPath = "/v1/node-pool/"+pool, ""
		return
	}
	rest, ok := strings.CutPrefix(r.URL.Path, "/v1/job/")
	if !ok || !strings.Contains(rest, "/") {
		return
	}
	id, suffix := rest, ""
	for _, suf := range jobRouteSuffixes() {
		if strings.HasSuffix(rest, suf) && len(rest) > len(suf) {
			id, suffix = strings.TrimSuffix(rest, suf), suf
			break
		}
	}
	if !strings.Contains(id, "/") || strings.HasPrefix(id, "/") || strings.HasSuffix(id, "/") {
		return // one segment already, or an empty segment the router refuses
	}
	r.URL.RawPath = "/v1/job/" + url.PathEscape(id) + suffix
}

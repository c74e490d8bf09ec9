// Package templatetest serves the part of Nomad's HTTP API templates
// read (variables and services, in Nomad's JSON shapes, with blocking
// queries) from an httptest server, for the tests of the template
// renderer and of the client.
package templatetest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Service is one registration of a service.
type Service struct {
	Name    string
	Address string
	Port    int
	Tags    []string
	AllocID string
	JobID   string
}

// Nomad is the fake. Its fields are set through its methods.
type Nomad struct {
	URL string

	mu       sync.Mutex
	index    uint64
	changed  chan struct{} // closed and replaced on every write
	closed   chan struct{} // closed when the test ends: blocked reads answer
	vars     map[string]variable
	services map[string][]Service
	tokens   []string // X-Nomad-Token of each request
	reads    int
}

type variable struct {
	items  map[string]string
	create uint64
	modify uint64
}

// NewNomad starts the fake on 127.0.0.1; the test's cleanup stops it.
func NewNomad(t testing.TB) *Nomad {
	n := &Nomad{index: 1, changed: make(chan struct{}), closed: make(chan struct{}), vars: map[string]variable{}, services: map[string][]Service{}}
	srv := httptest.NewServer(http.HandlerFunc(n.serve))
	n.URL = srv.URL
	t.Cleanup(func() {
		close(n.closed)
		srv.CloseClientConnections()
		srv.Close()
	})
	return n
}

// SetVar writes a variable (namespace default).
func (n *Nomad) SetVar(path string, items map[string]string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.index++
	v := n.vars[path]
	if v.create == 0 {
		v.create = n.index
	}
	v.modify, v.items = n.index, items
	n.vars[path] = v
	n.bump()
}

// DeleteVar removes a variable.
func (n *Nomad) DeleteVar(path string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.index++
	delete(n.vars, path)
	n.bump()
}

// SetService replaces a service's registrations.
func (n *Nomad) SetService(name string, regs ...Service) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.index++
	n.services[name] = regs
	n.bump()
}

// Tokens returns the X-Nomad-Token of every request so far.
func (n *Nomad) Tokens() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]string(nil), n.tokens...)
}

// Reads returns how many requests were answered.
func (n *Nomad) Reads() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.reads
}

func (n *Nomad) bump() {
	close(n.changed)
	n.changed = make(chan struct{})
}

// serve answers one request, blocking first while ?index= is current
// (at most ?wait=, else 5 minutes, as Nomad).
func (n *Nomad) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	minIndex, _ := strconv.ParseUint(r.URL.Query().Get("index"), 10, 64)
	wait := 5 * time.Minute
	if s := r.URL.Query().Get("wait"); s != "" {
		if d, err := time.ParseDuration(s); err == nil {
			wait = d
		}
	}
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	n.mu.Lock()
	n.tokens = append(n.tokens, r.Header.Get("X-Nomad-Token"))
	for minIndex > 0 && n.index <= minIndex {
		ch := n.changed
		n.mu.Unlock()
		timedOut := false
		select {
		case <-ch:
		case <-deadline.C:
			timedOut = true
		case <-n.closed:
			timedOut = true
		case <-r.Context().Done():
			return
		}
		n.mu.Lock()
		if timedOut {
			break
		}
	}
	n.reads++
	body, status := n.answer(r)
	index := n.index
	n.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Nomad-Index", strconv.FormatUint(index, 10))
	w.Header().Set("X-Nomad-KnownLeader", "true")
	w.Header().Set("X-Nomad-LastContact", "0")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}

// answer builds the response to r, with n.mu held.
func (n *Nomad) answer(r *http.Request) (any, int) {
	p := r.URL.Path
	switch {
	case strings.HasPrefix(p, "/v1/var/"):
		path := strings.TrimPrefix(p, "/v1/var/")
		v, ok := n.vars[path]
		if !ok {
			return "variable not found", http.StatusNotFound
		}
		return map[string]any{
			"Namespace": "default", "Path": path, "Items": v.items,
			"CreateIndex": v.create, "ModifyIndex": v.modify, "CreateTime": int64(v.create), "ModifyTime": int64(v.modify),
		}, http.StatusOK
	case p == "/v1/vars":
		prefix := r.URL.Query().Get("prefix")
		out := []map[string]any{}
		paths := make([]string, 0, len(n.vars))
		for path := range n.vars {
			paths = append(paths, path)
		}
		sort.Strings(paths)
		for _, path := range paths {
			if strings.HasPrefix(path, prefix) {
				v := n.vars[path]
				out = append(out, map[string]any{"Namespace": "default", "Path": path, "CreateIndex": v.create, "ModifyIndex": v.modify})
			}
		}
		return out, http.StatusOK
	case strings.HasPrefix(p, "/v1/service/"):
		name := strings.TrimPrefix(p, "/v1/service/")
		out := []map[string]any{}
		for i, s := range n.services[name] {
			out = append(out, map[string]any{
				"ID": "_nomad-task-" + s.AllocID + "-" + name + "-" + strconv.Itoa(i), "ServiceName": name, "Namespace": "default",
				"NodeID": "node-1", "Datacenter": "dc1", "JobID": s.JobID, "AllocID": s.AllocID, "Tags": s.Tags,
				"Address": s.Address, "Port": s.Port, "CreateIndex": n.index, "ModifyIndex": n.index,
			})
		}
		return out, http.StatusOK
	case p == "/v1/services":
		names := make([]string, 0, len(n.services))
		for name := range n.services {
			names = append(names, name)
		}
		sort.Strings(names)
		var list []map[string]any
		for _, name := range names {
			var tags []string
			for _, s := range n.services[name] {
				tags = append(tags, s.Tags...)
			}
			list = append(list, map[string]any{"ServiceName": name, "Tags": tags})
		}
		return []map[string]any{{"Namespace": "default", "Services": list}}, http.StatusOK
	}
	return "not found", http.StatusNotFound
}

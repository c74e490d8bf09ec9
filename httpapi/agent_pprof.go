package httpapi

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"strconv"
	"strings"
	"time"
)

// Nomad's agent profiles:
//
//	GET /v1/agent/pprof/cmdline   the agent's command line (NUL-separated)
//	GET /v1/agent/pprof/profile   a CPU profile over ?seconds= (default 1)
//	GET /v1/agent/pprof/trace     an execution trace over ?seconds=
//	GET /v1/agent/pprof/{name}    one of Go's named profiles (goroutine,
//	                              heap, allocs, block, mutex,
//	                              threadcreate), ?debug=N for text,
//	                              ?gc=1 to collect before a heap profile;
//	                              404 for a name Go does not know
//
// ?node_id= or ?server_id= profile another agent (agent_target.go). As
// Nomad's, the caller needs agent:write (a management token serves); with
// ACLs off the target agent serves its profiles only with enable_debug
// (or in dev mode), and refuses with 403 otherwise. Profiles are taken in
// this process, from memory: nothing is written to disk. ?seconds= is at
// most maxProfileSeconds. The loopback-only /debug/pprof/ of
// enable_debug stays as it is (agent/agent.go).

func init() {
	register(route{"GET /v1/agent/pprof/{profile}", localRoute, agentWrite, (*Server).agentPprof})
}

// maxProfileSeconds bounds a CPU profile or trace: the request holds
// its connection that long.
const maxProfileSeconds = 300

func (s *Server) agentPprof(w http.ResponseWriter, r *http.Request) (any, error) {
	addr, err := s.agentTarget(r)
	if err != nil {
		return nil, err
	}
	if addr != "" {
		s.forwardToAgent(w, r, addr)
		return written{}, nil
	}
	if !authzOf(r).enabled {
		if b, ok := s.backend.(AgentTargetBackend); !ok || !b.DebugEnabled() {
			return nil, Errorf(http.StatusForbidden, "%s: the agent's profiles need enable_debug when ACLs are off: %w", ErrPermissionDenied, ErrPermissionDenied)
		}
	}
	q := r.URL.Query()
	// As Go's net/http/pprof and Nomad's: numbers that do not parse are 0.
	seconds, _ := strconv.Atoi(q.Get("seconds"))
	debug, _ := strconv.Atoi(q.Get("debug"))
	gc, _ := strconv.Atoi(q.Get("gc"))
	if seconds <= 0 {
		seconds = 1
	}
	if seconds > maxProfileSeconds {
		return nil, Errorf(http.StatusBadRequest, "seconds must be at most %d (got %d)", maxProfileSeconds, seconds)
	}
	name := r.PathValue("profile")
	var (
		out     []byte
		headers map[string]string
	)
	switch name {
	case "cmdline":
		out = []byte(strings.Join(os.Args, "\x00"))
		headers = map[string]string{"Content-Type": "text/plain; charset=utf-8"}
	case "profile":
		out, err = takeProfile(r.Context(), seconds, func(b *bytes.Buffer) error { return pprof.StartCPUProfile(b) }, pprof.StopCPUProfile)
		headers = attachment("profile")
	case "trace":
		out, err = takeProfile(r.Context(), seconds, func(b *bytes.Buffer) error { return trace.Start(b) }, trace.Stop)
		headers = attachment("trace")
	default:
		p := pprof.Lookup(name)
		if p == nil {
			return nil, Errorf(http.StatusNotFound, "Pprof profile not found profile: %s", name)
		}
		if name == "heap" && gc > 0 {
			runtime.GC()
		}
		var buf bytes.Buffer
		err = p.WriteTo(&buf, debug)
		out = buf.Bytes()
		headers = attachment(name)
		if debug != 0 {
			headers = map[string]string{"Content-Type": "text/plain; charset=utf-8"}
		}
	}
	if err != nil {
		// Go runs one CPU profile and one trace at a time.
		return nil, Errorf(http.StatusConflict, "%s: %v", name, err)
	}
	w.Header().Set("X-Content-Type-Options", "nosniff")
	for k, v := range headers {
		w.Header().Set(k, v)
	}
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(out)
	return written{}, nil
}

func attachment(name string) map[string]string {
	return map[string]string{
		"Content-Type":        "application/octet-stream",
		"Content-Disposition": fmt.Sprintf(`attachment; filename=%q`, name),
	}
}

// takeProfile runs a profile (CPU or trace) for seconds, or until the
// request ends, and returns what it wrote.
func takeProfile(ctx context.Context, seconds int, start func(*bytes.Buffer) error, stop func()) ([]byte, error) {
	var buf bytes.Buffer
	if err := start(&buf); err != nil {
		return nil, err
	}
	t := time.NewTimer(time.Duration(seconds) * time.Second)
	select {
	case <-t.C:
	case <-ctx.Done():
		t.Stop()
	}
	stop()
	return buf.Bytes(), nil
}

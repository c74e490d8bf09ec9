package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/droverhq/drover/client"
	"github.com/droverhq/drover/structs"
)

// The client's stats endpoints, as Nomad's:
//
//	GET /v1/client/allocation/{alloc_id}/stats[?task=T]
//	    → AllocResourceUsage: each task's memory and CPU usage (and each
//	      of its processes', by PID), and their sum
//	GET /v1/client/stats[?node_id=N]
//	    → HostStats: the host's memory, CPUs, disks and uptime
//
// 404 for an allocation the client does not hold, a task its group does
// not have, or a node_id that is not this client's node.

// checksSource is what GET /v1/client/allocation/{alloc_id}/checks needs
// of the client: the latest result of each check of the allocation's
// nomad services, by check ID (Nomad's AllocCheckStatuses).
type checksSource interface {
	AllocChecks(allocID string) (map[string]*structs.AllocCheckStatus, error)
}

func (h *clientHandler) allocChecks(w http.ResponseWriter, r *http.Request) {
	out, err := h.checks.AllocChecks(r.PathValue("alloc_id"))
	if errors.Is(err, client.ErrAllocNotHeld) {
		err = &httpError{code: http.StatusNotFound, msg: err.Error()}
	}
	if err != nil {
		writeClientError(w, err)
		return
	}
	writeJSON(w, out)
}

// statsSource is what the stats endpoints need of the client.
type statsSource interface {
	AllocStats(ctx context.Context, allocID, task string) (*structs.AllocResourceUsage, error)
	HostStats(ctx context.Context) *structs.HostStats
	NodeID() string
}

func (h *clientHandler) allocStats(w http.ResponseWriter, r *http.Request) {
	u, err := h.stats.AllocStats(r.Context(), r.PathValue("alloc_id"), r.URL.Query().Get("task"))
	if errors.Is(err, client.ErrAllocNotHeld) || errors.Is(err, client.ErrUnknownTask) {
		err = &httpError{code: http.StatusNotFound, msg: err.Error()}
	}
	if err != nil {
		writeClientError(w, err)
		return
	}
	writeJSON(w, u)
}

func (h *clientHandler) hostStats(w http.ResponseWriter, r *http.Request) {
	if id := r.URL.Query().Get("node_id"); id != "" && id != h.stats.NodeID() {
		writeClientError(w, &httpError{code: http.StatusNotFound,
			msg: fmt.Sprintf("unknown node %q: this client is node %q", id, h.stats.NodeID())})
		return
	}
	writeJSON(w, h.stats.HostStats(r.Context()))
}

// writeClientError answers err as plain text, with its httpError code or
// 500.
func writeClientError(w http.ResponseWriter, err error) {
	code := http.StatusInternalServerError
	var he *httpError
	if errors.As(err, &he) {
		code = he.code
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(code)
	fmt.Fprintln(w, err.Error())
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

package httpapi

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"sort"
	"strings"
)

// Nomad's system and scheduler configuration endpoints:
//
//	PUT|POST /v1/system/gc                      the leader's reaper makes its passes at once, every
//	                                            age threshold taken as zero (agent/reaper.go), as
//	                                            Nomad's forced garbage collection
//	PUT|POST /v1/system/reconcile/summaries     nothing to do: drover's job summaries are kept by
//	                                            the writes that change them, in the same entry
//	GET      /v1/operator/scheduler/configuration   drover's scheduler, which is fixed: binpack,
//	                                            memory oversubscription (memory_max) on, no preemption
//	PUT|POST /v1/operator/scheduler/configuration   the same configuration is accepted; a change is a
//	                                            400 naming what drover cannot change yet

func init() {
	for _, m := range []string{"PUT", "POST"} {
		register(
			route{m + " /v1/system/gc", writeRoute, management, (*Server).systemGC},
			route{m + " /v1/system/reconcile/summaries", writeRoute, management, (*Server).systemReconcileSummaries},
			route{m + " /v1/operator/scheduler/configuration", writeRoute, operatorWrite, (*Server).schedulerSetConfig},
		)
	}
	register(route{"GET /v1/operator/scheduler/configuration", readRoute, operatorRead, (*Server).schedulerGetConfig})
}

// GCBackend is the part of a backend that collects garbage at once:
// the agent's leader implements it (agent/system_gc.go).
type GCBackend interface {
	ForceGC(ctx context.Context) error
}

func (s *Server) systemGC(_ http.ResponseWriter, r *http.Request) (any, error) {
	gc, ok := s.backend.(GCBackend)
	if !ok {
		return nil, Errorf(http.StatusNotImplemented, "not a server: garbage collection unavailable")
	}
	if err := gc.ForceGC(r.Context()); err != nil {
		return nil, err
	}
	return nil, nil
}

func (s *Server) systemReconcileSummaries(_ http.ResponseWriter, _ *http.Request) (any, error) {
	return nil, nil
}

// SchedulerConfiguration is Nomad's (api.SchedulerConfiguration), as
// drover's scheduler behaves.
type SchedulerConfiguration struct {
	SchedulerAlgorithm            string
	PreemptionConfig              PreemptionConfig
	MemoryOversubscriptionEnabled bool
	RejectJobRegistration         bool
	PauseEvalBroker               bool
	CreateIndex                   uint64
	ModifyIndex                   uint64
}

// PreemptionConfig is Nomad's.
type PreemptionConfig struct {
	SystemSchedulerEnabled   bool
	SysBatchSchedulerEnabled bool
	BatchSchedulerEnabled    bool
	ServiceSchedulerEnabled  bool
}

// droverScheduler is the configuration drover's scheduler has.
var droverScheduler = SchedulerConfiguration{
	SchedulerAlgorithm:            "binpack",
	MemoryOversubscriptionEnabled: true,
	CreateIndex:                   1,
	ModifyIndex:                   1,
}

func (s *Server) schedulerGetConfig(w http.ResponseWriter, _ *http.Request) (any, error) {
	s.setMeta(w, 1)
	return map[string]any{"SchedulerConfig": droverScheduler, "Index": 1}, nil
}

func (s *Server) schedulerSetConfig(_ http.ResponseWriter, r *http.Request) (any, error) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, Errorf(http.StatusBadRequest, "reading request body: %v", err)
	}
	var in map[string]json.RawMessage
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, Errorf(http.StatusBadRequest, "decoding the configuration: %v", err)
	}
	want, _ := json.Marshal(droverScheduler)
	var have map[string]json.RawMessage
	_ = json.Unmarshal(want, &have)
	var differ []string
	for k, v := range in {
		switch k {
		case "CreateIndex", "ModifyIndex":
			continue
		}
		h, known := have[k]
		if !known {
			h = json.RawMessage("null") // a field drover does not know: only its zero value
		}
		if !jsonEqual(h, v) && !(isZeroJSON(h) && isZeroJSON(v)) {
			differ = append(differ, k)
		}
	}
	sort.Strings(differ)
	if len(differ) > 0 {
		return nil, Errorf(http.StatusBadRequest,
			"drover's scheduler configuration is fixed (binpack, memory oversubscription on, no preemption, registration and the eval broker never paused); "+
				"changing %s is not supported by drover yet", strings.Join(differ, ", "))
	}
	return map[string]any{"Updated": true, "Index": 1}, nil
}

// jsonEqual compares two JSON values by what they decode to.
func jsonEqual(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return string(xa) == string(ya)
}

// isZeroJSON reports whether v is a zero value: null, false, 0, "", an
// empty object or array, or an object of zero values.
func isZeroJSON(v json.RawMessage) bool {
	var x any
	if json.Unmarshal(v, &x) != nil {
		return false
	}
	var zero func(any) bool
	zero = func(x any) bool {
		switch t := x.(type) {
		case nil:
			return true
		case bool:
			return !t
		case float64:
			return t == 0
		case string:
			return t == ""
		case []any:
			return len(t) == 0
		case map[string]any:
			for _, e := range t {
				if !zero(e) {
					return false
				}
			}
			return true
		}
		return false
	}
	return zero(x)
}

package httpapi

import (
	"net/http"
	"strconv"

	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/structs"
)

// The scheduler configuration, as Nomad's:
//
//	GET      /v1/operator/scheduler/configuration  {"SchedulerConfig": …, "Index": N}:
//	                                               the replicated configuration, or
//	                                               drover's default when none was
//	                                               written (CreateIndex 0)
//	PUT|POST /v1/operator/scheduler/configuration  replace it; ?cas=INDEX only if its
//	                                               ModifyIndex is still INDEX (0: none
//	                                               written yet); {"Updated": bool,
//	                                               "Index": N}
//
// The body is Nomad's api.SchedulerConfiguration; structs.SchedulerConfiguration
// says what drover does with each field. An unknown SchedulerAlgorithm is a
// 400 with Nomad's text.

func init() {
	for _, m := range []string{"PUT", "POST"} {
		register(route{m + " /v1/operator/scheduler/configuration", writeRoute, operatorWrite, (*Server).schedulerSetConfig})
	}
	register(route{"GET /v1/operator/scheduler/configuration", readRoute, operatorRead, (*Server).schedulerGetConfig})
}

// SchedulerConfigurationResponse is Nomad's GET answer.
type SchedulerConfigurationResponse struct {
	SchedulerConfig structs.SchedulerConfiguration
	Index           uint64
}

// SchedulerSetConfigurationResponse is Nomad's PUT answer.
type SchedulerSetConfigurationResponse struct {
	Updated bool
	Index   uint64
}

func (s *Server) schedulerGetConfig(w http.ResponseWriter, _ *http.Request) (any, error) {
	snap := s.backend.State().Snapshot()
	c, err := snap.EffectiveSchedulerConfig()
	if err != nil {
		return nil, err
	}
	idx, err := snap.Index(state.TableSchedulerConfig)
	if err != nil {
		return nil, err
	}
	idx = max(idx, 1)
	s.setMeta(w, idx)
	return SchedulerConfigurationResponse{SchedulerConfig: c, Index: idx}, nil
}

func (s *Server) schedulerSetConfig(w http.ResponseWriter, r *http.Request) (any, error) {
	var c structs.SchedulerConfiguration
	if err := decodeBody(r, &c); err != nil {
		if statusFor(err) == http.StatusRequestEntityTooLarge {
			return nil, err
		}
		return nil, Errorf(http.StatusBadRequest, "Error parsing scheduler config: %v", err)
	}
	if err := c.Validate(); err != nil {
		return nil, Errorf(http.StatusBadRequest, "%v", err)
	}
	req := &structs.SchedulerSetConfigRequest{Config: c}
	req.Config.CreateIndex, req.Config.ModifyIndex = 0, 0
	if _, ok := r.URL.Query()["cas"]; ok {
		v := r.URL.Query().Get("cas")
		idx, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return nil, Errorf(http.StatusBadRequest, "Error parsing cas value: %v", err)
		}
		req.CAS, req.Config.ModifyIndex = true, idx
	}
	resp, index, err := s.backend.Apply(r.Context(), fsm.SchedulerSetConfigRequestType, req)
	if err != nil {
		return nil, err
	}
	updated, _ := resp.(bool)
	w.Header().Set("X-Nomad-Index", strconv.FormatUint(index, 10))
	return SchedulerSetConfigurationResponse{Updated: updated, Index: index}, nil
}

// registrationAllowed refuses a job registration, dispatch or scaling
// while the scheduler configuration rejects them (RejectJobRegistration),
// unless the caller holds a management token; with ACLs off every caller
// is management, as Nomad's.
func (s *Server) registrationAllowed(r *http.Request) error {
	z := authzOf(r)
	if !z.enabled || z.acl.IsManagement() {
		return nil
	}
	c, err := s.backend.State().Snapshot().SchedulerConfig()
	if err != nil || c == nil || !c.RejectJobRegistration {
		return err
	}
	return Errorf(http.StatusForbidden, "%s", structs.ErrJobRegistrationDisabled)
}

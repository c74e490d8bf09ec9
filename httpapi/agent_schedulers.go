package httpapi

import (
	"errors"
	"net/http"
	"time"

	"github.com/droverhq/drover/server"
)

// This server's scheduler workers, as Nomad's:
//
//	GET      /v1/agent/schedulers         each worker: its ID, enabled
//	                                      schedulers, start, status and
//	                                      workload status (agent:read)
//	GET      /v1/agent/schedulers/config  the pool: num_schedulers and
//	                                      enabled_schedulers (agent:read)
//	PUT|POST /v1/agent/schedulers/config  resize the pool (agent:write); 0 to
//	                                      the CPUs' count, "_core" enabled, the
//	                                      built-in types only, else 400
//	                                      "Invalid request"
//
// The pool is this server's own (server/workers.go says how it is resized
// while the server leads). An agent that runs no server answers 400, as
// Nomad's ("Server only endpoint").

func init() {
	register(
		route{"GET /v1/agent/schedulers", localRoute, agentRead, (*Server).agentSchedulers},
		route{"GET /v1/agent/schedulers/config", localRoute, agentRead, (*Server).agentSchedulersConfig},
		route{"PUT /v1/agent/schedulers/config", localRoute, agentWrite, (*Server).agentSchedulersSetConfig},
		route{"POST /v1/agent/schedulers/config", localRoute, agentWrite, (*Server).agentSchedulersSetConfig},
	)
}

// SchedulerWorkersBackend serves the worker pool endpoints.
type SchedulerWorkersBackend interface {
	SchedulerWorkerConfig() server.WorkerPoolConfig
	SetSchedulerWorkerConfig(c server.WorkerPoolConfig) (server.WorkerPoolConfig, error)
	SchedulerWorkersInfo() []server.WorkerInfo
	// ServerName is this server's member name ("node-1.global").
	ServerName() string
}

// AgentSchedulerWorkerConfig is Nomad's request and answer
// (api.AgentSchedulerWorkerConfigRequest and …Response).
type AgentSchedulerWorkerConfig struct {
	ServerID          string   `json:"server_id,omitempty"`
	NumSchedulers     int      `json:"num_schedulers"`
	EnabledSchedulers []string `json:"enabled_schedulers"`
}

// AgentSchedulerWorkersInfo is Nomad's api.AgentSchedulerWorkersInfo.
type AgentSchedulerWorkersInfo struct {
	ServerID   string                     `json:"server_id"`
	Schedulers []AgentSchedulerWorkerInfo `json:"schedulers"`
}

// AgentSchedulerWorkerInfo is Nomad's api.AgentSchedulerWorkerInfo.
type AgentSchedulerWorkerInfo struct {
	ID                string   `json:"id"`
	EnabledSchedulers []string `json:"enabled_schedulers"`
	Started           string   `json:"started"`
	Status            string   `json:"status"`
	WorkloadStatus    string   `json:"workload_status"`
}

func (s *Server) workersBackend() (SchedulerWorkersBackend, error) {
	b, ok := s.backend.(SchedulerWorkersBackend)
	if !ok {
		return nil, Errorf(http.StatusBadRequest, "Server only endpoint")
	}
	return b, nil
}

func (s *Server) agentSchedulers(_ http.ResponseWriter, _ *http.Request) (any, error) {
	b, err := s.workersBackend()
	if err != nil {
		return nil, err
	}
	out := AgentSchedulerWorkersInfo{ServerID: b.ServerName(), Schedulers: []AgentSchedulerWorkerInfo{}}
	for _, w := range b.SchedulerWorkersInfo() {
		started := ""
		if !w.Started.IsZero() {
			started = w.Started.UTC().Format(time.RFC3339Nano)
		}
		out.Schedulers = append(out.Schedulers, AgentSchedulerWorkerInfo{
			ID: w.ID, EnabledSchedulers: w.EnabledSchedulers, Started: started, Status: w.Status, WorkloadStatus: w.WorkloadStatus,
		})
	}
	return out, nil
}

func (s *Server) agentSchedulersConfig(_ http.ResponseWriter, _ *http.Request) (any, error) {
	b, err := s.workersBackend()
	if err != nil {
		return nil, err
	}
	c := b.SchedulerWorkerConfig()
	return AgentSchedulerWorkerConfig{ServerID: b.ServerName(), NumSchedulers: c.NumSchedulers, EnabledSchedulers: c.EnabledSchedulers}, nil
}

func (s *Server) agentSchedulersSetConfig(_ http.ResponseWriter, r *http.Request) (any, error) {
	b, err := s.workersBackend()
	if err != nil {
		return nil, err
	}
	var in AgentSchedulerWorkerConfig
	if err := decodeBody(r, &in); err != nil {
		if statusFor(err) == http.StatusRequestEntityTooLarge {
			return nil, err
		}
		return nil, Errorf(http.StatusBadRequest, "Invalid request: %v", err)
	}
	// The server_id of the body is ignored, as Nomad's: a GET's answer
	// can be sent back as it is.
	c, err := b.SetSchedulerWorkerConfig(server.WorkerPoolConfig{NumSchedulers: in.NumSchedulers, EnabledSchedulers: in.EnabledSchedulers})
	if errors.Is(err, server.ErrInvalidWorkerPool) {
		// Nomad's bare text, which its clients check; the rules are in
		// the comment at the top and the API docs.
		s.logger.Debug("scheduler worker pool refused", "error", err)
		return nil, Errorf(http.StatusBadRequest, "Invalid request")
	}
	if err != nil {
		return nil, err
	}
	return AgentSchedulerWorkerConfig{ServerID: b.ServerName(), NumSchedulers: c.NumSchedulers, EnabledSchedulers: c.EnabledSchedulers}, nil
}

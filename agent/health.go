package agent

import (
	"encoding/json"
	"net/http"

	"github.com/droverhq/drover/cluster"
)

// healthPart is one role's part of Nomad's agent health answer.
type healthPart struct {
	Ok      bool   `json:"ok"`
	Message string `json:"message"`
}

// health answers GET /v1/agent/health in Nomad's shape, with a part per
// role this agent runs: "server" is ok when a leader is known, "client"
// once its node is registered with the servers. 200 when every part is ok,
// 500 otherwise — so that load balancers and orchestrators can probe any
// agent, client-only ones included.
func (a *Agent) health(w http.ResponseWriter, _ *http.Request) {
	out := map[string]healthPart{}
	code := http.StatusOK
	if a.raft != nil {
		p := healthPart{Ok: true, Message: "ok"}
		if addr, _ := a.raft.Leader(); addr == "" {
			p = healthPart{Ok: false, Message: cluster.ErrNoLeader.Error()}
			code = http.StatusInternalServerError
		}
		out["server"] = p
	}
	if a.client != nil {
		p := healthPart{Ok: true, Message: "ok"}
		if !a.client.Registered() {
			p = healthPart{Ok: false, Message: "the node is not registered with the servers yet"}
			code = http.StatusInternalServerError
		}
		out["client"] = p
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(out)
}

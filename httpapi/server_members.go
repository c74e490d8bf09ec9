package httpapi

import (
	"context"
	"net"
	"net/http"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/droverhq/drover/structs"
)

// GET /v1/agent/members lists the servers this agent knows, in Nomad's
// shape (structs.ServerMembers): the members it has heard of through
// joins, and the servers of the Raft configuration. Drover has no gossip:
// each member's status comes from a short probe of its HTTP API (alive
// when it answers, failed when it does not); a Raft server whose HTTP
// address this agent has not learnt is listed with status "unknown".

func init() {
	register(route{"GET /v1/agent/members", localRoute, nodeRead, (*Server).agentMembers})
}

// memberProbeTimeout bounds one member's probe.
const memberProbeTimeout = time.Second

// memberStatusUnknown: a Raft server whose HTTP address is not known here.
const memberStatusUnknown = "unknown"

func (s *Server) agentMembers(_ http.ResponseWriter, r *http.Request) (any, error) {
	self := s.backend.Self()
	known := []structs.ServerMember{self.Member}
	if mb, ok := s.backend.(ServerMembersBackend); ok {
		known = mb.KnownServers()
	}
	cfg, err := s.backend.RaftConfiguration()
	if err != nil {
		return nil, err
	}
	inRaft := map[string]bool{}
	for _, p := range cfg.Servers {
		inRaft[p.ID] = true
	}
	region := self.Config.Region
	out := &structs.ServerMembers{
		ServerName: memberName(self.Config.NodeName, region), ServerRegion: region,
		ServerDC: self.Config.Datacenter, Members: []*structs.AgentMember{},
	}
	seen := map[string]bool{}
	for _, m := range known {
		if m.ID == "" || seen[m.ID] {
			continue
		}
		seen[m.ID] = true
		out.Members = append(out.Members, memberOf(m, inRaft[m.ID]))
	}
	s.forcedOutMembers(r, out, seen)
	for _, p := range cfg.Servers {
		if seen[p.ID] {
			continue
		}
		host, port, _ := net.SplitHostPort(p.Address)
		out.Members = append(out.Members, &structs.AgentMember{
			Name: memberName(p.Node, region), Addr: host, Status: memberStatusUnknown,
			Tags: map[string]string{"role": "nomad", "id": p.ID, "region": region, "port": port, "rpc_addr": host, "raft_vsn": p.RaftProtocol},
		})
	}
	s.probeMembers(r.Context(), self.Member.ID, known, out.Members)
	// This server first, then the others by name: a client that joins a
	// server finds it after this one, as Nomad's tests read the list.
	selfName := memberName(self.Member.Name, self.Member.Region)
	sort.SliceStable(out.Members, func(i, j int) bool {
		a, b := out.Members[i].Name, out.Members[j].Name
		if (a == selfName) != (b == selfName) {
			return a == selfName
		}
		return a < b
	})
	return out, nil
}

func memberName(node, region string) string {
	if region == "" {
		return node
	}
	return node + "." + region
}

// memberOf describes a known server; its status is filled in by the probe.
func memberOf(m structs.ServerMember, voter bool) *structs.AgentMember {
	host, port, _ := net.SplitHostPort(m.HTTPAddr)
	p, _ := strconv.ParseUint(port, 10, 16)
	raftHost, raftPort, _ := net.SplitHostPort(m.RaftAddr)
	tags := map[string]string{
		"role": "nomad", "id": m.ID, "region": m.Region, "dc": m.Datacenter, "build": m.Version,
		"port": raftPort, "rpc_addr": raftHost, "http_addr": m.HTTPAddr,
	}
	if voter {
		tags["raft_vsn"] = "3"
	}
	return &structs.AgentMember{Name: memberName(m.Name, m.Region), Addr: host, Port: uint16(p), Tags: tags}
}

// probeMembers sets each known member's status: this agent is alive; the
// others are alive when their HTTP API answers within memberProbeTimeout.
func (s *Server) probeMembers(ctx context.Context, selfID string, known []structs.ServerMember, members []*structs.AgentMember) {
	addrs := map[string]string{}
	for _, m := range known {
		addrs[m.ID] = m.HTTPAddr
	}
	client := s.probeClient()
	var wg sync.WaitGroup
	for _, am := range members {
		id := am.Tags["id"]
		switch {
		case am.Status != "":
			continue
		case id == selfID:
			am.Status = structs.MemberStatusAlive
			continue
		}
		am.Status = structs.MemberStatusFailed
		wg.Add(1)
		go func() {
			defer wg.Done()
			client := client
			if r := am.Tags["region"]; r != "" && r != s.localRegion() {
				// A server of a federated region (regions.go).
				client = s.probeClientFor(r)
			}
			if probe(ctx, client, s.agentScheme(), addrs[id]) {
				am.Status = structs.MemberStatusAlive
			}
		}()
	}
	wg.Wait()
}

// probe reports whether a server's HTTP API answers.
func probe(ctx context.Context, client *http.Client, scheme, addr string) bool {
	if addr == "" {
		return false
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, scheme+"://"+addr+"/v1/status/leader", nil)
	if err != nil {
		return false
	}
	resp, err := client.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

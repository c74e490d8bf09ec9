package scheduler

import (
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/droverhq/drover/structs"
)

// Port failure reasons, as keys of AllocationMetric.DimensionExhausted.
const (
	dimPortCollision = "network: reserved port collision"
	dimDynamicPorts  = "network: dynamic port selection failed"
)

// portSet is the host ports taken on one node, each with the number of
// holders (the node's reservation and live allocs). Counting holders makes
// taking and freeing ports commute: freeing one holder's port leaves it
// taken while another holder (or the node's reservation) still has it, and
// the set depends only on which allocs are live, not on the order they
// were added and removed in.
type portSet map[int]int

func (s portSet) has(p int) bool { return s[p] > 0 }

// take records one more holder of port p.
func (s portSet) take(p int) { s[p]++ }

// free drops one holder of port p.
func (s portSet) free(p int) {
	if n := s[p]; n > 1 {
		s[p] = n - 1
	} else {
		delete(s, p)
	}
}

// parsePortSpec reads a reserved-ports list such as "22,80,8000-8010";
// malformed parts are skipped.
func parsePortSpec(spec string, into portSet) {
	for _, part := range strings.Split(spec, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(strings.TrimSpace(lo))
		if err != nil {
			continue
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(strings.TrimSpace(hi)); err != nil || b < a || b-a > 65535 {
				continue
			}
		}
		for p := a; p <= b; p++ {
			into[p] = 1
		}
	}
}

// assignPorts picks the group's host ports on a node: static ports must be
// free; dynamic ports are drawn from the node's range. It returns the
// mappings and assigned networks, or the exhausted dimension.
func assignPorts(nets []*structs.NetworkResource, ns *nodeState, rng *rand.Rand) ([]structs.PortMapping, []*structs.NetworkResource, string) {
	if len(nets) == 0 {
		return nil, nil, ""
	}
	taken := map[int]bool{}
	var maps []structs.PortMapping
	out := make([]*structs.NetworkResource, 0, len(nets))
	for _, n := range nets {
		if n == nil {
			continue
		}
		c := n.Copy()
		for _, p := range c.ReservedPorts {
			if p.Value <= 0 {
				continue
			}
			if ns.portTaken(p.Value) || taken[p.Value] {
				return nil, nil, dimPortCollision
			}
			taken[p.Value] = true
			maps = append(maps, structs.PortMapping{Label: p.Label, Value: p.Value, To: p.To, HostIP: ns.hostIP()})
		}
		out = append(out, c)
	}
	lo, hi := ns.minPort, ns.maxPort
	span := hi - lo + 1
	for _, c := range out {
		for i := range c.DynamicPorts {
			port := 0
			for try := 0; try < 20 && span > 0; try++ {
				p := lo + rng.IntN(span)
				if !ns.portTaken(p) && !taken[p] {
					port = p
					break
				}
			}
			for p := lo; port == 0 && p <= hi; p++ {
				if !ns.portTaken(p) && !taken[p] {
					port = p
				}
			}
			if port == 0 {
				return nil, nil, dimDynamicPorts
			}
			taken[port] = true
			c.DynamicPorts[i].Value = port
			to := c.DynamicPorts[i].To
			if to == -1 {
				to = port
			}
			maps = append(maps, structs.PortMapping{Label: c.DynamicPorts[i].Label, Value: port, To: to, HostIP: ns.hostIP()})
		}
		c.IP = ns.hostIP()
	}
	return maps, out, ""
}

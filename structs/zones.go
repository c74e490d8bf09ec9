package structs

import (
	"strings"
	"time"
)

// Zones: an update block's zones block (zone-by-zone rollouts, as Google
// Cloud's patch rollouts; batches that never cross a fault domain, as
// Azure's), and a deployment's record of each zone's progress.

// Zone modes and the default order.
const (
	ZoneModeByZone       = "zone_by_zone"
	ZoneModeConcurrent   = "concurrent"
	ZoneOrderFewestFirst = "fewest_first"
)

// Zone states, in a deployment's TaskGroups.<group>.Zones.
const (
	ZoneStateWaiting = "waiting"
	ZoneStateRolling = "rolling"
	ZoneStatePaused  = "paused"
	ZoneStateDone    = "done"
	ZoneStateFailed  = "failed"
)

// ZoneStrategy is an update block's zones block.
type ZoneStrategy struct {
	// Attribute names a node's zone: any of Nomad's node interpolations,
	// several in one string ("${meta.zone}/${meta.fault_domain}").
	Attribute string
	// Mode is "zone_by_zone" (one zone at a time) or "concurrent".
	Mode string
	// Order lists zone names to roll first; zones it does not name follow
	// fewest first (fewest allocs, ties by name). Empty: fewest first.
	Order []string
	// DisruptionBudget: at most this many allocs of a zone replaced and
	// not yet healthy, counting every new alloc that failed there during
	// the deployment; a share is of the zone's allocs, rounded up. Nil:
	// no budget.
	DisruptionBudget *Amount
	// PauseBetweenZones is the pause after a zone is done before the next
	// one starts (zone_by_zone).
	PauseBetweenZones time.Duration
	// SuccessThreshold: the next zone may start once this share of the
	// current one is new and healthy (zone_by_zone; nil: 100%).
	SuccessThreshold *Amount
}

// Copy returns a deep copy.
func (z *ZoneStrategy) Copy() *ZoneStrategy {
	if z == nil {
		return nil
	}
	c := *z
	c.Order = copySlice(z.Order)
	c.DisruptionBudget = copyAmount(z.DisruptionBudget)
	c.SuccessThreshold = copyAmount(z.SuccessThreshold)
	return &c
}

// ByZone reports whether zones roll one at a time.
func (z *ZoneStrategy) ByZone() bool { return z != nil && z.Mode != ZoneModeConcurrent }

// BudgetFor is the disruption budget of a zone of size allocs (a share
// rounds up); ok is false without a budget.
func (z *ZoneStrategy) BudgetFor(size int) (n int, ok bool) {
	if z == nil || z.DisruptionBudget == nil {
		return 0, false
	}
	return z.DisruptionBudget.Of(size, true), true
}

// ThresholdFor is how many allocs of a zone of size allocs must be new and
// healthy before the next zone starts (a share rounds up, at least 1; the
// whole zone when not set).
func (z *ZoneStrategy) ThresholdFor(size int) int {
	if z == nil || z.SuccessThreshold == nil {
		return size
	}
	return min(size, max(1, z.SuccessThreshold.Of(size, true)))
}

// ZoneOf returns node n's zone under attribute: the attribute with each
// ${...} replaced by the node's value. A node that lacks any part is in
// the zone "" (rolled last).
func ZoneOf(n *Node, attribute string) string {
	if n == nil {
		return ""
	}
	var b strings.Builder
	rest := attribute
	for {
		i := strings.Index(rest, "${")
		if i < 0 {
			b.WriteString(rest)
			return b.String()
		}
		j := strings.Index(rest[i:], "}")
		if j < 0 {
			b.WriteString(rest)
			return b.String()
		}
		b.WriteString(rest[:i])
		v, ok := NodeValue(n, rest[i+2:i+j])
		if !ok {
			return ""
		}
		b.WriteString(v)
		rest = rest[i+j+1:]
	}
}

// NodeValue returns the value of one of Nomad's node interpolation keys
// (without "${" and "}"): node.datacenter, node.class, node.pool,
// node.unique.name, node.unique.id, attr.K, meta.K and node.meta.K.
func NodeValue(n *Node, key string) (string, bool) {
	switch key {
	case "node.datacenter":
		return n.Datacenter, true
	case "node.class":
		return n.NodeClass, true
	case "node.unique.name":
		return n.Name, true
	case "node.unique.id":
		return n.ID, true
	case "node.pool":
		if n.NodePool == "" {
			return DefaultNodePool, true
		}
		return n.NodePool, true
	}
	if k, ok := strings.CutPrefix(key, "attr."); ok {
		v, found := n.Attributes[k]
		return v, found
	}
	if k, ok := strings.CutPrefix(key, "node.meta."); ok {
		v, found := n.Meta[k]
		return v, found
	}
	if k, ok := strings.CutPrefix(key, "meta."); ok {
		v, found := n.Meta[k]
		return v, found
	}
	return "", false
}

// ZoneState is one zone of a group in a deployment, in rollout order.
// Name, Size and State are replicated decisions; Healthy, InFlight and
// Failed are figures of the zone's allocs.
type ZoneState struct {
	Name string
	// Size is the group's allocs in the zone when the deployment started.
	Size int
	// Healthy counts new allocs of the zone that are healthy; InFlight
	// those placed and not yet healthy nor failed.
	Healthy  int
	InFlight int
	// Failed counts new allocs that failed in the zone during the
	// deployment (they keep counting against its disruption budget); a
	// resume after the zone's budget was reached clears it.
	Failed int
	// State is "waiting", "rolling", "paused", "done" or "failed".
	State string
	// DoneAt is when the zone reached its success threshold, from which
	// pause_between_zones is counted; zero before.
	DoneAt time.Time `json:",omitzero"`
}

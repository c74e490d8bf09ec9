package structs

import (
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"time"
)

// Node pools, as Nomad's: a node belongs to one pool (its client's
// node_pool, "default" when unset) and a job is placed only on the nodes
// of its pool ("all": every node). The two built-in pools always exist and
// cannot be changed or deleted.
const (
	NodePoolAll                = "all"
	NodePoolAllDescription     = "Node pool with all nodes in the cluster."
	NodePoolDefault            = DefaultNodePool
	NodePoolDefaultDescription = "Default node pool."

	// MaxNodePoolDescriptionLength bounds a pool's description, as Nomad's.
	MaxNodePoolDescriptionLength = 256

	// DefaultNodePoolNodeIdentityTTL is a pool's NodeIdentityTTL when its
	// specification sets none, as Nomad's.
	DefaultNodePoolNodeIdentityTTL = 24 * time.Hour
)

// validNodePoolName is Nomad's rule for a node pool's name.
var validNodePoolName = regexp.MustCompile("^[a-zA-Z0-9-_]{1,128}$")

// ValidateNodePoolName returns Nomad's error for an invalid pool name.
func ValidateNodePoolName(name string) error {
	if !validNodePoolName.MatchString(name) {
		return fmt.Errorf("invalid name %q, must match regex %s", name, validNodePoolName)
	}
	return nil
}

// IsBuiltInNodePool reports whether name is "all" or "default".
func IsBuiltInNodePool(name string) bool {
	return name == NodePoolAll || name == NodePoolDefault
}

// NodePool is Nomad's node pool (api.NodePool).
type NodePool struct {
	Name        string
	Description string
	Meta        map[string]string
	// SchedulerConfiguration is stored and shown; drover's scheduler has
	// one algorithm and no memory oversubscription, so it changes nothing
	// (website/nomad-compatibility.md).
	SchedulerConfiguration *NodePoolSchedulerConfiguration
	// NodeIdentityTTL is stored and shown, as Nomad's (24h when unset).
	NodeIdentityTTL time.Duration

	CreateIndex uint64
	ModifyIndex uint64
}

// NodePoolSchedulerConfiguration is a pool's scheduler_config block.
type NodePoolSchedulerConfiguration struct {
	SchedulerAlgorithm            string `json:",omitempty"`
	MemoryOversubscriptionEnabled *bool  `json:",omitempty"`
}

// Scheduler algorithms a pool may name, as Nomad's.
const (
	SchedulerAlgorithmBinpack = "binpack"
	SchedulerAlgorithmSpread  = "spread"
)

// BuiltInNodePools returns the two built-in pools, "all" then "default",
// as the store shows them (index 1, as Nomad's).
func BuiltInNodePools() []*NodePool {
	return []*NodePool{
		{Name: NodePoolAll, Description: NodePoolAllDescription, NodeIdentityTTL: DefaultNodePoolNodeIdentityTTL, CreateIndex: 1, ModifyIndex: 1},
		{Name: NodePoolDefault, Description: NodePoolDefaultDescription, NodeIdentityTTL: DefaultNodePoolNodeIdentityTTL, CreateIndex: 1, ModifyIndex: 1},
	}
}

// Canonicalize sets Nomad's defaults: a NodeIdentityTTL of 24h.
func (p *NodePool) Canonicalize() {
	if p != nil && p.NodeIdentityTTL == 0 {
		p.NodeIdentityTTL = DefaultNodePoolNodeIdentityTTL
	}
}

// Validate returns the first problem of p, naming the field, in Nomad's
// words where Nomad has them.
func (p *NodePool) Validate() error {
	if err := ValidateNodePoolName(p.Name); err != nil {
		return err
	}
	if len(p.Description) > MaxNodePoolDescriptionLength {
		return fmt.Errorf("description longer than %d", MaxNodePoolDescriptionLength)
	}
	if p.NodeIdentityTTL < 0 {
		return fmt.Errorf("node_identity_ttl must not be negative, got %s", p.NodeIdentityTTL)
	}
	if sc := p.SchedulerConfiguration; sc != nil {
		switch sc.SchedulerAlgorithm {
		case "", SchedulerAlgorithmBinpack, SchedulerAlgorithmSpread:
		default:
			return fmt.Errorf("invalid scheduler_config.scheduler_algorithm %q: want %q or %q",
				sc.SchedulerAlgorithm, SchedulerAlgorithmBinpack, SchedulerAlgorithmSpread)
		}
	}
	return nil
}

// Copy returns a deep copy of p.
func (p *NodePool) Copy() *NodePool {
	if p == nil {
		return nil
	}
	c := *p
	c.Meta = maps.Clone(p.Meta)
	if sc := p.SchedulerConfiguration; sc != nil {
		scc := *sc
		if sc.MemoryOversubscriptionEnabled != nil {
			v := *sc.MemoryOversubscriptionEnabled
			scc.MemoryOversubscriptionEnabled = &v
		}
		c.SchedulerConfiguration = &scc
	}
	return &c
}

// UnmarshalJSON reads NodeIdentityTTL as Nomad's does: a duration string
// ("720h") or a number of nanoseconds.
func (p *NodePool) UnmarshalJSON(data []byte) error {
	type plain NodePool
	aux := &struct {
		NodeIdentityTTL any
		*plain
	}{plain: (*plain)(p)}
	if err := json.Unmarshal(data, aux); err != nil {
		return err
	}
	switch v := aux.NodeIdentityTTL.(type) {
	case nil:
	case string:
		if v != "" {
			d, err := time.ParseDuration(v)
			if err != nil {
				return fmt.Errorf("invalid NodeIdentityTTL %q: %w", v, err)
			}
			p.NodeIdentityTTL = d
		}
	case float64:
		p.NodeIdentityTTL = time.Duration(v)
	default:
		return fmt.Errorf("invalid NodeIdentityTTL: want a duration")
	}
	return nil
}

// NodePoolUpsertRequest creates or replaces node pools (fsm
// NodePoolUpsert). Every pool is validated and none is built in.
type NodePoolUpsertRequest struct {
	NodePools []*NodePool
}

// NodePoolDeleteRequest deletes node pools by name (fsm NodePoolDelete).
type NodePoolDeleteRequest struct {
	Names []string
	// Region is the cluster's, which the refusal of a pool in use names.
	Region string
}

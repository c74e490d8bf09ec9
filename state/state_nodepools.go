package state

import (
	"fmt"
	"sort"
	"strings"

	"github.com/droverhq/drover/structs"
)

// Node pools. The table holds the pools users created (and those a node
// registering in an unknown pool created); the two built-in pools, "all"
// and "default", are never stored: every read shows them (index 1, as
// Nomad's), and no write may change or delete them. A store from a build
// without the table therefore comes up with the built-ins, and Restorer
// adds the pools its nodes name (deriveNodePools).

// NodePools returns every pool, the built-ins included, by name.
func (s *Snapshot) NodePools() ([]*structs.NodePool, error) {
	stored, err := list[*structs.NodePool](s, TableNodePools, "id")
	if err != nil {
		return nil, err
	}
	out := append(structs.BuiltInNodePools(), stored...)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// NodePoolsByPrefix returns the pools whose name starts with prefix, by
// name.
func (s *Snapshot) NodePoolsByPrefix(prefix string) ([]*structs.NodePool, error) {
	all, err := s.NodePools()
	if err != nil {
		return nil, err
	}
	out := all[:0]
	for _, p := range all {
		if strings.HasPrefix(p.Name, prefix) {
			out = append(out, p)
		}
	}
	return out, nil
}

// NodePoolByName returns the pool, or nil when there is none.
func (s *Snapshot) NodePoolByName(name string) (*structs.NodePool, error) {
	if structs.IsBuiltInNodePool(name) {
		for _, p := range structs.BuiltInNodePools() {
			if p.Name == name {
				return p, nil
			}
		}
	}
	return getOne[*structs.NodePool](s, TableNodePools, "id", name)
}

// NodesInPool returns the nodes of pool ("all": every node; a node that
// names no pool is in "default"), by ID.
func (s *Snapshot) NodesInPool(pool string) ([]*structs.Node, error) {
	nodes, err := s.Nodes()
	if err != nil || pool == structs.NodePoolAll {
		return nodes, err
	}
	out := nodes[:0:0]
	for _, n := range nodes {
		if NodePoolOfNode(n) == pool {
			out = append(out, n)
		}
	}
	return out, nil
}

// NodePoolOfNode returns the pool a node is in: its NodePool, or "default".
func NodePoolOfNode(n *structs.Node) string {
	if n.NodePool == "" {
		return structs.NodePoolDefault
	}
	return n.NodePool
}

// NodePoolOfJob returns the pool a job is placed in: its NodePool, or
// "default".
func NodePoolOfJob(j *structs.Job) string {
	if j.NodePool == "" {
		return structs.NodePoolDefault
	}
	return j.NodePool
}

// UpsertNodePools creates or replaces pools; see UpsertNodePoolsTxn.
func (s *Store) UpsertNodePools(index uint64, req *structs.NodePoolUpsertRequest) error {
	return s.update(index, func(t *WriteTxn) error { return s.UpsertNodePoolsTxn(t, req) })
}

// UpsertNodePoolsTxn creates or replaces each pool of req inside t: a
// replaced pool keeps its CreateIndex. A built-in pool, an invalid one
// (structs.NodePool.Validate) or none at all is ErrInvalid and nothing is
// written.
func (s *Store) UpsertNodePoolsTxn(t *WriteTxn, req *structs.NodePoolUpsertRequest) error {
	if req == nil || len(req.NodePools) == 0 {
		return fmt.Errorf("state: must specify at least one node pool: %w", ErrInvalid)
	}
	for _, p := range req.NodePools {
		if p == nil {
			return fmt.Errorf("state: missing node pool: %w", ErrInvalid)
		}
		if structs.IsBuiltInNodePool(p.Name) {
			return fmt.Errorf("modifying node pool %q is not allowed: %w", p.Name, ErrInvalid)
		}
		if err := p.Validate(); err != nil {
			return fmt.Errorf("invalid node pool %q: %v: %w", p.Name, err, ErrInvalid)
		}
		if err := t.putNodePool(p); err != nil {
			return err
		}
	}
	return nil
}

// putNodePool stores a copy of p at the transaction's index, keeping the
// stored pool's CreateIndex.
func (t *WriteTxn) putNodePool(p *structs.NodePool) error {
	old, err := getOne[*structs.NodePool](t.reader(), TableNodePools, "id", p.Name)
	if err != nil {
		return err
	}
	c := p.Copy()
	c.Canonicalize()
	c.CreateIndex, c.ModifyIndex = t.index, t.index
	if old != nil {
		c.CreateIndex = old.CreateIndex
	}
	return t.insert(TableNodePools, c)
}

// ensureNodePool creates pool, with nothing set but its name, when it does
// not exist: a node registering in an unknown pool creates it, as Nomad's.
func (t *WriteTxn) ensureNodePool(pool string) error {
	if pool == "" || structs.IsBuiltInNodePool(pool) || structs.ValidateNodePoolName(pool) != nil {
		return nil // the servers refuse such a node; an older log may hold one
	}
	if old, err := getOne[*structs.NodePool](t.reader(), TableNodePools, "id", pool); err != nil || old != nil {
		return err
	}
	return t.putNodePool(&structs.NodePool{Name: pool})
}

// DeleteNodePools deletes pools; see DeleteNodePoolsTxn.
func (s *Store) DeleteNodePools(index uint64, req *structs.NodePoolDeleteRequest) error {
	return s.update(index, func(t *WriteTxn) error { return s.DeleteNodePoolsTxn(t, req) })
}

// DeleteNodePoolsTxn deletes each pool of req inside t, as Nomad's: a
// built-in pool is ErrInvalid, an unknown one ErrNotFound, one that nodes
// or jobs that are not dead use ErrConflict; then nothing is deleted.
func (s *Store) DeleteNodePoolsTxn(t *WriteTxn, req *structs.NodePoolDeleteRequest) error {
	if req == nil || len(req.Names) == 0 {
		return fmt.Errorf("state: must specify at least one node pool to delete: %w", ErrInvalid)
	}
	for _, name := range req.Names {
		if name == "" {
			return fmt.Errorf("node pool name is empty: %w", ErrInvalid)
		}
		if structs.IsBuiltInNodePool(name) {
			return fmt.Errorf("deleting node pool %q is not allowed: %w", name, ErrInvalid)
		}
		old, err := getOne[*structs.NodePool](t.reader(), TableNodePools, "id", name)
		if err != nil {
			return err
		}
		if old == nil {
			return fmt.Errorf("node pool %s not found: %w", name, ErrNotFound)
		}
		if err := t.reader().NodePoolInUse(name, req.Region); err != nil {
			return fmt.Errorf("%w: %w", err, ErrConflict)
		}
		if err := t.delete(TableNodePools, old); err != nil {
			return err
		}
	}
	return nil
}

// NodePoolInUse returns Nomad's error when nodes or jobs that are not
// dead are in pool, nil otherwise; region is the cluster's ("": global),
// which the error names.
func (s *Snapshot) NodePoolInUse(pool, region string) error {
	if region == "" {
		region = structs.DefaultRegion
	}
	nodes, err := s.NodesInPool(pool)
	if err != nil {
		return err
	}
	jobs, err := s.Jobs()
	if err != nil {
		return err
	}
	var msgs []string
	for _, j := range jobs {
		if NodePoolOfJob(j) == pool && j.Status != structs.JobStatusDead {
			msgs = append(msgs, fmt.Sprintf("node pool %q has non-terminal jobs in regions: [%s]", pool, region))
			break
		}
	}
	if len(nodes) > 0 {
		msgs = append(msgs, fmt.Sprintf("node pool %q has nodes in regions: [%s]", pool, region))
	}
	if len(msgs) == 0 {
		return nil
	}
	head := "1 error occurred:"
	if len(msgs) > 1 {
		head = fmt.Sprintf("%d errors occurred:", len(msgs))
	}
	return fmt.Errorf("%s\n\t* %s", head, strings.Join(msgs, "\n\t* "))
}

// deriveNodePools stores a pool for each pool the restored nodes name that
// is neither built in nor restored (a snapshot written before the store
// kept pools), created at the index of the first node that names it.
func (r *Restorer) deriveNodePools() error {
	nodes, err := r.txn.reader().Nodes()
	if err != nil {
		return err
	}
	sort.SliceStable(nodes, func(i, j int) bool { return nodes[i].CreateIndex < nodes[j].CreateIndex })
	for _, n := range nodes {
		pool := NodePoolOfNode(n)
		if structs.IsBuiltInNodePool(pool) || structs.ValidateNodePoolName(pool) != nil {
			continue
		}
		old, err := getOne[*structs.NodePool](r.txn.reader(), TableNodePools, "id", pool)
		if err != nil {
			return err
		}
		if old != nil {
			continue
		}
		p := &structs.NodePool{Name: pool, CreateIndex: n.CreateIndex, ModifyIndex: n.CreateIndex}
		p.Canonicalize()
		if err := r.txn.txn.Insert(TableNodePools, p); err != nil {
			return fmt.Errorf("state: restore into %s: %w", TableNodePools, err)
		}
	}
	return nil
}

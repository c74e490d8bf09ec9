package state

import (
	"fmt"
	"sort"
	"strings"

	"github.com/droverhq/drover/structs"
)

// Namespaces are stored objects (the namespaces table). Every store
// starts with "default" at index 1, as Nomad's (insertDefaultNamespace):
// every server builds the same row, and a restored snapshot's row
// replaces it.
//
// The table keeps every namespace an object names. A store upgraded from
// a build without the table gets them from two places, so that a cluster
// upgraded in place loses none:
//
//   - a snapshot restored without namespace rows (written by that build)
//     gets a row for every namespace its jobs, variables and services
//     name, each created at the lowest index of those objects
//     (Restorer.Commit);
//   - a job registration or a variable write applied in a namespace
//     without a row (an entry of that build's log, replayed after the
//     restore; or one that raced the namespace's deletion) creates the
//     row at its own index (ensureNamespace).
//
// The HTTP API refuses both in a namespace that does not exist, as
// Nomad's, before they reach the log.

// insertDefaultNamespace stores "default" in a new store.
func insertDefaultNamespace(s *Store) error {
	txn := s.db.Txn(true)
	if err := txn.Insert(TableNamespaces, structs.NewDefaultNamespace()); err != nil {
		txn.Abort()
		return fmt.Errorf("state: default namespace: %w", err)
	}
	txn.Commit()
	return nil
}

// NamespaceByName returns the namespace, or nil.
func (s *Snapshot) NamespaceByName(name string) (*structs.Namespace, error) {
	return getOne[*structs.Namespace](s, TableNamespaces, "id", name)
}

// Namespaces returns every namespace, by name.
func (s *Snapshot) Namespaces() ([]*structs.Namespace, error) {
	return list[*structs.Namespace](s, TableNamespaces, "id")
}

// NamespacesByPrefix returns the namespaces whose name starts with
// prefix, by name.
func (s *Snapshot) NamespacesByPrefix(prefix string) ([]*structs.Namespace, error) {
	return list[*structs.Namespace](s, TableNamespaces, "id_prefix", prefix)
}

// UpsertNamespacesTxn creates or replaces the namespaces inside t: a
// replaced one keeps its CreateIndex. Each is validated (structs.Namespace
// Validate) and its hash set; an invalid one fails the whole entry with
// ErrInvalid.
func (s *Store) UpsertNamespacesTxn(t *WriteTxn, req *structs.NamespaceUpsertRequest) error {
	if req == nil || len(req.Namespaces) == 0 {
		return fmt.Errorf("state: must specify at least one namespace: %w", ErrInvalid)
	}
	for _, ns := range req.Namespaces {
		if ns == nil {
			return fmt.Errorf("state: a nil namespace: %w", ErrInvalid)
		}
		if err := ns.Validate(); err != nil {
			return fmt.Errorf("state: Invalid namespace %q: %v: %w", ns.Name, err, ErrInvalid)
		}
		c := ns.Copy()
		c.SetHash()
		c.CreateIndex, c.ModifyIndex = t.index, t.index
		old, err := t.reader().NamespaceByName(c.Name)
		if err != nil {
			return err
		}
		if old != nil {
			c.CreateIndex = old.CreateIndex
		}
		if err := t.insert(TableNamespaces, c); err != nil {
			return err
		}
	}
	return nil
}

// DeleteNamespacesTxn deletes the namespaces inside t, with Nomad's
// refusals (ErrInvalid): "default", an absent namespace, and one that
// still holds a job that is not dead or a variable. Nothing is deleted
// when one is refused.
func (s *Store) DeleteNamespacesTxn(t *WriteTxn, req *structs.NamespaceDeleteRequest) error {
	if req == nil || len(req.Namespaces) == 0 {
		return fmt.Errorf("state: must specify at least one namespace to delete: %w", ErrInvalid)
	}
	r := t.reader()
	for _, name := range req.Namespaces {
		if name == structs.DefaultNamespace {
			return fmt.Errorf("state: default namespace can not be deleted: %w", ErrInvalid)
		}
		ns, err := r.NamespaceByName(name)
		if err != nil {
			return err
		}
		if ns == nil {
			return fmt.Errorf("state: namespace not found: %w", ErrNotFound)
		}
		if err := NamespaceEmpty(r, name); err != nil {
			return fmt.Errorf("state: %w: %w", err, ErrInvalid)
		}
		if err := t.delete(TableNamespaces, ns); err != nil {
			return err
		}
	}
	return nil
}

// NamespaceEmpty says why namespace name cannot be deleted, in Nomad's
// words (a job that is not dead, a variable), or nil.
func NamespaceEmpty(r *Snapshot, name string) error {
	jobs, err := list[*structs.Job](r, TableJobs, "id_prefix", name, "")
	if err != nil {
		return err
	}
	for _, j := range jobs {
		if j.Namespace == name && j.Status != structs.JobStatusDead {
			return fmt.Errorf("namespace %q contains at least one non-terminal job %q. "+
				"All jobs must be terminal in namespace before it can be deleted", name, j.ID)
		}
	}
	vars, err := r.VarsByPrefix(name, "")
	if err != nil {
		return err
	}
	for _, v := range vars {
		if v.Namespace == name {
			return fmt.Errorf("namespace %q contains at least one variable. "+
				"All variables in namespace must be deleted before it can be deleted", name)
		}
	}
	return nil
}

// ensureNamespace creates namespace name inside t when it has no row
// (see the top of this file); "" is "default", which always has one.
func (t *WriteTxn) ensureNamespace(name string) error {
	if name == "" {
		return nil
	}
	ns, err := t.reader().NamespaceByName(name)
	if err != nil || ns != nil {
		return err
	}
	return t.insert(TableNamespaces, namespaceInUse(name, t.index))
}

// namespaceInUse is the row of a namespace that exists because an object
// names it.
func namespaceInUse(name string, index uint64) *structs.Namespace {
	n := &structs.Namespace{Name: name, CreateIndex: index, ModifyIndex: index}
	if name == structs.DefaultNamespace {
		n.Description = structs.DefaultNamespaceDescription
	}
	n.SetHash()
	return n
}

// deriveMissingNamespaces gives a store restored from a snapshot without
// namespace records (written by a build before them: a later build's
// always holds "default") one for every namespace its jobs, variables and
// services name, each created at the lowest index of those objects. A
// later build's snapshot is restored as it is, so that a namespace deleted
// while dead jobs remain in it stays deleted, as on the servers that
// applied the log.
func (r *Restorer) deriveMissingNamespaces() error {
	if r.namespaces {
		return nil
	}
	snap := r.txn.reader()
	first := map[string]uint64{}
	add := func(ns string, idx uint64) {
		if ns == "" || ns == structs.DefaultNamespace || strings.ContainsRune(ns, 0) {
			return
		}
		if cur, ok := first[ns]; !ok || idx < cur {
			first[ns] = idx
		}
	}
	jobs, err := snap.Jobs()
	if err != nil {
		return err
	}
	for _, j := range jobs {
		add(j.Namespace, j.CreateIndex)
	}
	vars, err := snap.VarsByPrefix("*", "")
	if err != nil {
		return err
	}
	for _, v := range vars {
		add(v.Namespace, v.CreateIndex)
	}
	regs, err := snap.ServiceRegistrations()
	if err != nil {
		return err
	}
	for _, g := range regs {
		add(g.Namespace, g.CreateIndex)
	}
	names := make([]string, 0, len(first))
	for n := range first {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if err := r.txn.txn.Insert(TableNamespaces, namespaceInUse(n, max(first[n], 1))); err != nil {
			return fmt.Errorf("state: restore namespace %q: %w", n, err)
		}
	}
	return nil
}

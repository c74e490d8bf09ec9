package state

import (
	"fmt"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/droverhq/drover/structs"
)

// Table names.
const (
	TableNodes       = "nodes"
	TableJobs        = "jobs"
	TableJobVersions = "job_versions"
	TableEvals       = "evals"
	TableAllocs      = "allocs"
	TableDeployments = "deployments"
	TableIndex       = "index"
)

// Tables lists every table in a fixed order: the order of snapshots and
// dumps.
var Tables = []string{
	TableNodes, TableJobs, TableJobVersions, TableEvals,
	TableAllocs, TableDeployments, TableIndex,
}

// IndexEntry records the raft index that last modified a table; blocking
// queries compare it with the caller's minimum index.
type IndexEntry struct {
	Key   string
	Value uint64
}

func idIndex(field string) *memdb.IndexSchema {
	return &memdb.IndexSchema{
		Name: "id", Unique: true,
		Indexer: &memdb.StringFieldIndex{Field: field},
	}
}

// nsIndex indexes Namespace plus one more string field.
func nsIndex(name, field string, unique, allowMissing bool) *memdb.IndexSchema {
	return &memdb.IndexSchema{
		Name: name, Unique: unique, AllowMissing: allowMissing,
		Indexer: &memdb.CompoundIndex{
			AllowMissing: allowMissing,
			Indexes: []memdb.Indexer{
				&memdb.StringFieldIndex{Field: "Namespace"},
				&memdb.StringFieldIndex{Field: field},
			},
		},
	}
}

func fieldIndex(name, field string) *memdb.IndexSchema {
	return &memdb.IndexSchema{
		Name: name, AllowMissing: true,
		Indexer: &memdb.StringFieldIndex{Field: field},
	}
}

// Schema returns the store's tables and indexes as data.
//
//	nodes        id
//	jobs         id (Namespace, ID)
//	job_versions id (Namespace, ID, Version), job (Namespace, ID)
//	evals        id, job (Namespace, JobID)
//	allocs       id, job (Namespace, JobID), job_run (the same, only allocs
//	             the servers have not stopped), node, deployment
//	deployments  id, job (Namespace, JobID)
//	index        id (table name)
//
// Each index entry costs about 450 bytes per allocation (radix node and
// leaf, each with a watch channel, and the key), so allocations are
// indexed only for the lookups on hot paths: by job (API, job status),
// by job without the allocs the servers stopped (scheduler, every pass: a
// rollout leaves as many stopped allocs as it places), node (clients) and
// deployment (deployment watcher, every pass). The
// allocations of an eval, read only by the HTTP API, are found through
// the eval's job (see AllocsByEval).
func Schema() *memdb.DBSchema {
	return &memdb.DBSchema{Tables: map[string]*memdb.TableSchema{
		TableNodes: {Name: TableNodes, Indexes: map[string]*memdb.IndexSchema{
			"id": idIndex("ID"),
		}},
		TableJobs: {Name: TableJobs, Indexes: map[string]*memdb.IndexSchema{
			"id": nsIndex("id", "ID", true, false),
		}},
		TableJobVersions: {Name: TableJobVersions, Indexes: map[string]*memdb.IndexSchema{
			"id": {
				Name: "id", Unique: true,
				Indexer: &memdb.CompoundIndex{Indexes: []memdb.Indexer{
					&memdb.StringFieldIndex{Field: "Namespace"},
					&memdb.StringFieldIndex{Field: "ID"},
					&memdb.UintFieldIndex{Field: "Version"},
				}},
			},
			"job": nsIndex("job", "ID", false, false),
		}},
		TableEvals: {Name: TableEvals, Indexes: map[string]*memdb.IndexSchema{
			"id":  idIndex("ID"),
			"job": nsIndex("job", "JobID", false, true),
		}},
		TableAllocs: {Name: TableAllocs, Indexes: map[string]*memdb.IndexSchema{
			"id":         idIndex("ID"),
			"job":        nsIndex("job", "JobID", false, false),
			"job_run":    desiredRunIndex(nsIndex("job_run", "JobID", false, true)),
			"node":       fieldIndex("node", "NodeID"),
			"deployment": fieldIndex("deployment", "DeploymentID"),
		}},
		TableDeployments: {Name: TableDeployments, Indexes: map[string]*memdb.IndexSchema{
			"id":  idIndex("ID"),
			"job": nsIndex("job", "JobID", false, false),
		}},
		TableIndex: {Name: TableIndex, Indexes: map[string]*memdb.IndexSchema{
			"id": idIndex("Key"),
		}},
	}}
}

// desiredRunIndex narrows an alloc index to the allocs the servers have
// not stopped (DesiredStatus neither stop nor evict); the others have no
// entry, so the index must allow missing values.
func desiredRunIndex(is *memdb.IndexSchema) *memdb.IndexSchema {
	is.AllowMissing = true
	is.Indexer = &desiredRunIndexer{is.Indexer.(*memdb.CompoundIndex)}
	return is
}

type desiredRunIndexer struct {
	*memdb.CompoundIndex
}

// FromObject implements memdb.SingleIndexer.
func (x *desiredRunIndexer) FromObject(obj any) (bool, []byte, error) {
	a, ok := obj.(*structs.Allocation)
	if !ok {
		return false, nil, fmt.Errorf("state: job_run index: %T is not an allocation", obj)
	}
	if a.DesiredStatus == structs.AllocDesiredStatusStop || a.DesiredStatus == structs.AllocDesiredStatusEvict {
		return false, nil, nil
	}
	return x.CompoundIndex.FromObject(obj)
}

package state

import (
	memdb "github.com/hashicorp/go-memdb"
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
	TableAutopilot   = "autopilot"
	TableACLPolicies = "acl_policies"
	TableACLTokens   = "acl_tokens"
	TableACLMeta     = "acl_meta"
	TableScaling     = "scaling_events"
	TablePeriodic    = "periodic_launch"
	TableVariables   = "variables"
	TableRootKeys    = "root_keys"
	TableServices    = "service_registrations"
	// TableNodePools holds the node pools users made; the built-ins are
	// not stored (state_nodepools.go).
	TableNodePools = "node_pools"
	// TableJobSummary and TableJobSummaryBasis are kept by the writes
	// (job_summary.go).
	TableJobSummary      = "job_summary"
	TableJobSummaryBasis = "job_summary_basis"
	// TableNamespaces and TableJobSubmissions: state_namespaces.go,
	// state_job_submissions.go.
	TableNamespaces     = "namespaces"
	TableJobSubmissions = "job_submissions"
	// The ACL roles, auth methods, binding rules and one-time tokens
	// (state_acl_roles.go).
	TableACLRoles         = "acl_roles"
	TableACLAuthMethods   = "acl_auth_methods"
	TableACLBindingRules  = "acl_binding_rules"
	TableACLOneTimeTokens = "acl_one_time_tokens"
)

// Tables lists every table in a fixed order: the order of snapshots and
// dumps.
var Tables = []string{
	TableNodes, TableJobs, TableJobVersions, TableEvals,
	TableAllocs, TableDeployments, TableIndex, TableAutopilot,
	TableSchedulerConfig,
	TableACLPolicies, TableACLTokens, TableACLMeta, TableScaling, TablePeriodic,
	TableVariables, TableRootKeys,
	TableServices,
	TableJobSummary, TableJobSummaryBasis,
	TableNodePools,
	TableNamespaces, TableJobSubmissions,
	TableACLRoles, TableACLAuthMethods, TableACLBindingRules, TableACLOneTimeTokens,
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
//	jobs         id (Namespace, ID), parent (Namespace, ParentID; child jobs only)
//	job_versions id (Namespace, ID, Version), job (Namespace, ID)
//	evals        id, job (Namespace, JobID, finished, CreateIndex)
//	allocs       id, job (Namespace, JobID, live), node (NodeID, live)
//	deployments  id, job (Namespace, JobID)
//	index        id (table name)
//	autopilot    id (Key; one row, the autopilot configuration)
//	scheduler_config id (Key; one row, the scheduler configuration)
//	acl_policies id (Name)
//	acl_tokens   id (AccessorID), secret (SecretHash, unique)
//	acl_meta     id (Key; one row, the ACL bootstrap's index)
//	scaling_events id (Namespace, JobID; one row per job, its groups' events)
//	periodic_launch id (Namespace, ID; a periodic job's latest launch)
//	variables    id (Namespace, Path; items sealed, see structs.VariableEncrypted)
//	root_keys    id (Meta.KeyID; the keyring, see structs.RootKey)
//	service_registrations id (an allocation's share a prefix), service
//	             (Namespace, ServiceName)
//	job_summary  id (Namespace, JobID; one row per job, kept by the writes)
//	job_summary_basis id (Namespace, JobID; what a summary derives from)
//	node_pools   id (Name; the pools users made, the built-ins not stored)
//	namespaces   id (Name)
//	job_submissions id (Namespace, JobID, Version; a job version's source)
//	acl_roles    id (ID), name (Name, unique)
//	acl_auth_methods id (Name)
//	acl_binding_rules id (ID), auth_method (AuthMethod)
//	acl_one_time_tokens id (SecretHash), accessor (AccessorID)
//
// Each index entry costs about 450 bytes per allocation (radix node and
// leaf, each with a watch channel, and the key), and every server writes
// every index of an allocation on each of its changes, so allocations are
// indexed only for the lookups on hot paths: by job (scheduler) and node
// (clients, placer). Both keys end in whether the servers still want the
// allocation to run (liveIndex), so that the scheduler reads a job's or a
// node's live allocations without walking the stopped ones; an
// evaluation's job key ends in whether it finished, and when. The allocations of an eval or of a deployment, read by the
// HTTP API, by deployment operations, and by the deployment watcher only
// while one is unhealthy, are found through their job (see AllocsByEval
// and AllocsByDeployment).
func Schema() *memdb.DBSchema {
	return &memdb.DBSchema{Tables: map[string]*memdb.TableSchema{
		TableNodes: {Name: TableNodes, Indexes: map[string]*memdb.IndexSchema{
			"id":     idIndex("ID"),
			"secret": fieldIndex("secret", "SecretHash"),
		}},
		TableJobs: {Name: TableJobs, Indexes: map[string]*memdb.IndexSchema{
			"id": nsIndex("id", "ID", true, false),
			// Only jobs with a ParentID are indexed.
			"parent": {Name: "parent", AllowMissing: true, Indexer: &memdb.CompoundIndex{
				Indexes: []memdb.Indexer{
					&memdb.StringFieldIndex{Field: "Namespace"},
					&memdb.StringFieldIndex{Field: "ParentID"},
				},
			}},
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
			"job": {Name: "job", AllowMissing: true, Indexer: jobEvalIndex()},
			// modify orders them by their last write: the leader's feeder
			// reads only those written since its last look
			// (EvalsModifiedAfter).
			"modify": {Name: "modify", Indexer: &memdb.UintFieldIndex{Field: "ModifyIndex"}},
		}},
		TableAllocs: {Name: TableAllocs, Indexes: map[string]*memdb.IndexSchema{
			"id":   idIndex("ID"),
			"job":  {Name: "job", Indexer: jobAllocIndex()},
			"node": {Name: "node", AllowMissing: true, Indexer: nodeAllocIndex()},
			// node_change: a node's allocs in the order of the servers'
			// changes (node_allocs_sync.go).
			"node_change": {Name: "node_change", AllowMissing: true, Indexer: nodeChangeIndex{}},
		}},
		TableDeployments: {Name: TableDeployments, Indexes: map[string]*memdb.IndexSchema{
			"id":  idIndex("ID"),
			"job": nsIndex("job", "JobID", false, false),
		}},
		TableIndex: {Name: TableIndex, Indexes: map[string]*memdb.IndexSchema{
			"id": idIndex("Key"),
		}},
		TableAutopilot: {Name: TableAutopilot, Indexes: map[string]*memdb.IndexSchema{
			"id": idIndex("Key"),
		}},
		TableSchedulerConfig: {Name: TableSchedulerConfig, Indexes: map[string]*memdb.IndexSchema{
			"id": idIndex("Key"),
		}},
		TableACLPolicies: {Name: TableACLPolicies, Indexes: map[string]*memdb.IndexSchema{
			"id": idIndex("Name"),
		}},
		TableACLTokens: {Name: TableACLTokens, Indexes: map[string]*memdb.IndexSchema{
			"id": idIndex("AccessorID"),
			"secret": {
				Name: "secret", Unique: true,
				Indexer: &memdb.StringFieldIndex{Field: "SecretHash"},
			},
		}},
		TableACLMeta: {Name: TableACLMeta, Indexes: map[string]*memdb.IndexSchema{
			"id": idIndex("Key"),
		}},
		TableScaling: {Name: TableScaling, Indexes: map[string]*memdb.IndexSchema{
			"id": nsIndex("id", "JobID", true, false),
		}},
		TablePeriodic: {Name: TablePeriodic, Indexes: map[string]*memdb.IndexSchema{
			"id": nsIndex("id", "ID", true, false),
		}},
		TableVariables: {Name: TableVariables, Indexes: map[string]*memdb.IndexSchema{
			"id": nsIndex("id", "Path", true, false),
		}},
		TableRootKeys: {Name: TableRootKeys, Indexes: map[string]*memdb.IndexSchema{
			"id": {Name: "id", Unique: true, Indexer: &memdb.StringFieldIndex{Field: "KeyID"}},
		}},
		TableServices: {Name: TableServices, Indexes: map[string]*memdb.IndexSchema{
			"id":      idIndex("ID"),
			"service": nsIndex("service", "ServiceName", false, false),
		}},
		TableJobSummary: {Name: TableJobSummary, Indexes: map[string]*memdb.IndexSchema{
			"id": nsIndex("id", "JobID", true, false),
		}},
		TableJobSummaryBasis: {Name: TableJobSummaryBasis, Indexes: map[string]*memdb.IndexSchema{
			"id": nsIndex("id", "JobID", true, false),
		}},
		TableNodePools: {Name: TableNodePools, Indexes: map[string]*memdb.IndexSchema{
			"id": idIndex("Name"),
		}},
		TableNamespaces: {Name: TableNamespaces, Indexes: map[string]*memdb.IndexSchema{
			"id": idIndex("Name"),
		}},
		TableJobSubmissions: {Name: TableJobSubmissions, Indexes: map[string]*memdb.IndexSchema{
			"id": {
				Name: "id", Unique: true,
				Indexer: &memdb.CompoundIndex{Indexes: []memdb.Indexer{
					&memdb.StringFieldIndex{Field: "Namespace"},
					&memdb.StringFieldIndex{Field: "JobID"},
					&memdb.UintFieldIndex{Field: "Version"},
				}},
			},
		}},
		TableACLRoles: {Name: TableACLRoles, Indexes: map[string]*memdb.IndexSchema{
			"id":   idIndex("ID"),
			"name": {Name: "name", Unique: true, Indexer: &memdb.StringFieldIndex{Field: "Name"}},
		}},
		TableACLAuthMethods: {Name: TableACLAuthMethods, Indexes: map[string]*memdb.IndexSchema{
			"id": idIndex("Name"),
		}},
		TableACLBindingRules: {Name: TableACLBindingRules, Indexes: map[string]*memdb.IndexSchema{
			"id":          idIndex("ID"),
			"auth_method": {Name: "auth_method", Indexer: &memdb.StringFieldIndex{Field: "AuthMethod"}},
		}},
		TableACLOneTimeTokens: {Name: TableACLOneTimeTokens, Indexes: map[string]*memdb.IndexSchema{
			"id":       idIndex("SecretHash"),
			"accessor": {Name: "accessor", Indexer: &memdb.StringFieldIndex{Field: "AccessorID"}},
		}},
	}}
}

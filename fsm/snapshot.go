package fsm

import (
	"bufio"
	"fmt"
	"io"

	"github.com/hashicorp/go-msgpack/v2/codec"
	"github.com/hashicorp/raft"

	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/structs"
)

// Snapshot stream format (MessagePack values, one after another):
//
//	header   snapshotHeader{Magic: "drover-state", Version: 1}
//	records  tag (uint8), object — for every object of every table,
//	         tables in state.Tables order, objects in primary-key order
//	end      tag endTag
//
// Job summaries and their bases (two tables) are written as one
// jobSummaryRecord per job.
//
// Allocations embed their job; the job is written once per distinct job
// object as an allocJobRecord (tag allocJobTag) ahead of the first
// allocation that uses it, and each allocation as an allocRecord naming it
// by reference. Restored allocations share one job object per reference,
// as they did in the store. The end tag lets Restore tell a complete stream
// from a truncated one.
const (
	snapshotMagic   = "drover-state"
	snapshotVersion = 1
	endTag          = 0xff
	allocsTag       = 5
	allocJobTag     = 8
	autopilotTag    = 9
	aclPoliciesTag  = 10
	aclTokensTag    = 11
	aclMetaTag      = 12
	scalingTag      = 13
	periodicTag     = 14
	variablesTag    = 15
	rootKeysTag     = 16
	servicesTag     = 17
	jobSummaryTag   = 20
	// nodePoolsTag is node pools' (their fsm types are 45–49).
	nodePoolsTag = 45
	// namespacesTag and jobSubmissionsTag are namespaces' and job
	// submissions' (their fsm types are 40–44).
	namespacesTag     = 40
	jobSubmissionsTag = 41

	// schedulerConfigTag is the scheduler configuration's (its fsm
	// types are 60–62).
	schedulerConfigTag = 60
	// The ACL roles, auth methods, binding rules and one-time tokens.
	aclRolesTag         = 50
	aclAuthMethodsTag   = 51
	aclBindingRulesTag  = 52
	aclOneTimeTokensTag = 53
)

// jobSummaryRecord is a job's kept summary with its basis, one record per
// job (tag jobSummaryTag): the two rows are written and restored together.
// A snapshot without them (written before the store kept summaries) is
// restored with summaries counted from the restored allocations,
// evaluations and jobs.
type jobSummaryRecord struct {
	Summary *structs.JobSummary
	Basis   *state.JobSummaryBasis
}

// allocJobRecord is a job embedded in allocations, written once.
type allocJobRecord struct {
	Ref uint64
	Job *structs.Job
}

// allocRecord is an allocation whose Job is carried by reference (JobRef
// 0: no job).
type allocRecord struct {
	JobRef uint64
	Alloc  *structs.Allocation
}

type snapshotHeader struct {
	Magic   string
	Version int
}

// tableTags maps tables to their record tags; part of the format.
var tableTags = map[string]uint8{
	state.TableNodes: 1, state.TableJobs: 2, state.TableJobVersions: 3,
	state.TableEvals: 4, state.TableAllocs: 5, state.TableDeployments: 6,
	state.TableIndex: 7, state.TableAutopilot: autopilotTag, state.TableSchedulerConfig: schedulerConfigTag,
	state.TableACLPolicies: aclPoliciesTag, state.TableACLTokens: aclTokensTag, state.TableACLMeta: aclMetaTag,
	state.TableScaling: scalingTag, state.TablePeriodic: periodicTag,
	state.TableVariables: variablesTag, state.TableRootKeys: rootKeysTag,
	state.TableServices:   servicesTag,
	state.TableJobSummary: jobSummaryTag,
	state.TableNodePools:  nodePoolsTag,
	state.TableNamespaces: namespacesTag, state.TableJobSubmissions: jobSubmissionsTag,
	state.TableACLRoles: aclRolesTag, state.TableACLAuthMethods: aclAuthMethodsTag,
	state.TableACLBindingRules: aclBindingRulesTag, state.TableACLOneTimeTokens: aclOneTimeTokensTag,
}

// newRecord returns the table and a pointer to a zero object for tag.
func newRecord(tag uint8) (string, any) {
	switch tag {
	case 1:
		return state.TableNodes, &structs.Node{}
	case 2:
		return state.TableJobs, &structs.Job{}
	case 3:
		return state.TableJobVersions, &structs.Job{}
	case 4:
		return state.TableEvals, &structs.Evaluation{}
	case allocsTag:
		return state.TableAllocs, &allocRecord{}
	case allocJobTag:
		return "", &allocJobRecord{}
	case 6:
		return state.TableDeployments, &structs.Deployment{}
	case 7:
		return state.TableIndex, &state.IndexEntry{}
	case schedulerConfigTag:
		return state.TableSchedulerConfig, &state.SchedulerConfigRecord{}
	case autopilotTag:
		return state.TableAutopilot, &state.AutopilotRecord{}
	case aclPoliciesTag:
		return state.TableACLPolicies, &structs.ACLPolicy{}
	case aclTokensTag:
		return state.TableACLTokens, &structs.ACLToken{}
	case aclMetaTag:
		return state.TableACLMeta, &state.ACLMetaRecord{}
	case scalingTag:
		return state.TableScaling, &structs.JobScalingEvents{}
	case periodicTag:
		return state.TablePeriodic, &structs.PeriodicLaunch{}
	case variablesTag:
		return state.TableVariables, &structs.VariableEncrypted{}
	case rootKeysTag:
		return state.TableRootKeys, &structs.RootKey{}
	case servicesTag:
		return state.TableServices, &structs.ServiceRegistration{}
	case jobSummaryTag:
		return state.TableJobSummary, &jobSummaryRecord{}
	case nodePoolsTag:
		return state.TableNodePools, &structs.NodePool{}
	case namespacesTag:
		return state.TableNamespaces, &structs.Namespace{}
	case jobSubmissionsTag:
		return state.TableJobSubmissions, &structs.JobSubmission{}
	case aclRolesTag:
		return state.TableACLRoles, &structs.ACLRole{}
	case aclAuthMethodsTag:
		return state.TableACLAuthMethods, &structs.ACLAuthMethod{}
	case aclBindingRulesTag:
		return state.TableACLBindingRules, &structs.ACLBindingRule{}
	case aclOneTimeTokensTag:
		return state.TableACLOneTimeTokens, &structs.OneTimeToken{}
	}
	return "", nil
}

// fsmSnapshot is an O(1) view of the store taken on the FSM goroutine and
// written out later on another.
type fsmSnapshot struct {
	snap *state.Snapshot
}

// Snapshot captures the current state in O(1) (a memdb read transaction).
func (f *FSM) Snapshot() (raft.FSMSnapshot, error) {
	return &fsmSnapshot{snap: f.State().Snapshot()}, nil
}

// Persist writes the snapshot to sink; on error the sink is cancelled.
func (s *fsmSnapshot) Persist(sink raft.SnapshotSink) error {
	if err := s.write(sink); err != nil {
		_ = sink.Cancel()
		return err
	}
	return sink.Close()
}

// write writes the snapshot stream to w.
func (s *fsmSnapshot) write(w io.Writer) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	enc := codec.NewEncoder(bw, msgpackHandle)
	if err := enc.Encode(snapshotHeader{Magic: snapshotMagic, Version: snapshotVersion}); err != nil {
		return fmt.Errorf("fsm: snapshot header: %w", err)
	}
	jobRefs := map[*structs.Job]uint64{}
	for _, table := range state.Tables {
		if table == state.TableJobSummaryBasis {
			continue // in the job summaries' records
		}
		tag := tableTags[table]
		err := s.snap.Each(table, func(obj any) error {
			if sum, ok := obj.(*structs.JobSummary); ok {
				basis, err := s.snap.JobSummaryBasisByID(sum.Namespace, sum.JobID)
				if err != nil {
					return err
				}
				obj = jobSummaryRecord{Summary: sum, Basis: basis}
			}
			if a, ok := obj.(*structs.Allocation); ok {
				rec := allocRecord{Alloc: a}
				if a.Job != nil {
					ref, seen := jobRefs[a.Job]
					if !seen {
						ref = uint64(len(jobRefs) + 1)
						jobRefs[a.Job] = ref
						if err := enc.Encode(uint8(allocJobTag)); err != nil {
							return err
						}
						if err := enc.Encode(allocJobRecord{Ref: ref, Job: a.Job}); err != nil {
							return err
						}
					}
					c := *a // shallow: only Job is dropped, the rest is shared read-only
					c.Job = nil
					rec = allocRecord{JobRef: ref, Alloc: &c}
				}
				obj = rec
			}
			if err := enc.Encode(tag); err != nil {
				return err
			}
			return enc.Encode(obj)
		})
		if err != nil {
			return fmt.Errorf("fsm: snapshot %s: %w", table, err)
		}
	}
	if err := enc.Encode(uint8(endTag)); err != nil {
		return fmt.Errorf("fsm: snapshot end: %w", err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("fsm: snapshot flush: %w", err)
	}
	return nil
}

// Release is a no-op: the memdb snapshot needs no cleanup.
func (s *fsmSnapshot) Release() {}

// Restore replaces the state with the snapshot read from rc: it builds a
// new store and swaps it in atomically. Readers holding the old store keep
// their consistent view; its blocking queries return (abandoned) so that
// callers re-read from the new store. On error the current state stays.
func (f *FSM) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	s, err := readSnapshot(rc)
	if err != nil {
		f.logger.Error("cannot restore snapshot", "error", err)
		return err
	}
	s.SetJobTrackedVersions(int(f.trackedVersions.Load()))
	old := f.store.Swap(s)
	if old != nil {
		old.Abandon()
	}
	if b := f.events.Load(); b != nil {
		// The events before the snapshot no longer describe the state.
		b.Reset()
	}
	return nil
}

func readSnapshot(r io.Reader) (st *state.Store, err error) {
	defer func() {
		if p := recover(); p != nil {
			st, err = nil, fmt.Errorf("%w: %v", ErrSnapshot, p)
		}
	}()
	s, err := state.New()
	if err != nil {
		return nil, err
	}
	dec := codec.NewDecoder(bufio.NewReaderSize(r, 64<<10), msgpackHandle)
	var h snapshotHeader
	if err := dec.Decode(&h); err != nil {
		return nil, fmt.Errorf("%w: header: %w", ErrSnapshot, err)
	}
	if h.Magic != snapshotMagic || h.Version != snapshotVersion {
		return nil, fmt.Errorf("%w: format %q version %d", ErrSnapshot, h.Magic, h.Version)
	}
	rs := s.Restorer()
	defer rs.Abort()
	jobs := map[uint64]*structs.Job{}
	for {
		var tag uint8
		if err := dec.Decode(&tag); err != nil {
			return nil, fmt.Errorf("%w: record tag: %w", ErrSnapshot, err)
		}
		if tag == endTag {
			break
		}
		table, obj := newRecord(tag)
		if obj == nil {
			return nil, fmt.Errorf("%w: unknown record tag %d", ErrSnapshot, tag)
		}
		if err := dec.Decode(obj); err != nil {
			return nil, fmt.Errorf("%w: record tag %d: %w", ErrSnapshot, tag, err)
		}
		switch rec := obj.(type) {
		case *allocJobRecord:
			if rec.Ref == 0 || rec.Job == nil {
				return nil, fmt.Errorf("%w: empty alloc job record", ErrSnapshot)
			}
			jobs[rec.Ref] = rec.Job
			continue
		case *allocRecord:
			if rec.Alloc == nil {
				return nil, fmt.Errorf("%w: empty alloc record", ErrSnapshot)
			}
			if rec.JobRef != 0 {
				if rec.Alloc.Job = jobs[rec.JobRef]; rec.Alloc.Job == nil {
					return nil, fmt.Errorf("%w: alloc %q names unknown job %d", ErrSnapshot, rec.Alloc.ID, rec.JobRef)
				}
			}
			obj = rec.Alloc
		case *jobSummaryRecord:
			if rec.Summary == nil {
				return nil, fmt.Errorf("%w: empty job summary record", ErrSnapshot)
			}
			if rec.Basis != nil { // else the restore counts the summary again
				if err := rs.Insert(state.TableJobSummaryBasis, rec.Basis); err != nil {
					return nil, fmt.Errorf("%w: %w", ErrSnapshot, err)
				}
			}
			obj = rec.Summary
		}
		if err := rs.Insert(table, obj); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrSnapshot, err)
		}
	}
	rs.Commit()
	return s, nil
}

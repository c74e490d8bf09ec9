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
//	header   snapshotHeader{Magic: "drover-state", Version: 1, Later: bool}
//	records  tag (uint8), object — for every object of every table whose
//	         tag the servers' minimum build reads (tagBuilds), tables in
//	         state.Tables order, objects in primary-key order
//	end      tag endTag
//	later    only when Later: the records of the other tables, in the
//	         same order, then tag endTag again
//
// A snapshot is sent to a lagging follower (InstallSnapshot), which may
// run the previous build during a rolling upgrade
// (website/production.md#upgrading): what it reads must hold only tags
// it knows. Every build stops reading at the first end tag, so the
// records of tables introduced after the servers' minimum build go after
// it: an older server restores without them (it has no such tables), and
// a server of their build restores them all, exactly as they were. A
// reader skips a record of the later part whose tag it does not know (a
// table of a build after its own).
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

	// schedulerConfigTag is the scheduler configuration's (its fsm
	// types are 60–62).
	schedulerConfigTag = 60
	// The ACL roles, auth methods, binding rules and one-time tokens.
	aclRolesTag         = 50
	aclAuthMethodsTag   = 51
	aclBindingRulesTag  = 52
	aclOneTimeTokensTag = 53
	// namespacesTag and jobSubmissionsTag are namespaces' and job
	// submissions' (their fsm types are 40–44).
	namespacesTag     = 40
	jobSubmissionsTag = 41
	// nodePoolsTag is node pools' (their fsm types are 45–49).
	nodePoolsTag = 45
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
	// Later: the records of the tables introduced after the minimum
	// build the snapshot was written for follow the end tag. A build
	// that does not know the field stops at the end tag.
	Later bool
}

// tagBuilds names the structs.ServerBuild that introduced each record tag
// (1: every numbered build reads it, as the previous release's snapshot.go
// at upgrade/PREVIOUS lists). A snapshot written while a server runs an
// older build puts the tag's records after the end tag, where that server
// does not read. Every tag is listed: a test fails for one that is not.
var tagBuilds = map[uint8]int{
	1: 1, 2: 1, 3: 1, 4: 1, allocsTag: 1, 6: 1, 7: 1, allocJobTag: 1,
	autopilotTag: 1, aclPoliciesTag: 1, aclTokensTag: 1, aclMetaTag: 1,
	scalingTag: 1, periodicTag: 1, variablesTag: 1, rootKeysTag: 1,
	servicesTag: 1, jobSummaryTag: 1,

	namespacesTag: 2, jobSubmissionsTag: 2, nodePoolsTag: 2,
	aclRolesTag: 2, aclAuthMethodsTag: 2, aclBindingRulesTag: 2, aclOneTimeTokensTag: 2,
	schedulerConfigTag: 2,
}

// tagBuild is the build that introduced tag; one not listed (a mistake
// tagBuilds' test catches) counts as this build's, so that an older
// server is never sent it.
func tagBuild(tag uint8) int {
	if b, ok := tagBuilds[tag]; ok {
		return b
	}
	return structs.ServerBuild
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
	state.TableACLRoles:   aclRolesTag, state.TableACLAuthMethods: aclAuthMethodsTag,
	state.TableACLBindingRules: aclBindingRulesTag, state.TableACLOneTimeTokens: aclOneTimeTokensTag,
	state.TableNamespaces: namespacesTag, state.TableJobSubmissions: jobSubmissionsTag,
	state.TableNodePools: nodePoolsTag,
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
	case aclRolesTag:
		return state.TableACLRoles, &structs.ACLRole{}
	case aclAuthMethodsTag:
		return state.TableACLAuthMethods, &structs.ACLAuthMethod{}
	case aclBindingRulesTag:
		return state.TableACLBindingRules, &structs.ACLBindingRule{}
	case aclOneTimeTokensTag:
		return state.TableACLOneTimeTokens, &structs.OneTimeToken{}
	case namespacesTag:
		return state.TableNamespaces, &structs.Namespace{}
	case jobSubmissionsTag:
		return state.TableJobSubmissions, &structs.JobSubmission{}
	case nodePoolsTag:
		return state.TableNodePools, &structs.NodePool{}
	}
	return "", nil
}

// fsmSnapshot is an O(1) view of the store taken on the FSM goroutine and
// written out later on another.
type fsmSnapshot struct {
	snap *state.Snapshot
	// minBuild gives the servers' lowest build when the snapshot is
	// written (SetSnapshotMinBuild); nil: this build.
	minBuild func() int
}

// SetSnapshotMinBuild sets how snapshots learn the lowest
// structs.ServerBuild among the servers of the Raft configuration: a
// snapshot holds, before its end tag, only the records that build reads
// (tagBuilds), the others after it. f is called when a snapshot is
// persisted, on Raft's snapshot goroutine, never the FSM's (so it may ask
// Raft for its configuration). Without it, snapshots are written for
// servers of this build.
func (f *FSM) SetSnapshotMinBuild(fn func() int) { f.snapshotMinBuild.Store(&fn) }

// Snapshot captures the current state in O(1) (a memdb read transaction).
func (f *FSM) Snapshot() (raft.FSMSnapshot, error) {
	s := &fsmSnapshot{snap: f.State().Snapshot()}
	if fn := f.snapshotMinBuild.Load(); fn != nil {
		s.minBuild = *fn
	}
	return s, nil
}

// Persist writes the snapshot to sink; on error the sink is cancelled.
func (s *fsmSnapshot) Persist(sink raft.SnapshotSink) error {
	if err := s.write(sink); err != nil {
		_ = sink.Cancel()
		return err
	}
	return sink.Close()
}

// write writes the snapshot stream to w for the servers' current minimum
// build.
func (s *fsmSnapshot) write(w io.Writer) error {
	minBuild := structs.ServerBuild
	if s.minBuild != nil {
		minBuild = s.minBuild()
	}
	return s.writeFor(w, minBuild)
}

// writeFor writes the snapshot stream to w, readable by a server of
// minBuild.
func (s *fsmSnapshot) writeFor(w io.Writer, minBuild int) error {
	later := false
	for _, tag := range tableTags {
		later = later || tagBuild(tag) > minBuild
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	enc := codec.NewEncoder(bw, msgpackHandle)
	if err := enc.Encode(snapshotHeader{Magic: snapshotMagic, Version: snapshotVersion, Later: later}); err != nil {
		return fmt.Errorf("fsm: snapshot header: %w", err)
	}
	jobRefs := map[*structs.Job]uint64{}
	if err := s.writeTables(enc, jobRefs, func(tag uint8) bool { return tagBuild(tag) <= minBuild }); err != nil {
		return err
	}
	if err := enc.Encode(uint8(endTag)); err != nil {
		return fmt.Errorf("fsm: snapshot end: %w", err)
	}
	if later {
		if err := s.writeTables(enc, jobRefs, func(tag uint8) bool { return tagBuild(tag) > minBuild }); err != nil {
			return err
		}
		if err := enc.Encode(uint8(endTag)); err != nil {
			return fmt.Errorf("fsm: snapshot end: %w", err)
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("fsm: snapshot flush: %w", err)
	}
	return nil
}

// writeTables writes the records of the tables whose tag keep accepts.
func (s *fsmSnapshot) writeTables(enc *codec.Encoder, jobRefs map[*structs.Job]uint64, keep func(uint8) bool) error {
	for _, table := range state.Tables {
		if table == state.TableJobSummaryBasis {
			continue // in the job summaries' records
		}
		tag := tableTags[table]
		if !keep(tag) {
			continue
		}
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
	later := false // reading the records after the first end tag
	for {
		var tag uint8
		if err := dec.Decode(&tag); err != nil {
			return nil, fmt.Errorf("%w: record tag: %w", ErrSnapshot, err)
		}
		if tag == endTag {
			if later || !h.Later {
				break
			}
			later = true
			continue
		}
		table, obj := newRecord(tag)
		if obj == nil && later {
			// A table of a later build than this one.
			var skip codec.Raw
			if err := dec.Decode(&skip); err != nil {
				return nil, fmt.Errorf("%w: record tag %d: %w", ErrSnapshot, tag, err)
			}
			continue
		}
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

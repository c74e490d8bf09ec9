package state

import (
	"fmt"

	"github.com/droverhq/drover/structs"
)

// Key bytes that end an allocation's job and node index keys, before the
// ID that go-memdb appends to every non-unique index key.
const (
	liveKey    = 'r' // the servers want the allocation to run
	stoppedKey = 's' // the servers stopped or evicted it
)

// allocIndex indexes allocations by one or two string fields followed by
// one byte: liveKey, unless the servers stopped or evicted the allocation
// (structs.Allocation.TerminalStatus's desired half). A lookup with the
// fields alone (Get(TableAllocs, "job", namespace, jobID)) finds all of the
// key's allocations, the live ones first, each part in ID order; one with a
// bool after them finds only the live ones (true) or only the stopped
// ones (false).
//
// A scheduling pass and the placer need only the live allocations; the
// stopped ones stay stored until the garbage collector deletes them (an
// hour by default), so after a rollout of a 10,000-alloc job every pass
// would otherwise walk 10,000 stopped allocations, and 10,000 more after
// the next rollout. The byte costs nothing more per entry: the key of an
// allocation the servers stop changes once, in the write that stops it.
type allocIndex struct {
	// fields returns the key's fields; n of them are used (1 or 2).
	fields func(a *structs.Allocation) (string, string)
	n      int
}

func jobAllocIndex() *allocIndex {
	return &allocIndex{n: 2, fields: func(a *structs.Allocation) (string, string) { return a.Namespace, a.JobID }}
}

func nodeAllocIndex() *allocIndex {
	return &allocIndex{n: 1, fields: func(a *structs.Allocation) (string, string) { return a.NodeID, "" }}
}

// allocKeyByte is the byte that follows an allocation's fields.
func allocKeyByte(a *structs.Allocation) byte {
	if a.DesiredStatus == structs.AllocDesiredStatusStop || a.DesiredStatus == structs.AllocDesiredStatusEvict {
		return stoppedKey
	}
	return liveKey
}

// FromObject returns the allocation's key; false when a field is empty
// (the node index allows that, the job index refuses it).
func (x *allocIndex) FromObject(raw any) (bool, []byte, error) {
	a, ok := raw.(*structs.Allocation)
	if !ok {
		return false, nil, fmt.Errorf("allocation index: %T is not an allocation", raw)
	}
	f1, f2 := x.fields(a)
	if f1 == "" || x.n == 2 && f2 == "" {
		return false, nil, nil
	}
	// Room for the ID and its terminator, which go-memdb appends.
	b := make([]byte, 0, len(f1)+len(f2)+3+len(a.ID)+1)
	b = append(append(b, f1...), 0)
	if x.n == 2 {
		b = append(append(b, f2...), 0)
	}
	return true, append(b, allocKeyByte(a)), nil
}

// FromArgs returns the key prefix of a lookup: the fields, then
// optionally a bool (true: live allocations only; false: stopped only).
func (x *allocIndex) FromArgs(args ...any) ([]byte, error) {
	if len(args) != x.n && len(args) != x.n+1 {
		return nil, fmt.Errorf("allocation index: %d arguments, want %d or %d", len(args), x.n, x.n+1)
	}
	var b []byte
	for i, arg := range args[:x.n] {
		s, ok := arg.(string)
		if !ok {
			return nil, fmt.Errorf("allocation index: argument %d is %T, not a string", i, arg)
		}
		b = append(append(b, s...), 0)
	}
	if len(args) == x.n+1 {
		live, ok := args[x.n].(bool)
		if !ok {
			return nil, fmt.Errorf("allocation index: argument %d is %T, not a bool", x.n, args[x.n])
		}
		if live {
			b = append(b, liveKey)
		} else {
			b = append(b, stoppedKey)
		}
	}
	return b, nil
}

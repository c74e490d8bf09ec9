package state

import (
	"encoding/binary"
	"fmt"

	"github.com/droverhq/drover/structs"
)

// Key bytes that follow the fields of a liveIndex key, before the rest
// of the key (an evaluation's CreateIndex, then the ID that go-memdb
// appends to every non-unique index key).
const (
	liveKey    = 'r' // an alloc the servers want running; an eval not finished
	stoppedKey = 's' // an alloc the servers stopped or evicted; a finished eval
)

// liveIndex indexes objects by one or two string fields followed by one
// byte that says whether the object is live: liveKey for an allocation
// the servers have not stopped or evicted (structs.Allocation.
// TerminalStatus's desired half) and for an evaluation that has not
// finished, stoppedKey otherwise. An evaluation's key then holds its
// CreateIndex, so that a job's finished evaluations are in creation order.
// A lookup with the fields alone (Get(TableAllocs, "job", namespace,
// jobID)) finds all of the key's objects, the live ones first; one with a
// bool after them finds only the live ones (true) or only the others
// (false).
//
// A scheduling pass and the placer need only the live allocations; the
// stopped ones stay stored until the garbage collector deletes them (an
// hour by default), and after a rollout of a 10,000-alloc job every pass
// walked 10,000 stopped allocations. A client's report and the deployment
// watcher need a job's pending evaluations and its newest finished one, of
// the few hundred each rollout leaves. The byte costs nothing more per
// entry: an object's key changes once, in the write that stops or
// finishes it.
type liveIndex struct {
	n int // string fields, 1 or 2
	// key returns the object's fields, whether it is live, and an index
	// to write after the byte (0: none).
	key func(raw any) (f1, f2 string, live bool, order uint64, err error)
}

func jobAllocIndex() *liveIndex {
	return &liveIndex{n: 2, key: func(raw any) (string, string, bool, uint64, error) {
		a, err := asAlloc(raw)
		if err != nil {
			return "", "", false, 0, err
		}
		return a.Namespace, a.JobID, allocLive(a), 0, nil
	}}
}

func nodeAllocIndex() *liveIndex {
	return &liveIndex{n: 1, key: func(raw any) (string, string, bool, uint64, error) {
		a, err := asAlloc(raw)
		if err != nil {
			return "", "", false, 0, err
		}
		return a.NodeID, "", allocLive(a), 0, nil
	}}
}

func jobEvalIndex() *liveIndex {
	return &liveIndex{n: 2, key: func(raw any) (string, string, bool, uint64, error) {
		e, ok := raw.(*structs.Evaluation)
		if !ok {
			return "", "", false, 0, fmt.Errorf("evaluation index: %T is not an evaluation", raw)
		}
		return e.Namespace, e.JobID, !e.Terminal(), max(e.CreateIndex, 1), nil
	}}
}

func asAlloc(raw any) (*structs.Allocation, error) {
	a, ok := raw.(*structs.Allocation)
	if !ok {
		return nil, fmt.Errorf("allocation index: %T is not an allocation", raw)
	}
	return a, nil
}

// allocLive reports whether the servers still want a to run.
func allocLive(a *structs.Allocation) bool {
	return a.DesiredStatus != structs.AllocDesiredStatusStop && a.DesiredStatus != structs.AllocDesiredStatusEvict
}

// FromObject returns the object's key; false when a field is empty (not
// indexed, which the schema allows or refuses).
func (x *liveIndex) FromObject(raw any) (bool, []byte, error) {
	f1, f2, live, order, err := x.key(raw)
	if err != nil {
		return false, nil, err
	}
	if f1 == "" || x.n == 2 && f2 == "" {
		return false, nil, nil
	}
	// Room for the order, an ID and its terminator, which go-memdb
	// appends.
	b := make([]byte, 0, len(f1)+len(f2)+3+8+37)
	b = append(append(b, f1...), 0)
	if x.n == 2 {
		b = append(append(b, f2...), 0)
	}
	if live {
		b = append(b, liveKey)
	} else {
		b = append(b, stoppedKey)
	}
	if order > 0 {
		b = binary.BigEndian.AppendUint64(b, order)
	}
	return true, b, nil
}

// FromArgs returns the key prefix of a lookup: the fields, then
// optionally a bool (true: live objects only; false: the others only).
func (x *liveIndex) FromArgs(args ...any) ([]byte, error) {
	if len(args) != x.n && len(args) != x.n+1 {
		return nil, fmt.Errorf("live index: %d arguments, want %d or %d", len(args), x.n, x.n+1)
	}
	var b []byte
	for i, arg := range args[:x.n] {
		s, ok := arg.(string)
		if !ok {
			return nil, fmt.Errorf("live index: argument %d is %T, not a string", i, arg)
		}
		b = append(append(b, s...), 0)
	}
	if len(args) == x.n+1 {
		live, ok := args[x.n].(bool)
		if !ok {
			return nil, fmt.Errorf("live index: argument %d is %T, not a bool", x.n, args[x.n])
		}
		if live {
			b = append(b, liveKey)
		} else {
			b = append(b, stoppedKey)
		}
	}
	return b, nil
}

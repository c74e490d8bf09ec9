package fsm

import (
	"errors"
	"fmt"
)

// The version-skew rule for the log (website/production.md#upgrading): a
// server applies every entry and reads every snapshot the previous release
// writes (testdata/previous, recorded from upgrade/PREVIOUS, keeps it), and
// a leader writes a message type only once every server of the Raft
// configuration runs a build that knows it, as Nomad's leader gates its
// features on the servers' minimum version. A new field of an existing
// request is gated the same way by the code that sets it: an older server
// decodes the entry without it (MessagePack skips the fields it does not
// know), which is safe only when missing it changes nothing it decides.
//
// typeBuilds names the structs.ServerBuild that introduced each message
// type from build 2 on; the types it does not list are known to every
// numbered build (and to the builds before numbering). A type that is safe
// to miss may instead be sent with IgnoreUnknownTypeFlag, and is then not
// gated. A snapshot's record tags are named likewise, in tagBuilds
// (snapshot.go): a snapshot puts the records of a table the servers'
// minimum build does not read where that build stops reading.
var typeBuilds = map[MessageType]int{
	SchedulerSetConfigRequestType:   2,
	ACLRoleUpsertRequestType:        2,
	ACLRoleDeleteRequestType:        2,
	ACLAuthMethodUpsertRequestType:  2,
	ACLAuthMethodDeleteRequestType:  2,
	ACLBindingRuleUpsertRequestType: 2,
	ACLBindingRuleDeleteRequestType: 2,
	OneTimeTokenUpsertRequestType:   2,
	OneTimeTokenExchangeRequestType: 2,
	NamespaceUpsertRequestType:      2,
	NamespaceDeleteRequestType:      2,
	NodePoolUpsertRequestType:       2,
	NodePoolDeleteRequestType:       2,
	VarLockRequestType:              2,
	JobRegisterAtVersionRequestType: 2,
}

// ErrServersTooOld: an entry of a type that a server of the Raft
// configuration does not know yet; nothing was written. It is written once
// every server is upgraded.
var ErrServersTooOld = errors.New("fsm: not every server runs a build that knows this entry yet")

// TypeBuild is the structs.ServerBuild that introduced t (1 for the types
// every numbered build knows).
func TypeBuild(t MessageType) int {
	if b, ok := typeBuilds[t&^IgnoreUnknownTypeFlag]; ok {
		return b
	}
	return 1
}

// CheckWritable reports whether an entry of type t may be written while
// the servers' lowest build is minBuild: ErrServersTooOld when a server
// would fail to apply it. An entry with IgnoreUnknownTypeFlag may always be
// written: a server that does not know it skips it.
func CheckWritable(t MessageType, minBuild int) error {
	if t&IgnoreUnknownTypeFlag != 0 {
		return nil
	}
	if b := TypeBuild(t); b > minBuild {
		return fmt.Errorf("%w: %s needs build %d, and a server runs build %d", ErrServersTooOld, t, b, minBuild)
	}
	return nil
}

// SetTypeBuildForTest records t as introduced by build for the rest of the
// test tb (the gate's tests, in this package and others).
func SetTypeBuildForTest(tb interface{ Cleanup(func()) }, t MessageType, build int) {
	typeBuilds[t] = build
	tb.Cleanup(func() { delete(typeBuilds, t) })
}

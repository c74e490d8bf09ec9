package agent

import (
	"testing"

	"github.com/droverhq/drover/structs"
)

// A server of another region is never a member (a Raft peer of this
// region), whether it announces itself or another server lists it; one
// that names no region (a build before federation) is taken as this
// region's.
func TestMembersKeepOtherRegionsOut(t *testing.T) {
	m := newMembers(structs.ServerMember{ID: "e1", Region: "east", RaftAddr: "127.0.0.1:1", HTTPAddr: "127.0.0.1:2"})
	west := structs.ServerMember{ID: "w1", Region: "west", RaftAddr: "127.0.0.1:3", HTTPAddr: "127.0.0.1:4"}
	m.learnDirect(west)
	m.learnIndirect([]structs.ServerMember{{ID: "w2", Region: "west", RaftAddr: "127.0.0.1:5", HTTPAddr: "127.0.0.1:6"}})
	m.learnIndirect([]structs.ServerMember{{ID: "e2", Region: "east", RaftAddr: "127.0.0.1:7", HTTPAddr: "127.0.0.1:8"}})
	m.learnDirect(structs.ServerMember{ID: "old", RaftAddr: "127.0.0.1:9", HTTPAddr: "127.0.0.1:10"})
	var ids []string
	for _, sm := range m.list() {
		ids = append(ids, sm.ID)
	}
	if len(ids) != 3 || ids[0] != "e1" || ids[1] != "e2" || ids[2] != "old" {
		t.Fatalf("members %v", ids)
	}
	if _, ok := m.get("w1"); ok {
		t.Fatal("a server of west is a member of east")
	}
}

package agent

import (
	"testing"

	"github.com/droverhq/drover/structs"
)

// A server announces this binary's build; the servers' minimum counts a
// server of a build from before numbering (no Build) as 1, and is 1 while
// a server of the configuration is not known.
func TestMembersBuild(t *testing.T) {
	m := newMembers(structs.ServerMember{ID: "a"})
	if got, _ := m.get("a"); got.Build != structs.ServerBuild {
		t.Fatalf("this server announces build %d, want %d", got.Build, structs.ServerBuild)
	}
	m.learnDirect(structs.ServerMember{ID: "b", Build: structs.ServerBuild})
	if got := m.minBuild([]string{"a", "b"}); got != structs.ServerBuild {
		t.Fatalf("two servers of this build: %d", got)
	}
	if got := m.minBuild([]string{"a", "b", "c"}); got != 1 {
		t.Fatalf("with a server not known yet: %d, want 1", got)
	}
	m.learnDirect(structs.ServerMember{ID: "c"})
	if got := m.minBuild([]string{"a", "b", "c"}); got != 1 {
		t.Fatalf("with a server of the previous build: %d, want 1", got)
	}
	m.learnDirect(structs.ServerMember{ID: "c", Build: structs.ServerBuild})
	if got := m.minBuild([]string{"a", "b", "c"}); got != structs.ServerBuild {
		t.Fatalf("once it is upgraded: %d", got)
	}
}

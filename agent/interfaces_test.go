package agent

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/droverhq/drover/httpapi"
)

// The HTTP API declares a Backend and optional interfaces for what only a
// server can do; the agent must serve every one of them, or the endpoint
// answers 501 on a real server.
var (
	_ httpapi.Backend                  = (*Agent)(nil)
	_ httpapi.ClientBackend            = (*Agent)(nil)
	_ httpapi.JobRegisterBackend       = (*Agent)(nil)
	_ httpapi.JobDeregisterBackend     = (*Agent)(nil)
	_ httpapi.OperatorBackend          = (*Agent)(nil)
	_ httpapi.RaftPeerBackend          = (*Agent)(nil)
	_ httpapi.SnapshotBackend          = (*Agent)(nil)
	_ httpapi.ServerMembersBackend     = (*Agent)(nil)
	_ httpapi.AutopilotBackend         = (*Agent)(nil)
	_ httpapi.ACLBootstrapResetter     = (*Agent)(nil)
	_ httpapi.AllocStopBackend         = (*Agent)(nil)
	_ httpapi.JobScaleBackend          = (*Agent)(nil)
	_ httpapi.PeriodicBackend          = (*Agent)(nil)
	_ httpapi.NodeDrainBackend         = (*Agent)(nil)
	_ httpapi.DispatchBackend          = (*Agent)(nil)
	_ httpapi.JobRestartBackend        = (*Agent)(nil)
	_ httpapi.LeaderBuilder            = (*Agent)(nil)
	_ httpapi.GCBackend                = (*Agent)(nil)
	_ httpapi.NodeOpsBackend           = (*Agent)(nil)
	_ httpapi.JobEvaluateBackend       = (*Agent)(nil)
	_ httpapi.Federator                = (*Agent)(nil)
	_ httpapi.ServerBuildBackend       = (*Agent)(nil)
	_ httpapi.DeploymentUnblockBackend = (*Agent)(nil)
)

// wiredInterfaces names the interfaces asserted above.
var wiredInterfaces = []string{
	"ACLBootstrapResetter", "AgentTargetBackend", "AllocStopBackend", "AutopilotBackend", "Backend", "ClientBackend", "DeploymentUnblockBackend", "DispatchBackend", "Federator", "ForceLeaveBackend", "GCBackend", "JobDeregisterBackend", "JobEvaluateBackend", "JobRegisterBackend", "JobRestartBackend",
	"JobScaleBackend", "LeaderBuilder", "LocalAgentBackend", "LogSinkBackend", "NodeDrainBackend", "NodeOpsBackend", "OperatorBackend", "PeriodicBackend", "RaftPeerBackend", "SchedulerWorkersBackend", "ServerBuildBackend", "ServerMembersBackend", "SnapshotBackend",
}

// TestAgentServesEveryBackendInterfaceOfTheAPI fails when the HTTP API
// declares an interface the list above does not name: wire it (delegating
// to server.Leader) and add it to the assertions.
func TestAgentServesEveryBackendInterfaceOfTheAPI(t *testing.T) {
	files, err := filepath.Glob("../httpapi/*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var declared []string
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			ts, ok := n.(*ast.TypeSpec)
			if !ok || !ts.Name.IsExported() {
				return true
			}
			if _, isIface := ts.Type.(*ast.InterfaceType); isIface {
				declared = append(declared, ts.Name.Name)
			}
			return true
		})
	}
	slices.Sort(declared)
	if !slices.Equal(declared, wiredInterfaces) {
		t.Fatalf("httpapi declares interfaces %v; the agent is checked against %v", declared, wiredInterfaces)
	}
}

package cluster

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/structs"
)

// A leader refuses, before anything is logged, an entry of a type a server
// of the configuration does not know yet, and writes it once every server
// runs a build that does; types every build knows are never held back.
func TestApplyGatedOnTheServersMinimumBuild(t *testing.T) {
	nodes := newTestCluster(t, 1)
	srv, f := nodes[0].srv, nodes[0].fsm
	var lowest atomic.Int64
	lowest.Store(1)
	srv.SetMinServerBuild(func() int { return int(lowest.Load()) })

	const newType fsm.MessageType = 61
	fsm.SetTypeBuildForTest(t, newType, structs.ServerBuild+1)
	before := f.len()
	if _, _, err := srv.Apply(context.Background(), newType, &structs.EvalReapRequest{}); !errors.Is(err, fsm.ErrServersTooOld) {
		t.Fatalf("with a server of the previous build: %v", err)
	}
	if err := srv.Enqueue(context.Background(), newType, &structs.EvalReapRequest{}); err == nil {
		t.Fatal("Enqueue returned no wait function")
	} else if _, _, err := err(); !errors.Is(err, fsm.ErrServersTooOld) {
		t.Fatalf("Enqueue with a server of the previous build: %v", err)
	}
	if f.len() != before {
		t.Fatalf("a refused entry was logged: %d entries, had %d", f.len(), before)
	}
	if _, _, err := srv.Apply(context.Background(), fsm.EvalReapRequestType, &structs.EvalReapRequest{}); err != nil {
		t.Fatalf("a type every build knows: %v", err)
	}
	lowest.Store(structs.ServerBuild + 1)
	if _, _, err := srv.Apply(context.Background(), newType, &structs.EvalReapRequest{}); err != nil {
		t.Fatalf("once every server knows it: %v", err)
	}
	if f.len() != before+2 {
		t.Fatalf("%d entries, want %d", f.len(), before+2)
	}
}

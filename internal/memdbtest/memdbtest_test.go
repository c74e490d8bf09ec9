package memdbtest

import (
	"testing"

	memdb "github.com/hashicorp/go-memdb"
)

func TestFired(t *testing.T) {
	open, closed := make(chan struct{}), make(chan struct{})
	close(closed)
	ws := memdb.NewWatchSet()
	ws.Add(open)
	if Fired(ws) {
		t.Fatal("no channel closed, yet Fired")
	}
	ws.Add(closed)
	if !Fired(ws) {
		t.Fatal("a closed channel, yet not Fired")
	}
}

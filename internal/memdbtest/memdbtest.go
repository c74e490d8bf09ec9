// Package memdbtest holds helpers for tests of code that watches go-memdb
// state.
package memdbtest

import memdb "github.com/hashicorp/go-memdb"

// Fired reports whether a channel of ws has fired (is closed), without
// waiting.
func Fired(ws memdb.WatchSet) bool {
	for ch := range ws {
		select {
		case <-ch:
			return true
		default:
		}
	}
	return false
}

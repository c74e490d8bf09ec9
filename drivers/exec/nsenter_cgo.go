//go:build cgo

package exec

// nsenter's constructor sets up a task's namespaces in the re-executed
// binary before Go's runtime starts; it does nothing otherwise. It is C:
// a binary built without cgo cannot run exec tasks.
import _ "github.com/opencontainers/runc/libcontainer/nsenter"

const builtWithCgo = true

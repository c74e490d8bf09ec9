package exec

import (
	"os"

	// The cgroup managers set a task's device rules only with it.
	_ "github.com/opencontainers/cgroups/devices"
	"github.com/opencontainers/runc/libcontainer"
)

// Init is the first thing a binary that runs exec tasks does (drover's
// main package calls it from an init function): when the driver
// re-executed the binary as a task's init ("<binary> init", with
// libcontainer's pipe in its environment), it sets up the task inside its
// namespaces and chroot and executes the task's command; it never
// returns then. Otherwise it returns at once.
func Init() {
	if len(os.Args) > 1 && os.Args[1] == "init" && os.Getenv("_LIBCONTAINER_INITPIPE") != "" {
		libcontainer.Init()
	}
}

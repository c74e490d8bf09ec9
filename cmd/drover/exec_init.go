package main

import "github.com/droverhq/drover/drivers/exec"

// The exec driver re-executes this binary as each of its tasks' init
// ("drover init", with libcontainer's pipe in its environment): there,
// exec.Init sets the task up and executes its command, and never returns.
func init() { exec.Init() }

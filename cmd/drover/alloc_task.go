package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/droverhq/drover/apiclient"
	"github.com/droverhq/drover/structs"
)

// The task an alloc command (exec, restart, signal) acts on.

// taskArg returns the task named by -task or by the second argument,
// refusing two different names.
func taskArg(flag string, args []string) (string, error) {
	if len(args) < 2 {
		return flag, nil
	}
	if flag != "" && flag != args[1] {
		return "", &exitError{code: 1, msg: fmt.Sprintf("The task is named twice, %q by -task and %q as an argument", flag, args[1])}
	}
	return args[1], nil
}

// runningAlloc looks the allocation up (ID or unique prefix) and checks
// that it, and the task when one is named, runs. An empty task stays
// empty: the command then acts on every running task.
// With verbose, an ambiguous prefix's table shows full IDs.
func runningAlloc(ctx context.Context, c *apiclient.Client, w io.Writer, prefix, task string, verbose bool) (*structs.Allocation, string, error) {
	a, err := lookupAllocVerbose(ctx, c, w, prefix, verbose)
	if err != nil {
		return nil, "", asExit(err)
	}
	if task != "" {
		if task, err = pickTask(a, task); err != nil {
			return nil, "", err
		}
	}
	if err := checkRunning(a, task); err != nil {
		return nil, "", err
	}
	return a, task, nil
}

// pickTask returns the task a command acts on: the one named (which must
// be the group's), else the allocation's only task.
func pickTask(a *structs.Allocation, task string) (string, error) {
	names := allocTaskNames(a)
	if task != "" {
		if !slices.Contains(names, task) {
			return "", &exitError{code: 1, msg: fmt.Sprintf("Could not find task named %q in allocation %q (tasks: %s)",
				task, idShort(a.ID), strings.Join(names, ", "))}
		}
		return task, nil
	}
	if len(names) != 1 {
		return "", &exitError{code: 1, msg: fmt.Sprintf("Allocation %q is running the following tasks:\n  * %s\n\nPlease specify the task.",
			idShort(a.ID), strings.Join(names, "\n  * "))}
	}
	return names[0], nil
}

// checkRunning refuses, with a one-line error, an allocation that does
// not run, or a task of it that is dead.
func checkRunning(a *structs.Allocation, task string) error {
	switch {
	case a.DesiredStatus != structs.AllocDesiredStatusRun:
		return &exitError{code: 1, msg: fmt.Sprintf("Allocation %q is not running: it is stopped (desired status %q, client status %q)",
			idShort(a.ID), a.DesiredStatus, a.ClientStatus)}
	case a.ClientTerminalStatus():
		return &exitError{code: 1, msg: fmt.Sprintf("Allocation %q is not running: its client status is %q", idShort(a.ID), a.ClientStatus)}
	}
	if task != "" {
		if st := a.TaskStates[task]; st != nil && st.State == structs.TaskStateDead {
			return &exitError{code: 1, msg: fmt.Sprintf("Task %q of allocation %q is not running: it is dead", task, idShort(a.ID))}
		}
	}
	return nil
}

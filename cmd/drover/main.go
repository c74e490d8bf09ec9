// Command drover is the drover CLI and agent.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run executes the CLI with args and returns the process exit code. It is
// what tests call: nothing below it exits the process.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	root := newRootCommand()
	if len(args) == 1 && versionFlags[args[0]] {
		// Nomad's "nomad -version" (--version, -v): the version command.
		args = []string{"version"}
	}
	root.SetArgs(normalizeArgs(args))
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.Execute()
	if err == nil {
		return 0
	}
	var ec *exitError
	if errors.As(err, &ec) {
		if ec.msg != "" {
			fmt.Fprintln(root.ErrOrStderr(), ec.msg)
		}
		return ec.code
	}
	fmt.Fprintln(root.ErrOrStderr(), "Error:", err)
	return 1
}

// versionFlags print the version, as Nomad's top-level flags do.
var versionFlags = map[string]bool{"-version": true, "--version": true, "-v": true}

// exitError ends a command with a given exit code; msg, when set, is printed
// to stderr.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return fmt.Sprintf("exit %d: %s", e.code, e.msg) }

// exitCode returns an error that makes run return code without a message.
func exitCode(code int) error { return &exitError{code: code} }

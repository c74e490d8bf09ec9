package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/droverhq/drover/apiclient"
	"github.com/droverhq/drover/structs"
)

func init() { registerSubcommand("var lock", newVarLockCommand) }

// Nomad's lock leasing: the lease is renewed every 0.7 TTL, and a caller
// that finds the lock held tries again every 1.1 TTL (-backoff).
const (
	lockRenewFactor   = 0.7
	lockBackoffFactor = 1.1
)

func newVarLockCommand() *cobra.Command {
	var address, ttl, delay, out string
	var verbose, shell, earlyReturn bool
	var maxRetry int
	var backoff time.Duration
	cmd := &cobra.Command{
		Use:   "lock [options] PATH [@SPEC] CHILD... | lock [options] @SPEC CHILD...",
		Short: "Hold a lock on a variable while a child command runs",
		Long: `Takes the lock of the variable at PATH (or at the path its specification
names), creating the variable when there is none, and runs the child
command while it holds it, renewing the lock's lease every 0.7 TTL. When
another caller holds the lock, it tries again every -backoff (1.1 TTL by
default), or with -early-return gives up at once (exit 0, nothing run).
The lock is released when the child exits; if the lock is lost (the lease
could not be renewed) the child is stopped and the lock sought again, as
Nomad's. The child runs in $SHELL (or /bin/sh) -c, or directly with
-shell=false; SIGINT and SIGTERM are passed on to it.

The specification (@FILE, HCL or JSON by extension, as var put reads it)
gives the variable's items; its JSON form may carry a Lock with TTL and
LockDelay. -ttl and -delay set them otherwise (15s each by default; the
TTL between 10s and 24h).`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			ns := namespaceFlag(cmd)
			if ns == "*" {
				return &exitError{code: 1, msg: `Wildcard namespace ("*") is not allowed for this command`}
			}
			say := func(string) {}
			if verbose {
				say = func(msg string) { fmt.Fprintln(cmd.ErrOrStderr(), msg) }
			}
			v, child, err := readVarLockArgs(args, say)
			if err != nil {
				return &exitError{code: 1, msg: err.Error()}
			}
			if len(child) == 0 {
				return &exitError{code: 1, msg: "No child command to run while the lock is held"}
			}
			if v.Namespace == "" || ns != "" {
				v.Namespace = ns
			}
			if v.Namespace == "" {
				v.Namespace = structs.DefaultNamespace
			}
			if v.Lock == nil {
				if ttl == "" && delay == "" {
					say("Using defaults for the lock")
				}
				v.Lock = &structs.VariableLock{TTL: structs.DefaultVariableLockTTL, LockDelay: structs.DefaultVariableLockDelay}
			}
			for _, f := range []struct {
				flag, val string
				dst       *time.Duration
			}{{"ttl", ttl, &v.Lock.TTL}, {"delay", delay, &v.Lock.LockDelay}} {
				if f.val == "" {
					continue
				}
				d, err := time.ParseDuration(f.val)
				if err != nil {
					return &exitError{code: 1, msg: fmt.Sprintf("Invalid -%s %q: %v", f.flag, f.val, err)}
				}
				*f.dst = d
			}
			if err := v.Lock.Validate(); err != nil {
				return &exitError{code: 1, msg: strings.TrimPrefix(err.Error(), structs.ErrVariableInvalid.Error()+": ")}
			}
			if maxRetry < 0 {
				return &exitError{code: 1, msg: fmt.Sprintf("Invalid -max-retry %d: 0 or more", maxRetry)}
			}
			c, err := apiClientFor(cmd, address)
			if err != nil {
				return err
			}
			l := &lockLeaser{
				locker:      &apiVarLocker{c: c, v: v},
				renewEvery:  time.Duration(float64(v.Lock.TTL) * lockRenewFactor),
				retryEvery:  time.Duration(float64(v.Lock.TTL) * lockBackoffFactor),
				maxRetry:    maxRetry,
				earlyReturn: earlyReturn,
				say:         say,
			}
			if backoff > 0 {
				l.retryEvery = backoff
			}
			run := func(ctx context.Context) error {
				say("Variable locked, ready to execute: " + strings.Join(child, " "))
				return runLockChild(ctx, child, shell, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr())
			}
			say("Attempting to acquire lock")
			if err := l.run(cmd.Context(), run); err != nil {
				return &exitError{code: 1, msg: "Lock error: " + err.Error()}
			}
			say("Releasing the lock")
			return nil
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&ttl, "ttl", "", "the lock's TTL: how long it holds without a renewal (default 15s)")
	fs.StringVar(&delay, "delay", "", "how long a lock that ran out stays before another may take it (default 15s)")
	fs.IntVar(&maxRetry, "max-retry", 5, "renewals to retry after a server error before the lock counts as lost (0: none)")
	fs.BoolVar(&earlyReturn, "early-return", false, "give up at once, running nothing, when another holds the lock")
	fs.DurationVar(&backoff, "backoff", 0, "time between attempts to take the lock (default 1.1 TTL)")
	fs.BoolVar(&shell, "shell", true, "run the child in $SHELL (or /bin/sh) -c; false runs it directly")
	fs.StringVar(&out, "out", "", "accepted as Nomad's; var lock prints nothing of the variable")
	fs.BoolVar(&verbose, "verbose", false, "say what is done, on standard error")
	addAddressFlag(cmd, &address)
	return cmd
}

// readVarLockArgs reads PATH [@SPEC] or @SPEC from the front of args and
// returns the variable and the child command after them.
func readVarLockArgs(args []string, say func(string)) (*structs.Variable, []string, error) {
	v := &structs.Variable{Items: structs.VariableItems{}}
	readSpec := func(ref string) error {
		name := strings.TrimPrefix(ref, "@")
		src, err := os.ReadFile(name)
		if err != nil {
			return fmt.Errorf("Error reading %q: %v", name, err)
		}
		format := "hcl"
		if filepath.Ext(name) == ".json" {
			format = "json"
		}
		say(fmt.Sprintf("Reading variable specification from %q", name))
		spec, _, err := parseVarSpec(name, src, format)
		if err != nil {
			return fmt.Errorf("Failed to parse variable data: %v", err)
		}
		if v.Path == "" {
			v.Path = spec.Path
		}
		v.Namespace, v.Lock = spec.Namespace, spec.Lock
		for k, val := range spec.Items {
			v.Items[k] = val
		}
		return nil
	}
	if strings.HasPrefix(args[0], "@") {
		if err := readSpec(args[0]); err != nil {
			return nil, nil, err
		}
	} else {
		v.Path = strings.Trim(args[0], " /")
		say(fmt.Sprintf("Writing to path %q", v.Path))
	}
	args = args[1:]
	if len(args) > 0 && strings.HasPrefix(args[0], "@") {
		if err := readSpec(args[0]); err != nil {
			return nil, nil, err
		}
		args = args[1:]
	}
	if v.Path == "" {
		return nil, nil, errors.New("Missing path: give it as the first argument or in the specification")
	}
	return v, args, nil
}

// runLockChild runs the child command until it exits or ctx ends (the
// lock was lost: the child is killed), passing SIGINT and SIGTERM on.
func runLockChild(ctx context.Context, args []string, shell bool, stdin io.Reader, stdout, stderr io.Writer) error {
	var c *exec.Cmd
	if shell {
		sh := os.Getenv("SHELL")
		if sh == "" {
			sh = "/bin/sh"
		}
		c = exec.CommandContext(ctx, sh, "-c", strings.Join(args, " "))
	} else {
		c = exec.CommandContext(ctx, args[0], args[1:]...)
	}
	c.Stdin, c.Stdout, c.Stderr = stdin, stdout, stderr
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	if err := c.Start(); err != nil {
		return err
	}
	done := make(chan struct{})
	defer close(done)
	go func() {
		for {
			select {
			case s := <-sigs:
				_ = c.Process.Signal(s)
			case <-done:
				return
			}
		}
	}()
	return c.Wait()
}

// varLocker is the lock operations a lockLeaser drives; each refusal
// because another holds the lock wraps apiclient.ErrLockConflict.
type varLocker interface {
	Acquire(ctx context.Context) error
	Renew(ctx context.Context) error
	Release(ctx context.Context) error
}

// apiVarLocker takes, renews and releases one variable's lock through
// the API; the first acquire learns the lock's ID, which later ones reuse.
type apiVarLocker struct {
	c  *apiclient.Client
	v  *structs.Variable
	id string
}

func (a *apiVarLocker) Acquire(ctx context.Context) error {
	v := *a.v
	v.Lock = a.v.Lock.Copy()
	v.Lock.ID = a.id
	got, err := a.c.VarLockAcquire(ctx, v.Namespace, &v)
	if err != nil {
		return err
	}
	if got.Lock == nil || got.Lock.ID == "" {
		return errors.New("the servers answered the lock without its ID")
	}
	a.id = got.Lock.ID
	return nil
}

func (a *apiVarLocker) Renew(ctx context.Context) error {
	_, err := a.c.VarLockRenew(ctx, a.v.Namespace, a.v.Path, a.id)
	return err
}

func (a *apiVarLocker) Release(ctx context.Context) error {
	_, err := a.c.VarLockRelease(ctx, a.v.Namespace, a.v.Path, a.id)
	return err
}

// lockLeaser runs a function while it holds a lock, as Nomad's
// LockLeaser: it takes the lock (trying again every retryEvery while
// another holds it, or giving up with earlyReturn), renews it every
// renewEvery while the function runs (a server error is retried up to
// maxRetry times in a row), cancels the function's context when the lock
// is lost and then seeks the lock again, and releases it once the
// function returned.
type lockLeaser struct {
	locker      varLocker
	renewEvery  time.Duration
	retryEvery  time.Duration
	maxRetry    int
	earlyReturn bool
	say         func(string)
}

// errLockLost: the lease could not be renewed.
var errLockLost = errors.New("the lock was lost")

func (l *lockLeaser) run(ctx context.Context, fn func(context.Context) error) error {
	// Callers that start together do not all ask at the same instant.
	if !sleepCtx(ctx, time.Duration(rand.Int64N(int64(l.renewEvery/10)+1))) {
		return nil
	}
	for {
		err := l.locker.Acquire(ctx)
		switch {
		case err == nil:
			ferr, lost := l.hold(ctx, fn)
			if !lost {
				if rerr := l.locker.Release(context.WithoutCancel(ctx)); rerr != nil && !errors.Is(rerr, apiclient.ErrLockConflict) {
					return errors.Join(ferr, fmt.Errorf("lock release: %w", rerr))
				}
				return ferr
			}
			l.say("Lock lost; the child was stopped")
		case errors.Is(err, apiclient.ErrLockConflict):
			if l.earlyReturn {
				l.say("The lock is held by another; returning early")
				return nil
			}
		case ctx.Err() != nil:
			return nil
		default:
			return err
		}
		if !sleepCtx(ctx, l.retryEvery) {
			return nil
		}
	}
}

// hold runs fn while renewing the lease; lost reports that the lease
// could not be renewed (fn's context was then cancelled).
func (l *lockLeaser) hold(ctx context.Context, fn func(context.Context) error) (err error, lost bool) {
	fctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- fn(fctx) }()
	tick := time.NewTicker(l.renewEvery)
	defer tick.Stop()
	failures := 0
	for {
		select {
		case err := <-done:
			return err, false
		case <-tick.C:
			rerr := l.locker.Renew(fctx)
			switch {
			case rerr == nil:
				failures = 0
				continue
			case !errors.Is(rerr, apiclient.ErrLockConflict) && failures < l.maxRetry:
				failures++
				l.say(fmt.Sprintf("Renewing the lock failed (%d of %d retries): %v", failures, l.maxRetry, rerr))
				continue
			}
			cancel()
			<-done
			if ctx.Err() != nil {
				return nil, false
			}
			return fmt.Errorf("%w: %v", errLockLost, rerr), true
		}
	}
}

// sleepCtx waits d, or until ctx ends (false).
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

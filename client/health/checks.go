package health

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/droverhq/drover/client/clock"
	"github.com/droverhq/drover/structs"
)

// ErrCheckFailed is wrapped by a failing (critical) check.
var ErrCheckFailed = errors.New("check failed")

// ErrCheckWarning is wrapped by a check whose status is warning (a script
// check that exits 1).
var ErrCheckWarning = errors.New("check warning")

// Defaults for checks that leave interval or timeout unset.
const (
	DefaultCheckInterval = 10 * time.Second
	DefaultCheckTimeout  = 5 * time.Second
)

// Checker runs one probe.
type Checker interface {
	// Check returns nil if the probe passes. It honours ctx's deadline.
	Check(ctx context.Context) error
}

// TCPChecker passes when a TCP connection to Addr opens.
type TCPChecker struct{ Addr string }

// Check dials Addr.
func (c TCPChecker) Check(ctx context.Context) error {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", c.Addr)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrCheckFailed, err)
	}
	return conn.Close()
}

// HTTPChecker passes when a request to URL answers 2xx.
type HTTPChecker struct {
	URL    string
	Method string
	Header http.Header
	// Client defaults to one that does not follow redirects.
	Client *http.Client
}

var noRedirectClient = &http.Client{
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

// Check sends the request.
func (c HTTPChecker) Check(ctx context.Context) error {
	method := c.Method
	if method == "" {
		method = http.MethodGet
	}
	req, err := http.NewRequestWithContext(ctx, method, c.URL, nil)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrCheckFailed, err)
	}
	for k, vs := range c.Header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	client := c.Client
	if client == nil {
		client = noRedirectClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrCheckFailed, err)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("%w: HTTP %s", ErrCheckFailed, resp.Status)
	}
	return nil
}

// ScriptExec runs cmd (the command, then its arguments) inside the named
// task of the allocation and returns its output and exit code; an error
// means the command did not run to its end (a task not running, a
// command not found, ctx's deadline).
type ScriptExec func(ctx context.Context, task string, cmd []string) (output []byte, exitCode int, err error)

// ScriptChecker runs a command inside a task, as Nomad's script checks:
// exit 0 passes, exit 1 is a warning, anything else (or no exit within
// the check's timeout, which kills the command) is critical.
type ScriptChecker struct {
	Task    string
	Command string
	Args    []string
	Exec    ScriptExec
}

// Check runs the command.
func (c ScriptChecker) Check(ctx context.Context) error {
	out, code, err := c.Exec(ctx, c.Task, append([]string{c.Command}, c.Args...))
	text := strings.TrimSpace(string(out))
	switch {
	case err != nil:
		return fmt.Errorf("%w: %w", ErrCheckFailed, err)
	case code == 0:
		return nil
	case code == 1:
		return fmt.Errorf("%w: exit code 1: %s", ErrCheckWarning, text)
	}
	return fmt.Errorf("%w: exit code %d: %s", ErrCheckFailed, code, text)
}

// Check is one named check to run periodically.
type Check struct {
	Name     string
	Interval time.Duration
	Timeout  time.Duration
	Checker  Checker
	// CheckName is the check's own name (Name is service/check), as
	// events name it.
	CheckName string
	// Restart is the check's check_restart, nil when it restarts nothing;
	// RestartTasks are the tasks it restarts (a task's own service: that
	// task; a group service: every task).
	Restart      *structs.CheckRestart
	RestartTasks []string
	// OnUpdate is the check's on_update: what its results count for in a
	// deployment's health (structs.OnUpdate…; empty is require_healthy).
	OnUpdate string
	// Service, Task (empty for a group's service) and Provider name the
	// check's service, for the allocation's check statuses.
	Service, Task, Provider string
}

// CheckResult is one run of a check.
type CheckResult struct {
	Name string
	// Status is structs.CheckPassing, CheckWarning or CheckCritical.
	Status string
	Output string
	// OnUpdate is the check's (Check.OnUpdate).
	OnUpdate string
	// CheckName, Service, Task and Provider are the check's; At is when
	// the result came (set by RunChecks).
	CheckName, Service, Task, Provider string
	At                                 time.Time
}

// Passing reports whether the check passed; a warning does not pass.
func (r CheckResult) Passing() bool { return r.Status == structs.CheckPassing }

// PassesDeployment reports whether the result counts as passing for a
// deployment's health: a pass, or a warning of a check whose on_update is
// ignore_warnings. (A check whose on_update is ignore is not watched for
// the deployment at all; see DeploymentChecks.)
func (r CheckResult) PassesDeployment() bool {
	return r.Passing() || r.Status == structs.CheckWarning && r.OnUpdate == structs.OnUpdateIgnoreWarnings
}

// DeploymentChecks names the checks whose results decide a deployment's
// health: all but those whose on_update is ignore, as Nomad's.
func DeploymentChecks(checks []Check) []string {
	var names []string
	for _, c := range checks {
		if c.OnUpdate != structs.OnUpdateIgnore {
			names = append(names, c.Name)
		}
	}
	return names
}

// resultOf turns a Checker's answer into a result.
func resultOf(name string, err error) CheckResult {
	switch {
	case err == nil:
		return CheckResult{Name: name, Status: structs.CheckPassing, Output: "ok"}
	case errors.Is(err, ErrCheckWarning):
		return CheckResult{Name: name, Status: structs.CheckWarning, Output: err.Error()}
	}
	return CheckResult{Name: name, Status: structs.CheckCritical, Output: err.Error()}
}

// CheckName names a service's check as the tracker knows it.
func CheckName(svc *structs.Service, c *structs.ServiceCheck) string {
	return svc.Name + "/" + c.Name
}

// AllocChecks builds the checks of a group's services (group level and
// task level): http and tcp checks against the allocation's ports on
// 127.0.0.1, script checks through exec inside their task (the check's
// task, else its service's). replace fills runtime references into check
// paths, commands and arguments (may be nil); exec may be nil when the
// group has no script check.
func AllocChecks(alloc *structs.Allocation, tg *structs.TaskGroup, replace func(string) string, exec ScriptExec) ([]Check, error) {
	if replace == nil {
		replace = func(s string) string { return s }
	}
	if tg == nil {
		return nil, nil
	}
	type owned struct {
		svc   *structs.Service
		tasks []string // what its check_restart restarts
		task  string   // the task whose service it is; "" for the group's
	}
	var all []string
	for _, t := range tg.Tasks {
		all = append(all, t.Name)
	}
	var services []owned
	for _, s := range tg.Services {
		services = append(services, owned{s, all, ""})
	}
	for _, t := range tg.Tasks {
		for _, s := range t.Services {
			services = append(services, owned{s, []string{t.Name}, t.Name})
		}
	}
	var out []Check
	for _, o := range services {
		svc := o.svc
		for _, sc := range svc.Checks {
			c := Check{Name: CheckName(svc, sc), CheckName: sc.Name, Interval: sc.Interval, Timeout: sc.Timeout, OnUpdate: sc.OnUpdate,
				Service: replace(svc.Name), Task: o.task, Provider: svc.Provider}
			if sc.TriggersRestarts() {
				r := *sc.CheckRestart
				c.Restart, c.RestartTasks = &r, o.tasks
			}
			if sc.Type == structs.CheckTypeScript {
				task := ScriptTask(svc, sc)
				if exec == nil || task == "" {
					return nil, fmt.Errorf("%w: script check %s has no task to run in", ErrInvalidConfig, CheckName(svc, sc))
				}
				args := make([]string, len(sc.Args))
				for i, a := range sc.Args {
					args[i] = replace(a)
				}
				c.Checker = ScriptChecker{Task: task, Command: replace(sc.Command), Args: args, Exec: exec}
				out = append(out, c)
				continue
			}
			label := sc.PortLabel
			if label == "" {
				label = svc.PortLabel
			}
			port, err := allocPort(alloc, label)
			if err != nil {
				return nil, fmt.Errorf("check %s: %w", CheckName(svc, sc), err)
			}
			addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
			switch sc.Type {
			case structs.CheckTypeTCP:
				c.Checker = TCPChecker{Addr: addr}
			case structs.CheckTypeHTTP:
				path := replace(sc.Path)
				if !strings.HasPrefix(path, "/") {
					path = "/" + path
				}
				proto := sc.Protocol
				if proto == "" {
					proto = "http"
				}
				c.Checker = HTTPChecker{URL: proto + "://" + addr + path, Method: sc.Method, Header: sc.Header}
			default:
				return nil, fmt.Errorf("%w: check %s has unsupported type %q", ErrInvalidConfig, CheckName(svc, sc), sc.Type)
			}
			out = append(out, c)
		}
	}
	return out, nil
}

// ScriptTask names the task a script check runs in: its own task, else
// its service's.
func ScriptTask(svc *structs.Service, c *structs.ServiceCheck) string {
	if c.TaskName != "" {
		return c.TaskName
	}
	return svc.TaskName
}

func allocPort(alloc *structs.Allocation, label string) (int, error) {
	if n, err := strconv.Atoi(label); err == nil {
		return n, nil
	}
	if alloc != nil && alloc.AllocatedResources != nil {
		for _, p := range alloc.AllocatedResources.Shared.Ports {
			if p.Label == label {
				return p.Value, nil
			}
		}
	}
	return 0, fmt.Errorf("%w: no port labelled %q", ErrInvalidConfig, label)
}

// RunChecks runs every check at its interval until ctx ends, reporting
// each result through report (from the check's goroutine). The first run
// of each check is immediate. It returns at once; wait on the returned
// function to know all goroutines have stopped.
func RunChecks(ctx context.Context, clk clock.Clock, checks []Check, report func(CheckResult)) (wait func()) {
	var wg sync.WaitGroup
	for _, c := range checks {
		wg.Go(func() { runCheck(ctx, clk, c, report) })
	}
	return wg.Wait
}

func runCheck(ctx context.Context, clk clock.Clock, c Check, report func(CheckResult)) {
	interval, timeout := c.Interval, c.Timeout
	if interval <= 0 {
		interval = DefaultCheckInterval
	}
	if timeout <= 0 {
		timeout = DefaultCheckTimeout
	}
	timer := clk.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C():
		}
		cctx, cancel := context.WithTimeout(ctx, timeout)
		err := c.Checker.Check(cctx)
		cancel()
		if ctx.Err() != nil {
			return
		}
		r := resultOf(c.Name, err)
		r.OnUpdate, r.CheckName, r.Service, r.Task, r.Provider, r.At = c.OnUpdate, c.CheckName, c.Service, c.Task, c.Provider, clk.Now()
		report(r)
		timer.Reset(interval)
	}
}

// Package template renders a task's templates with consul-template's
// engine, as Nomad's client does: before the task starts, and again when
// the data they read changes, acting on each change as the template's
// change_mode says. Templates read Nomad's own API (nomadVar,
// nomadService…) from a server, with the task's identity when there is
// one; Consul and Vault functions are refused.
//
// The Manager is a shell around consul-template's runner: the runner
// watches the data and executes the templates; the Manager reads their
// sources and writes their destinations itself, through the allocation's
// directory opened with client/allocfs (a task's symlink never leads the
// client outside it), turns the runner's render events into the task's
// events and asks the task's Lifecycle to restart, signal or run a
// script.
package template

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	ctconf "github.com/hashicorp/consul-template/config"
	"github.com/hashicorp/consul-template/manager"
	envparse "github.com/hashicorp/go-envparse"

	"github.com/droverhq/drover/structs"
	"github.com/droverhq/drover/tmplcheck"
)

// Sentinel errors.
var (
	// ErrInvalidConfig: the manager cannot be built as configured.
	ErrInvalidConfig = errors.New("invalid template config")
	// ErrRenderTimeout: the templates did not all render within the
	// client's render timeout.
	ErrRenderTimeout = errors.New("templates not rendered in time")
	// ErrTemplateFailed: the engine gave up on a template (it cannot be
	// executed, a read failed for good).
	ErrTemplateFailed = errors.New("template failed")
)

// IdentitySource gives a task's workload identity: the token its
// templates present to the servers (X-Nomad-Token) to read the variables
// of its job, group and task. The client agent's TaskIdentity is one
// (client/identity.go): it asks the servers as the node.
type IdentitySource interface {
	TaskIdentity(ctx context.Context, allocID, task string) (string, error)
}

// Server is where templates read Nomad's API.
type Server struct {
	// Address is a server's HTTP API ("http://host:4646"); empty means
	// templates that read Nomad's API wait for ever (until the render
	// timeout).
	Address string
	// Token is sent as X-Nomad-Token; empty sends none (ACLs off).
	Token string
	// Namespace is the job's: nomadVar "path" reads it.
	Namespace string
}

// Lifecycle is what the manager may do to its task. The task runner
// implements it.
type Lifecycle interface {
	// Running reports whether the task runs.
	Running() bool
	// RestartForTemplate restarts the running task at once, outside its
	// restart policy's attempts (Nomad's template restart).
	RestartForTemplate(reason string)
	// SignalForTemplate sends a signal to the running task.
	SignalForTemplate(signal, message string) error
	// Exec runs a command in the running task (the driver's exec).
	Exec(ctx context.Context, cmd []string) (output []byte, exitCode int, err error)
	// Fail kills the task as failed, with the reason as its event.
	Fail(reason string)
	// Event records a task event.
	Event(typ, message string)
}

// Config is what a Manager needs.
type Config struct {
	Templates []*structs.Template
	// TaskDir is the task's directory and AllocDir the allocation's
	// shared one, on the client's host; both are inside AllocRoot, the
	// allocation's directory (empty: TaskDir's parent), through which
	// every file a template names is opened (client/allocfs).
	TaskDir, AllocDir, AllocRoot string
	// Env is the task's environment, which the env functions read (and
	// nothing else: never the client's own) and destinations may refer
	// to.
	Env       map[string]string
	Server    Server
	Settings  Settings
	Lifecycle Lifecycle
}

// Manager renders one task's templates. Create it with New; Prestart
// starts it; Stop ends it.
type Manager struct {
	cfg      Config
	settings Settings
	// engines are the runners of the templates: one for those watched
	// for changes, one for those rendered once (once = true).
	engines []*engine
	files   files

	startOnce sync.Once
	firstDone chan struct{}
	firstErr  error
	stopOnce  sync.Once
	stopCh    chan struct{}

	mu  sync.Mutex
	env map[string]string // from templates with env = true

	// afterFirst, in tests, runs once the first render is handed to
	// Prestart, before the changes are watched.
	afterFirst func()
}

// engine is one of consul-template's runners and its templates.
type engine struct {
	runner *manager.Runner
	// lookup maps the runner's template IDs to the task's templates
	// (templates of equal text share an ID).
	lookup map[string][]*structs.Template
	once   bool
}

// New builds the manager and its engines; nothing renders until Prestart.
// A template that cannot be built (a source that cannot be read, a path
// that leaves the task's directory, a template that calls itself) is an
// error wrapping ErrInvalidConfig, and a nil *Manager.
func New(cfg Config) (*Manager, error) {
	if len(cfg.Templates) == 0 || cfg.TaskDir == "" || cfg.Lifecycle == nil {
		return nil, fmt.Errorf("%w: templates, task dir and lifecycle are required", ErrInvalidConfig)
	}
	m := &Manager{
		cfg: cfg, settings: cfg.Settings.withDefaults(),
		firstDone: make(chan struct{}),
		stopCh:    make(chan struct{}),
	}
	if err := m.files.open(cfg); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	if err := m.build(); err != nil {
		m.files.close()
		return nil, err
	}
	return m, nil
}

// build makes the engines.
func (m *Manager) build() error {
	cfg := m.cfg
	var watched, once []*structs.Template
	for _, t := range cfg.Templates {
		if t.Once {
			once = append(once, t)
		} else {
			watched = append(watched, t)
		}
	}
	for _, group := range []struct {
		ts   []*structs.Template
		once bool
	}{{watched, false}, {once, true}} {
		if len(group.ts) == 0 {
			continue
		}
		e, err := m.newEngine(group.ts, group.once)
		if err != nil {
			return err
		}
		m.engines = append(m.engines, e)
	}
	return nil
}

// newEngine builds a runner for templates.
func (m *Manager) newEngine(templates []*structs.Template, once bool) (*engine, error) {
	ctmpls := make(ctconf.TemplateConfigs, 0, len(templates))
	byConf := map[*ctconf.TemplateConfig]*structs.Template{}
	for _, t := range templates {
		ct, err := m.templateConfig(t)
		if err != nil {
			return nil, err
		}
		ctmpls = append(ctmpls, ct)
		byConf[ct] = t
	}
	conf := ctconf.DefaultConfig()
	conf.Templates = &ctmpls
	conf.Once = once
	m.serverConfig(conf)
	// The engine reads no source and writes no destination itself.
	conf.ReaderFunc = m.files.readSource
	conf.RendererFunc = m.files.render
	conf.Finalize()
	runner, err := manager.NewRunner(conf, false)
	if err != nil {
		return nil, fmt.Errorf("%w: %s", ErrInvalidConfig, m.describe(err))
	}
	// The env functions are replaced (envFuncs); this is for the engine's
	// other uses.
	runner.Env = maps.Clone(m.cfg.Env)
	e := &engine{runner: runner, lookup: map[string][]*structs.Template{}, once: once}
	for id, cts := range runner.TemplateConfigMapping() {
		for _, ct := range cts {
			e.lookup[id] = append(e.lookup[id], byConf[ct])
		}
	}
	return e, nil
}

// serverConfig points the engine at a server for Nomad's API and at
// nothing else: no Consul, no Vault, nothing from the client's own
// environment (NOMAD_ADDR, NOMAD_TOKEN, VAULT_TOKEN…).
func (m *Manager) serverConfig(conf *ctconf.Config) {
	s, set := m.cfg.Server, m.settings
	enabled := s.Address != ""
	conf.Nomad.Address = ctconf.String(s.Address)
	conf.Nomad.Enabled = ctconf.Bool(enabled)
	conf.Nomad.Token = ctconf.String(s.Token)
	conf.Nomad.Namespace = ctconf.String(s.Namespace)
	conf.Nomad.Retry = &ctconf.RetryConfig{
		Enabled:    ctconf.Bool(true),
		Attempts:   ctconf.Int(set.NomadRetry.Attempts),
		Backoff:    ctconf.TimeDuration(set.NomadRetry.Backoff),
		MaxBackoff: ctconf.TimeDuration(set.NomadRetry.MaxBackoff),
	}
	conf.Consul.Address = ctconf.String("")
	conf.Consul.Token = ctconf.String("")
	conf.Vault.Address = ctconf.String("")
	conf.Vault.Token = ctconf.String("")
	conf.Vault.RenewToken = ctconf.Bool(false)
	conf.MaxStale = ctconf.TimeDuration(set.MaxStale)
	conf.BlockQueryWaitTime = ctconf.TimeDuration(set.BlockQueryWait)
}

// templateConfig turns a task's template into the engine's: its source
// read, its destination named, through the allocation's directory.
func (m *Manager) templateConfig(t *structs.Template) (*ctconf.TemplateConfig, error) {
	perms := t.Perms
	if perms == "" {
		perms = structs.DefaultTemplatePerms
	}
	v, err := strconv.ParseUint(perms, 8, 12)
	if err != nil {
		return nil, fmt.Errorf("%w: perms %q are not octal", ErrInvalidConfig, perms)
	}
	mode := os.FileMode(v)
	dest, err := m.files.destination(t, m.interpolate(t.DestPath), mode)
	if err != nil {
		return nil, fmt.Errorf("%w: destination %s: %w", ErrInvalidConfig, t.DestPath, err)
	}
	ct := ctconf.DefaultTemplateConfig()
	ct.Destination = ctconf.String(dest)
	text := t.EmbeddedTmpl
	if t.SourcePath != "" {
		src, b, err := m.files.source(m.interpolate(t.SourcePath))
		if err != nil {
			return nil, fmt.Errorf("%w: source %s: %w", ErrInvalidConfig, t.SourcePath, err)
		}
		ct.Source = ctconf.String(src)
		text = string(b)
	} else {
		ct.Contents = ctconf.String(t.EmbeddedTmpl)
	}
	if err := tmplcheck.Recursion(text, t.LeftDelim, t.RightDelim, !denied(m.settings.FunctionDenylist, "executeTemplate")); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrInvalidConfig, t.DestPath, err)
	}
	ct.LeftDelim = ctconf.String(t.LeftDelim)
	ct.RightDelim = ctconf.String(t.RightDelim)
	ct.ErrMissingKey = ctconf.Bool(t.ErrMissingKey)
	ct.CreateDestDirs = ctconf.Bool(true)
	ct.Perms = &mode
	ct.Uid, ct.Gid = t.Uid, t.Gid
	ct.FunctionDenylist = append([]string(nil), m.settings.FunctionDenylist...)
	maps.Copy(ct.ExtFuncMap, tmplcheck.RefusedFuncMap())
	// file and the env functions read what the task may, never the
	// client's own files and environment (the denylist still applies to
	// them: the engine denies after it adds these).
	ct.ExtFuncMap["file"] = m.files.fileFunc
	maps.Copy(ct.ExtFuncMap, envFuncs(m.cfg.Env))
	minD, maxD := m.settings.wait(t)
	ct.Wait = &ctconf.WaitConfig{Enabled: ctconf.Bool(minD > 0 || maxD > 0), Min: ctconf.TimeDuration(minD), Max: ctconf.TimeDuration(maxD)}
	ct.Finalize()
	return ct, nil
}

// dirVars are left for structs.TemplatePath, which knows where they
// point inside the task's directory.
var dirVars = map[string]bool{
	"NOMAD_TASK_DIR": true, "NOMAD_SECRETS_DIR": true, "NOMAD_ALLOC_DIR": true,
	"DROVER_TASK_DIR": true, "DROVER_SECRETS_DIR": true, "DROVER_ALLOC_DIR": true,
}

// interpolate replaces ${NAME} with the task's variable NAME.
func (m *Manager) interpolate(s string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		j := strings.IndexByte(s[i:], '}')
		if j < 0 {
			b.WriteString(s)
			return b.String()
		}
		name := s[i+2 : i+j]
		b.WriteString(s[:i])
		if v, ok := m.cfg.Env[name]; ok && !dirVars[name] {
			b.WriteString(v)
		} else {
			b.WriteString(s[i : i+j+1])
		}
		s = s[i+j+1:]
	}
}

// Prestart starts the engine on its first call and waits, at most the
// render timeout, for every template to render once; it returns the
// variables of the templates with env = true. Later calls (a restart)
// return the current variables at once. A failure of the first render
// is returned by every call.
func (m *Manager) Prestart(ctx context.Context) (map[string]string, error) {
	m.startOnce.Do(func() {
		go m.run()
	})
	select {
	case <-m.firstDone:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if m.firstErr != nil {
		return nil, m.firstErr
	}
	return m.Env(), nil
}

// Env returns the variables of the templates with env = true, as last
// rendered.
func (m *Manager) Env() map[string]string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return maps.Clone(m.env)
}

// Stop stops the engine; the rendered files stay. A nil Manager stops
// at once.
func (m *Manager) Stop() {
	if m == nil {
		return
	}
	m.stopOnce.Do(func() {
		close(m.stopCh)
		for _, e := range m.engines {
			e.runner.Stop()
		}
		m.files.close()
	})
}

// run is the manager's goroutine: the first render, then the changes.
func (m *Manager) run() {
	for _, e := range m.engines {
		go e.runner.Start()
	}
	deadline := time.NewTimer(m.settings.RenderTimeout)
	defer deadline.Stop()
	dirty, err := false, error(nil)
	for _, e := range m.engines {
		d, ferr := m.firstRender(e, deadline.C)
		if ferr != nil {
			err = ferr
			break
		}
		dirty = dirty || d
	}
	if err == nil {
		err = m.loadEnv()
	}
	// What the task starts with: each template's last render when the
	// first render is done. Any later render is a change, however soon
	// this goroutine runs again once Prestart has returned (the task may
	// start, and a variable change, before it does).
	first := map[string]time.Time{}
	for _, e := range m.engines {
		for id, ev := range e.runner.RenderEvents() {
			first[id] = ev.LastDidRender
		}
	}
	m.firstErr = err
	close(m.firstDone)
	if err != nil {
		m.Stop()
		return
	}
	if m.afterFirst != nil {
		m.afterFirst()
	}
	var watched *engine
	for _, e := range m.engines {
		if !e.once {
			watched = e
		}
	}
	handled := first
	if dirty && m.cfg.Lifecycle.Running() {
		// A client that restarted found the task running and its files
		// out of date: the change applies as any other.
		handled = map[string]time.Time{}
		for _, e := range m.engines {
			m.onRendered(e, handled)
		}
	}
	if watched == nil {
		return
	}
	// Even when every template is noop: each change is a task event.
	m.watch(watched, handled)
}

// firstRender waits for every template to render once and reports
// whether a file was written (rather than found as it should be).
func (m *Manager) firstRender(e *engine, timeout <-chan time.Time) (dirty bool, err error) {
	// As Nomad's: a "Missing" event once the list of missing data has
	// held for the event rate (every first pass misses what it has not
	// fetched yet), at most one per event rate.
	var missing, emitted string
	pending := time.NewTimer(time.Hour)
	pending.Stop()
	defer pending.Stop()
	armed := false
	for {
		select {
		case <-m.stopCh:
			return false, context.Canceled
		case err := <-e.runner.ErrCh:
			return false, fmt.Errorf("%w: %s", ErrTemplateFailed, m.describe(err))
		case <-e.runner.TemplateRenderedCh():
			events := e.runner.RenderEvents()
			if len(events) < len(e.lookup) {
				continue
			}
			done, dirty := true, false
			for _, ev := range events {
				if ev.LastWouldRender.IsZero() {
					done = false
				}
				if ev.WouldRender && ev.DidRender {
					dirty = true
				}
			}
			if done {
				return dirty, nil
			}
		case <-e.runner.RenderEventCh():
			missing = e.missing()
			if missing != "" && missing != emitted && !armed {
				armed = true
				pending.Reset(m.settings.EventRate)
			}
		case <-pending.C:
			armed = false
			if missing != "" && missing != emitted {
				emitted = missing
				m.cfg.Lifecycle.Event(structs.TemplateEventType, structs.TemplateMissingMessagePrefix+missing)
			}
		case <-timeout:
			return false, fmt.Errorf("%w: waited %s for %s", ErrRenderTimeout, m.settings.RenderTimeout, e.unrendered())
		}
	}
}

// missing lists the data the templates wait for, as Nomad's event does
// (three at most, then how many more).
func (e *engine) missing() string {
	set := map[string]bool{}
	for _, e := range e.runner.RenderEvents() {
		if e.MissingDeps == nil {
			continue
		}
		for _, d := range e.MissingDeps.List() {
			set[d.String()] = true
		}
	}
	list := make([]string, 0, len(set))
	for k := range set {
		list = append(list, k)
	}
	sort.Strings(list)
	if len(list) > 3 {
		list = append(list[:3], fmt.Sprintf("and %d more", len(list)-3))
	}
	return strings.Join(list, ", ")
}

// unrendered names the templates that have not rendered, each with the
// data it waits for.
func (e *engine) unrendered() string {
	events := e.runner.RenderEvents()
	var out []string
	for id, ts := range e.lookup {
		ev := events[id]
		if ev != nil && !ev.LastWouldRender.IsZero() {
			continue
		}
		why := "not yet evaluated"
		if ev != nil && ev.MissingDeps != nil && ev.MissingDeps.Len() > 0 {
			var deps []string
			for _, d := range ev.MissingDeps.List() {
				deps = append(deps, d.String())
			}
			sort.Strings(deps)
			why = structs.TemplateMissingMessagePrefix + strings.Join(deps, ", ")
		}
		for _, t := range ts {
			out = append(out, fmt.Sprintf("%s (%s)", t.DestPath, why))
		}
	}
	sort.Strings(out)
	return strings.Join(out, "; ")
}

// describe names the sources and destinations in an engine error, which
// speaks of the names the engine was given.
func (m *Manager) describe(err error) string {
	return m.files.describe(err.Error())
}

// loadEnv reads the variables of the templates with env = true, from
// what was last rendered (not from the file, which the task may change).
func (m *Manager) loadEnv() error {
	env := map[string]string{}
	for _, t := range m.cfg.Templates {
		if !t.Envvars {
			continue
		}
		b, ok := m.files.rendered(t)
		if !ok {
			return fmt.Errorf("%w: reading the variables of %s: not rendered", ErrTemplateFailed, t.DestPath)
		}
		vars, err := envparse.Parse(bytes.NewReader(b))
		if err != nil {
			return fmt.Errorf("%w: %s is not KEY=value lines: %w", ErrTemplateFailed, t.DestPath, err)
		}
		maps.Copy(env, vars)
	}
	m.mu.Lock()
	m.env = env
	m.mu.Unlock()
	return nil
}

// watch acts on the renders after those in handled.
func (m *Manager) watch(e *engine, handled map[string]time.Time) {
	for {
		select {
		case <-m.stopCh:
			return
		case err := <-e.runner.ErrCh:
			m.cfg.Lifecycle.Fail(fmt.Sprintf("Template failed: %s", m.describe(err)))
			return
		case <-e.runner.TemplateRenderedCh():
			m.onRendered(e, handled)
		}
	}
}

// onRendered applies the change modes of the templates that rendered
// since they were last handled: one restart for all, else
// each signal once, and each script; then a random pause up to the
// largest splay first, as Nomad's.
func (m *Manager) onRendered(e *engine, handled map[string]time.Time) {
	events := e.runner.RenderEvents()
	restart, envChanged := false, false
	signals := map[string]bool{}
	var scripts []*structs.ChangeScript
	var splay time.Duration
	var ids []string
	for id, ev := range events {
		if h, ok := handled[id]; ok && !ev.LastDidRender.After(h) {
			continue
		}
		if ev.LastDidRender.IsZero() {
			continue
		}
		ids = append(ids, id)
		for _, t := range e.lookup[id] {
			envChanged = envChanged || t.Envvars
			switch t.ChangeMode {
			case structs.TemplateChangeModeRestart:
				restart = true
			case structs.TemplateChangeModeSignal:
				signals[t.ChangeSignal] = true
			case structs.TemplateChangeModeScript:
				if t.ChangeScript != nil {
					scripts = append(scripts, t.ChangeScript)
				}
			case structs.TemplateChangeModeNoop:
				m.cfg.Lifecycle.Event(structs.TemplateEventType, structs.TemplateRerenderedMessage+": "+t.DestPath)
				continue
			}
			splay = max(splay, t.Splay)
		}
	}
	if len(ids) == 0 {
		return
	}
	for _, id := range ids {
		handled[id] = events[id].LastDidRender
	}
	if envChanged {
		if err := m.loadEnv(); err != nil {
			m.cfg.Lifecycle.Fail(fmt.Sprintf("Template failed to read environment variables: %v", err))
			return
		}
	}
	if !restart && len(signals) == 0 && len(scripts) == 0 {
		return
	}
	if splay > 0 {
		select {
		case <-time.After(rand.N(splay)):
		case <-m.stopCh:
			return
		}
	}
	if restart {
		m.cfg.Lifecycle.RestartForTemplate(structs.TemplateRestartMessage)
		return
	}
	names := make([]string, 0, len(signals))
	for s := range signals {
		names = append(names, s)
	}
	sort.Strings(names)
	for _, s := range names {
		if err := m.cfg.Lifecycle.SignalForTemplate(s, structs.TemplateRerenderedMessage); err != nil {
			m.cfg.Lifecycle.Fail(fmt.Sprintf("Template failed to send signal %s: %v", s, err))
			return
		}
	}
	for _, s := range scripts {
		m.runScript(s)
	}
}

// runScript runs a change_script in the task and records how it went; a
// failing script with fail_on_error kills the task.
func (m *Manager) runScript(s *structs.ChangeScript) {
	ctx, cancel := context.WithTimeout(context.Background(), s.Timeout)
	defer cancel()
	go func() {
		select {
		case <-m.stopCh:
			cancel()
		case <-ctx.Done():
		}
	}()
	out, code, err := m.cfg.Lifecycle.Exec(ctx, append([]string{s.Command}, s.Args...))
	if err == nil && code == 0 {
		m.cfg.Lifecycle.Event(structs.TemplateEventType, fmt.Sprintf("Template successfully ran script %s with arguments: %v. Exit code: 0", s.Command, s.Args))
		return
	}
	why := fmt.Sprintf("exit code %d", code)
	if err != nil {
		why = err.Error()
	} else if o := strings.TrimSpace(string(out)); o != "" {
		why += ": " + truncate(o, 200)
	}
	msg := fmt.Sprintf("%s %s with arguments %v on change: %s", structs.TemplateScriptFailedPrefix, s.Command, s.Args, why)
	m.cfg.Lifecycle.Event(structs.TemplateEventType, msg)
	if s.FailOnError {
		m.cfg.Lifecycle.Fail("Template script failed, task is being killed")
	}
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

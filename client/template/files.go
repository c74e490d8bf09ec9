package template

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"

	"github.com/hashicorp/consul-template/renderer"

	"github.com/droverhq/drover/client/allocfs"
	"github.com/droverhq/drover/structs"
)

// MaxFileSize bounds what a template reads from a file: its source, and
// each file its file function reads.
const MaxFileSize = 1 << 20

// errStopped: the manager was stopped while the engine rendered.
var errStopped = errors.New("the task's templates are stopped")

// files is how a manager reads and writes the files its templates name:
// through the allocation's directory, opened (client/allocfs), so that a
// symlink a task made leads nowhere outside the allocation. The engine is
// given names relative to that directory ("web/local/app.conf",
// "alloc/shared.conf"), never host paths, and reads and writes nothing
// itself (Config.ReaderFunc and RendererFunc are these).
//
// Only when the operator lifted the sandbox (disable_file_sandbox) does
// a path that leaves the allocation as written reach the host's file
// system directly: the operator then gives every job's author the
// client's own access to the host's files.
type files struct {
	taskDir, sharedDir string // host paths
	taskRel, sharedRel string // relative to the root
	disableSandbox     bool

	// Written while the manager is built, read-only afterwards.
	sources map[string][]byte            // a source's name → its text
	dests   map[string]*dest             // a destination's name → it
	byTmpl  map[*structs.Template]string // a template → its destination's name
	names   map[string]string            // a name → the job's words for it

	mu     sync.RWMutex // held to use root; Lock to close it
	root   *allocfs.Root
	closed bool

	lastMu sync.Mutex
	last   map[string][]byte // a destination's name → what was last rendered
}

// dest is a template's destination.
type dest struct {
	t    *structs.Template
	name string // relative to the root; a host path when host
	host bool
	perm os.FileMode
}

// open opens the allocation's directory.
func (f *files) open(cfg Config) error {
	rootDir := cfg.AllocRoot
	if rootDir == "" {
		rootDir = filepath.Dir(filepath.Clean(cfg.TaskDir))
	}
	r, err := allocfs.Open(rootDir)
	if err != nil {
		return fmt.Errorf("opening the allocation directory: %w", err)
	}
	f.root = r
	f.taskDir = filepath.Clean(cfg.TaskDir)
	f.sharedDir = cfg.AllocDir
	if f.sharedDir == "" {
		f.sharedDir = filepath.Join(rootDir, "alloc")
	}
	f.sharedDir = filepath.Clean(f.sharedDir)
	if f.taskRel, err = r.Rel(f.taskDir); err == nil && f.taskRel != "." {
		f.sharedRel, err = r.Rel(f.sharedDir)
	}
	if err != nil || f.taskRel == "." {
		r.Close()
		return fmt.Errorf("the task directory %s and shared directory %s must be inside the allocation directory %s", cfg.TaskDir, f.sharedDir, rootDir)
	}
	f.taskRel, f.sharedRel = filepath.ToSlash(f.taskRel), filepath.ToSlash(f.sharedRel)
	f.disableSandbox = cfg.Settings.DisableSandbox
	f.sources = map[string][]byte{}
	f.dests = map[string]*dest{}
	f.byTmpl = map[*structs.Template]string{}
	f.names = map[string]string{}
	f.last = map[string][]byte{}
	return nil
}

// close releases the allocation's directory once no render uses it.
func (f *files) close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.closed && f.root != nil {
		f.root.Close()
	}
	f.closed = true
}

// dirVarReplacer is structs.TemplatePath's: where the directory
// variables point inside the task's directory.
var dirVarReplacer = strings.NewReplacer(
	"${NOMAD_TASK_DIR}", "local", "${NOMAD_SECRETS_DIR}", "secrets", "${NOMAD_ALLOC_DIR}", "alloc",
	"${DROVER_TASK_DIR}", "local", "${DROVER_SECRETS_DIR}", "secrets", "${DROVER_ALLOC_DIR}", "alloc",
)

// resolve names a source's or destination's path p (its variables
// already replaced) relative to the allocation's directory: inside the
// task's directory, or for alloc/… the shared one. A path that climbs
// out is refused, unless the sandbox is off: then a path that leaves the
// allocation is a host path (host).
func (f *files) resolve(p string) (name string, host bool, err error) {
	rel, where, ok := structs.TemplatePath(p)
	if ok {
		base := f.taskRel
		if where == structs.TemplateInAlloc {
			base = f.sharedRel
		}
		return path.Join(base, rel), false, nil
	}
	if !f.disableSandbox {
		return "", false, fmt.Errorf("%q escapes the task directory", p)
	}
	hp := filepath.Join(f.taskDir, strings.TrimLeft(dirVarReplacer.Replace(p), "/"))
	if rel, err := f.root.Rel(hp); err == nil {
		return filepath.ToSlash(rel), false, nil
	}
	return hp, true, nil
}

// destination names a template's destination p for the engine.
func (f *files) destination(t *structs.Template, p string, perm os.FileMode) (string, error) {
	name, host, err := f.resolve(p)
	if err != nil {
		return "", err
	}
	if !host && (name == "." || name == f.taskRel || name == f.sharedRel) {
		return "", fmt.Errorf("%q names a directory", p)
	}
	f.dests[name] = &dest{t: t, name: name, host: host, perm: perm}
	f.byTmpl[t] = name
	f.names[name] = t.DestPath
	return name, nil
}

// source reads a template's source p (its variables already replaced),
// once, as the engine would: the engine's ReaderFunc hands it what was
// read here.
func (f *files) source(p string) (string, []byte, error) {
	name, host, err := f.resolve(p)
	if err != nil {
		return "", nil, err
	}
	if _, ok := f.names[name]; !ok {
		f.names[name] = p
	}
	var b []byte
	if host {
		b, err = readHost(name, MaxFileSize)
	} else {
		b, err = f.read(name, MaxFileSize)
	}
	if err != nil {
		return "", nil, f.hide(err)
	}
	f.sources[name] = b
	return name, b, nil
}

// readSource is the engine's ReaderFunc: the sources read when the
// manager was built.
func (f *files) readSource(name string) ([]byte, error) {
	b, ok := f.sources[name]
	if !ok {
		return nil, fmt.Errorf("source %q was not read", name)
	}
	return b, nil
}

// read reads a file through the root.
func (f *files) read(name string, limit int64) ([]byte, error) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	if f.closed {
		return nil, errStopped
	}
	return f.root.ReadFile(name, limit)
}

// readHost reads a host file, when the sandbox is off.
func readHost(name string, limit int64) ([]byte, error) {
	fh, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	b, err := io.ReadAll(io.LimitReader(fh, limit+1))
	if err == nil && int64(len(b)) > limit {
		err = fmt.Errorf("%q is larger than %d bytes", name, limit)
	}
	return b, err
}

// hide says an escape without the host's path of the allocation.
func (f *files) hide(err error) error {
	return errors.New(f.describe(strings.ReplaceAll(err.Error(), f.root.Dir()+"/", "")))
}

// render is the engine's RendererFunc: it writes a destination through
// the root (a new file renamed over it: a symlink there is replaced,
// never followed), with the template's perms and owner, unless the file
// is already as rendered. DidRender says it wrote: on a client's restart,
// whether the task's files were out of date.
func (f *files) render(in *renderer.RenderInput) (*renderer.RenderResult, error) {
	d := f.dests[in.Path]
	if d == nil {
		return nil, fmt.Errorf("no destination %q", in.Path)
	}
	if d.host {
		res, err := renderer.Render(in)
		if err == nil {
			f.remember(d, in.Contents)
		}
		return res, err
	}
	f.mu.RLock()
	defer f.mu.RUnlock()
	if f.closed {
		return nil, errStopped
	}
	if f.current(d, in.Contents) {
		f.remember(d, in.Contents)
		return &renderer.RenderResult{WouldRender: true, Contents: in.Contents}, nil
	}
	if err := f.root.WriteFile(d.name, in.Contents, d.perm); err != nil {
		return nil, f.hide(err)
	}
	if d.t.Uid != nil || d.t.Gid != nil {
		uid, gid := owner(d.t)
		if err := f.root.Lchown(d.name, uid, gid); err != nil {
			return nil, f.hide(err)
		}
	}
	f.remember(d, in.Contents)
	return &renderer.RenderResult{DidRender: true, WouldRender: true, Contents: in.Contents}, nil
}

// owner is a template's uid and gid, -1 for one it leaves.
func owner(t *structs.Template) (uid, gid int) {
	uid, gid = -1, -1
	if t.Uid != nil {
		uid = *t.Uid
	}
	if t.Gid != nil {
		gid = *t.Gid
	}
	return uid, gid
}

// current reports whether a destination holds contents already, owned as
// the template says. Called with mu held.
func (f *files) current(d *dest, contents []byte) bool {
	b, err := f.root.ReadFile(d.name, int64(max(len(contents), 1)))
	if err != nil || !bytes.Equal(b, contents) {
		return false
	}
	if d.t.Uid == nil && d.t.Gid == nil {
		return true
	}
	fi, err := f.root.Stat(d.name)
	if err != nil {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return false
	}
	uid, gid := owner(d.t)
	return (uid < 0 || int(st.Uid) == uid) && (gid < 0 || int(st.Gid) == gid)
}

func (f *files) remember(d *dest, contents []byte) {
	f.lastMu.Lock()
	f.last[d.name] = bytes.Clone(contents)
	f.lastMu.Unlock()
}

// rendered is what a template last rendered.
func (f *files) rendered(t *structs.Template) ([]byte, bool) {
	f.lastMu.Lock()
	defer f.lastMu.Unlock()
	b, ok := f.last[f.byTmpl[t]]
	return b, ok
}

// fileFunc is the templates' file function. It reads a file when the
// template renders, through the root: a relative path inside the task's
// directory (alloc/… the shared one), as a template's source; an absolute
// path on the host inside the task's or the shared directory (a raw_exec
// task's NOMAD_TASK_DIR) as that; any other absolute path inside the
// task's directory (a container's /local/x), or, with the sandbox off, on
// the host. Unlike consul-template's, the file is not watched: a change
// of it renders nothing.
func (f *files) fileFunc(p string) (string, error) {
	if p == "" {
		return "", nil
	}
	name, host, err := f.filePath(p)
	if err != nil {
		return "", fmt.Errorf("file %q: %w", p, err)
	}
	var b []byte
	if host {
		b, err = readHost(name, MaxFileSize)
	} else {
		b, err = f.read(name, MaxFileSize)
	}
	if err != nil {
		return "", fmt.Errorf("file %q: %w", p, f.hide(err))
	}
	return string(b), nil
}

func (f *files) filePath(p string) (string, bool, error) {
	if filepath.IsAbs(p) {
		clean := filepath.Clean(p)
		for _, d := range [...]struct{ host, rel string }{{f.taskDir, f.taskRel}, {f.sharedDir, f.sharedRel}} {
			if r, err := filepath.Rel(d.host, clean); err == nil && (r == "." || filepath.IsLocal(r)) {
				return path.Join(d.rel, filepath.ToSlash(r)), false, nil
			}
		}
		if f.disableSandbox {
			if r, err := f.root.Rel(clean); err == nil {
				return filepath.ToSlash(r), false, nil
			}
			return clean, true, nil
		}
	}
	return f.resolve(p)
}

// describe replaces the names given to the engine in s with the job's.
func (f *files) describe(s string) string {
	names := make([]string, 0, len(f.names))
	for n := range f.names {
		names = append(names, n)
	}
	// The longest first: a name may begin another.
	sort.Slice(names, func(i, j int) bool { return len(names[i]) > len(names[j]) })
	for _, n := range names {
		s = strings.ReplaceAll(s, n, f.names[n])
	}
	// Any other path in the task's directory, as the task names it.
	if f.taskRel != "" {
		s = strings.ReplaceAll(s, `"`+f.taskRel+"/", `"`)
	}
	return s
}

// envFuncs are the env functions of a task's templates: they read the
// task's environment only. consul-template's read the client's own for a
// name the task lacks.
func envFuncs(env map[string]string) map[string]any {
	env = maps.Clone(env)
	return map[string]any{
		"env": func(k string) (string, error) { return env[k], nil },
		"mustEnv": func(k string) (string, error) {
			if v := env[k]; v != "" {
				return v, nil
			}
			return "", fmt.Errorf("required environment variable %s is empty", k)
		},
		"envOrDefault": func(k, def string) (string, error) {
			if v, ok := env[k]; ok {
				return v, nil
			}
			return def, nil
		},
	}
}

// denied reports whether a function is in a denylist of glob patterns
// ('*' matches any run of characters), as the engine matches it.
func denied(list []string, name string) bool {
	for _, p := range list {
		if globMatch(p, name) {
			return true
		}
	}
	return false
}

func globMatch(pattern, s string) bool {
	parts := strings.Split(pattern, "*")
	if len(parts) == 1 {
		return pattern == s
	}
	if !strings.HasPrefix(s, parts[0]) {
		return false
	}
	s = s[len(parts[0]):]
	last := parts[len(parts)-1]
	for _, p := range parts[1 : len(parts)-1] {
		i := strings.Index(s, p)
		if i < 0 {
			return false
		}
		s = s[i+len(p):]
	}
	return strings.HasSuffix(s, last)
}

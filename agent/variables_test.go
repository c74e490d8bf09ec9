package agent

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/hashicorp/go-hclog"
	nomad "github.com/hashicorp/nomad/api"
)

// nomadClient returns Nomad's Go client for a started agent, once its
// keyring has its first key (the leader makes it when it takes office).
func nomadClient(t *testing.T, a *Agent) *nomad.Client {
	t.Helper()
	c, err := nomad.NewClient(&nomad.Config{Address: "http://" + a.HTTPAddr()})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the keyring's first key", func() error {
		keys, _, err := c.Keyring().List(nil)
		if err != nil {
			return err
		}
		if len(keys) != 1 || keys[0].State != nomad.RootKeyStateActive {
			return errors.New("no active key yet")
		}
		return nil
	})
	return c
}

// Nomad's Go client reads and writes variables through a real server:
// create, read, update, list, the check-and-set conflicts it turns into
// api.ErrCASConflict, delete, and a rotation after which the old
// variables stay readable.
func TestVariablesThroughNomadClient(t *testing.T) {
	a := startAgent(t, "s1", 1)
	c := nomadClient(t, a)
	vars := c.Variables()

	v := nomad.NewVariable("app/db")
	v.Items["user"], v.Items["password"] = "admin", "p4ss"
	created, wm, err := vars.Create(v, nil)
	if err != nil {
		t.Fatal(err)
	}
	if created.Namespace != "default" || created.Items["password"] != "p4ss" || created.ModifyIndex == 0 || wm.LastIndex != created.ModifyIndex {
		t.Fatalf("created: %+v, write index %d", created, wm.LastIndex)
	}
	got, qm, err := vars.Read("app/db", nil)
	if err != nil || got.Items["user"] != "admin" || got.CreateTime == 0 || qm.LastIndex < created.ModifyIndex {
		t.Fatalf("read: %+v %v", got, err)
	}
	if _, _, err := vars.Read("app/none", nil); !errors.Is(err, nomad.ErrVariablePathNotFound) {
		t.Fatalf("read of a missing variable: %v", err)
	}
	// A path the agent's router would clean into another one is refused.
	if _, _, err := vars.Read("app/x/../db", nil); err == nil || !strings.Contains(err.Error(), "400") {
		t.Fatalf("read of a path with ..: %v", err)
	}
	if peek, _, err := vars.Peek("app/none", nil); err != nil || peek != nil {
		t.Fatalf("peek of a missing variable: %+v %v", peek, err)
	}

	upd := got.Copy()
	upd.Items["password"] = "n3w"
	updated, _, err := vars.Update(upd, nil)
	if err != nil || updated.ModifyIndex <= created.ModifyIndex || updated.CreateIndex != created.CreateIndex {
		t.Fatalf("update: %+v %v", updated, err)
	}
	// A check-and-set with the stale index conflicts; the conflict holds
	// the current variable.
	stale := created.Copy()
	stale.Items["password"] = "lost"
	_, _, err = vars.CheckedUpdate(stale, nil)
	var conflict nomad.ErrCASConflict
	if !errors.As(err, &conflict) || conflict.Conflict.ModifyIndex != updated.ModifyIndex || conflict.Conflict.Items["password"] != "n3w" {
		t.Fatalf("stale checked update: %v", err)
	}
	again := nomad.NewVariable("app/db")
	again.Items["user"] = "other"
	if _, _, err := vars.CheckedCreate(again, nil); !errors.As(err, &conflict) || conflict.Conflict.Items["user"] != "admin" {
		t.Fatalf("checked create of an existing variable: %v", err)
	}
	cur := updated.Copy()
	cur.Items["password"] = "fresh"
	if out, _, err := vars.CheckedUpdate(cur, nil); err != nil || out.Items["password"] != "fresh" {
		t.Fatalf("checked update: %+v %v", out, err)
	}

	other := nomad.NewVariable("app/web")
	other.Items["k"] = "v"
	if _, _, err := vars.Create(other, nil); err != nil {
		t.Fatal(err)
	}
	list, _, err := vars.PrefixList("app/", nil)
	if err != nil || len(list) != 2 || list[0].Path != "app/db" || list[1].Path != "app/web" {
		t.Fatalf("list: %+v %v", list, err)
	}

	key, _, err := c.Keyring().Rotate(nil, nil)
	if err != nil || key.State != nomad.RootKeyStateActive {
		t.Fatalf("rotate: %+v %v", key, err)
	}
	keys, _, _ := c.Keyring().List(nil)
	if len(keys) != 2 {
		t.Fatalf("keys after rotation: %+v", keys)
	}
	if got, _, err := vars.Read("app/web", nil); err != nil || got.Items["k"] != "v" {
		t.Fatalf("read after rotation: %+v %v", got, err)
	}

	if _, err := vars.CheckedDelete("app/web", 1, nil); !errors.As(err, &conflict) {
		t.Fatalf("stale checked delete: %v", err)
	}
	if _, err := vars.Delete("app/web", nil); err != nil {
		t.Fatal(err)
	}
	if _, _, err := vars.Read("app/web", nil); !errors.Is(err, nomad.ErrVariablePathNotFound) {
		t.Fatalf("read after delete: %v", err)
	}
}

// lockedBuffer collects an agent's log lines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) Bytes() []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	return bytes.Clone(l.b.Bytes())
}

// A variable's items are never in the clear on disk or in the logs: not
// in the Raft log (bolt), not in a snapshot the server took, not in a
// saved snapshot archive, not in the agent's log at trace level, while
// its path (kept in the clear) is, which shows the search looks at the
// right bytes.
func TestVariablesAreEncryptedAtRest(t *testing.T) {
	const secret, path = "s3cret-value-4e1d9b", "app/at-rest-check"
	var logs lockedBuffer
	cfg := testConfig(t, "s1", 1)
	cfg.Logger = hclog.New(&hclog.LoggerOptions{Name: "s1", Output: io.MultiWriter(&logs, tWriter{t}), Level: hclog.Trace})
	a := startAgentWith(t, cfg)
	c := nomadClient(t, a)
	v := nomad.NewVariable(path)
	v.Items["password"] = secret
	if _, _, err := c.Variables().Create(v, nil); err != nil {
		t.Fatal(err)
	}
	if got, _, err := c.Variables().Read(path, nil); err != nil || got.Items["password"] != secret {
		t.Fatalf("read back: %+v %v", got, err)
	}
	var archive bytes.Buffer
	if _, err := a.raft.SaveSnapshot(&archive); err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(&archive)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	var unpacked bytes.Buffer
	for {
		if _, err := tr.Next(); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(&unpacked, tr); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Shutdown(); err != nil {
		t.Fatal(err)
	}

	files := map[string][]byte{"saved snapshot archive": unpacked.Bytes(), "agent log": logs.Bytes()}
	var sawBolt, sawSnapshot bool
	err = filepath.WalkDir(cfg.DataDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		files[p] = b
		sawBolt = sawBolt || filepath.Base(p) == "raft.db"
		sawSnapshot = sawSnapshot || filepath.Base(p) == "state.bin"
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !sawBolt || !sawSnapshot {
		t.Fatalf("data dir lacks the Raft log or a snapshot: %v", files)
	}
	var pathSeen bool
	for name, b := range files {
		if bytes.Contains(b, []byte(secret)) {
			t.Errorf("%s holds the item in the clear", name)
		}
		if name != "agent log" && bytes.Contains(b, []byte(path)) {
			pathSeen = true
		}
	}
	if !pathSeen {
		t.Fatal("no file holds even the variable's path: the search looked in the wrong place")
	}
}

// Every server opens what the leader sealed: a variable written through
// one server is read back from each server's own copy (?stale), after a
// rotation too.
func TestEveryServerOpensVariables(t *testing.T) {
	s1 := startAgent(t, "s1", 3)
	s2 := startAgent(t, "s2", 3, s1.HTTPAddr())
	s3 := startAgent(t, "s3", 3, s1.HTTPAddr())
	all := []*Agent{s1, s2, s3}
	c := nomadClient(t, s2)
	v := nomad.NewVariable("app/replicated")
	v.Items["k"] = "before"
	if _, _, err := c.Variables().Create(v, nil); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Keyring().Rotate(nil, nil); err != nil {
		t.Fatal(err)
	}
	w := nomad.NewVariable("app/after")
	w.Items["k"] = "after"
	if _, _, err := c.Variables().Create(w, nil); err != nil {
		t.Fatal(err)
	}
	for _, a := range all {
		nc := nomadAPI(t, a)
		for path, want := range map[string]string{"app/replicated": "before", "app/after": "after"} {
			waitFor(t, a.cfg.NodeName+" reading "+path, func() error {
				got, _, err := nc.Variables().Read(path, &nomad.QueryOptions{AllowStale: true})
				if err != nil {
					return err
				}
				if got.Items["k"] != want {
					return errors.New("items " + got.Items["k"])
				}
				return nil
			})
		}
	}
}

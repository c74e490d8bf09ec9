package main

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/droverhq/drover/apiclient"
	"github.com/droverhq/drover/httpapi"
	"github.com/droverhq/drover/structs"
)

// fakeLocker answers a lockLeaser's calls from a script and records
// them.
type fakeLocker struct {
	mu       sync.Mutex
	calls    []string
	acquires []error // answers to Acquire, in order; then nil
	renews   []error // answers to Renew, in order; then nil
}

func (f *fakeLocker) next(name string, answers *[]error) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, name)
	if len(*answers) == 0 {
		return nil
	}
	err := (*answers)[0]
	*answers = (*answers)[1:]
	return err
}

func (f *fakeLocker) Acquire(context.Context) error { return f.next("acquire", &f.acquires) }
func (f *fakeLocker) Renew(context.Context) error   { return f.next("renew", &f.renews) }
func (f *fakeLocker) Release(context.Context) error { return f.next("release", new([]error)) }

func (f *fakeLocker) trace() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return strings.Join(f.calls, " ")
}

func newTestLeaser(f *fakeLocker) *lockLeaser {
	return &lockLeaser{locker: f, renewEvery: 5 * time.Millisecond, retryEvery: time.Millisecond, maxRetry: 1, say: func(string) {}}
}

var conflict = fmt.Errorf("409: %w", apiclient.ErrLockConflict)

func TestLockLeaser(t *testing.T) {
	// Held by another twice, then taken: the function runs while renewals
	// go on, and the lock is released after it.
	f := &fakeLocker{acquires: []error{conflict, conflict}}
	err := newTestLeaser(f).run(context.Background(), func(ctx context.Context) error {
		time.Sleep(30 * time.Millisecond)
		return nil
	})
	if tr := f.trace(); err != nil || !strings.HasPrefix(tr, "acquire acquire acquire renew") || !strings.HasSuffix(tr, "release") {
		t.Fatalf("run: %v; calls %s", err, tr)
	}

	// -early-return: nothing runs while another holds the lock.
	f = &fakeLocker{acquires: []error{conflict}}
	l := newTestLeaser(f)
	l.earlyReturn = true
	ran := false
	if err := l.run(context.Background(), func(context.Context) error { ran = true; return nil }); err != nil || ran || f.trace() != "acquire" {
		t.Fatalf("early return: %v ran=%v calls %s", err, ran, f.trace())
	}

	// The function's error is the run's, and the lock is still released.
	f = &fakeLocker{}
	boom := errors.New("exit status 3")
	if err := newTestLeaser(f).run(context.Background(), func(context.Context) error { return boom }); !errors.Is(err, boom) || f.trace() != "acquire release" {
		t.Fatalf("failing function: %v; calls %s", err, f.trace())
	}

	// A lost lock (a renewal refused) stops the function; the lock is
	// sought again and the function run again. A server error is retried
	// maxRetry times before the lock counts as lost.
	f = &fakeLocker{renews: []error{errors.New("500"), errors.New("500")}}
	runs := 0
	err = newTestLeaser(f).run(context.Background(), func(ctx context.Context) error {
		runs++
		if runs == 1 {
			<-ctx.Done()
			return ctx.Err()
		}
		return nil
	})
	if tr := f.trace(); err != nil || runs != 2 || !strings.HasPrefix(tr, "acquire renew renew acquire") || !strings.HasSuffix(tr, "release") {
		t.Fatalf("lost lock: %v runs=%d calls %s", err, runs, tr)
	}

	// Any other acquire error ends the run.
	f = &fakeLocker{acquires: []error{errors.New("permission denied")}}
	if err := newTestLeaser(f).run(context.Background(), func(context.Context) error { return nil }); err == nil || !strings.Contains(err.Error(), "permission denied") {
		t.Fatalf("acquire error: %v", err)
	}
}

// TestVarLockCommand runs a child under the lock against an API: the
// child sees the lock held; a second var lock with -early-return runs
// nothing while it is; the lock is released after the child.
func TestVarLockCommand(t *testing.T) {
	t.Setenv("DROVER_TOKEN", "")
	t.Setenv("NOMAD_TOKEN", "")
	t.Setenv("NOMAD_NAMESPACE", "")
	srv := httptest.NewServer(httpapi.New(httpapi.NewMemBackend(), nil).Handler())
	defer srv.Close()
	dir := t.TempDir()
	marker := filepath.Join(dir, "ran")
	code, out, errOut := runCLI(t, "", "var", "lock", "-address", srv.URL, "-ttl", "10s", "-verbose", "locks/job", "@"+writeSpec(t, dir),
		"echo", "ran", ">", marker)
	if code != 0 {
		t.Fatalf("var lock: %d %q %q", code, out, errOut)
	}
	if b, err := os.ReadFile(marker); err != nil || strings.TrimSpace(string(b)) != "ran" {
		t.Fatalf("the child did not run: %v %q", err, b)
	}
	if !strings.Contains(errOut, "Variable locked, ready to execute") || !strings.Contains(errOut, "Releasing the lock") {
		t.Fatalf("verbose output: %q", errOut)
	}
	// Released: the variable is there, with its item, without a lock.
	code, out, _ = runCLI(t, "", "var", "get", "-address", srv.URL, "-out", "json", "locks/job")
	if code != 0 || !strings.Contains(out, `"owner": "test"`) || strings.Contains(out, `"Lock"`) {
		t.Fatalf("after the lock: %d %s", code, out)
	}
	// While another holds the lock, -early-return runs nothing.
	c, err := apiclient.New(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	held, err := c.VarLockAcquire(context.Background(), "default", &structs.Variable{Path: "locks/job", Lock: &structs.VariableLock{TTL: time.Minute}})
	if err != nil {
		t.Fatal(err)
	}
	second := filepath.Join(dir, "second")
	if code, out, errOut := runCLI(t, "", "var", "lock", "-address", srv.URL, "-early-return", "locks/job", "touch", second); code != 0 {
		t.Fatalf("early return: %d %q %q", code, out, errOut)
	}
	if _, err := os.Stat(second); err == nil {
		t.Fatal("the child ran while another held the lock")
	}
	if _, err := c.VarLockRelease(context.Background(), "default", "locks/job", held.Lock.ID); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-ttl", "1s", "locks/job", "true"}, "TTL 1s must be between"},
		{[]string{"-ttl", "soon", "locks/job", "true"}, `Invalid -ttl "soon"`},
		{[]string{"-namespace", "*", "locks/job", "true"}, "Wildcard namespace"},
		{[]string{"locks/job", "@" + writeSpec(t, dir)}, "No child command"},
	} {
		code, _, errOut := runCLI(t, "", append([]string{"var", "lock", "-address", srv.URL}, c.args...)...)
		if code != 1 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: %d %q", c.args, code, errOut)
		}
	}
}

func writeSpec(t *testing.T, dir string) string {
	t.Helper()
	p := filepath.Join(dir, "spec.nv.hcl")
	if err := os.WriteFile(p, []byte("items {\n  owner = \"test\"\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

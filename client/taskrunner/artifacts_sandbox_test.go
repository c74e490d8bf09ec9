package taskrunner

import (
	"context"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	getter "github.com/hashicorp/go-getter/v2"

	"github.com/droverhq/drover/client/allocfs"
	"github.com/droverhq/drover/structs"
)

// hostMarker is a file of the host's, outside any allocation, that a job
// must neither read nor write.
func hostMarker(t *testing.T) (dir, file string) {
	t.Helper()
	dir = t.TempDir()
	file = filepath.Join(dir, "marker")
	if err := os.WriteFile(file, []byte("host secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir, file
}

// allocTree is an allocation's directory with one task, "web".
func allocTree(t *testing.T) (alloc, taskDir string) {
	t.Helper()
	alloc = t.TempDir()
	taskDir = filepath.Join(alloc, "web")
	for _, d := range []string{"alloc", "web/local", "web/secrets"} {
		if err := os.MkdirAll(filepath.Join(alloc, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return alloc, taskDir
}

// A source on the client's own host, in any of go-getter's spellings, is
// refused before anything is fetched: nothing of the host's lands in the
// task's directory, and the error says why.
func TestArtifactLocalSourceRefused(t *testing.T) {
	hostDir, marker := hostMarker(t)
	repo := filepath.Join(hostDir, "repo")
	if err := os.MkdirAll(filepath.Join(repo, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, src := range []string{
		marker,
		"file://" + marker,
		"git::file://" + repo,
		"git::" + repo,
		"hg::file://" + repo,
		"../../" + strings.TrimPrefix(marker, "/"),
		"http::" + marker,
	} {
		t.Run(src, func(t *testing.T) {
			_, taskDir := allocTree(t)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			a := &structs.TaskArtifact{GetterSource: src, RelativeDest: "local/"}
			err := FetchArtifacts(ctx, taskDir, "", []*structs.TaskArtifact{a}, DefaultArtifactLimits())
			if !errors.Is(err, structs.ErrArtifactLocal) || !strings.Contains(err.Error(), src) {
				t.Fatalf("error %v, want ErrArtifactLocal naming %s", err, src)
			}
			es, _ := os.ReadDir(filepath.Join(taskDir, "local"))
			if len(es) > 0 {
				t.Fatalf("local/ holds %v", es)
			}
		})
	}
	// A checksums file on the host is refused too.
	_, taskDir := allocTree(t)
	a := &structs.TaskArtifact{GetterSource: "http://127.0.0.1:1/x", GetterOptions: map[string]string{"checksum": "file:" + marker}}
	if err := FetchArtifacts(context.Background(), taskDir, "", []*structs.TaskArtifact{a}, DefaultArtifactLimits()); !errors.Is(err, structs.ErrArtifactLocal) {
		t.Fatalf("checksums file on the host: %v", err)
	}
	for _, src := range []string{"s3::https://s3.amazonaws.com/b/k", "gcs::https://www.googleapis.com/storage/v1/b/o", "smb://host/share/x"} {
		a := &structs.TaskArtifact{GetterSource: src}
		if err := FetchArtifacts(context.Background(), taskDir, "", []*structs.TaskArtifact{a}, DefaultArtifactLimits()); !errors.Is(err, structs.ErrArtifactGetter) {
			t.Fatalf("%s: %v, want ErrArtifactGetter", src, err)
		}
	}
}

// claimAll is a getter that claims every source and records a fetch.
type claimAll struct{ fetched *bool }

func (g claimAll) Get(context.Context, *getter.Request) error     { *g.fetched = true; return nil }
func (g claimAll) GetFile(context.Context, *getter.Request) error { *g.fetched = true; return nil }
func (g claimAll) Mode(context.Context, *url.URL) (getter.Mode, error) {
	return getter.ModeFile, nil
}
func (g claimAll) Detect(*getter.Request) (bool, error) { return true, nil }

// The guard on each getter judges the URL go-getter detected and hands
// it, whatever the text said: a getter that would take a file:// URL or
// a path never runs.
func TestArtifactGuardJudgesDetectedURL(t *testing.T) {
	for _, c := range []struct {
		name, src string
		ok        bool
	}{
		{"git", "file:///etc", false}, {"git", "/etc", false}, {"hg", "file:///etc", false},
		{"http", "file:///etc", false}, {"git", "ext::sh", false}, {"http", "https:///etc", false},
		{"git", "https://example.com/r", true}, {"http", "http://example.com/f", true},
	} {
		var fetched bool
		cl := &getter.Client{Getters: []getter.Getter{guardGetter{name: c.name, Getter: claimAll{&fetched}}}}
		_, err := cl.Get(context.Background(), &getter.Request{Src: c.src, Dst: filepath.Join(t.TempDir(), "x"), GetMode: getter.ModeFile})
		if fetched != c.ok || (err == nil) != c.ok {
			t.Errorf("%s %s: fetched %v, error %v", c.name, c.src, fetched, err)
		}
	}
}

// A symlink that a task made on the way to an artifact's destination
// ("local/out -> <host dir>", or local/ replaced by a link out) is not
// followed out of the allocation: the copy fails, the host is untouched.
// One that stays inside the allocation is followed; one in the place of
// the file itself is replaced.
func TestArtifactDestinationSymlinks(t *testing.T) {
	url := artifactServer(t, map[string][]byte{"/run.sh": []byte("payload"), "/app.tar.gz": tarGz(t, map[string]string{"marker": "overwritten"})})
	for _, c := range []struct {
		name, dest, src string
		link            func(alloc, taskDir, hostDir string) error
		inside          string // where the artifact lands when the link stays inside
	}{
		{name: "dir link out", dest: "local/out", src: "/run.sh", link: func(_, taskDir, hostDir string) error {
			return os.Symlink(hostDir, filepath.Join(taskDir, "local", "out"))
		}},
		{name: "relative link out", dest: "local/out", src: "/app.tar.gz", link: func(_, taskDir, hostDir string) error {
			rel, _ := filepath.Rel(filepath.Join(taskDir, "local"), hostDir)
			return os.Symlink(rel, filepath.Join(taskDir, "local", "out"))
		}},
		// A link in the file's own place is replaced, never written through.
		{name: "file link out", dest: "local/", src: "/run.sh", inside: "web/local/run.sh", link: func(_, taskDir, hostDir string) error {
			return os.Symlink(filepath.Join(hostDir, "marker"), filepath.Join(taskDir, "local", "run.sh"))
		}},
		{name: "shared link", dest: "local/s", src: "/run.sh", inside: "alloc/data/run.sh", link: func(alloc, taskDir, _ string) error {
			if err := os.MkdirAll(filepath.Join(alloc, "alloc", "data"), 0o755); err != nil {
				return err
			}
			return os.Symlink("../../alloc/data", filepath.Join(taskDir, "local", "s"))
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			hostDir, marker := hostMarker(t)
			alloc, taskDir := allocTree(t)
			if err := c.link(alloc, taskDir, hostDir); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			a := &structs.TaskArtifact{GetterSource: url + c.src, RelativeDest: c.dest}
			err := FetchArtifacts(ctx, taskDir, "", []*structs.TaskArtifact{a}, DefaultArtifactLimits())
			if b, _ := os.ReadFile(marker); string(b) != "host secret\n" {
				t.Fatalf("host marker now %q", b)
			}
			if es, _ := os.ReadDir(hostDir); len(es) != 1 {
				t.Fatalf("host dir holds %v", es)
			}
			if c.inside != "" {
				if err != nil {
					t.Fatal(err)
				}
				if b, err := os.ReadFile(filepath.Join(alloc, c.inside)); string(b) != "payload" {
					t.Fatalf("%s: %q %v", c.inside, b, err)
				}
				if fi, err := os.Lstat(filepath.Join(alloc, c.inside)); err != nil || !fi.Mode().IsRegular() {
					t.Fatalf("%s is not a regular file: %v", c.inside, err)
				}
				return
			}
			if !errors.Is(err, allocfs.ErrEscapes) {
				t.Fatalf("error %v, want ErrEscapes", err)
			}
			// No staging directory is left behind.
			if ms, _ := filepath.Glob(filepath.Join(alloc, ".artifact-*")); len(ms) > 0 {
				t.Fatalf("staging left: %v", ms)
			}
		})
	}
}

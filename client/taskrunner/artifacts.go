package taskrunner

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/go-cleanhttp"
	getter "github.com/hashicorp/go-getter/v2"

	"github.com/droverhq/drover/client/allocfs"
	"github.com/droverhq/drover/structs"
)

// ErrArtifactDestination: an artifact's destination leaves the task's
// directory and the allocation's shared one. The jobspec refuses such a job; the client refuses it again
// after interpolation, where a variable could have made it escape.
var ErrArtifactDestination = errors.New("artifact destination escapes the task directory and the allocation's shared alloc/")

// ArtifactLimits bound what one artifact may cost the client: the client
// agent's artifact block, as Nomad's.
type ArtifactLimits struct {
	// HTTPReadTimeout bounds one HTTP download (0: none).
	HTTPReadTimeout time.Duration
	// HTTPMaxSize is the most bytes one HTTP download may read (0: no limit).
	HTTPMaxSize int64
	// DecompressionFileCountLimit and DecompressionSizeLimit bound what an
	// archive unpacks to (0: no limit).
	DecompressionFileCountLimit int
	DecompressionSizeLimit      int64
}

// DefaultArtifactLimits are Nomad's defaults: 30m, 100GB, 4096 files, 100GB.
func DefaultArtifactLimits() ArtifactLimits {
	return ArtifactLimits{
		HTTPReadTimeout:             30 * time.Minute,
		HTTPMaxSize:                 100 << 30,
		DecompressionFileCountLimit: 4096,
		DecompressionSizeLimit:      100 << 30,
	}
}

// ArtifactError is the failure of one artifact, naming it by its source.
type ArtifactError struct {
	Source string
	Err    error
}

func (e *ArtifactError) Error() string {
	return fmt.Sprintf("failed to download artifact %q: %v", e.Source, e.Err)
}

func (e *ArtifactError) Unwrap() error { return e.Err }

// FetchArtifacts fetches each artifact, already interpolated, into
// taskDir (a task's directory; its parent is the allocation's): over
// http(s) (with its headers), git or hg, checked against its checksum
// option and unpacked by its type unless its archive option says false.
// A source on the client's own host (a path, file://, git or hg over a
// local path) is refused, judged on the source as go-getter detects it
// and again on the URL each getter is handed. Each artifact is fetched
// into a staging directory of the client's, in the allocation's directory
// but not in any task's, then copied to its destination through allocfs:
// a symlink that a task made on the way resolves inside the allocation or
// fails the copy. The first failure stops it and is returned as an
// *ArtifactError. An artifact with chown is given to user (the task's;
// nothing is changed when it is "").
func FetchArtifacts(ctx context.Context, taskDir, user string, as []*structs.TaskArtifact, lim ArtifactLimits) error {
	if len(as) == 0 {
		return nil
	}
	taskDir = filepath.Clean(taskDir)
	root, err := allocfs.Open(filepath.Dir(taskDir))
	if err != nil {
		return &ArtifactError{Source: as[0].GetterSource, Err: err}
	}
	defer root.Close()
	task := filepath.Base(taskDir)
	for _, a := range as {
		if err := fetchArtifact(ctx, root, task, user, a, lim); err != nil {
			return &ArtifactError{Source: a.GetterSource, Err: err}
		}
	}
	return nil
}

func fetchArtifact(ctx context.Context, root *allocfs.Root, task, user string, a *structs.TaskArtifact, lim ArtifactLimits) error {
	dest := a.RelativeDest
	if dest == "" {
		dest = structs.DefaultArtifactDest
	}
	if !structs.ArtifactDestInside(dest) {
		return fmt.Errorf("%w: %q", ErrArtifactDestination, dest)
	}
	name := allocfs.Task(task, dest)
	inTask := name == task || strings.HasPrefix(name, task+"/")
	inShared := name == allocfs.Shared("") || strings.HasPrefix(name, allocfs.Shared("")+"/")
	if !inTask && !inShared {
		return fmt.Errorf("%w: %q", ErrArtifactDestination, dest)
	}
	if err := structs.CheckArtifactSource(a.GetterSource); err != nil {
		return err
	}
	if c, ok := strings.CutPrefix(a.GetterOptions["checksum"], "file:"); ok {
		if err := structs.CheckArtifactSource(c); err != nil {
			return fmt.Errorf("checksums file %q: %w", c, err)
		}
	}
	uid, gid := -1, -1
	if a.Chown && user != "" {
		var err error
		if uid, gid, err = lookupUser(user); err != nil {
			return err
		}
	}
	src, err := artifactSource(a)
	if err != nil {
		return err
	}
	mode := getter.ModeAny
	switch a.GetterMode {
	case structs.ArtifactModeFile:
		mode = getter.ModeFile
	case structs.ArtifactModeDir:
		mode = getter.ModeDir
	}
	var header http.Header
	if len(a.GetterHeaders) > 0 {
		header = make(http.Header, len(a.GetterHeaders))
		for k, v := range a.GetterHeaders {
			header.Set(k, v)
		}
	}
	// The order and the schemes are structs.ArtifactGetters'.
	c := &getter.Client{
		Getters: []getter.Getter{
			guardGetter{name: "git", Getter: &getter.GitGetter{Detectors: structs.ArtifactGitDetectors()}},
			guardGetter{name: "hg", Getter: &getter.HgGetter{}},
			guardGetter{name: "http", Getter: &getter.HttpGetter{
				Header:                header,
				ReadTimeout:           lim.HTTPReadTimeout,
				HeadFirstTimeout:      lim.HTTPReadTimeout,
				Client:                artifactHTTPClient(lim.HTTPMaxSize, a.GetterInsecure),
				XTerraformGetDisabled: true,
			}},
		},
		Decompressors:   getter.LimitedDecompressors(lim.DecompressionFileCountLimit, lim.DecompressionSizeLimit),
		DisableSymlinks: true,
	}
	// The staging directory is the client's: in the allocation's directory,
	// which no task sees (docker binds only alloc/, local/ and secrets/).
	stage, err := os.MkdirTemp(root.Dir(), ".artifact-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(stage)
	got := filepath.Join(stage, "a")
	if _, err := c.Get(ctx, &getter.Request{
		Src: src, Dst: got, Pwd: stage, GetMode: mode,
		Umask: 0o022, DisableSymlinks: true,
	}); err != nil {
		return err
	}
	if err := root.CopyIn(got, name); err != nil {
		return err
	}
	if uid < 0 {
		return nil
	}
	// Give away what was copied, and only that, through the allocation's
	// root (a symlink a task put on the way is not followed out).
	return filepath.WalkDir(got, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(got, p)
		if err != nil {
			return err
		}
		return root.Lchown(filepath.Join(name, rel), uid, gid)
	})
}

// guardGetter refuses, just before the getter runs, a URL it would fetch
// from the client's own host: the URL go-getter detected, not the text
// the job wrote.
type guardGetter struct {
	getter.Getter
	name string
}

func (g guardGetter) Get(ctx context.Context, req *getter.Request) error {
	if err := structs.CheckArtifactURL(g.name, req.URL()); err != nil {
		return err
	}
	return g.Getter.Get(ctx, req)
}

func (g guardGetter) GetFile(ctx context.Context, req *getter.Request) error {
	if err := structs.CheckArtifactURL(g.name, req.URL()); err != nil {
		return err
	}
	return g.Getter.GetFile(ctx, req)
}

// lookupUser is the named user's uid and primary gid, for chown (as
// Nomad's option).
func lookupUser(name string) (uid, gid int, err error) {
	u, err := user.Lookup(name)
	if err != nil {
		return 0, 0, fmt.Errorf("chown: %w", err)
	}
	if uid, err = strconv.Atoi(u.Uid); err == nil {
		gid, err = strconv.Atoi(u.Gid)
	}
	if err != nil {
		return 0, 0, fmt.Errorf("chown: user %q: %w", name, err)
	}
	return uid, gid, nil
}

// ErrArtifactTooLarge: an HTTP download is larger than the client's
// artifact http_max_size. go-getter's own MaxBytes cuts the body short
// without an error; drover fails the download instead.
var ErrArtifactTooLarge = errors.New("artifact exceeds the client's http_max_size")

// artifactHTTPClient fails every response body longer than max bytes (0:
// no limit); insecure skips the server's certificate check, as Nomad's
// artifact insecure option.
func artifactHTTPClient(max int64, insecure bool) *http.Client {
	c := cleanhttp.DefaultClient()
	if insecure {
		c.Transport.(*http.Transport).TLSClientConfig = &tls.Config{InsecureSkipVerify: true}
	}
	if max > 0 {
		c.Transport = &limitTransport{base: c.Transport, max: max}
	}
	return c
}

type limitTransport struct {
	base http.RoundTripper
	max  int64
}

func (t *limitTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(r)
	if err != nil || r.Method == http.MethodHead {
		return resp, err
	}
	if resp.ContentLength > t.max {
		resp.Body.Close()
		return nil, fmt.Errorf("%w (%d bytes > %d)", ErrArtifactTooLarge, resp.ContentLength, t.max)
	}
	resp.Body = &limitBody{ReadCloser: resp.Body, left: t.max}
	return resp, nil
}

// limitBody reads at most left bytes and fails on the first byte more.
type limitBody struct {
	io.ReadCloser
	left int64
}

func (b *limitBody) Read(p []byte) (int, error) {
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.ReadCloser.Read(p)
	if int64(n) > b.left {
		return int(b.left), ErrArtifactTooLarge
	}
	b.left -= int64(n)
	return n, err
}

// artifactSource adds the artifact's options to its source's query, as
// Nomad's client does (go-getter reads checksum, archive… from there).
func artifactSource(a *structs.TaskArtifact) (string, error) {
	if len(a.GetterOptions) == 0 {
		return a.GetterSource, nil
	}
	u, err := url.Parse(a.GetterSource)
	if err != nil {
		return "", fmt.Errorf("bad source: %w", err)
	}
	q := u.Query()
	for k, v := range a.GetterOptions {
		q.Set(k, v)
	}
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// prestartArtifacts is the task's artifact step before its first start:
// it fetches the artifacts once (a restart after a success does not
// fetch them again, as Nomad's hook; nor does one after a client restart,
// when the persisted state says the task started, which it did only
// after they were fetched) and reports whether the task may start. A failure is a "Failed Artifact Download" event naming the
// artifact and the reason, and the restart policy decides what follows;
// done says the runner is finished.
func (tr *TaskRunner) prestartArtifacts() (ok, done bool) {
	if len(tr.cfg.Artifacts) == 0 || tr.artifactsFetched ||
		tr.cfg.State != nil && !tr.cfg.State.StartedAt.IsZero() {
		return true, false
	}
	tr.event(structs.TaskDownloadingArtifacts, "Client is downloading artifacts", nil)
	lim := DefaultArtifactLimits()
	if tr.cfg.ArtifactLimits != nil {
		lim = *tr.cfg.ArtifactLimits
	}
	err := FetchArtifacts(tr.ctx, tr.cfg.TaskConfig.TaskDir, tr.cfg.Task.User, tr.cfg.Artifacts, lim)
	if err == nil {
		tr.artifactsFetched = true
		return true, false
	}
	if tr.killed() {
		tr.killReason()
		tr.finish(false, structs.TaskKilled, "Task killed while downloading artifacts", nil)
		return false, true
	}
	if tr.detached() {
		// The client is stopping and leaves the task to its next start:
		// a download cut short is not a failure of the artifact.
		return false, true
	}
	// As Nomad words it: the event's description wraps DownloadError.
	tr.event(structs.TaskArtifactDownloadFailed, "Failed to download artifacts: "+err.Error(), func(e *structs.TaskEvent) {
		e.SetExtra().DownloadError = err.Error()
	})
	return false, tr.decide(false)
}

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
	"time"

	"github.com/hashicorp/go-cleanhttp"
	getter "github.com/hashicorp/go-getter/v2"

	"github.com/droverhq/drover/structs"
)

// ErrArtifactDestination: an artifact's destination leaves the task's
// directory. The jobspec refuses such a job; the client refuses it again
// after interpolation, where a variable could have made it escape.
var ErrArtifactDestination = errors.New("artifact destination escapes the task directory")

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
// taskDir: over http(s) (with its headers), git or from a local file,
// checked against its checksum option and unpacked by its type unless its
// archive option says false. The first failure stops it and is returned
// as an *ArtifactError. An artifact with chown is given to user (the
// task's; nothing is changed when it is "").
func FetchArtifacts(ctx context.Context, taskDir, user string, as []*structs.TaskArtifact, lim ArtifactLimits) error {
	for _, a := range as {
		err := fetchArtifact(ctx, taskDir, a, lim)
		if err == nil && a.Chown && user != "" {
			err = chownTree(artifactDst(taskDir, a), user)
		}
		if err != nil {
			return &ArtifactError{Source: a.GetterSource, Err: err}
		}
	}
	return nil
}

func fetchArtifact(ctx context.Context, taskDir string, a *structs.TaskArtifact, lim ArtifactLimits) error {
	dest := a.RelativeDest
	if dest == "" {
		dest = structs.DefaultArtifactDest
	}
	if !structs.ArtifactDestInside(dest) {
		return fmt.Errorf("%w: %q", ErrArtifactDestination, dest)
	}
	dst := artifactDst(taskDir, a)
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
	c := &getter.Client{
		Getters: []getter.Getter{
			&getter.GitGetter{},
			&getter.HttpGetter{
				Header:                header,
				ReadTimeout:           lim.HTTPReadTimeout,
				HeadFirstTimeout:      lim.HTTPReadTimeout,
				Client:                artifactHTTPClient(lim.HTTPMaxSize, a.GetterInsecure),
				XTerraformGetDisabled: true,
			},
			&getter.FileGetter{},
		},
		Decompressors:   getter.LimitedDecompressors(lim.DecompressionFileCountLimit, lim.DecompressionSizeLimit),
		DisableSymlinks: true,
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	_, err = c.Get(ctx, &getter.Request{
		Src: src, Dst: dst, Pwd: taskDir, GetMode: mode,
		Umask: 0o022, DisableSymlinks: true,
	})
	return err
}

func artifactDst(taskDir string, a *structs.TaskArtifact) string {
	dest := a.RelativeDest
	if dest == "" {
		dest = structs.DefaultArtifactDest
	}
	return filepath.Join(taskDir, filepath.Clean("/"+dest))
}

// chownTree gives dst and everything under it to the named user and its
// primary group, as Nomad's chown option.
func chownTree(dst, name string) error {
	u, err := user.Lookup(name)
	if err != nil {
		return fmt.Errorf("chown: %w", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return filepath.WalkDir(dst, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, uid, gid)
	})
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
	// As Nomad words it: the event's description wraps DownloadError.
	tr.event(structs.TaskArtifactDownloadFailed, "Failed to download artifacts: "+err.Error(), func(e *structs.TaskEvent) {
		e.SetExtra().DownloadError = err.Error()
	})
	return false, tr.decide(false)
}

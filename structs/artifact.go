package structs

import (
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"

	getter "github.com/hashicorp/go-getter/v2"
)

// Artifact getter modes, as Nomad's artifact mode.
const (
	ArtifactModeAny  = "any"
	ArtifactModeFile = "file"
	ArtifactModeDir  = "dir"
)

// TaskArtifact is a task's artifact block: what the client fetches into
// the task's directory before the task starts. Field names are Nomad's
// (api.TaskArtifact), so that the API JSON reads the same.
type TaskArtifact struct {
	// GetterSource is the URL (or go-getter address) to fetch; it may
	// reference ${NOMAD_*}, ${meta.*} and ${attr.*}.
	GetterSource string
	// GetterOptions are go-getter's query options (checksum, archive…).
	GetterOptions map[string]string `json:",omitempty"`
	// GetterHeaders are sent with an HTTP fetch.
	GetterHeaders map[string]string `json:",omitempty"`
	// GetterMode is ArtifactModeAny (the default), File or Dir.
	GetterMode     string
	GetterInsecure bool `json:",omitempty"`
	// RelativeDest is where the artifact lands, relative to the task's
	// directory ("local/" by default, as Nomad).
	RelativeDest string
	// Chown gives the fetched files to the task's user.
	Chown bool `json:",omitempty"`
}

// DefaultArtifactDest is where an artifact lands when no destination is
// written, as Nomad.
const DefaultArtifactDest = "local/"

// Copy returns a deep copy.
func (a *TaskArtifact) Copy() *TaskArtifact {
	if a == nil {
		return nil
	}
	c := *a
	c.GetterOptions = copyMap(a.GetterOptions)
	c.GetterHeaders = copyMap(a.GetterHeaders)
	return &c
}

func copyArtifacts(as []*TaskArtifact) []*TaskArtifact {
	if as == nil {
		return nil
	}
	c := make([]*TaskArtifact, len(as))
	for i, a := range as {
		c[i] = a.Copy()
	}
	return c
}

// ArtifactDestInside reports whether dest, relative to a task's
// directory, stays inside it or inside the allocation's shared directory
// (../alloc, the task's ${NOMAD_ALLOC_DIR}) once cleaned, as Nomad's
// jobs use both. A leading "/" is taken relative to the task's
// directory, as Nomad's client joins it.
func ArtifactDestInside(dest string) bool {
	rel := filepath.Clean(strings.TrimLeft(dest, "/"))
	if rel == "../alloc" || strings.HasPrefix(rel, "../alloc/") {
		return true
	}
	return rel != ".." && !strings.HasPrefix(rel, "../")
}

// ErrArtifactLocal: an artifact's source, as go-getter detects it, is a
// path on the client's host (a bare path, file://, or git or hg over a
// local path). Artifacts come over the network only, as Nomad's: the
// client is root on its host and a job's author is not.
var ErrArtifactLocal = errors.New("a path on the client's own host is refused: artifacts come over http, https, git or hg only")

// ErrArtifactGetter: an artifact's source needs a getter drover does not
// have (s3, gcs, smb…).
var ErrArtifactGetter = errors.New("not supported by drover (artifacts come over http, https, git or hg only)")

// ArtifactGetters are the getters an artifact may use, in the order the
// client tries them, with the URL schemes each may fetch over once
// go-getter has detected the source: http and https, and git and hg over
// the network.
var ArtifactGetters = []struct {
	Name    string
	Schemes []string
}{
	{"git", []string{"https", "http", "ssh", "git"}},
	{"hg", []string{"https", "http", "ssh"}},
	{"http", []string{"https", "http"}},
}

// ArtifactGitDetectors are the shorthands the git getter turns into URLs
// (github.com/…, gitlab.com/…, git@host:path), as go-getter's defaults
// but for BitBucket's, which asks BitBucket's API over the network.
func ArtifactGitDetectors() []getter.Detector {
	return []getter.Detector{new(getter.GitHubDetector), new(getter.GitDetector), new(getter.GitLabDetector)}
}

// CheckArtifactURL says whether the getter named name (one of
// ArtifactGetters) may fetch u, a URL go-getter detected: over one of its
// schemes, from a host. The client asks it again just before the getter
// runs.
func CheckArtifactURL(name string, u *url.URL) error {
	if u == nil || u.Scheme == "" || strings.EqualFold(u.Scheme, "file") {
		return ErrArtifactLocal
	}
	for _, g := range ArtifactGetters {
		if g.Name != name {
			continue
		}
		for _, s := range g.Schemes {
			if u.Scheme == s {
				if u.Host == "" {
					return fmt.Errorf("a %s URL without a host is %w", s, ErrArtifactLocal)
				}
				return nil
			}
		}
		return fmt.Errorf("%s over %s:// is %w", name, u.Scheme, ErrArtifactGetter)
	}
	return fmt.Errorf("getter %q is %w", name, ErrArtifactGetter)
}

// forcedGetterRe is go-getter's forced getter syntax: "git::https://…".
var forcedGetterRe = regexp.MustCompile(`^([A-Za-z0-9]+)::`)

// checkForced judges a forced getter's name.
func checkForced(name string) error {
	switch strings.ToLower(name) {
	case "", "git", "hg", "http", "https":
		return nil
	case "file":
		return ErrArtifactLocal
	default:
		return fmt.Errorf("%s:: is %w", name, ErrArtifactGetter)
	}
}

// CheckArtifactSource judges an artifact's source (or a checksum file's
// URL) as go-getter would read it: the getter it is forced to or that
// detects it, and the URL that detection makes of it (a bare path is a
// local file, github.com/… is git over https). A local path, file://, git
// or hg over a local path and a getter drover lacks are refused. A source
// with an interpolation is judged by what it says before the first "${"
// (a scheme, a forced getter, a leading "/"); the client judges it whole
// once it is filled in.
func CheckArtifactSource(src string) error {
	if i := strings.Index(src, "${"); i >= 0 {
		return checkSourcePrefix(src[:i])
	}
	var forced string
	rest := src
	if m := forcedGetterRe.FindStringSubmatch(src); m != nil {
		forced, rest = m[1], src[len(m[0]):]
	}
	if err := checkForced(forced); err != nil {
		return err
	}
	if forced == "" {
		if u, err := url.Parse(rest); err == nil {
			switch strings.ToLower(u.Scheme) {
			case "s3", "gs", "gcs":
				return fmt.Errorf("%s:// is %w", u.Scheme, ErrArtifactGetter)
			}
		}
	}
	if strings.HasPrefix(rest, "bitbucket.org/") {
		// Detecting it asks BitBucket's API whether it is git or hg: the
		// client does, over https.
		return nil
	}
	getters := []getter.Getter{&getter.GitGetter{Detectors: ArtifactGitDetectors()}, new(getter.HgGetter), new(getter.HttpGetter)}
	for i, g := range getters {
		// A relative path is joined to Pwd by a forced git or hg: any
		// absolute directory makes it a local path, which is refused.
		req := &getter.Request{Src: src, Pwd: "/"}
		ok, err := getter.Detect(req, g)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		base, _ := getter.SourceDirSubdir(req.Src)
		u, err := url.Parse(base)
		if err != nil {
			return fmt.Errorf("bad source: %w", err)
		}
		return CheckArtifactURL(ArtifactGetters[i].Name, u)
	}
	if u, err := url.Parse(rest); err == nil && u.Scheme != "" && u.Scheme != "file" {
		return fmt.Errorf("%s:// is %w", u.Scheme, ErrArtifactGetter)
	}
	return ErrArtifactLocal
}

// checkSourcePrefix judges the part of a source before its first
// interpolation: a forced getter, a leading path, a written scheme.
func checkSourcePrefix(p string) error {
	rest := p
	if m := forcedGetterRe.FindStringSubmatch(p); m != nil {
		if err := checkForced(m[1]); err != nil {
			return err
		}
		rest = p[len(m[0]):]
	}
	if strings.HasPrefix(rest, "/") || strings.HasPrefix(rest, "./") || strings.HasPrefix(rest, "../") {
		return ErrArtifactLocal
	}
	scheme, _, ok := strings.Cut(rest, "://")
	if !ok || !schemeRe.MatchString(scheme) {
		return nil
	}
	switch s := strings.ToLower(scheme); s {
	case "file":
		return ErrArtifactLocal
	case "http", "https", "git", "ssh":
		return nil
	default:
		return fmt.Errorf("%s:// is %w", scheme, ErrArtifactGetter)
	}
}

var schemeRe = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*$`)

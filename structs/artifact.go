package structs

import (
	"path/filepath"
	"strings"
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
// directory, stays inside it once cleaned. A leading "/" is taken
// relative to the task's directory, as Nomad's client joins it.
func ArtifactDestInside(dest string) bool {
	rel := filepath.Clean(strings.TrimLeft(dest, "/"))
	return rel != ".." && !strings.HasPrefix(rel, "../")
}

package structs

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// Variables, in Nomad's shape (api.Variable, api.VariableMetadata): a
// namespaced path holding a map of string items. The state keeps only
// VariableEncrypted, the items sealed under a root key of the keyring
// (keyring.go); the servers open them to answer a read.

// VariableMetadata is a variable without its items (api.VariableMetadata),
// the element of a list. Times are Unix nanoseconds, stamped by the leader.
type VariableMetadata struct {
	Namespace   string
	Path        string
	CreateIndex uint64
	ModifyIndex uint64
	CreateTime  int64
	ModifyTime  int64
	// Lock is the variable's lock, if it holds one (variable_lock.go).
	Lock *VariableLock `json:",omitempty"`
}

// VariableItems are a variable's key/value pairs.
type VariableItems map[string]string

// Size is the items' size as Nomad counts it: every key's and value's
// length in bytes.
func (vi VariableItems) Size() int {
	n := 0
	for k, v := range vi {
		n += len(k) + len(v)
	}
	return n
}

// Variable is a variable with its items in the clear (api.Variable): what
// the API reads and writes. It never enters the state or the Raft log.
type Variable struct {
	Namespace   string
	Path        string
	CreateIndex uint64
	ModifyIndex uint64
	CreateTime  int64
	ModifyTime  int64
	Items       VariableItems
	Lock        *VariableLock `json:",omitempty"`
}

// Metadata returns the variable's metadata.
func (v *Variable) Metadata() VariableMetadata {
	return VariableMetadata{Namespace: v.Namespace, Path: v.Path, CreateIndex: v.CreateIndex,
		ModifyIndex: v.ModifyIndex, CreateTime: v.CreateTime, ModifyTime: v.ModifyTime, Lock: v.Lock.Copy()}
}

// VariableEncrypted is a variable as the state keeps it: its metadata and
// its items (JSON) sealed with AES-256-GCM under the root key KeyID, with
// Nonce, the namespace and the path as additional data.
type VariableEncrypted struct {
	VariableMetadata
	KeyID string
	Nonce []byte
	Data  []byte
	// LockExpires is when the lease of Lock runs out unless renewed (Unix
	// nanoseconds, the leader's clock); 0 without a lock.
	LockExpires int64 `json:",omitempty"`
}

// Copy returns a copy that shares nothing with v.
func (v *VariableEncrypted) Copy() *VariableEncrypted {
	c := *v
	c.Lock = v.Lock.Copy()
	c.Nonce = append([]byte(nil), v.Nonce...)
	c.Data = append([]byte(nil), v.Data...)
	return &c
}

// Variable operations of a VarApplyRequest, Nomad's names.
const (
	VarOpSet       = "set"        // create or replace
	VarOpCAS       = "cas"        // replace if ModifyIndex is CheckIndex (0: create only)
	VarOpDelete    = "delete"     // delete, a no-op when absent
	VarOpDeleteCAS = "delete-cas" // delete if ModifyIndex is CheckIndex (0: only when absent)
)

// VarApplyRequest writes or deletes one variable. For a write, Var carries
// the sealed items and the times the leader stamped (CreateTime is kept
// from the stored variable when it exists); for a delete, only its
// Namespace and Path count.
type VarApplyRequest struct {
	Op         string
	Var        *VariableEncrypted
	CheckIndex uint64
}

// VarApplyResult answers a VarApplyRequest: the variable as written (nil
// after a delete), or, when a check-and-set found another ModifyIndex,
// the current variable (nil when there is none) and Conflicted set.
type VarApplyResult struct {
	Written    *VariableEncrypted
	Conflicted bool
	Conflict   *VariableEncrypted
}

// Variable limits, as Nomad's.
const (
	// MaxVariableSize bounds a variable's items (VariableItems.Size).
	MaxVariableSize = 64 << 10
	// MaxVariablePathLength bounds a variable's path.
	MaxVariablePathLength = 128
)

// ErrVariableInvalid: a variable's path or items are not acceptable.
var ErrVariableInvalid = errors.New("invalid variable")

// validVariablePath is Nomad's set of path characters: RFC 3986 unreserved
// characters but "." (which templates use as a separator), and "/".
var validVariablePath = regexp.MustCompile(`^[a-zA-Z0-9\-_~/]+$`)

// ValidateVariablePath checks a path as Nomad does (characters, length,
// the reserved "nomad/" tree) and, further, refuses empty segments and a
// leading or trailing "/". The error names the field "Path".
func ValidateVariablePath(path string) error {
	switch {
	case path == "":
		return fmt.Errorf("%w: Path: variable requires a path", ErrVariableInvalid)
	case len(path) > MaxVariablePathLength:
		return fmt.Errorf("%w: Path: %d characters, more than the %d allowed", ErrVariableInvalid, len(path), MaxVariablePathLength)
	case !validVariablePath.MatchString(path):
		i := strings.IndexFunc(path, func(r rune) bool { return !validVariablePath.MatchString(string(r)) })
		return fmt.Errorf("%w: Path: invalid path %q: character %q at %d is not one of a-z A-Z 0-9 - _ ~ /", ErrVariableInvalid, path, path[i:i+1], i)
	case strings.HasPrefix(path, "/") || strings.HasSuffix(path, "/") || strings.Contains(path, "//"):
		return fmt.Errorf("%w: Path: invalid path %q: empty segment", ErrVariableInvalid, path)
	}
	parts := strings.Split(path, "/")
	if parts[0] != "nomad" {
		return nil
	}
	switch {
	case len(parts) == 1:
		return fmt.Errorf(`%w: Path: "nomad" is a reserved top-level directory path, but you may write variables to "nomad/jobs", "nomad/job-templates", or below`, ErrVariableInvalid)
	case parts[1] == "jobs":
		return nil
	case parts[1] == "job-templates" && len(parts) == 3:
		return nil
	case parts[1] == "job-templates":
		return fmt.Errorf(`%w: Path: "nomad/job-templates" is a reserved directory path, but you may write variables at the level below it, for example, "nomad/job-templates/template-name"`, ErrVariableInvalid)
	}
	return fmt.Errorf(`%w: Path: only paths at "nomad/jobs" or "nomad/job-templates" and below are valid paths under the top-level "nomad" directory`, ErrVariableInvalid)
}

// ValidateVariable checks a variable to write: its path, at least one
// item, and the items' size.
func ValidateVariable(v *Variable) error {
	if err := ValidateVariablePath(v.Path); err != nil {
		return err
	}
	if len(v.Items) == 0 {
		return fmt.Errorf("%w: Items: empty variables are invalid", ErrVariableInvalid)
	}
	if n := v.Items.Size(); n > MaxVariableSize {
		return fmt.Errorf("%w: Items: variables are limited to 64KiB in total size (these items are %d bytes)", ErrVariableInvalid, n)
	}
	for k := range v.Items {
		if k == "" {
			return fmt.Errorf("%w: Items: an item's key must not be empty", ErrVariableInvalid)
		}
	}
	return nil
}

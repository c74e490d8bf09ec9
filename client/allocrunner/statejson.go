package allocrunner

import (
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/droverhq/drover/drivers"
	"github.com/droverhq/drover/structs"
)

// The state file is written by appendState below, which writes the bytes
// encoding/json's Encoder writes for a persisted (the same keys in the
// same order, the same escaping, the same trailing newline), in a fifth
// of the time: the task's environment, most of a running task's file, is
// a map that encoding/json sorts and encodes through reflection on every
// write. The file is read back with encoding/json as before, so a file
// written by an earlier build reads as it did, and an earlier build reads
// this one's. statejson_test.go checks the bytes against encoding/json's
// for every field and fails when one of the encoded types gains a field.
//
// What it does not write itself (a value encoding/json would refuse, a
// string that needs escaping, the rare parts of a task config: ports,
// mounts, the driver's config) it hands to encoding/json, whose
// output it copies as is.

// errStateFallback: appendState met a value it leaves to encoding/json
// as a whole (a time out of RFC 3339's range, which encoding/json refuses
// with its own error).
var errStateFallback = errors.New("state file: encoded by encoding/json")

// encodeState returns p encoded as json.NewEncoder(w).Encode(p) writes it,
// appended to buf.
func encodeState(buf []byte, p *persisted) ([]byte, error) {
	out, err := appendState(buf, p)
	if err == nil {
		return append(out, '\n'), nil
	}
	if !errors.Is(err, errStateFallback) {
		return nil, err
	}
	b, err := json.Marshal(p)
	if err != nil {
		return nil, err
	}
	return append(append(buf, b...), '\n'), nil
}

func appendState(b []byte, p *persisted) ([]byte, error) {
	var err error
	b = append(b, `{"Version":`...)
	b = strconv.AppendInt(b, int64(p.Version), 10)
	b = append(b, `,"Tasks":`...)
	if p.Tasks == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '{')
		for i, name := range sortedKeys(p.Tasks) {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, name)
			b = append(b, ':')
			if b, err = appendPersistedTask(b, p.Tasks[name]); err != nil {
				return nil, err
			}
		}
		b = append(b, '}')
	}
	if !p.RunStartedAt.IsZero() {
		b = append(b, `,"RunStartedAt":`...)
		if b, err = appendTime(b, p.RunStartedAt); err != nil {
			return nil, err
		}
	}
	return append(b, '}'), nil
}

func appendPersistedTask(b []byte, t *persistedTask) ([]byte, error) {
	if t == nil {
		return append(b, "null"...), nil
	}
	var err error
	b = append(b, `{"State":`...)
	if b, err = appendTaskState(b, t.State); err != nil {
		return nil, err
	}
	if t.Handle != nil {
		b = append(b, `,"Handle":`...)
		if b, err = appendHandle(b, t.Handle); err != nil {
			return nil, err
		}
	}
	return append(b, '}'), nil
}

func appendTaskState(b []byte, s *structs.TaskState) ([]byte, error) {
	if s == nil {
		return append(b, "null"...), nil
	}
	var err error
	b = append(b, `{"State":`...)
	b = appendJSONString(b, s.State)
	b = append(b, `,"Failed":`...)
	b = strconv.AppendBool(b, s.Failed)
	b = append(b, `,"Restarts":`...)
	b = strconv.AppendUint(b, s.Restarts, 10)
	b = append(b, `,"LastRestart":`...)
	if b, err = appendTime(b, s.LastRestart); err != nil {
		return nil, err
	}
	b = append(b, `,"StartedAt":`...)
	if b, err = appendTime(b, s.StartedAt); err != nil {
		return nil, err
	}
	b = append(b, `,"FinishedAt":`...)
	if b, err = appendTime(b, s.FinishedAt); err != nil {
		return nil, err
	}
	b = append(b, `,"Events":`...)
	if s.Events == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, e := range s.Events {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendTaskEvent(b, e)
		}
		b = append(b, ']')
	}
	return append(b, '}'), nil
}

func appendTaskEvent(b []byte, e *structs.TaskEvent) []byte {
	if e == nil {
		return append(b, "null"...)
	}
	b = append(b, `{"Type":`...)
	b = appendJSONString(b, e.Type)
	b = append(b, `,"Time":`...)
	b = strconv.AppendInt(b, e.Time, 10)
	b = append(b, `,"Message":`...)
	b = appendJSONString(b, e.Message)
	b = append(b, `,"DisplayMessage":`...)
	b = appendJSONString(b, e.DisplayMessage)
	b = append(b, `,"ExitCode":`...)
	b = strconv.AppendInt(b, int64(e.ExitCode), 10)
	b = append(b, `,"Signal":`...)
	b = strconv.AppendInt(b, int64(e.Signal), 10)
	b = append(b, `,"KillTimeout":`...)
	b = strconv.AppendInt(b, int64(e.KillTimeout), 10)
	if x := e.TaskEventExtra; x != nil {
		// Inlined, as encoding/json writes an embedded struct's fields.
		if len(x.Details) > 0 {
			b = append(b, `,"Details":`...)
			b = appendStringMap(b, x.Details)
		}
		b = appendOptString(b, `,"RestartReason":`, x.RestartReason)
		b = appendOptString(b, `,"KillReason":`, x.KillReason)
		b = appendOptString(b, `,"TaskSignal":`, x.TaskSignal)
		b = appendOptString(b, `,"TaskSignalReason":`, x.TaskSignalReason)
		b = appendOptString(b, `,"DriverError":`, x.DriverError)
		b = appendOptString(b, `,"DownloadError":`, x.DownloadError)
	}
	return append(b, '}')
}

func appendHandle(b []byte, h *drivers.TaskHandle) ([]byte, error) {
	var err error
	b = append(b, `{"Version":`...)
	b = strconv.AppendInt(b, int64(h.Version), 10)
	b = append(b, `,"Driver":`...)
	b = appendJSONString(b, h.Driver)
	b = append(b, `,"Config":`...)
	if b, err = appendTaskConfig(b, h.Config); err != nil {
		return nil, err
	}
	b = append(b, `,"StartedAt":`...)
	if b, err = appendTime(b, h.StartedAt); err != nil {
		return nil, err
	}
	b = append(b, `,"DriverState":`...)
	if b, err = appendRaw(b, h.DriverState); err != nil {
		return nil, err
	}
	return append(b, '}'), nil
}

func appendTaskConfig(b []byte, c *drivers.TaskConfig) ([]byte, error) {
	if c == nil {
		return append(b, "null"...), nil
	}
	var err error
	b = append(b, `{"AllocID":`...)
	b = appendJSONString(b, c.AllocID)
	b = append(b, `,"TaskName":`...)
	b = appendJSONString(b, c.TaskName)
	b = appendOptString(b, `,"JobID":`, c.JobID)
	b = appendOptString(b, `,"JobName":`, c.JobName)
	b = appendOptString(b, `,"Namespace":`, c.Namespace)
	b = appendOptString(b, `,"TaskGroup":`, c.TaskGroup)
	b = appendOptString(b, `,"NodeID":`, c.NodeID)
	b = appendOptString(b, `,"NodeName":`, c.NodeName)
	b = append(b, `,"TaskDir":`...)
	b = appendJSONString(b, c.TaskDir)
	b = appendOptString(b, `,"AllocDir":`, c.AllocDir)
	if len(c.Ports) > 0 {
		b = append(b, `,"Ports":`...)
		if b, err = appendMarshaled(b, c.Ports); err != nil {
			return nil, err
		}
	}
	b = appendOptString(b, `,"NetworkMode":`, c.NetworkMode)
	b = appendOptString(b, `,"NetNSPath":`, c.NetNSPath)
	b = appendOptString(b, `,"NetworkContainerID":`, c.NetworkContainerID)
	b = appendOptString(b, `,"User":`, c.User)
	b = append(b, `,"Env":`...)
	b = appendStringMap(b, c.Env)
	b = append(b, `,"Config":`...)
	switch {
	case c.Config == nil:
		b = append(b, "null"...)
	case len(c.Config) == 0:
		b = append(b, "{}"...)
	default:
		if b, err = appendMarshaled(b, c.Config); err != nil {
			return nil, err
		}
	}
	if r := c.Resources; r != nil {
		b = append(b, `,"Resources":{"Cpu":{"CpuShares":`...)
		b = strconv.AppendInt(b, r.Cpu.CpuShares, 10)
		b = append(b, `},"Memory":{"MemoryMB":`...)
		b = strconv.AppendInt(b, r.Memory.MemoryMB, 10)
		b = append(b, `,"MemoryMaxMB":`...)
		b = strconv.AppendInt(b, r.Memory.MemoryMaxMB, 10)
		b = append(b, `}}`...)
	}
	b = append(b, `,"StdoutPath":`...)
	b = appendJSONString(b, c.StdoutPath)
	b = append(b, `,"StderrPath":`...)
	b = appendJSONString(b, c.StderrPath)
	b = append(b, `,"LogConfig":{"MaxFiles":`...)
	b = strconv.AppendInt(b, int64(c.LogConfig.MaxFiles), 10)
	b = append(b, `,"MaxFileSizeMB":`...)
	b = strconv.AppendInt(b, int64(c.LogConfig.MaxFileSizeMB), 10)
	b = append(b, `,"Disabled":`...)
	b = strconv.AppendBool(b, c.LogConfig.Disabled)
	b = append(b, `},"KillTimeout":`...)
	b = strconv.AppendInt(b, int64(c.KillTimeout), 10)
	b = append(b, `,"KillSignal":`...)
	b = appendJSONString(b, c.KillSignal)
	if len(c.Mounts) > 0 {
		b = append(b, `,"Mounts":`...)
		if b, err = appendMarshaled(b, c.Mounts); err != nil {
			return nil, err
		}
	}
	return append(b, '}'), nil
}

// appendTime writes t as time.Time's MarshalJSON does; a time it would
// refuse is left to encoding/json.
func appendTime(b []byte, t time.Time) ([]byte, error) {
	b = append(b, '"')
	b, err := t.AppendText(b)
	if err != nil {
		return nil, errStateFallback
	}
	return append(b, '"'), nil
}

// appendRaw writes a json.RawMessage as encoding/json does: compacted,
// "null" when nil. One that holds white space (which compacting might
// drop), what encoding/json would escape (its HTML characters, U+2028
// and U+2029), or that is not valid JSON, is left to encoding/json.
func appendRaw(b []byte, m json.RawMessage) ([]byte, error) {
	if m == nil {
		return append(b, "null"...), nil
	}
	for _, c := range m {
		if c <= ' ' || c == '<' || c == '>' || c == '&' || c >= 0x80 {
			return nil, errStateFallback
		}
	}
	if !json.Valid(m) {
		return nil, errStateFallback
	}
	return append(b, m...), nil
}

// appendMarshaled appends encoding/json's encoding of v; a value it
// refuses leaves the whole file to it (and its error).
func appendMarshaled(b []byte, v any) ([]byte, error) {
	m, err := json.Marshal(v)
	if err != nil {
		return nil, errStateFallback
	}
	return append(b, m...), nil
}

// appendStringMap writes a map as encoding/json does: keys sorted,
// "null" when nil.
func appendStringMap(b []byte, m map[string]string) []byte {
	if m == nil {
		return append(b, "null"...)
	}
	b = append(b, '{')
	for i, k := range envKeys(m) {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, k)
		b = append(b, ':')
		b = appendJSONString(b, m[k])
	}
	return append(b, '}')
}

// lastEnvKeys are the sorted keys of the last map envKeys sorted: the
// tasks of a client mostly have the same variables (those of their
// group and job), whose order is then checked rather than sorted again.
var lastEnvKeys atomic.Pointer[[]string]

// envKeys returns m's keys sorted: lastEnvKeys when they are exactly
// m's, else sorted anew (and kept).
func envKeys(m map[string]string) []string {
	if p := lastEnvKeys.Load(); p != nil && len(*p) == len(m) {
		same := true
		for _, k := range *p {
			if _, ok := m[k]; !ok {
				same = false
				break
			}
		}
		if same {
			return *p
		}
	}
	keys := sortedKeys(m)
	lastEnvKeys.Store(&keys)
	return keys
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// appendOptString writes key and s unless s is empty (omitempty).
func appendOptString(b []byte, key, s string) []byte {
	if s == "" {
		return b
	}
	return appendJSONString(append(b, key...), s)
}

// appendJSONString writes s quoted as encoding/json does. The strings of
// a state file (paths, names, the built-in variables) are printable
// ASCII without quotes or HTML characters and are copied as they are;
// any other is left to encoding/json's own escaping.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if !plainJSON[s[i]] {
			q, _ := json.Marshal(s) // a string always encodes
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// plainJSON marks the bytes encoding/json copies into a string as they
// are: printable ASCII but for the quote, the backslash and the HTML
// characters.
var plainJSON = func() (t [256]bool) {
	for c := 0x20; c < 0x7f; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

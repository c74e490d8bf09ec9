package structs

import (
	"bytes"
	"encoding/json"
	"maps"
	"reflect"
	"slices"
)

func copySlice[T any](in []T) []T {
	if in == nil {
		return nil
	}
	return slices.Clone(in)
}

func copyMap[K comparable, V any](in map[K]V) map[K]V {
	if in == nil {
		return nil
	}
	return maps.Clone(in)
}

// copyAnyMap deep-copies free-form driver configuration.
func copyAnyMap(in map[string]any) map[string]any {
	if in == nil {
		return nil
	}
	out := make(map[string]any, len(in))
	for k, v := range in {
		out[k] = copyAny(v)
	}
	return out
}

func copyAny(v any) any {
	switch t := v.(type) {
	case map[string]any:
		return copyAnyMap(t)
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = copyAny(e)
		}
		return out
	case []string:
		return slices.Clone(t)
	}
	return v
}

// deepEqualJSON compares two values by their JSON form, which treats
// free-form config numbers (int vs float64) alike.
func deepEqualJSON(a, b any) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(ja, jb)
}

// JSONNumbers turns the numbers in the job's free-form driver configs into
// float64, as decoding JSON gives them, in place. A config decoded from
// MessagePack holds the integer and float types it was stored with; a
// client calls this on a job it decoded so, and its drivers see the same
// values whichever encoding the servers answered in.
func (j *Job) JSONNumbers() {
	if j == nil {
		return
	}
	for _, tg := range j.TaskGroups {
		if tg == nil {
			continue
		}
		for _, t := range tg.Tasks {
			if t != nil && t.Config != nil {
				MapConfigLeaves(t.Config, jsonNumber)
			}
		}
	}
}

// MapConfigLeaves replaces, in place, every value in a free-form config
// (a driver's block: maps, lists and scalars) that is neither a
// map[string]any nor a []any with leaf(value), and returns v.
func MapConfigLeaves(v any, leaf func(any) any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			t[k] = MapConfigLeaves(e, leaf)
		}
		return t
	case []any:
		for i, e := range t {
			t[i] = MapConfigLeaves(e, leaf)
		}
		return t
	}
	return leaf(v)
}

// jsonNumber returns a number of any integer or float type as a float64,
// and anything else as it is.
func jsonNumber(v any) any {
	switch rv := reflect.ValueOf(v); {
	case rv.CanInt():
		return float64(rv.Int())
	case rv.CanUint():
		return float64(rv.Uint())
	case rv.CanFloat():
		return rv.Float()
	}
	return v
}

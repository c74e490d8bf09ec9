package structs

import (
	"bytes"
	"encoding/json"
	"maps"
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

package taskenv

import "strings"

// resolve returns the value of one reference (the text inside "${…}").
func (e *Env) resolve(ref string) (string, bool) {
	if v, ok := e.node.get(ref); ok {
		return v, true
	}
	if name, ok := strings.CutPrefix(ref, "env."); ok {
		v, ok := e.vars[name]
		return v, ok
	}
	v, ok := e.vars[ref]
	return v, ok
}

// Replace fills the references in s: ${NOMAD_*} and any other variable of
// the task's environment, ${env.X}, ${node.unique.id},
// ${node.unique.name}, ${node.datacenter}, ${node.class}, ${node.pool},
// ${attr.<key>} and ${meta.<key>}. A reference it cannot resolve, or an
// unclosed "${", stays as written.
func (e *Env) Replace(s string) string {
	if !strings.Contains(s, "${") {
		return s
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			break
		}
		j := strings.IndexByte(s[i+2:], '}')
		if j < 0 {
			break
		}
		ref := s[i+2 : i+2+j]
		b.WriteString(s[:i])
		if v, ok := e.resolve(strings.TrimSpace(ref)); ok {
			b.WriteString(v)
		} else {
			b.WriteString(s[i : i+3+j])
		}
		s = s[i+3+j:]
	}
	b.WriteString(s)
	return b.String()
}

// ReplaceConfig returns a deep copy of a driver config with every string
// in it (map values and list items, at any depth) filled in. Map keys are
// left alone.
func (e *Env) ReplaceConfig(cfg map[string]any) map[string]any {
	if cfg == nil {
		return nil
	}
	out := make(map[string]any, len(cfg))
	for k, v := range cfg {
		out[k] = e.replaceAny(v)
	}
	return out
}

func (e *Env) replaceAny(v any) any {
	switch t := v.(type) {
	case string:
		return e.Replace(t)
	case map[string]any:
		return e.ReplaceConfig(t)
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = e.replaceAny(x)
		}
		return out
	case []string:
		out := make([]string, len(t))
		for i, x := range t {
			out[i] = e.Replace(x)
		}
		return out
	case []map[string]any:
		out := make([]map[string]any, len(t))
		for i, x := range t {
			out[i] = e.ReplaceConfig(x)
		}
		return out
	}
	return v
}

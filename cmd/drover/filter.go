package main

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode"
)

// Nomad's -filter expressions (go-bexpr's grammar), evaluated by the CLI
// on each item of a list the servers answer whole, over the item's JSON
// form (whose keys are Nomad's field names):
//
//	Status == "ready"                  Name != "web"
//	Name contains "web"                "web" in Tags        Tags contains "web"
//	Name matches "^web-[0-9]+$"        Meta is empty        Meta.owner is not empty
//	Attributes["os.name"] == "linux"   Status == ready and not (Drain == true or Name == "x")
//
// A selector is a field, a dotted path or ["key"] into maps; a value is
// quoted, a number, true, false or a bare word. An expression drover does
// not understand is an error that says where.

type filterExpr interface {
	eval(item any) (bool, error)
}

// parseFilter parses a -filter expression.
func parseFilter(s string) (filterExpr, error) {
	toks, err := lexFilter(s)
	if err != nil {
		return nil, err
	}
	p := &filterParser{toks: toks}
	e, err := p.or()
	if err != nil {
		return nil, err
	}
	if p.pos < len(p.toks) {
		return nil, fmt.Errorf("unexpected %q in the filter", p.toks[p.pos].text)
	}
	return e, nil
}

type filterTok struct {
	text   string
	quoted bool
}

func lexFilter(s string) ([]filterTok, error) {
	var out []filterTok
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			i++
		case c == '(' || c == ')' || c == '[' || c == ']':
			out = append(out, filterTok{text: string(c)})
			i++
		case c == '=' || c == '!':
			if i+1 < len(s) && s[i+1] == '=' {
				out = append(out, filterTok{text: s[i : i+2]})
				i += 2
				continue
			}
			return nil, fmt.Errorf("unexpected %q at %d in the filter", c, i)
		case c == '"' || c == '`':
			j := i + 1
			var b strings.Builder
			for ; j < len(s) && s[j] != c; j++ {
				if s[j] == '\\' && c == '"' && j+1 < len(s) {
					j++
				}
				b.WriteByte(s[j])
			}
			if j >= len(s) {
				return nil, fmt.Errorf("unterminated string at %d in the filter", i)
			}
			out = append(out, filterTok{text: b.String(), quoted: true})
			i = j + 1
		default:
			j := i
			for j < len(s) && !strings.ContainsRune(" \t\n()[]=!\"`", rune(s[j])) {
				j++
			}
			out = append(out, filterTok{text: s[i:j]})
			i = j
		}
	}
	return out, nil
}

type filterParser struct {
	toks []filterTok
	pos  int
}

func (p *filterParser) peek(word string) bool {
	return p.pos < len(p.toks) && !p.toks[p.pos].quoted && p.toks[p.pos].text == word
}

func (p *filterParser) next() (filterTok, error) {
	if p.pos >= len(p.toks) {
		return filterTok{}, fmt.Errorf("the filter ends too early")
	}
	t := p.toks[p.pos]
	p.pos++
	return t, nil
}

type andExpr struct{ a, b filterExpr }
type orExpr struct{ a, b filterExpr }
type notExpr struct{ e filterExpr }

func (e andExpr) eval(v any) (bool, error) {
	a, err := e.a.eval(v)
	if err != nil || !a {
		return false, err
	}
	return e.b.eval(v)
}

func (e orExpr) eval(v any) (bool, error) {
	a, err := e.a.eval(v)
	if err != nil || a {
		return a, err
	}
	return e.b.eval(v)
}

func (e notExpr) eval(v any) (bool, error) {
	b, err := e.e.eval(v)
	return !b, err
}

func (p *filterParser) or() (filterExpr, error) {
	a, err := p.and()
	if err != nil {
		return nil, err
	}
	for p.peek("or") {
		p.pos++
		b, err := p.and()
		if err != nil {
			return nil, err
		}
		a = orExpr{a, b}
	}
	return a, nil
}

func (p *filterParser) and() (filterExpr, error) {
	a, err := p.unary()
	if err != nil {
		return nil, err
	}
	for p.peek("and") {
		p.pos++
		b, err := p.unary()
		if err != nil {
			return nil, err
		}
		a = andExpr{a, b}
	}
	return a, nil
}

func (p *filterParser) unary() (filterExpr, error) {
	if p.peek("not") {
		p.pos++
		e, err := p.unary()
		return notExpr{e}, err
	}
	if p.peek("(") {
		p.pos++
		e, err := p.or()
		if err != nil {
			return nil, err
		}
		if !p.peek(")") {
			return nil, fmt.Errorf("missing ) in the filter")
		}
		p.pos++
		return e, nil
	}
	return p.match()
}

// matchExpr is one comparison.
type matchExpr struct {
	sel      []string // the selector's path
	op       string   // ==, !=, contains, in, matches, empty
	value    string
	negate   bool
	selRight bool // "value in Selector"
	re       *regexp.Regexp
}

func (p *filterParser) selector() ([]string, error) {
	t, err := p.next()
	if err != nil {
		return nil, err
	}
	if t.quoted {
		return nil, fmt.Errorf("a selector is expected, not %q", t.text)
	}
	path := strings.Split(t.text, ".")
	for p.peek("[") {
		p.pos++
		k, err := p.next()
		if err != nil {
			return nil, err
		}
		if !p.peek("]") {
			return nil, fmt.Errorf("missing ] in the filter")
		}
		p.pos++
		path = append(path, k.text)
	}
	for _, s := range path {
		if s == "" || !unicode.IsLetter([]rune(s)[0]) && !strings.ContainsAny(s, ".-/") {
			return nil, fmt.Errorf("invalid selector %q in the filter", t.text)
		}
	}
	return path, nil
}

func (p *filterParser) match() (filterExpr, error) {
	// "value in Selector" / "value not in Selector".
	word := func(i int) string {
		if i < len(p.toks) && !p.toks[i].quoted {
			return p.toks[i].text
		}
		return ""
	}
	isIn := word(p.pos+1) == "in" || word(p.pos+1) == "not" && word(p.pos+2) == "in"
	if p.pos < len(p.toks) && (p.toks[p.pos].quoted || isIn) {
		v, _ := p.next()
		neg := false
		if p.peek("not") {
			p.pos++
			neg = true
		}
		if !p.peek("in") {
			return nil, fmt.Errorf("expected in after %q in the filter", v.text)
		}
		p.pos++
		sel, err := p.selector()
		if err != nil {
			return nil, err
		}
		return &matchExpr{sel: sel, op: "contains", value: v.text, negate: neg, selRight: true}, nil
	}
	sel, err := p.selector()
	if err != nil {
		return nil, err
	}
	m := &matchExpr{sel: sel}
	t, err := p.next()
	if err != nil {
		return nil, err
	}
	switch t.text {
	case "==", "!=":
		m.op, m.negate = "==", t.text == "!="
	case "is":
		if p.peek("not") {
			p.pos++
			m.negate = true
		}
		if !p.peek("empty") {
			return nil, fmt.Errorf("expected empty after is in the filter")
		}
		p.pos++
		m.op = "empty"
		return m, nil
	case "not":
		m.negate = true
		t, err = p.next()
		if err != nil {
			return nil, err
		}
		fallthrough
	default:
		switch t.text {
		case "contains", "matches":
			m.op = t.text
		default:
			return nil, fmt.Errorf("drover's -filter does not understand %q (it knows ==, !=, contains, in, matches, is empty, and, or, not)", t.text)
		}
	}
	v, err := p.next()
	if err != nil {
		return nil, err
	}
	m.value = v.text
	if m.op == "matches" {
		if m.re, err = regexp.Compile(m.value); err != nil {
			return nil, fmt.Errorf("invalid regular expression %q in the filter: %v", m.value, err)
		}
	}
	return m, nil
}

// lookup follows path into v (decoded JSON); ok is false when a step is
// missing.
func lookup(v any, path []string) (any, bool) {
	for _, k := range path {
		m, isMap := v.(map[string]any)
		if !isMap {
			return nil, false
		}
		if v, isMap = m[k]; !isMap {
			return nil, false
		}
	}
	return v, true
}

// scalar is a JSON value as the filter compares it.
func scalar(v any) string {
	switch t := v.(type) {
	case nil:
		return ""
	case string:
		return t
	case bool:
		return strconv.FormatBool(t)
	case float64:
		return strconv.FormatFloat(t, 'f', -1, 64)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func (m *matchExpr) eval(item any) (bool, error) {
	v, found := lookup(item, m.sel)
	var r bool
	switch m.op {
	case "empty":
		switch t := v.(type) {
		case nil:
			r = true
		case string:
			r = t == ""
		case []any:
			r = len(t) == 0
		case map[string]any:
			r = len(t) == 0
		}
	case "==":
		r = found && scalar(v) == m.value
	case "matches":
		r = found && m.re.MatchString(scalar(v))
	case "contains":
		switch t := v.(type) {
		case string:
			r = strings.Contains(t, m.value)
		case []any:
			for _, e := range t {
				if scalar(e) == m.value {
					r = true
				}
			}
		case map[string]any:
			_, r = t[m.value]
		}
	}
	if m.negate {
		r = !r
	}
	return r, nil
}

// filterItems keeps the items the expression selects (all when expr is
// ""), each seen as its JSON form.
func filterItems[T any](expr string, items []T) ([]T, error) {
	if expr == "" {
		return items, nil
	}
	f, err := parseFilter(expr)
	if err != nil {
		return nil, &exitError{code: 1, msg: fmt.Sprintf("Error: invalid -filter: %v", err)}
	}
	out := items[:0:0]
	for _, it := range items {
		b, err := json.Marshal(it)
		if err != nil {
			return nil, err
		}
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			return nil, err
		}
		ok, err := f.eval(v)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, it)
		}
	}
	return out, nil
}

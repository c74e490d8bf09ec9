package jobspec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
)

// jnode is one JSON value with the byte offset where it starts, so that an
// API job's problems can be placed by line and column.
type jnode struct {
	off    int
	kind   byte // 'o' object, 'a' array, 's' string, 'n' number, 'b' bool, 'z' null
	keys   []string
	kids   map[string]*jnode
	keyOff map[string]int
	elems  []*jnode
	num    json.Number
	str    string
	b      bool
}

// errSyntax is returned by parseTree for malformed JSON.
var errSyntax = errors.New("invalid JSON")

// parseTree reads one JSON value and its positions.
func parseTree(src []byte) (*jnode, int, error) {
	dec := json.NewDecoder(bytes.NewReader(src))
	dec.UseNumber()
	n, err := readNode(dec, src)
	if err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, int(se.Offset), fmt.Errorf("%w: %v", errSyntax, se)
		}
		return nil, int(dec.InputOffset()), fmt.Errorf("%w: %v", errSyntax, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, int(dec.InputOffset()), fmt.Errorf("%w: unexpected data after the job object", errSyntax)
	}
	return n, 0, nil
}

// valueStart skips whitespace, ':' and ',' from off.
func valueStart(src []byte, off int) int {
	for off < len(src) {
		switch src[off] {
		case ' ', '\t', '\r', '\n', ':', ',':
			off++
		default:
			return off
		}
	}
	return off
}

func readNode(dec *json.Decoder, src []byte) (*jnode, error) {
	off := valueStart(src, int(dec.InputOffset()))
	tok, err := dec.Token()
	if err != nil {
		if err == io.EOF {
			return nil, io.ErrUnexpectedEOF
		}
		return nil, err
	}
	n := &jnode{off: off}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			n.kind = 'o'
			n.kids = map[string]*jnode{}
			n.keyOff = map[string]int{}
			for dec.More() {
				koff := valueStart(src, int(dec.InputOffset()))
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k, ok := kt.(string)
				if !ok {
					return nil, fmt.Errorf("object key is not a string")
				}
				v, err := readNode(dec, src)
				if err != nil {
					return nil, err
				}
				if _, dup := n.kids[k]; !dup {
					n.keys = append(n.keys, k)
				}
				n.kids[k] = v
				n.keyOff[k] = koff
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
		case '[':
			n.kind = 'a'
			for dec.More() {
				v, err := readNode(dec, src)
				if err != nil {
					return nil, err
				}
				n.elems = append(n.elems, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
		default:
			return nil, fmt.Errorf("unexpected %q", t)
		}
	case string:
		n.kind, n.str = 's', t
	case json.Number:
		n.kind, n.num = 'n', t
	case bool:
		n.kind, n.b = 'b', t
	case nil:
		n.kind = 'z'
	}
	return n, nil
}

// zero reports whether a value is null, false, 0, "", or an array or
// object of zero values: what Nomad's API client sends for a feature the
// job does not use.
func (n *jnode) zero() bool {
	switch n.kind {
	case 'z':
		return true
	case 'b':
		return !n.b
	case 's':
		return n.str == ""
	case 'n':
		f, err := n.num.Float64()
		return err == nil && f == 0
	case 'a':
		for _, e := range n.elems {
			if !e.zero() {
				return false
			}
		}
		return true
	case 'o':
		for _, k := range n.keys {
			if !n.kids[k].zero() {
				return false
			}
		}
		return true
	}
	return false
}

func kindName(k byte) string {
	return map[byte]string{'o': "an object", 'a': "an array", 's': "a string", 'n': "a number", 'b': "a bool", 'z': "null"}[k]
}

// lines maps byte offsets to line and column.
type lines []int

func newLines(src []byte) lines {
	ls := lines{0}
	for i, c := range src {
		if c == '\n' {
			ls = append(ls, i+1)
		}
	}
	return ls
}

func (ls lines) pos(off int) (int, int) {
	i := sort.Search(len(ls), func(i int) bool { return ls[i] > off }) - 1
	if i < 0 {
		i = 0
	}
	return i + 1, off - ls[i] + 1
}

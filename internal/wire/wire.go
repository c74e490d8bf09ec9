// Package wire is drover's MessagePack encoding of its structs: the
// servers' log entries and snapshots (package fsm) and the clients'
// reports of their allocations (PUT /v1/internal/allocs/update with
// ContentType) use it, so that a report decodes as the log entry it
// becomes. Structs are written as maps keyed by field name; the fields a
// struct marks `codec:",omitempty"` are left out when empty (see package
// structs).
package wire

import (
	"bytes"
	"fmt"
	"reflect"

	"github.com/hashicorp/go-msgpack/v2/codec"
)

// ContentType is the media type of a body in this encoding.
const ContentType = "application/vnd.msgpack"

// Handle is the codec's configuration. Free-form maps decode as
// map[string]any and strings as string, so driver configs survive the
// round trip; times are written as the msgpack time extension.
var Handle = func() *codec.MsgpackHandle {
	h := &codec.MsgpackHandle{}
	h.RawToString = true
	h.WriteExt = true
	h.MapType = reflect.TypeOf(map[string]any(nil))
	return h
}()

// Encode returns v encoded; the slice's capacity is its length.
func Encode(v any) ([]byte, error) {
	var buf bytes.Buffer
	if err := codec.NewEncoder(&buf, Handle).Encode(v); err != nil {
		return nil, err
	}
	if buf.Len() == buf.Cap() {
		return buf.Bytes(), nil
	}
	return bytes.Clone(buf.Bytes()), nil
}

// Decode decodes b into v, which must be a pointer to a zero value (a
// field left out keeps what v held). Malformed input is an error, never
// a panic.
func Decode(b []byte, v any) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("malformed msgpack: %v", p)
		}
	}()
	return codec.NewDecoderBytes(b, Handle).Decode(v)
}

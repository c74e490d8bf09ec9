// Package wire is drover's MessagePack encoding of its structs: the
// servers' log entries and snapshots (package fsm) and the clients'
// protocol (their reports, PUT /v1/internal/allocs/update, and their
// allocs-sync requests with ContentType; the answers to their alloc reads
// when they accept it) use it, so that a report decodes as the log entry
// it becomes. Structs are written as maps keyed by field name; the fields a
// struct marks `codec:",omitempty"` are left out when empty (see package
// structs).
package wire

import (
	"fmt"
	"reflect"
	"sync"

	"github.com/hashicorp/go-msgpack/v2/codec"
)

// ContentType is the media type of a body in this encoding.
const ContentType = "application/vnd.msgpack"

// AltContentType is the other name MessagePack goes by in HTTP headers;
// a body or an Accept that names it is read as ContentType.
const AltContentType = "application/msgpack"

// IsMediaType reports whether a parsed media type (mime.ParseMediaType)
// names this encoding: ContentType or AltContentType.
func IsMediaType(mt string) bool { return mt == ContentType || mt == AltContentType }

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

// Encode returns v encoded, in a new slice whose capacity is its length.
func Encode(v any) ([]byte, error) { return EncodeAfter(nil, v) }

// EncodeAfter returns prefix followed by v encoded, in a new slice whose
// capacity is its length: raft keeps a log entry in memory until it is
// applied, and the spare half of a buffer grown by doubling would stay
// with it. The encoding is written into a buffer reused from one call to
// the next, so that each call allocates its result and not the doublings
// of a growing buffer (8 % of what a leader allocated while clients
// reported 100,000 allocations).
func EncodeAfter(prefix []byte, v any) ([]byte, error) {
	e := encoders.Get().(*encoder)
	e.enc.ResetBytes(&e.buf)
	if err := e.enc.Encode(v); err != nil {
		return nil, err // e is dropped: an encoder that failed is not reused
	}
	out := make([]byte, len(prefix)+len(e.buf))
	copy(out, prefix)
	copy(out[len(prefix):], e.buf)
	if cap(e.buf) <= maxPooledBuffer {
		encoders.Put(e)
	}
	return out, nil
}

// encoder is an Encoder and the buffer it writes into.
type encoder struct {
	enc *codec.Encoder
	buf []byte
}

var encoders = sync.Pool{New: func() any {
	e := &encoder{buf: make([]byte, 0, 4<<10)}
	e.enc = codec.NewEncoderBytes(&e.buf, Handle)
	return e
}}

// maxPooledBuffer bounds the buffer an encoder keeps between calls: a
// plan of a few thousand placements fits.
const maxPooledBuffer = 4 << 20

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

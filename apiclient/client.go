// Package apiclient is drover's Go client for the HTTP API, used by the
// CLI and by client agents. It imports only the domain types.
package apiclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/droverhq/drover/internal/wire"
)

// DefaultAddress is the agent address used when nothing else is set.
const DefaultAddress = "http://127.0.0.1:4646"

// Address picks the API address: flag when non-empty, else DROVER_ADDR,
// else NOMAD_ADDR, else DefaultAddress.
func Address(flag string) string {
	for _, v := range []string{flag, os.Getenv("DROVER_ADDR"), os.Getenv("NOMAD_ADDR")} {
		if v != "" {
			return v
		}
	}
	return DefaultAddress
}

// ErrUnexpectedResponse: the server answered with something that is not
// drover's API (wrong content, undecodable JSON).
var ErrUnexpectedResponse = errors.New("unexpected response")

// StatusError is a non-2xx answer: the status code and the server's
// message.
type StatusError struct {
	Code int
	Msg  string
}

// Error returns "Unexpected response code: CODE (MSG)", as Nomad's client.
func (e *StatusError) Error() string {
	return fmt.Sprintf("Unexpected response code: %d (%s)", e.Code, e.Msg)
}

// IsNotFound reports whether err is a 404 answer.
func IsNotFound(err error) bool {
	var se *StatusError
	return errors.As(err, &se) && se.Code == http.StatusNotFound
}

// Client talks to one agent.
type Client struct {
	base *url.URL
	http *http.Client
	// token is the ACL token every request carries (SetToken).
	token string
	// namespace and region are the defaults of every request that names
	// none (SetNamespace, SetRegion).
	namespace, region string
}

// New returns a client for address ("http://host:port" or "host:port").
func New(address string) (*Client, error) {
	if !strings.Contains(address, "://") {
		address = "http://" + address
	}
	u, err := url.Parse(address)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("invalid address %q", address)
	}
	return &Client{base: u, http: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}}, nil
}

// Address returns the agent's base URL.
func (c *Client) Address() string { return c.base.String() }

// QueryOptions are the read parameters of the API.
type QueryOptions struct {
	WaitIndex  uint64        // ?index: block until the data's index exceeds it
	WaitTime   time.Duration // ?wait: how long to block
	AllowStale bool          // ?stale: any server answers from its local copy
	Prefix     string        // ?prefix
	Namespace  string        // ?namespace
	// Params are further query parameters (e.g. "purge" on a job delete).
	Params map[string]string
}

// QueryMeta is what the answer's headers say.
type QueryMeta struct {
	LastIndex   uint64
	KnownLeader bool
	LastContact time.Duration
	// noLeader: the answer said X-Nomad-KnownLeader: false (a server
	// that leaves the header out says nothing either way).
	noLeader bool
}

func (q *QueryOptions) values() url.Values {
	v := url.Values{}
	if q == nil {
		return v
	}
	if q.WaitIndex > 0 {
		v.Set("index", strconv.FormatUint(q.WaitIndex, 10))
	}
	if q.WaitTime > 0 {
		v.Set("wait", q.WaitTime.String())
	}
	if q.AllowStale {
		v.Set("stale", "true")
	}
	if q.Prefix != "" {
		v.Set("prefix", q.Prefix)
	}
	if q.Namespace != "" {
		v.Set("namespace", q.Namespace)
	}
	for k, p := range q.Params {
		v.Set(k, p)
	}
	return v
}

// Get reads path into out (when non-nil).
func (c *Client) Get(ctx context.Context, path string, q *QueryOptions, out any) (*QueryMeta, error) {
	return c.do(ctx, http.MethodGet, path, q.values(), nil, out)
}

// Put sends in as JSON to path and decodes the answer into out.
func (c *Client) Put(ctx context.Context, path string, in, out any) (*QueryMeta, error) {
	return c.do(ctx, http.MethodPut, path, nil, in, out)
}

// Post sends in as JSON to path with POST and decodes the answer into out.
func (c *Client) Post(ctx context.Context, path string, in, out any) (*QueryMeta, error) {
	return c.do(ctx, http.MethodPost, path, nil, in, out)
}

// Delete sends a DELETE to path with the query options and decodes the
// answer into out (when non-nil).
func (c *Client) Delete(ctx context.Context, path string, q *QueryOptions, out any) (*QueryMeta, error) {
	return c.do(ctx, http.MethodDelete, path, q.values(), nil, out)
}

func (c *Client) do(ctx context.Context, method, path string, q url.Values, in, out any) (*QueryMeta, error) {
	if in == nil {
		return c.doBody(ctx, method, path, q, nil, nil, out)
	}
	b, err := json.Marshal(in)
	if err != nil {
		return nil, fmt.Errorf("encoding request: %w", err)
	}
	return c.doBody(ctx, method, path, q, b, http.Header{"Content-Type": {"application/json"}}, out)
}

// doBody sends body (none when nil) with the given headers and decodes the
// answer into out (when non-nil).
func (c *Client) doBody(ctx context.Context, method, path string, q url.Values, in []byte, h http.Header, out any) (*QueryMeta, error) {
	data, hdr, err := c.doRaw(ctx, method, path, q, in, h)
	if err != nil {
		return nil, err
	}
	meta := parseMeta(hdr)
	if out != nil {
		if err := decodeAnswer(hdr, data, out); err != nil {
			return meta, fmt.Errorf("%w from %s %s%s: %w", ErrUnexpectedResponse, method, strings.TrimSuffix(c.base.Redacted(), "/"), path, err)
		}
	}
	return meta, nil
}

// decodeAnswer decodes an answer's body in the encoding its Content-Type
// names: MessagePack (wire.ContentType), which servers answer only to a
// request that accepts it, or JSON.
func decodeAnswer(h http.Header, data []byte, out any) error {
	if mt, _, err := mime.ParseMediaType(h.Get("Content-Type")); err == nil && wire.IsMediaType(mt) {
		return wire.Decode(data, out)
	}
	return json.Unmarshal(data, out)
}

// doRaw sends body (none when nil) with the given headers and returns the
// answer's body and headers; a status other than 2xx is a *StatusError.
func (c *Client) doRaw(ctx context.Context, method, path string, q url.Values, in []byte, h http.Header) ([]byte, http.Header, error) {
	u := *c.base
	// path is escaped ("/v1/job/"+url.PathEscape(id)): a job ID's "/" is
	// sent as %2F, not as %252F.
	raw := strings.TrimSuffix(c.base.EscapedPath(), "/") + path
	unescaped, err := url.PathUnescape(raw)
	if err != nil {
		return nil, nil, fmt.Errorf("invalid path %q: %w", path, err)
	}
	u.Path, u.RawPath = unescaped, raw
	u.RawQuery = c.withDefaults(q).Encode()
	var body io.Reader
	if in != nil {
		body = bytes.NewReader(in)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), body)
	if err != nil {
		return nil, nil, err
	}
	for k, vs := range h {
		req.Header[k] = vs
	}
	c.setToken(req)
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	data, err := readAnswer(resp)
	if err != nil {
		return nil, nil, fmt.Errorf("reading response: %w", err)
	}
	if resp.StatusCode/100 != 2 {
		return nil, nil, &StatusError{Code: resp.StatusCode, Msg: strings.TrimSpace(string(data))}
	}
	return data, resp.Header, nil
}

// maxAnswer bounds what is read of an answer's body.
const maxAnswer = 64 << 20

// readAnswer reads an answer's body (at most maxAnswer bytes): into one
// buffer of the stated length when the answer states one (the servers'
// do), instead of growing a buffer by doubling from 512 bytes.
func readAnswer(resp *http.Response) ([]byte, error) {
	if n := resp.ContentLength; n >= 0 && n <= maxAnswer {
		b := make([]byte, n)
		if _, err := io.ReadFull(resp.Body, b); err != nil {
			return nil, err
		}
		return b, nil
	}
	return io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
}

func parseMeta(h http.Header) *QueryMeta {
	m := &QueryMeta{}
	m.LastIndex, _ = strconv.ParseUint(h.Get("X-Nomad-Index"), 10, 64)
	m.KnownLeader = h.Get("X-Nomad-KnownLeader") == "true"
	m.noLeader = h.Get("X-Nomad-KnownLeader") == "false"
	if ms, err := strconv.ParseInt(h.Get("X-Nomad-LastContact"), 10, 64); err == nil {
		m.LastContact = time.Duration(ms) * time.Millisecond
	}
	return m
}

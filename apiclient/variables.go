package apiclient

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/droverhq/drover/structs"
)

// ErrCASConflict is a check-and-set write or delete that found another
// ModifyIndex: Current is the variable the servers hold (without its
// items when the token may not read them; zero indexes when there is
// none), as Nomad's api.ErrCASConflict.
type ErrCASConflict struct {
	CheckIndex uint64
	Current    *structs.Variable
}

func (e *ErrCASConflict) Error() string {
	return "cas conflict: expected ModifyIndex " + strconv.FormatUint(e.CheckIndex, 10) +
		"; found " + strconv.FormatUint(e.Current.ModifyIndex, 10)
}

func varPath(path string) string { return "/v1/var/" + strings.Trim(path, " /") }

// casError turns a 409 answer into an *ErrCASConflict.
func casError(err error, check uint64) error {
	var se *StatusError
	if !errors.As(err, &se) || se.Code != http.StatusConflict {
		return err
	}
	var cur structs.Variable
	if jerr := json.Unmarshal([]byte(se.Msg), &cur); jerr != nil {
		return err
	}
	return &ErrCASConflict{CheckIndex: check, Current: &cur}
}

// VarGet reads a variable (GET /v1/var/{path}); a 404 is IsNotFound.
func (c *Client) VarGet(ctx context.Context, path string, q *QueryOptions) (*structs.Variable, error) {
	var out structs.Variable
	if _, err := c.Get(ctx, varPath(path), q, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// VarPut writes a variable (PUT /v1/var/{path}) in namespace ns; with
// cas, only if its ModifyIndex is check (0: only if there is none),
// else an *ErrCASConflict.
func (c *Client) VarPut(ctx context.Context, ns string, v *structs.Variable, cas bool, check uint64) (*structs.Variable, error) {
	q := &QueryOptions{Namespace: ns, Params: map[string]string{}}
	if cas {
		q.Params["cas"] = strconv.FormatUint(check, 10)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out structs.Variable
	if _, err := c.doBody(ctx, http.MethodPut, varPath(v.Path), q.values(), b, http.Header{"Content-Type": {"application/json"}}, &out); err != nil {
		return nil, casError(err, check)
	}
	return &out, nil
}

// VarDelete deletes a variable (DELETE /v1/var/{path}); with cas, only
// if its ModifyIndex is check, else an *ErrCASConflict.
func (c *Client) VarDelete(ctx context.Context, ns, path string, cas bool, check uint64) error {
	q := &QueryOptions{Namespace: ns, Params: map[string]string{}}
	if cas {
		q.Params["cas"] = strconv.FormatUint(check, 10)
	}
	_, err := c.Delete(ctx, varPath(path), q, nil)
	return casError(err, check)
}

// VarList lists variables' metadata (GET /v1/vars), q.Prefix and
// q.Namespace ("*": every namespace) choosing which.
func (c *Client) VarList(ctx context.Context, q *QueryOptions) ([]*structs.VariableMetadata, error) {
	var out []*structs.VariableMetadata
	_, err := c.Get(ctx, "/v1/vars", q, &out)
	return out, err
}

// KeyringList lists the root keys (GET /v1/operator/keyring/keys).
func (c *Client) KeyringList(ctx context.Context) ([]*structs.RootKeyMeta, error) {
	var out []*structs.RootKeyMeta
	_, err := c.Get(ctx, "/v1/operator/keyring/keys", nil, &out)
	return out, err
}

// KeyringRotate makes a new active root key (PUT /v1/operator/keyring/rotate).
func (c *Client) KeyringRotate(ctx context.Context, full bool) (*structs.RootKeyMeta, error) {
	q := url.Values{}
	if full {
		q.Set("full", "true")
	}
	var out struct{ Key *structs.RootKeyMeta }
	if _, err := c.doBody(ctx, http.MethodPut, "/v1/operator/keyring/rotate", q, nil, nil, &out); err != nil {
		return nil, err
	}
	return out.Key, nil
}

// KeyringDelete removes an inactive root key (DELETE
// /v1/operator/keyring/key/{id}); force removes one that still encrypts
// variables.
func (c *Client) KeyringDelete(ctx context.Context, id string, force bool) error {
	q := &QueryOptions{Params: map[string]string{"force": strconv.FormatBool(force)}}
	_, err := c.Delete(ctx, "/v1/operator/keyring/key/"+url.PathEscape(id), q, nil)
	return err
}

package apiclient

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/droverhq/drover/structs"
)

// ErrLockConflict is a lock operation refused because another caller
// holds the variable's lock (or the caller's ran out), as Nomad's
// api.ErrLockConflict.
var ErrLockConflict = errors.New("conflicting operation over lock")

// lockError turns a 409 answer into ErrLockConflict.
func lockError(err error) error {
	var se *StatusError
	if errors.As(err, &se) && se.Code == http.StatusConflict {
		return errors.Join(ErrLockConflict, err)
	}
	return err
}

// varLockOp sends one lock operation (PUT /v1/var/{path}?op) with body v.
func (c *Client) varLockOp(ctx context.Context, ns, op string, v *structs.Variable, out any) error {
	q := &QueryOptions{Namespace: ns}
	vals := q.values()
	vals.Set(op, "")
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = c.doBody(ctx, http.MethodPut, varPath(v.Path), vals, b, http.Header{"Content-Type": {"application/json"}}, out)
	return lockError(err)
}

// VarLockAcquire writes v with a lock (v.Lock: its TTL and LockDelay;
// an ID to take again a lock the caller held): the variable as written,
// with the lock's ID. ErrLockConflict when another holds it.
func (c *Client) VarLockAcquire(ctx context.Context, ns string, v *structs.Variable) (*structs.Variable, error) {
	var out structs.Variable
	if err := c.varLockOp(ctx, ns, structs.VarLockOpAcquire, v, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// VarLockRenew renews the lease of the lock lockID holds on path;
// ErrLockConflict when the lock is another's or ran out.
func (c *Client) VarLockRenew(ctx context.Context, ns, path, lockID string) (*structs.VariableMetadata, error) {
	var out structs.VariableMetadata
	v := &structs.Variable{Path: path, Lock: &structs.VariableLock{ID: lockID}}
	if err := c.varLockOp(ctx, ns, structs.VarLockOpRenew, v, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// VarLockRelease releases the lock lockID holds on path, keeping the
// variable's items.
func (c *Client) VarLockRelease(ctx context.Context, ns, path, lockID string) (*structs.Variable, error) {
	var out structs.Variable
	v := &structs.Variable{Path: path, Lock: &structs.VariableLock{ID: lockID}}
	if err := c.varLockOp(ctx, ns, structs.VarLockOpRelease, v, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

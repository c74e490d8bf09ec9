package apiclient

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// LogsOptions select what AllocLogs streams.
type LogsOptions struct {
	Task   string // the task; required by the endpoint
	Stderr bool   // stderr instead of stdout
	Follow bool   // keep streaming as the task writes
	// Origin is "start" (default) or "end"; Offset counts bytes from it.
	Origin string
	Offset int64
}

// AllocLogs streams a task's logs from the client node this Client talks
// to: GET /v1/client/fs/logs/{alloc}?task=&type=&plain=true&follow=. The
// caller closes the stream; a non-2xx answer is a StatusError.
func (c *Client) AllocLogs(ctx context.Context, allocID string, o LogsOptions) (io.ReadCloser, error) {
	q := url.Values{}
	q.Set("task", o.Task)
	q.Set("type", "stdout")
	if o.Stderr {
		q.Set("type", "stderr")
	}
	q.Set("plain", "true")
	q.Set("follow", strconv.FormatBool(o.Follow))
	if o.Origin != "" {
		q.Set("origin", o.Origin)
	}
	if o.Offset > 0 {
		q.Set("offset", strconv.FormatInt(o.Offset, 10))
	}
	u := *c.base
	u.Path = strings.TrimSuffix(u.Path, "/") + "/v1/client/fs/logs/" + url.PathEscape(allocID)
	u.RawQuery = q.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	c.setToken(req)
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("reading logs of alloc %s: %w", allocID, err)
	}
	if resp.StatusCode/100 != 2 {
		defer resp.Body.Close()
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		return nil, &StatusError{Code: resp.StatusCode, Msg: strings.TrimSpace(string(msg))}
	}
	return resp.Body, nil
}

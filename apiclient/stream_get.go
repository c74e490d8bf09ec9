package apiclient

import (
	"context"
	"io"
	"net/http"
	"net/url"
)

// GetBytes reads path's answer as it is (a profile, a text page), at
// most limit bytes; a non-2xx answer is a *StatusError.
func (c *Client) GetBytes(ctx context.Context, path string, q *QueryOptions, limit int64) ([]byte, error) {
	resp, err := c.raw(ctx, http.MethodGet, path, q.values(), nil)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	return io.ReadAll(io.LimitReader(resp.Body, limit))
}

// GetStream opens path's answer for the caller to read until ctx ends
// (the event stream, a log monitor) and close; a non-2xx answer is a
// *StatusError.
// q are its query parameters (a parameter may repeat, as the stream's
// topic).
func (c *Client) GetStream(ctx context.Context, path string, q url.Values) (io.ReadCloser, error) {
	resp, err := c.raw(ctx, http.MethodGet, path, q, nil)
	if err != nil {
		return nil, err
	}
	return resp.Body, nil
}

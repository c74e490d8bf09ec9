package apiclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/droverhq/drover/structs"
)

// AutopilotConfiguration reads the cluster's autopilot configuration
// (GET /v1/operator/autopilot/configuration).
func (o *Operator) AutopilotConfiguration(ctx context.Context) (*structs.AutopilotConfig, error) {
	var out structs.AutopilotConfig
	if _, err := o.c.Get(ctx, "/v1/operator/autopilot/configuration", nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// SetAutopilotConfiguration replaces it (PUT); with cas, only if its
// ModifyIndex is still c.ModifyIndex. It reports whether it was written.
func (o *Operator) SetAutopilotConfiguration(ctx context.Context, c *structs.AutopilotConfig, cas bool) (bool, error) {
	q := url.Values{}
	if cas {
		q.Set("cas", strconv.FormatUint(c.ModifyIndex, 10))
	}
	body, err := json.Marshal(c)
	if err != nil {
		return false, fmt.Errorf("encoding request: %w", err)
	}
	var ok bool
	h := http.Header{"Content-Type": {"application/json"}}
	if _, err := o.c.doBody(ctx, http.MethodPut, "/v1/operator/autopilot/configuration", q, body, h, &ok); err != nil {
		return false, err
	}
	return ok, nil
}

// AutopilotHealth reads the servers' health as the leader's autopilot sees
// it (GET /v1/operator/autopilot/health). The server answers 429 when a
// server is unhealthy; the reply is returned all the same.
func (o *Operator) AutopilotHealth(ctx context.Context) (*structs.OperatorHealthReply, error) {
	var out structs.OperatorHealthReply
	_, err := o.c.Get(ctx, "/v1/operator/autopilot/health", nil, &out)
	var se *StatusError
	if errors.As(err, &se) && se.Code == http.StatusTooManyRequests {
		if jerr := json.Unmarshal([]byte(se.Msg), &out); jerr == nil {
			return &out, nil
		}
	}
	if err != nil {
		return nil, err
	}
	return &out, nil
}

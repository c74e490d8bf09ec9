package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/droverhq/drover/apiclient"
)

// "drover monitor", as Nomad's: follows an agent's log lines (GET
// /v1/agent/monitor) at -log-level, whatever level the agent writes at,
// until interrupted. -node-id (a prefix) or -server-id follow another
// agent's, through the agent at -address.

func init() { registerSubcommand("monitor", newMonitorCommand) }

func newMonitorCommand() *cobra.Command {
	var address, level, nodeID, serverID string
	var logJSON, location bool
	cmd := &cobra.Command{
		Use:   "monitor [-log-level LEVEL] [-node-id ID | -server-id ID] [-json] [-log-include-location]",
		Short: "Stream the logs of an agent",
		Long: `Stream the log lines of the agent at -address, or of another agent through
it (-node-id: a client node; -server-id: a server's name, ID or "leader"),
at -log-level (TRACE, DEBUG, INFO, WARN, ERROR; default INFO) whatever level
the agent writes at, until interrupted. -json prints the lines as JSON.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := apiClientFor(cmd, address)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			if nodeID != "" {
				n, err := lookupNode(ctx, c, cmd.ErrOrStderr(), nodeID)
				if err != nil {
					return &exitError{code: 1, msg: err.Error()}
				}
				nodeID = n.ID
			}
			return runMonitor(ctx, c, cmd.OutOrStdout(), apiclient.MonitorOptions{
				LogLevel: level, LogJSON: logJSON, LogIncludeLocation: location, NodeID: nodeID, ServerID: serverID,
			})
		},
	}
	addAddressFlag(cmd, &address)
	f := cmd.Flags()
	f.StringVar(&level, "log-level", "", "lowest level of the lines streamed: TRACE, DEBUG, INFO, WARN or ERROR (default INFO)")
	f.StringVar(&nodeID, "node-id", "", "stream the logs of this client node (an ID or a prefix)")
	f.StringVar(&serverID, "server-id", "", `stream the logs of this server (its name, ID or "leader")`)
	f.BoolVar(&logJSON, "json", false, "print each line as JSON")
	f.BoolVar(&location, "log-include-location", false, "include the source file and line of each line")
	return cmd
}

// runMonitor copies the agent's log to w until ctx ends (not an error) or
// the stream does.
func runMonitor(ctx context.Context, c *apiclient.Client, w io.Writer, o apiclient.MonitorOptions) error {
	rc, err := c.AgentMonitor(ctx, o)
	if err != nil {
		return &exitError{code: 1, msg: fmt.Sprintf("Error starting monitor: %v", err)}
	}
	defer rc.Close()
	if _, err := io.Copy(w, rc); err != nil && ctx.Err() == nil && !errors.Is(err, context.Canceled) {
		return &exitError{code: 1, msg: fmt.Sprintf("error monitoring logs: %v", err)}
	}
	return nil
}

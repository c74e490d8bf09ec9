package main

import (
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/droverhq/drover/apiclient"
	"github.com/droverhq/drover/structs"
)

func init() {
	registerJobCommand("dispatch", newJobDispatchCommand)
}

func newJobDispatchCommand() *cobra.Command {
	var verbose bool
	var (
		address  string
		detach   bool
		meta     []string
		token    string
		prefix   string
		priority int
	)
	cmd := &cobra.Command{
		Use:   "dispatch [flags] JOB [PAYLOAD_FILE|-]",
		Short: "Dispatch a parameterized job: run a child with meta and a payload",
		Long: `Dispatches the parameterized job JOB (its exact ID): a child job
"<job>/dispatch-<unix time>-<8 hex>" is registered with the -meta values
laid over the job's meta and, when given, the payload read from
PAYLOAD_FILE, or from standard input for "-" (at most 16 KiB). The job's
parameterized block says which meta keys are required or allowed and
whether a payload is required, optional or forbidden. With
-idempotency-token, a dispatch whose token names a child that still
exists answers that child instead of making another. Unless -detach is
given, the child's evaluation is monitored as job run monitors one.`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			req := &apiclient.DispatchRequest{IdempotencyToken: token, IdPrefixTemplate: prefix, Priority: priority}
			for _, kv := range meta {
				k, v, ok := strings.Cut(kv, "=")
				if !ok || k == "" {
					return &exitError{code: 1, msg: fmt.Sprintf("Error parsing meta value %q: want key=value", kv)}
				}
				if req.Meta == nil {
					req.Meta = map[string]string{}
				}
				req.Meta[k] = v
			}
			if len(args) == 2 {
				payload, err := readPayload(cmd.InOrStdin(), args[1])
				if err != nil {
					return &exitError{code: 1, msg: fmt.Sprintf("Error reading input data: %v", err)}
				}
				req.Payload = payload
			}
			c, err := apiClientFor(cmd, address)
			if err != nil {
				return err
			}
			ctx, out := cmd.Context(), cmd.OutOrStdout()
			resp, err := c.Jobs().Dispatch(ctx, args[0], req)
			if err != nil {
				return &exitError{code: 1, msg: fmt.Sprintf("Failed to dispatch job: %v", err)}
			}
			kv := [][2]string{{"Dispatched Job ID", resp.DispatchedJobID}}
			if resp.EvalID != "" {
				kv = append(kv, [2]string{"Evaluation ID", resp.EvalID})
			}
			printKV(out, kv)
			if err := uiAfter(cmd, c, "/ui/jobs/"+url.PathEscape(resp.DispatchedJobID)); err != nil {
				return err
			}
			if detach || resp.EvalID == "" {
				return nil
			}
			fmt.Fprintln(out)
			m := newMonitor(c, out, true)
			m.verbose = verbose
			code, err := m.run(ctx, resp.EvalID)
			return monitorExit("the dispatched job", code, err)
		},
	}
	addAddressFlag(cmd, &address)
	cmd.Flags().BoolVar(&verbose, "verbose", false, "full IDs")
	addUIFlag(cmd, "dispatched job")
	f := cmd.Flags()
	f.BoolVar(&detach, "detach", false, "return at once, printing the child's ID and evaluation ID")
	f.StringArrayVar(&meta, "meta", nil, "a meta value of the child, key=value (repeatable)")
	f.StringVar(&token, "idempotency-token", "", "answer the existing child dispatched with this token, if any")
	f.StringVar(&prefix, "id-prefix-template", "", "put this before the dispatch time in the child's ID")
	f.IntVar(&priority, "priority", 0, "the child's priority, instead of the job's")
	return cmd
}

// readPayload reads a dispatch's payload from path, or standard input for
// "-"; more than the limit is refused here, as the servers would.
func readPayload(stdin io.Reader, path string) ([]byte, error) {
	r := stdin
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	data, err := io.ReadAll(io.LimitReader(r, structs.DispatchPayloadSizeLimit+1))
	if err != nil {
		return nil, err
	}
	if len(data) > structs.DispatchPayloadSizeLimit {
		return nil, fmt.Errorf("the payload is larger than %d bytes", structs.DispatchPayloadSizeLimit)
	}
	return data, nil
}
